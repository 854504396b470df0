"""A patch's typed parameters: their defaults and bounds, and ``--set PATCH.PARAM=VALUE`` parsed by type.

Each refusal is one line naming the patch file, or the ``--set`` value and
what to do ("did you mean").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset.load import load_patch_set

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import DEFAULTS, GUARD, PREGATHER, edit_refusal, load_edit, load_one


def test_parameters_keep_their_type_bounds_and_help(tmp_path: Path) -> None:
    text = GUARD + '\n[params.fallback]\ntype = "bool"\ndefault = true\n'
    (limit, fallback) = load_one(tmp_path, text).params
    assert (limit.name, limit.type, limit.default, limit.help, limit.minimum, limit.maximum) == (
        "limit", "int", 8192, "Longest sequence, in tokens, that decodes with V1.", 1, None)
    assert (fallback.name, fallback.type, fallback.default, fallback.help, fallback.minimum, fallback.maximum) == (
        "fallback", "bool", True, "", None, None)


@pytest.mark.parametrize(("spec", "message"), [
    ('params = ["limit"]\n', "'params' must be a table of parameters ([params.NAME])"),
    ("[params]\nlimit = 8192\n", "'params.limit' must be a table with 'type' and 'default'"),
    ('[params.limit]\ntype = "integer"\ndefault = 8192\n',
     "'params.limit.type' must be one of int, float, str, bool, not 'integer'"),
    ("[params.limit]\ndefault = 8192\n", "'params.limit.type' must be one of int, float, str, bool, not None"),
    ('[params.limit]\ntype = "int"\ndefault = 8192\nmaximum = 65536\n',
     "unknown key 'params.limit.maximum'; did you mean 'max'?"),
    ('[params.limit]\ntype = "int"\nhelp = "Longest V1 sequence."\n', "'params.limit' has no 'default'"),
    ('[params.ratio]\ntype = "float"\ndefault = "0.5"\n', "params.ratio.default: expected float, got '0.5'"),
    ('[params.backend]\ntype = "str"\ndefault = 2\n', "params.backend.default: expected str, got 2"),
])
def test_a_bad_parameter_is_refused_naming_the_file(tmp_path: Path, spec: str, message: str) -> None:
    text = GUARD.split("[params.limit]")[0] + spec + "\n[[steps]]" + GUARD.split("[[steps]]")[1]
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text})
    assert refusal(load_patch_set, folder) == f"{folder / 'v1-guard.toml'}: {message}"


def test_a_float_parameter_takes_an_integer_default(tmp_path: Path) -> None:
    text = GUARD.replace('[params.limit]', '[params.ratio]\ntype = "float"\ndefault = 2\nmax = 4\n\n[params.limit]')
    ratio = load_one(tmp_path, text).params[0]
    assert (ratio.name, ratio.default) == ("ratio", 2)


@pytest.mark.parametrize(("default", "message"), [
    ("true", "edit.toml: params.n.default: expected int, got True"),
    ("0", "edit.toml: params.n.default: 0 is below the minimum 1"),
    ("2.0", "edit.toml: params.n.default: expected int, got 2.0"),
])
def test_bad_defaults_are_refused(tmp_path: Path, default: str, message: str) -> None:
    assert edit_refusal(tmp_path, n_default=default) == message


@pytest.mark.parametrize(("setting", "name", "value"), [
    ("edit.flag=true", "flag", True), ("edit.flag= YES ", "flag", True), ("edit.flag=1", "flag", True),
    ("edit.flag=no", "flag", False), ("edit.flag=0", "flag", False), ("edit.flag=False", "flag", False),
    ("edit.n=5", "n", 5), ("edit.n=1", "n", 1), ("edit.n=10", "n", 10),
    ("edit.ratio=3", "ratio", 3.0), ("edit.ratio=0.5", "ratio", 0.5), ("edit.name=hello", "name", "hello"),
])
def test_set_values_are_parsed_by_type(tmp_path: Path, setting: str, name: str, value: object) -> None:
    values = load_edit(tmp_path, overrides=(setting,)).values
    assert values == {**DEFAULTS, name: value}
    assert type(values[name]) is type(value)


@pytest.mark.parametrize(("setting", "message"), [
    ("edit.flag=maybe", "--set edit.flag=maybe: expected bool, got 'maybe'"),
    ("edit.n=0", "--set edit.n=0: 0 is below the minimum 1"),
    ("edit.n=11", "--set edit.n=11: 11 is above the maximum 10"),
    ("edit.n=x", "--set edit.n=x: expected int, got 'x'"),
    ("edit.n=2.5", "--set edit.n=2.5: expected int, got '2.5'"),
    ("edit.ratio=abc", "--set edit.ratio=abc: expected float, got 'abc'"),
    ("edit.nn=3", "--set edit.nn=3: patch 'edit' has no parameter 'nn'; did you mean 'n'?"),
    ("edit.zzz=3", "--set edit.zzz=3: patch 'edit' has no parameter 'zzz'"),
    ("edit.n3", "--set edit.n3: expected PATCH.PARAM=VALUE"),
    ("edt.n=3", "--set edt.n=3: no patch 'edt' in the series; did you mean 'edit'?"),
])
def test_bad_set_values_are_refused(tmp_path: Path, setting: str, message: str) -> None:
    assert edit_refusal(tmp_path, overrides=(setting,)) == message


def test_a_set_value_may_hold_an_equals_sign(tmp_path: Path) -> None:
    text = GUARD.replace('[params.limit]', '[params.flags]\ntype = "str"\ndefault = ""\n\n[params.limit]')
    patch = load_one(tmp_path, text, overrides=["v1-guard.flags=--max-model-len=8192"])
    assert patch.values == {"flags": "--max-model-len=8192", "limit": 8192}


def test_a_set_value_reaches_a_patch_whose_id_holds_dots(tmp_path: Path) -> None:
    # Ids come from file names, and a hand-written file may carry a version.
    text = GUARD.replace('id = "v1-guard"', 'id = "v1-guard-0.6.3"')
    folder = write_patch_set(tmp_path / "team", {"v1-guard-0.6.3.toml": text})
    (patch,) = load_patch_set(folder, overrides=["v1-guard-0.6.3.limit=4096"]).patches
    assert patch.values == {"limit": 4096}
    assert [str(step.code).strip() for step in patch.steps] == ["use_v1 = actual_max <= 4096"]
    assert refusal(load_patch_set, folder, overrides=["v1-guard-0.6.3.limits=1"]) == (
        "--set v1-guard-0.6.3.limits=1: patch 'v1-guard-0.6.3' has no parameter 'limits'; did you mean 'limit'?")


def test_a_set_value_for_a_broken_parameter_names_the_patch_file(tmp_path: Path) -> None:
    text = GUARD.replace("default = 8192\n", "")
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text, "pregather.toml": PREGATHER})
    assert refusal(load_patch_set, folder, overrides=["v1-guard.limit=4096"]) == (
        f"{folder / 'v1-guard.toml'}: 'params.limit' has no 'default'")


def test_a_set_value_for_a_patch_not_in_the_series_suggests_one(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER})
    assert refusal(load_patch_set, folder, overrides=["v1-gaurd.limit=4096"]) == (
        "--set v1-gaurd.limit=4096: no patch 'v1-gaurd' in the series; did you mean 'v1-guard'?")
    assert refusal(load_patch_set, folder, overrides=["zzz.limit=1"]) == (
        "--set zzz.limit=1: no patch 'zzz' in the series")
