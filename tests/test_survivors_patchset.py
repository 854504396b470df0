"""Loading a patch set: typed parameters, --set values, markers and examples, each refusal named.

Written against the mutants of patcher/patchset that survived the fast
tests (benchmarks/mutation.sh).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patcher.errors import PatchSetError
from patcher.patchset import load_patch_set

PATCH = '''id = "edit"
description = "An edit"
origin = "test"
last-update = "2026-11-29"
target = "x.py"
scope = "f"
{extra}
[params.flag]
type = "bool"
default = false
[params.n]
type = "int"
default = {n_default}
min = 1
max = 10
[params.ratio]
type = "float"
default = 1
[params.name]
type = "str"
default = "a"

[[steps]]
op = "replace"
pattern = "x = 1"
code = "x = 2"
{tail}
'''
DEFAULTS = {"flag": False, "n": 2, "ratio": 1, "name": "a"}


def _load(tmp_path: Path, extra: str = "", tail: str = "", overrides: tuple[str, ...] = (), n_default: str = "2") -> Any:
    folder = tmp_path / "set" / "patches"
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / "templates").mkdir(exist_ok=True)
    (folder / "edit.toml").write_text(PATCH.format(extra=extra, tail=tail, n_default=n_default))
    (folder / "series").write_text("edit.toml\n")
    (patch,) = load_patch_set(folder, overrides=list(overrides)).patches
    return patch


def _refused(tmp_path: Path, **kwargs: Any) -> str:
    with pytest.raises(PatchSetError) as refused:
        _load(tmp_path, **kwargs)
    return str(refused.value).replace(str(tmp_path / "set" / "patches" / "edit.toml"), "edit.toml")


@pytest.mark.parametrize(("setting", "name", "value"), [
    ("edit.flag=true", "flag", True), ("edit.flag= YES ", "flag", True), ("edit.flag=1", "flag", True),
    ("edit.flag=no", "flag", False), ("edit.flag=0", "flag", False), ("edit.flag=False", "flag", False),
    ("edit.n=5", "n", 5), ("edit.n=1", "n", 1), ("edit.n=10", "n", 10),
    ("edit.ratio=3", "ratio", 3.0), ("edit.ratio=0.5", "ratio", 0.5), ("edit.name=hello", "name", "hello"),
])
def test_set_values_are_parsed_by_type(tmp_path: Path, setting: str, name: str, value: object) -> None:
    values = _load(tmp_path, overrides=(setting,)).values
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
    assert _refused(tmp_path, overrides=(setting,)) == message


@pytest.mark.parametrize(("default", "message"), [
    ("true", "edit.toml: params.n.default: expected int, got True"),
    ("0", "edit.toml: params.n.default: 0 is below the minimum 1"),
    ("2.0", "edit.toml: params.n.default: expected int, got 2.0"),
])
def test_bad_defaults_are_refused(tmp_path: Path, default: str, message: str) -> None:
    assert _refused(tmp_path, n_default=default) == message


def test_markers_are_patterns_or_tables_with_a_scope(tmp_path: Path) -> None:
    patch = _load(tmp_path, extra='applied-when = ["x = {{ n }}", {pattern = "y = $Y", scope = "g"}]\n'
                                  'requires = ["z = $_"]', overrides=("edit.n=7",))
    assert [(str(m.pattern), m.scope) for m in patch.applied_when] == [("x = 7", "f"), ("y = $Y", "g")]
    assert [(str(m.pattern), m.scope) for m in patch.requires] == [("z = $_", "f")]


@pytest.mark.parametrize(("extra", "message"), [
    ('applied-when = "x = 2"', "edit.toml: 'applied-when' must be a list of patterns"),
    ('applied-when = [{scope = "g"}]', "edit.toml: 'applied-when[1]' must be a pattern or a table with 'pattern'"),
    ("requires = [3]", "edit.toml: 'requires[1]' must be a pattern or a table with 'pattern'"),
    ('applied-when = [{pattern = "x = 2", scop = "g"}]',
     "edit.toml: unknown key 'applied-when[1].scop'; did you mean 'scope'?"),
    ('applied-when = ["x = 2", "x = {{ nope }}"]',
     "edit.toml: applied-when[2]: template uses an undefined variable: 'nope' is undefined (in 'pattern')"),
])
def test_bad_markers_are_refused(tmp_path: Path, extra: str, message: str) -> None:
    assert _refused(tmp_path, extra=extra) == message


def test_a_marker_that_is_not_python_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, extra='requires = ["x = = 2"]').startswith(
        "edit.toml: requires[1]: pattern in 'pattern' is not valid Python at line 1, column ")


def test_examples_get_defaults(tmp_path: Path) -> None:
    tail = ('[[examples]]\nbefore = "x = 1"\n'
            '[[examples]]\nname = "named"\nbefore = "a"\nafter = "b"\nerror = "c"\nparams = {n = 3}\n')
    first, second = _load(tmp_path, tail=tail).examples
    assert (first.name, first.before, first.after, first.error, first.params) == ("example 1", "x = 1", None, None, {})
    assert (second.name, second.before, second.after, second.error, second.params) == ("named", "a", "b", "c", {"n": 3})


@pytest.mark.parametrize(("tail", "message"), [
    ('[[examples]]\nbefore = "x"\n[[examples]]\nname = "x"\nafter = "b"\n', "edit.toml: 'examples[2]' has no 'before'"),
    ('[[examples]]\nbefore = "x"\nafterr = "b"\n', "edit.toml: unknown key 'examples[1].afterr'; did you mean 'after'?"),
])
def test_bad_examples_are_refused(tmp_path: Path, tail: str, message: str) -> None:
    assert _refused(tmp_path, tail=tail) == message
