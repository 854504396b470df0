"""A broken patch set is refused before any file is touched, naming the file and the key."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests.fixtures_vendor import PATCHES, ROOT


@pytest.fixture
def patch_set(tmp_path: Path) -> Path:
    """A writable copy of the patch set with its templates beside it."""
    shutil.copytree(PATCHES, tmp_path / "set" / "patches")
    shutil.copytree(ROOT / "templates", tmp_path / "set" / "templates")
    return tmp_path / "set" / "patches"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


def _refused(cli, vendor_zip: Path, patch_set: Path, *extra: str) -> str:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", patch_set, *extra)
    assert result.exit_code == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert list(cli.cwd.iterdir()) == []  # nothing written, no temporaries
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def test_unknown_key_gets_a_did_you_mean(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    _edit(patch_set / "prefix-pregather.toml", 'last-update = "', 'last-updated = "')
    line = _refused(cli, vendor_zip, patch_set)
    assert "prefix-pregather.toml: unknown key 'last-updated'; did you mean 'last-update'?" in line


def test_unknown_step_key_names_the_step(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    _edit(patch_set / "three-tier-decode.toml", 'op = "replace"\nscope', 'op = "replace"\nexpected = 1\nscope')
    line = _refused(cli, vendor_zip, patch_set)
    assert re.search(r"three-tier-decode\.toml: steps\[1\]\.expected: unknown key 'expected' .*did you mean 'expect'", line)


def test_unknown_operation_lists_the_known_ones(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    _edit(patch_set / "prefix-pregather.toml", 'op = "insert"', 'op = "inserts"')
    line = _refused(cli, vendor_zip, patch_set)
    assert "steps[1].op' is 'inserts', not an operation; did you mean 'insert'?" in line
    assert "known: insert, replace, reuse-buffers" in line


def test_mistyped_parameter_default(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    _edit(patch_set / "three-tier-decode.toml", "default = 8192", 'default = "8192"')
    assert "params.small_max.default: expected int, got '8192'" in _refused(cli, vendor_zip, patch_set)


def test_missing_parameter_default(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    _edit(patch_set / "three-tier-decode.toml", "default = 8192\n", "")
    assert "'params.small_max' has no 'default'" in _refused(cli, vendor_zip, patch_set)


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
def test_bad_set_values(cli, vendor_zip, patch_set, setting: str, message: str) -> None:  # type: ignore[no-untyped-def]
    assert message in _refused(cli, vendor_zip, patch_set, "--set", setting)


def test_template_with_an_undefined_variable(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    template = patch_set.parent / "templates" / "three-tier-decode" / "dispatch.py.j2"
    _edit(template, "{{ small_max }} and", "{{ smal_max }} and")
    line = _refused(cli, vendor_zip, patch_set)
    assert "three-tier-decode.toml: steps[2].template" in line and "'smal_max' is undefined" in line


def test_template_that_does_not_render_to_python(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    template = patch_set.parent / "templates" / "prefix-pregather" / "gather_context.py.j2"
    _edit(template, "k_grp = v_grp = None", "k_grp = = v_grp")
    line = _refused(cli, vendor_zip, patch_set)
    assert "prefix-pregather.toml: steps[1].template: code from 'template' is not valid Python at line 13, column 10: expected one of" in line


def test_missing_template_file(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    (patch_set.parent / "templates" / "prefix-pregather" / "gather_context.py.j2").unlink()
    assert "no template 'prefix-pregather/gather_context.py.j2'" in _refused(cli, vendor_zip, patch_set)


def test_pattern_that_is_not_python(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    _edit(patch_set / "prefix-pregather.toml", 'pattern = "k_tile = key_cache', 'pattern = "k_tile = = key_cache')
    assert "prefix-pregather.toml: steps[3].pattern: pattern in 'pattern' is not valid Python" in _refused(cli, vendor_zip, patch_set)


def test_series_naming_a_missing_file(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    (patch_set / "series").write_text("three-tier-decode.toml\nmissing.toml\n")
    assert "series: line 2 names 'missing.toml', which does not exist" in _refused(cli, vendor_zip, patch_set)


def test_invalid_toml(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    (patch_set / "prefix-pregather.toml").write_text("id = \n")
    assert "prefix-pregather.toml: not valid TOML" in _refused(cli, vendor_zip, patch_set)


def test_two_patches_rewriting_the_same_code(cli, vendor_zip, patch_set) -> None:  # type: ignore[no-untyped-def]
    (patch_set / "retune-decode.toml").write_text('''
id = "retune-decode"
description = "Rewrite what three-tier-decode wrote"
origin = "test"
last-update = "2026-11-29"
target = "vllm/attention/ops/paged_attn.py"
scope = "PagedAttention.forward_decode"

[[steps]]
op = "replace"
pattern = "use_v2 = actual_max > $N and $REST"
code = "use_v2 = False"
''')
    (patch_set / "series").write_text("three-tier-decode.toml\nretune-decode.toml\n")
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--patches", patch_set)
    assert result.exit_code == 2
    assert "patch retune-decode: rewrites code that patch three-tier-decode wrote" in result.stderr
    assert not (cli.cwd / "ctx.tar.gz").exists()
