"""``diff --per-patch`` prints one section per patch, each alone on top of the ones before it.

Sections come in series order, then the mirror sync; together they add up to apply's tree.
"""

from __future__ import annotations

from tests.fixtures_cli import SERIES, context_files, needs_patch, patch_p1, unzip
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP


@needs_patch
def test_per_patch_sections_replay_the_series_and_add_up_to_apply(per_patch, applied, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert per_patch.exit_code == 0, per_patch.stderr
    titles = [line for line in per_patch.stdout.splitlines() if line.startswith("# ==== ")]
    assert [t.split()[3] for t in titles[:3]] == list(SERIES)
    assert titles[0].startswith("# ==== [1/3] three-tier-decode (applied): Decode in three tiers")
    assert titles[3].startswith("# ==== mirrors:")
    context = unzip(VENDOR_ZIP, tmp_path / "unpacked")
    patch_p1(context, per_patch.stdout_bytes)
    assert context_files(context) == applied


def test_each_section_holds_only_its_own_patch(per_patch) -> None:  # type: ignore[no-untyped-def]
    sections = per_patch.stdout.split("# ==== ")[1:]
    for section, patch in zip(sections, SERIES):
        assert section.splitlines()[1:3] == [f"# {SHIPPED}", f"#   {patch}  " + section.split(": ", 1)[1].splitlines()[0]]
        assert section.count("diff --git") == 1
    # prefix-buffer-reuse rewrites the online-softmax update; three-tier-decode never touches it.
    assert "out=" in sections[2] and "out=" not in sections[0]


# -- the steps behind the sections (series.replay) ------------------------------------------------


def test_each_step_is_the_file_before_and_after_its_patch_with_its_status(bundled, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from patcher.archive.dir_source import DirSource
    from patcher.patchset.outcome import Status
    from patcher.pipeline import build
    from patcher.review.series import replay
    from tests.fixtures_cli import broken_drop

    tree = DirSource(broken_drop(tmp_path, "no-longer-applies"))
    failing = build(tree, bundled)
    steps = replay(failing)
    assert [(s.patch.id, s.status, s.path) for s in steps] == [
        ("three-tier-decode", Status.FAILED, SHIPPED), ("prefix-pregather", Status.APPLIED, SHIPPED),
        ("prefix-buffer-reuse", Status.APPLIED, SHIPPED)]
    assert steps[0].before == steps[0].after == tree.read(SHIPPED) and not steps[0].changed
    assert steps[1].before == steps[0].after and steps[1].changed
    assert steps[2].before == steps[1].after and steps[2].after == failing.changes[SHIPPED]


def test_a_file_that_does_not_parse_fails_each_step_unchanged(bundled, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    from patcher.archive.dir_source import DirSource
    from patcher.patchset.outcome import Status
    from patcher.pipeline import build
    from patcher.review.series import replay

    (vendor_copy / SHIPPED).write_bytes(b"def forward_decode(:\n")
    steps = replay(build(DirSource(vendor_copy), bundled))
    assert [(s.status, s.before, s.after) for s in steps] == [(Status.FAILED, b"def forward_decode(:\n",
                                                               b"def forward_decode(:\n")] * 3


def test_every_form_of_diff_names_the_patch_sets_commit(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # A reviewer's JSON says which commit of patches/ it shows, whether whole or patch by patch.
    import json

    from tests.fixtures_patches import commit_all, copy_patch_set, git

    patches = copy_patch_set(tmp_path / "team")
    git(tmp_path / "team", "init", "-q")
    commit_all(tmp_path / "team", "the patch set")
    head = git(tmp_path / "team", "rev-parse", "HEAD").strip()
    for form in ([], ["--per-patch"]):
        result = cli("diff", *form, "--format", "json", "--patches", patches, VENDOR_ZIP)
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["patch_set_commit"] == head, form
