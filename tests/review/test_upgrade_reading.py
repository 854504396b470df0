"""How ``patcher upgrade`` reads the two drops: the stages it reports, what each drop ships and does not, and the rules.

``read_drops`` patches NEW here while a forked child patches OLD into the
patch cache, and runs the file rules of both drops' shipped files once in
another child; none of that may change the answer, only how soon it comes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.archive.dir_source import DirSource
from patcher.checks.policy import load_policy
from patcher.review.upgrade import compare, read_drops

from make_upgrade_pairs import make_pair
from tests.fixtures_cli import SERIES, TARGET
from tests.fixtures_vendor import PATCHES, SHIPPED

STAGES = ["reading what each drop ships", "patching NEW", "patching OLD", "running the safety rules"]


def unship(tree: Path) -> Path:
    """Make the install script copy paged_attn.py nowhere: the drop ships no file as the patches' target."""
    script = tree / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_bytes(b"".join(line for line in script.read_bytes().splitlines(keepends=True)
                                if b"cp ./paged_attn.py" not in line))
    return tree


def read(old: Path, new: Path, bundled):  # type: ignore[no-untyped-def]
    stages: list[str] = []
    drops = read_drops(DirSource(old), DirSource(new), bundled, load_policy(PATCHES / "policy.toml"),
                       ("old.zip", "new.zip"), stages.append)
    return stages, drops


def test_the_stages_are_told_in_order_and_each_drop_is_patched_and_judged(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "v2-gains-argument")
    stages, (old_drop, new_drop) = read(old, new, bundled)
    assert stages == STAGES
    assert (old_drop.label, new_drop.label) == ("old.zip", "new.zip")
    for drop in (old_drop, new_drop):
        assert drop.series is bundled and drop.unshipped == {}
        assert drop.build.targets == {TARGET: SHIPPED}
        assert [o.patch.id for f in drop.build.files for o in f.outcomes] == SERIES
        assert drop.rules.errors == ()
    assert old_drop.build.files[0].original == (old / SHIPPED).read_bytes()
    assert new_drop.build.files[0].original == (new / SHIPPED).read_bytes()
    report = compare(old_drop, new_drop, ("--patches", "p"))
    assert report.patch_args == ("--patches", "p") and (report.old, report.new) == ("old.zip", "new.zip")
    assert [p.captures_changed for p in report.patches] == [True, False, False]


def test_a_drop_that_does_not_ship_the_target_is_read_with_why(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    old, new = make_pair(tmp_path / "pair", "unchanged")
    stages, (old_drop, new_drop) = read(old, unship(new), bundled)
    assert stages == STAGES
    assert list(new_drop.unshipped) == [TARGET] and new_drop.unshipped[TARGET].startswith("nothing the image ships")
    assert new_drop.build.targets == {} and new_drop.build.files == () and new_drop.series is bundled
    assert old_drop.unshipped == {}
    report = compare(old_drop, new_drop)
    assert [(p.old, p.new) for p in report.patches] == [("applies", "not-shipped")] * 3
    (shipping,) = report.shipping
    assert (shipping.old_path, shipping.new_path, shipping.gone) == (SHIPPED, None, True)
    assert shipping.new_problem == new_drop.unshipped[TARGET] and shipping.old_problem == ""
    assert report.rules_new.applied == 0 and report.rules_new.patches == 3 and report.rules_old.complete


@pytest.mark.parametrize("cache", ["on", "off"])
def test_the_answer_does_not_depend_on_the_patch_cache(bundled, tmp_path, monkeypatch, cache: str) -> None:  # type: ignore[no-untyped-def]
    if cache == "off":
        monkeypatch.setenv("PATCHER_NO_CACHE", "1")  # no cache: OLD is patched here, not ahead in a child
    old, new = make_pair(tmp_path / "pair", "heuristic-differs")
    _, drops = read(old, new, bundled)
    report = compare(*drops)
    assert [(c.step, c.binding) for c in report.patches[0].captures] == [(2, "HEURISTIC")]
    assert report.patches[0].scopes[0].changed


def test_a_stale_copy_that_appears_or_goes_is_a_mirror_group_that_appeared_or_went(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from patcher.shipping import MirrorGroup

    old, new = make_pair(tmp_path / "pair", "unchanged")
    (old / "paged_attn.py").unlink()  # OLD had no stale root copy; NEW has one
    report = compare(*read(old, new, bundled)[1])
    assert (report.mirrors_appeared, report.mirrors_went) == ((MirrorGroup(SHIPPED, ("paged_attn.py",)),), ())
    reverse = compare(*read(new, old, bundled)[1])
    assert (reverse.mirrors_appeared, reverse.mirrors_went) == ((), (MirrorGroup(SHIPPED, ("paged_attn.py",)),))


TRITON_IMPORT = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"


def test_each_drop_gets_the_rule_findings_of_its_own_files(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # An unpatched shipped file is judged ahead, in the child, by its bytes: NEW's import must stay NEW's.
    old, new = make_pair(tmp_path / "pair", "unchanged")
    helper = new / "qwen3_6_scripts" / "qwen3_5.py"
    helper.write_bytes(TRITON_IMPORT + helper.read_bytes())
    _, (old_drop, new_drop) = read(old, new, bundled)
    assert old_drop.rules.errors == ()
    assert [(v.rule, v.path, v.line) for v in new_drop.rules.errors] == [
        ("no-triton-kernels", "qwen3_6_scripts/qwen3_5.py", 1)]
    report = compare(old_drop, new_drop)
    assert [(e.rule, e.path) for e in report.new_errors] == [("no-triton-kernels", "qwen3_6_scripts/qwen3_5.py")]
    assert report.fixed == ()
    reverse = compare(*read(new, old, bundled)[1])
    assert [(e.rule, e.path) for e in reverse.fixed] == [("no-triton-kernels", "qwen3_6_scripts/qwen3_5.py")]
    assert reverse.new_errors == ()
