"""Which files ``patcher diff`` lists, in which order, with which patches and contents, plain, ``--per-patch`` and ``--base``.

The shipped copies come first, then the stale copies made identical to
them; a file the run adds (``.dockerignore`` gaining the manifest, when the
Dockerfile copies the context root) is listed too, so the diff, and the
``--per-patch`` sections added up, give apply's tree.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from patcher.archive.dir_source import DirSource
from patcher.pipeline import build
from patcher.review.changes import BaseRef, apply_diff, base_diff, per_patch_diff
from patcher.review.render import unified

from tests.fixtures_cli import MANIFEST, SERIES, applied_folder, context_files, needs_patch, patch_p1
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE


def copies_the_context_root(tree: Path) -> Path:
    """Make the Dockerfile copy the whole context, as many do: apply then lists the manifest in .dockerignore."""
    (tree / "Dockerfile").write_text("FROM base:1\nWORKDIR /workspace\nCOPY . /workspace\n"
                                     "RUN cd ./qwen3_6_scripts && ./patch_ops.sh\n")
    return tree


def test_the_diff_lists_the_shipped_copy_then_its_mirror_with_the_patches_that_made_them(demo_build) -> None:  # type: ignore[no-untyped-def]
    report = apply_diff(demo_build, "drop.zip")
    assert (report.input_name, report.commit, report.base, report.per_patch) == (
        "drop.zip", demo_build.patch_set.commit, None, False)
    shipped, mirror = report.files
    assert (shipped.path, shipped.mirror_of, mirror.path, mirror.mirror_of) == (SHIPPED, None, "paged_attn.py", SHIPPED)
    assert [p.id for p in shipped.patches] == [p.id for p in mirror.patches] == SERIES
    assert shipped.change.before == (VENDOR_TREE / SHIPPED).read_bytes()
    assert shipped.change.after == demo_build.changes[SHIPPED] == mirror.change.after
    assert mirror.change.before == (VENDOR_TREE / "paged_attn.py").read_bytes()
    assert shipped.unified() == shipped.change.unified() != b""
    assert (report.empty, int(report.exit_code(True)), int(report.exit_code(False))) == (False, 1, 0)
    assert MANIFEST not in demo_build.changes


def test_a_patch_that_does_not_apply_is_not_named_as_a_producer(bundled, demo_build) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset.outcome import Status

    failed = tuple(replace(f, outcomes=tuple(replace(o, status=Status.FAILED) if o.patch.id == SERIES[1] else o
                                             for o in f.outcomes)) for f in demo_build.files)
    report = apply_diff(replace(demo_build, files=failed), "drop.zip")
    assert [[p.id for p in f.patches] for f in report.files] == [[SERIES[0], SERIES[2]]] * 2


def test_an_empty_diff_is_empty_and_exits_0_under_exit_code(bundled) -> None:  # type: ignore[no-untyped-def]
    nothing = build(DirSource(VENDOR_TREE), replace(bundled, patches=()))
    report = apply_diff(nothing, "drop.zip")
    assert report.files == () and report.empty and int(report.exit_code(True)) == 0
    assert report.stat() == (0, 0, 0)


def test_a_file_the_run_adds_is_a_new_file_with_no_patch(bundled, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    tree = DirSource(copies_the_context_root(vendor_copy))
    report = apply_diff(build(tree, bundled), "drop")
    assert [(f.path, f.mirror_of) for f in report.files] == [(".dockerignore", None), (SHIPPED, None),
                                                             ("paged_attn.py", SHIPPED)]
    added = report.files[0]
    assert added.patches == () and added.change.before is None
    assert added.unified() == (b"diff --git a/.dockerignore b/.dockerignore\nnew file mode 100644\n"
                               b"--- /dev/null\n+++ b/.dockerignore\n@@ -0,0 +1 @@\n+" + MANIFEST.encode() + b"\n")


@needs_patch
def test_per_patch_sections_add_up_to_apply_when_the_run_adds_a_file(cli, bundled, vendor_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree_folder = copies_the_context_root(vendor_copy)
    report = per_patch_diff(build(DirSource(tree_folder), bundled), "drop")
    assert [s.patch.id if s.patch else s.title for s in report.sections] == [
        *SERIES, "mirrors: stale copies made identical to the patched shipped copies",
        f"context: files apply changes beside the patches ({MANIFEST} kept out of the image)"]
    assert report.stat()[0] == 3
    # Copying the root ships the stale Triton files too: the rules would refuse it, so allow that here.
    expected = context_files(applied_folder(cli, tree_folder, "applied", "--allow", "no-triton-kernels",
                                            "--reason", "the stale root copies are not imported"))
    del expected[MANIFEST]
    context = tmp_path / "replayed"
    context.mkdir()
    for path, (data, executable) in context_files(tree_folder).items():
        (context / path).parent.mkdir(parents=True, exist_ok=True)
        (context / path).write_bytes(data)
        (context / path).chmod(0o755 if executable else 0o644)
    patch_p1(context, unified(report))
    assert context_files(context) == expected


def test_per_patch_sections_hold_each_patch_s_own_step_in_series_order(demo_build) -> None:  # type: ignore[no-untyped-def]
    report = per_patch_diff(demo_build, "drop.zip")
    assert report.per_patch and report.input_name == "drop.zip" and report.commit == demo_build.patch_set.commit
    steps = report.sections[:3]
    assert [(s.patch.id, s.status) for s in steps] == [(p, "applied") for p in SERIES]
    assert steps[0].files[0].change.before == (VENDOR_TREE / SHIPPED).read_bytes()
    for earlier, later in zip(steps, steps[1:]):
        assert later.files[0].change.before == earlier.files[0].change.after
    assert steps[-1].files[0].change.after == demo_build.changes[SHIPPED]
    assert all([p.id for p in s.files[0].patches] == [s.patch.id] for s in steps)
    (mirror,) = report.sections[3].files
    assert (mirror.path, mirror.mirror_of) == ("paged_attn.py", SHIPPED) and len(report.sections) == 4


def test_a_per_patch_section_of_a_patch_that_changed_nothing_is_empty(bundled, demo_build, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / SHIPPED).write_bytes(demo_build.changes[SHIPPED])  # a drop the vendor already patched
    report = per_patch_diff(build(DirSource(vendor_copy), bundled), "d")
    assert [(s.patch.id if s.patch else s.title, s.status, len(s.files)) for s in report.sections] == [
        *((p, "already applied", 0) for p in SERIES),
        ("mirrors: stale copies made identical to the patched shipped copies", None, 1)]


def test_base_diff_shows_what_a_change_to_the_patch_set_changes_in_what_ships(bundled) -> None:  # type: ignore[no-untyped-def]
    tree = DirSource(VENDOR_TREE)
    first_only = build(tree, replace(bundled, patches=bundled.patches[:1], commit="a" * 40))
    everything = build(tree, replace(bundled, commit="b" * 40))
    ref = BaseRef("HEAD~1", "a" * 40)
    report = base_diff(first_only, everything, "drop.zip", ref)
    assert (report.base, report.commit, report.input_name) == (ref, "b" * 40, "drop.zip")
    shipped, mirror = report.files
    assert (shipped.path, mirror.path, mirror.mirror_of) == (SHIPPED, "paged_attn.py", SHIPPED)
    assert shipped.change.before == first_only.changes[SHIPPED] and shipped.change.after == everything.changes[SHIPPED]
    assert [p.id for p in shipped.patches] == SERIES  # the head's producers, then any only the base had
    # Nothing changes between two equal patch sets.
    assert base_diff(everything, everything, "d", ref).files == ()


def test_base_diff_of_a_patch_set_that_adds_or_drops_a_file_compares_with_the_vendor_copy(bundled, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    tree = DirSource(copies_the_context_root(vendor_copy))
    none = build(tree, replace(bundled, patches=()))
    full = build(tree, bundled)
    dropped = base_diff(full, none, "d", BaseRef("main", "c" * 40))
    # .dockerignore gains the manifest with or without patches: no difference to show.
    assert [f.path for f in dropped.files] == [SHIPPED, "paged_attn.py"]
    shipped = dropped.files[0]
    assert shipped.change.before == full.changes[SHIPPED] and shipped.change.after == tree.read(SHIPPED)
    assert [p.id for p in shipped.patches] == SERIES  # only the base produced it: still named
    assert dropped.files[1].mirror_of == SHIPPED
    added = base_diff(none, full, "d", BaseRef("main", "c" * 40))
    assert [f.change.before for f in added.files] == [f.change.after for f in dropped.files]
