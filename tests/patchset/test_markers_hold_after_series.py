"""Patches own their markers: after the whole series, every patch still present is recognised by its applied-when.

A later patch may rewrite code an earlier patch's marker looks for without
touching a line the earlier patch wrote: three-tier-decode keeps the
vendor's ``_PYTORCH_DECODE_THRESHOLD = 32768`` line as it is (its default
equals the vendor's value) and marks itself by it, so a later patch that
raises the threshold to 49152 passes its own checks, yet the output would
not be recognised on re-apply and three-tier-decode would apply again.
The later patch fails instead, naming the earlier one; ``apply`` writes
nothing (exit 2), and ``patcher test`` fails a series case.
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path
from typing import Any

from patcher.patchset import load_patch_set
from patcher.patchset.runner import Status, patch_source, run_series

from tests.fixtures_patches import (PATCHED, VENDOR_SOURCE, copy_patch_set, insert_step, patch_toml, replace_step,
                                    write_patch_set)
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

TARGET = "vllm/attention/ops/paged_attn.py"
THRESHOLD = "_PYTORCH_DECODE_THRESHOLD = 32768"


def threshold_patch(value: int = 49152, patch_id: str = "long-context-threshold") -> str:
    """Return a later patch as a hurried engineer writes it: it sets the decode threshold to VALUE, and passes its own example."""
    return patch_toml(patch_id, replace_step(THRESHOLD, f"_PYTORCH_DECODE_THRESHOLD = {value}"),
                      scope="PagedAttention", target=TARGET,
                      header=f'applied-when = ["_PYTORCH_DECODE_THRESHOLD = {value}"]\n') + textwrap.dedent(f"""
        [[examples]]
        name = "the threshold goes up"
        before = '''
        class PagedAttention:
            {THRESHOLD}
        '''
        after = '''
        class PagedAttention:
            _PYTORCH_DECODE_THRESHOLD = {value}
        '''
    """)


def series_with_threshold_patch(folder: Path, value: int = 49152) -> Path:
    """Copy the shipped set to FOLDER and append the threshold patch to its series; return patches/."""
    patches = copy_patch_set(folder)
    (patches / "long-context-threshold.toml").write_text(threshold_patch(value), encoding="utf-8")
    with open(patches / "series", "a", encoding="utf-8") as series:
        series.write("long-context-threshold.toml\n")
    return patches


def _shipped_series(patches: Path) -> tuple[Any, ...]:
    return load_patch_set(patches).for_target(TARGET)


def test_a_later_patch_that_rewrites_an_earlier_marker_fails_and_is_left_out(tmp_path: Path) -> None:
    series = _shipped_series(series_with_threshold_patch(tmp_path))
    result = patch_source(SHIPPED, VENDOR_SOURCE, series)
    assert [(o.patch.id, o.status) for o in result.outcomes] == [
        ("three-tier-decode", Status.APPLIED), ("prefix-pregather", Status.APPLIED),
        ("prefix-buffer-reuse", Status.APPLIED), ("long-context-threshold", Status.FAILED)]
    assert result.outcomes[-1].detail == (
        "rewrites '_PYTORCH_DECODE_THRESHOLD = 32768' in PagedAttention, which patch three-tier-decode's "
        "applied-when marker needs: three-tier-decode would not be recognised on re-apply, and would apply again; "
        "make long-context-threshold leave that code, or change three-tier-decode's marker")
    # The file is what the rest of the series gives: the committed patched copy.
    assert result.patched == PATCHED.read_bytes()


def test_run_series_names_the_marker_its_owner_and_the_patch_that_broke_it(tmp_path: Path) -> None:
    series = _shipped_series(series_with_threshold_patch(tmp_path))
    (broken,) = run_series(SHIPPED, VENDOR_SOURCE, series).breaks
    assert (broken.owner.id, str(broken.marker.pattern), broken.marker.scope, broken.breaker.id, broken.scope_gone) == (
        "three-tier-decode", THRESHOLD, "PagedAttention", "long-context-threshold", False)


def test_the_check_holds_on_an_already_applied_patch_too(tmp_path: Path) -> None:
    # Running on apply's own output: three-tier-decode is already there, the later patch still breaks it.
    series = _shipped_series(series_with_threshold_patch(tmp_path))
    result = patch_source(SHIPPED, PATCHED.read_bytes(), series)
    assert [o.status for o in result.outcomes] == [Status.ALREADY_APPLIED] * 3 + [Status.FAILED]
    assert "patch three-tier-decode's applied-when marker needs" in result.outcomes[-1].detail
    assert result.patched == PATCHED.read_bytes()


def test_a_later_patch_that_leaves_the_markers_alone_applies(tmp_path: Path) -> None:
    # Same scope, same region, but it adds a line instead of rewriting the marked one.
    patches = copy_patch_set(tmp_path)
    (patches / "note-threshold.toml").write_text(patch_toml(
        "note-threshold", insert_step("after", THRESHOLD, "_DECODE_THRESHOLD_NOTE = 'V1 limit'"),
        scope="PagedAttention", target=TARGET, header='applied-when = ["_DECODE_THRESHOLD_NOTE = $_"]\n'))
    (patches / "series").write_text((patches / "series").read_text() + "note-threshold.toml\n")
    series = _shipped_series(patches)
    run = run_series(SHIPPED, VENDOR_SOURCE, series)
    assert run.breaks == () and [o.status for o in run.file.outcomes] == [Status.APPLIED] * 4
    again = run_series(SHIPPED, run.file.patched, series)
    assert [o.status for o in again.file.outcomes] == [Status.ALREADY_APPLIED] * 4
    assert again.file.patched == run.file.patched


def test_a_later_patch_that_removes_the_markers_scope_fails(tmp_path: Path) -> None:
    patches = write_patch_set(tmp_path, {
        "mark.toml": patch_toml("mark", insert_step("after", "y = 2", "z = 3"), header='applied-when = ["z = 3"]\n'),
        "rename.toml": patch_toml("rename", replace_step("def f():\n    $...BODY\n", "def g():\n    $...BODY\n"),
                                  scope="", header='applied-when = ["def g():\\n    $...\\n"]\n'),
    })
    source = b"def f():\n    x = 1\n    y = 2\n"
    run = run_series("x.py", source, load_patch_set(patches).patches)
    assert [o.status for o in run.file.outcomes] == [Status.APPLIED, Status.FAILED]
    assert run.file.outcomes[1].detail.startswith(
        "removes f, where patch mark's applied-when marker 'z = 3' must hold: mark would not be recognised")
    assert run.file.patched == b"def f():\n    x = 1\n    y = 2\n    z = 3\n"
    assert run.breaks[0].scope_gone


def _marked_then_broken(tmp_path: Path) -> Path:
    """'first' marks itself by its own line and by two vendor lines; 'second' and 'third' rewrite one each;
    'fourth' inserts above 'x = ...' and breaks nothing."""
    return write_patch_set(tmp_path, {
        "first.toml": patch_toml("first", insert_step("after", "y = 2", "z = 3"),
                                 header='applied-when = ["z = 3", "x = 1", "y = 2"]\n'),
        "second.toml": patch_toml("second", replace_step("x = 1", "x = 10"), header='applied-when = ["x = 10"]\n'),
        "third.toml": patch_toml("third", replace_step("y = 2", "y = 20"), header='applied-when = ["y = 20"]\n'),
        "fourth.toml": patch_toml("fourth", insert_step("before", "x = $_", "v = 0"), header='applied-when = ["v = 0"]\n'),
    })


def test_each_later_patch_that_breaks_a_marker_fails_and_the_rest_still_apply(tmp_path: Path) -> None:
    # 'first' marks itself by its own line and by two vendor lines; two later patches rewrite one each.
    patches = _marked_then_broken(tmp_path)
    run = run_series("x.py", b"def f():\n    x = 1\n    y = 2\n", load_patch_set(patches).patches)
    assert [o.status for o in run.file.outcomes] == [Status.APPLIED, Status.FAILED, Status.FAILED, Status.APPLIED]
    assert "rewrites 'x = 1' in f, which patch first's applied-when marker needs" in run.file.outcomes[1].detail
    assert "rewrites 'y = 2' in f, which patch first's applied-when marker needs" in run.file.outcomes[2].detail
    assert run.file.patched == b"def f():\n    v = 0\n    x = 1\n    y = 2\n    z = 3\n"
    assert [(b.owner.id, b.breaker.id) for b in run.breaks] == [("first", "second"), ("first", "third")]


def test_apply_refuses_the_series_and_writes_nothing(cli: Any, tmp_path: Path) -> None:
    patches = series_with_threshold_patch(tmp_path / "set")
    digest = hashlib.sha256(VENDOR_ZIP.read_bytes()).hexdigest()
    output = tmp_path / "out.tar.gz"
    result = cli("apply", VENDOR_ZIP, "-o", output, "--patches", patches)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith(
        f"error: {SHIPPED}: patch long-context-threshold: rewrites '_PYTORCH_DECODE_THRESHOLD = 32768' in "
        "PagedAttention, which patch three-tier-decode's applied-when marker needs")
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert not output.exists() and list(tmp_path.glob("*.tar.gz*")) == []
    assert hashlib.sha256(VENDOR_ZIP.read_bytes()).hexdigest() == digest


def test_a_value_equal_to_the_marker_breaks_nothing(tmp_path: Path) -> None:
    # The same later patch with the vendor's own value rewrites nothing the marker needs.
    series = _shipped_series(series_with_threshold_patch(tmp_path, value=32768))
    run = run_series(SHIPPED, VENDOR_SOURCE, series)
    assert run.breaks == ()
    assert [o.status for o in run.file.outcomes][:3] == [Status.APPLIED] * 3


def test_patcher_test_fails_a_series_case_naming_the_later_patch(cli: Any, tmp_path: Path) -> None:
    patches = series_with_threshold_patch(tmp_path)
    result = cli("test", "--patches", patches)
    assert result.exit_code == 1, result.output
    failures = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert failures and all(line.startswith("FAIL  series: three-tier-decode: ") for line in failures)
    assert all("[every marker holds after the series]: patch long-context-threshold: rewrites "
               "'_PYTORCH_DECODE_THRESHOLD = 32768' in PagedAttention" in line for line in failures)
    # The later patch passes every check of its own: only the series shows what it breaks.
    own = [line for line in result.stdout.splitlines() if line.startswith(("ok    long-context", "FAIL  long-context"))]
    assert own and all(line.startswith("ok") for line in own)
    # Naming the later patch alone still runs the series cases of its file.
    named = cli("test", "long-context-threshold", "--patches", patches)
    assert named.exit_code == 1
    assert any(line.startswith("FAIL  series: three-tier-decode: ") for line in named.stdout.splitlines())


def test_a_patch_left_out_for_breaking_a_marker_is_shown_the_file_the_kept_patches_give(tmp_path: Path) -> None:
    # 'explain' shows each patch the bytes it was run on. The run that counts
    # is the one without the breakers: each breaker, and each patch after it,
    # receives what the kept patches before it made.
    patches = _marked_then_broken(tmp_path)
    source = b"def f():\n    x = 1\n    y = 2\n"
    after_first = b"def f():\n    x = 1\n    y = 2\n    z = 3\n"
    inputs: list[bytes] = []
    result = patch_source("x.py", source, load_patch_set(patches).patches, inputs=inputs)
    assert [o.status for o in result.outcomes] == [Status.APPLIED, Status.FAILED, Status.FAILED, Status.APPLIED]
    assert inputs == [source, after_first, after_first, after_first]
