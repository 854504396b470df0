"""A broken patch set is refused before any file is touched: one line naming the file and the key, exit 2, nothing written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.fixtures_patches import copy_patch_set, edit_file, one_error_line, patch_toml, replace_step


@pytest.fixture
def patches(tmp_path: Path) -> Path:
    """A writable copy of the patch set with its templates beside it."""
    return copy_patch_set(tmp_path / "set")


def _refused(cli, vendor_zip: Path, patches: Path, *extra: str) -> str:  # type: ignore[no-untyped-def]
    """Run apply with PATCHES; return the one error line it refused with, having written nothing and changed nothing."""
    before = {path: path.read_bytes() for path in patches.parent.rglob("*") if path.is_file()}
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", patches, *extra)
    line = one_error_line(result)
    assert list(cli.cwd.iterdir()) == []  # nothing written, no temporaries
    assert {path: path.read_bytes() for path in patches.parent.rglob("*") if path.is_file()} == before  # the input as it was
    return line


def test_unknown_key_gets_a_did_you_mean(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    edit_file(patches / "prefix-pregather.toml", 'last-update = "', 'last-updated = "')
    line = _refused(cli, vendor_zip, patches)
    assert "prefix-pregather.toml: unknown key 'last-updated'; did you mean 'last-update'?" in line


def test_unknown_step_key_names_the_step(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    edit_file(patches / "three-tier-decode.toml", 'op = "replace"\nscope', 'op = "replace"\nexpected = 1\nscope')
    line = _refused(cli, vendor_zip, patches)
    assert re.search(r"three-tier-decode\.toml: steps\[1\]\.expected: unknown key 'expected' .*did you mean 'expect'", line)


def test_unknown_operation_lists_the_known_ones(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    edit_file(patches / "prefix-pregather.toml", 'op = "insert"', 'op = "inserts"', occurs=3)
    line = _refused(cli, vendor_zip, patches)
    assert "steps[1].op' is 'inserts', not an operation; did you mean 'insert'?" in line
    assert "known: insert, replace, reuse-buffers" in line


def test_a_mistyped_parameter_default_is_refused_naming_its_key(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    edit_file(patches / "three-tier-decode.toml", "default = 8192", 'default = "8192"')
    assert "params.small_max.default: expected int, got '8192'" in _refused(cli, vendor_zip, patches)


def test_a_parameter_without_a_default_is_refused(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    edit_file(patches / "three-tier-decode.toml", "default = 8192\n", "")
    assert "'params.small_max' has no 'default'" in _refused(cli, vendor_zip, patches)


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ("three-tier-decode.small_max=big", "--set three-tier-decode.small_max=big: expected int, got 'big'"),
        ("three-tier-decode.small=1", "patch 'three-tier-decode' has no parameter 'small'; did you mean 'small_max'?"),
        ("three-tier.small_max=1", "no patch 'three-tier' in the series; did you mean 'three-tier-decode'?"),
        ("three-tier-decode.small_max=0", "0 is below the minimum 1"),
        ("small_max", "expected PATCH.PARAM=VALUE"),
    ],
)
def test_a_bad_set_value_is_refused_saying_what_is_wrong(cli, vendor_zip, patches, setting: str, message: str) -> None:  # type: ignore[no-untyped-def]
    assert message in _refused(cli, vendor_zip, patches, "--set", setting)


def test_a_template_with_an_undefined_variable_is_refused_naming_the_step(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    template = patches.parent / "templates" / "three-tier-decode" / "dispatch.py.j2"
    edit_file(template, "{{ small_max }} and", "{{ smal_max }} and")
    line = _refused(cli, vendor_zip, patches)
    assert "three-tier-decode.toml: steps[2].template" in line and "'smal_max' is undefined" in line


def test_a_template_that_does_not_render_to_python_is_refused_with_its_line(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    template = patches.parent / "templates" / "prefix-pregather" / "gather_context.py.j2"
    edit_file(template, "k_grp = v_grp = None", "k_grp = = v_grp")
    line = _refused(cli, vendor_zip, patches)
    assert "prefix-pregather.toml: steps[1].template: code from 'template' is not valid Python at line 13, column 10: expected one of" in line


def test_a_missing_template_file_is_refused_naming_it(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    (patches.parent / "templates" / "prefix-pregather" / "gather_context.py.j2").unlink()
    assert "no template 'prefix-pregather/gather_context.py.j2'" in _refused(cli, vendor_zip, patches)


def test_a_pattern_that_is_not_python_is_refused_naming_the_step(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    edit_file(patches / "prefix-pregather.toml", 'pattern = "k_tile = key_cache', 'pattern = "k_tile = = key_cache')
    assert "prefix-pregather.toml: steps[3].pattern: pattern in 'pattern' is not valid Python" in _refused(cli, vendor_zip, patches)


def test_a_series_naming_a_missing_file_is_refused_with_its_line(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    (patches / "series").write_text("three-tier-decode.toml\nmissing.toml\n")
    assert "series: line 2 names 'missing.toml', which does not exist" in _refused(cli, vendor_zip, patches)


def test_a_file_that_is_not_toml_is_refused_naming_it(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    (patches / "prefix-pregather.toml").write_text("id = \n")
    assert "prefix-pregather.toml: not valid TOML" in _refused(cli, vendor_zip, patches)


def test_two_patches_rewriting_the_same_code_stop_apply_before_it_writes(cli, vendor_zip, patches) -> None:  # type: ignore[no-untyped-def]
    (patches / "retune-decode.toml").write_text(patch_toml(
        "retune-decode", replace_step("use_v2 = actual_max > $N and $REST", "use_v2 = False"),
        scope="PagedAttention.forward_decode", target="vllm/attention/ops/paged_attn.py",
        description="Rewrite what three-tier-decode wrote"))
    (patches / "series").write_text("three-tier-decode.toml\nretune-decode.toml\n")
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", patches)
    assert result.exit_code == 2
    assert "patch retune-decode: rewrites code that patch three-tier-decode wrote" in result.stderr
    assert not (cli.cwd / "ctx.tar.gz").exists()
