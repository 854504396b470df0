"""The record in a context's manifest reads back strictly, and holds what upgrade needs to judge that context as OLD.

A context apply wrote finds every patch already applied, so a run on it
recomputes no fingerprint: the manifest's are the ones the vendor drop
gave. They equal a fresh run's on that drop (whatever the context's
format), and differ, in the V2 call's arguments alone, on a drop whose V2
call gained one. A manifest out of shape is refused whole, naming the
first field that is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from patcher.archive import open_source
from patcher.manifest_file import RecordError, decode_record, read_record
from patcher.patchset import load_patch_set
from patcher.pipeline import build
from tests.fixtures_cli import MANIFEST, run_patcher
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP

from make_upgrade_pairs import make_tree  # noqa: E402  (fixtures/ is on sys.path once fixtures_vendor is imported)


def _fresh_prints(drop: Path) -> dict[str, tuple[Any, ...]]:
    with open_source(drop) as tree:
        result = build(tree, load_patch_set(PATCHES))
    return {o.patch.id: o.prints for f in result.files for o in f.outcomes}


def _shas(prints: tuple[Any, ...]) -> list[tuple[int, list[tuple[str, dict[str, str]]]]]:
    return [(s.step, [(m.code.sha256, {k: p.sha256 for k, p in m.bindings.items()}) for m in s.matches])
            for s in prints]


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("contexts")
    made = []
    for name in ("ctx.tar.gz", "ctx.zip", "ctx"):
        assert run_patcher("apply", VENDOR_ZIP, "-o", folder / name).exit_code == 0
        made.append(folder / name)
    return made


def test_the_record_holds_the_fingerprints_a_fresh_run_on_the_origin_gives(contexts: list[Path]) -> None:
    fresh = _fresh_prints(VENDOR_ZIP)
    for context in contexts:
        with open_source(context) as tree:
            record = read_record(tree)
            assert record is not None and record.origin_name == VENDOR_ZIP.name
            for patch_id, prints in fresh.items():
                recorded = record.patch(patch_id, SHIPPED)
                assert recorded is not None and recorded.status == "applied"
                assert _shas(recorded.steps) == _shas(prints)


def test_a_drop_whose_v2_call_gained_an_argument_differs_from_the_record_in_that_binding_alone(
        contexts: list[Path], tmp_path: Path) -> None:
    with open_source(contexts[0]) as tree:
        record = read_record(tree)
    assert record is not None
    recorded = record.patch("three-tier-decode", SHIPPED)
    assert recorded is not None
    fresh = _fresh_prints(make_tree(tmp_path / "new", "v2-gains-argument"))["three-tier-decode"]
    [(_, [(_, before)])], [(_, [(_, after)])] = _shas(recorded.steps)[1:], _shas(fresh)[1:]
    assert {name for name in before if before[name] != after[name]} == {"V2_ARGS"}


def test_a_context_without_a_manifest_has_no_record(tmp_path: Path) -> None:
    with open_source(make_tree(tmp_path / "drop")) as tree:
        assert read_record(tree) is None


def _manifest(context: Path) -> dict[str, Any]:
    return json.loads((context / MANIFEST).read_text())


@pytest.mark.parametrize("edit, field", [
    (lambda m: m.update(patches="three-tier-decode"), "patches is not a list"),
    (lambda m: m["patches"][0].update(status="half applied"), "patches[0].status is 'half applied', not a status apply records"),
    (lambda m: m["patches"][1]["steps"][0].update(step="1"), "patches[1].steps[0].step is not a number"),
    (lambda m: m["patches"][0]["steps"][1]["matches"][0]["bindings"].update(V2_ARGS="not a digest"),
     "patches[0].steps[1].matches[0].bindings.V2_ARGS is not a sha256"),
    (lambda m: m["patches"][0]["steps"][0]["matches"][0].update(code="0" * 63),
     "patches[0].steps[0].matches[0].code is not a sha256"),
    (lambda m: m["changed_files"].update({SHIPPED: None}), f"changed_files['{SHIPPED}'] is not a sha256"),
    (lambda m: m["mirrors"][0].update(differed_before="yes"), "mirrors[0].differed_before is not true or false"),
    (lambda m: m.update(mirrors={"paged_attn.py": SHIPPED}), "mirrors is not a list"),
    (lambda m: m["mirrors"].__setitem__(0, "paged_attn.py"), "mirrors[0] is not an object"),
    (lambda m: m["patches"][2].update(steps=None), "patches[2].steps is not a list"),
    (lambda m: m["input"].update(sha256="sha256:" + "0" * 64), "input.sha256 is not a sha256"),
    (lambda m: m.update(origin=[]), "origin is not an object"),
    (lambda m: m.update(stage=["runtime"]), "stage is not a string"),
])
def test_a_manifest_out_of_shape_is_refused_naming_the_field(contexts: list[Path], edit, field: str) -> None:  # type: ignore[no-untyped-def]
    manifest = _manifest(contexts[2])
    edit(manifest)
    with pytest.raises(RecordError) as caught:
        decode_record(manifest)
    assert str(caught.value) == field
