"""A patch's steps are built on first use, once, and refused then as a full load would refuse them.

``PatchCode`` holds how to build a patch and the digest of what it is built
from: two with one digest are equal, built or not.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from patcher.patchset.load import load_patch_set
from patcher.patchset.model import PatchCode

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import GUARD, PREGATHER


@pytest.mark.parametrize("steps", [
    '[steps]\nop = "replace"\npattern = "use_v1 = True"\ncode = "use_v1 = False"\n',
    'steps = ["use_v1 = True"]\n',
    'steps = [{op = "replace", pattern = "use_v1 = True", code = "use_v1 = False"}, "use_v1 = False"]\n',
    'steps = "use_v1 = True"\n',
])
def test_steps_that_are_not_an_array_of_tables_are_refused_when_built(tmp_path: Path, steps: str) -> None:
    head, params = GUARD.split("[[steps]]")[0].split("[params.limit]")
    text = head + steps + "\n[params.limit]" + params
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text})
    message = f"{folder / 'v1-guard.toml'}: 'steps' must be an array of tables ([[steps]])"
    assert refusal(load_patch_set, folder) == message
    (patch,) = load_patch_set(folder, lazy=True).patches  # lazy: refused on first use
    assert refusal(lambda: patch.steps) == message


def test_an_unknown_operation_is_refused_naming_the_file(tmp_path: Path) -> None:
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD.replace('op = "replace"', 'op = "replce"')})
    assert refusal(load_patch_set, folder) == (
        f"{folder / 'v1-guard.toml'}: 'steps[1].op' is 'replce', not an operation; did you mean 'replace'? "
        "(known: insert, replace, reuse-buffers)")


def test_a_lazy_load_builds_a_patch_once_and_only_when_asked(tmp_path: Path) -> None:
    broken = GUARD.replace("{{ limit }}", "{{ limt }}")
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": broken, "pregather.toml": PREGATHER})
    guard, pregather = load_patch_set(folder, lazy=True).patches
    assert [str(step.pattern) for step in pregather.steps] == ["k = gather(k_cache)"]
    assert pregather.steps is pregather.steps  # built once
    expected = (f"{folder / 'v1-guard.toml'}: steps[1].code: template uses an undefined variable: "
                "'limt' is undefined (in 'code')")
    assert refusal(lambda: guard.steps) == expected
    assert refusal(load_patch_set, folder) == expected


def test_patch_code_is_built_once_and_compared_by_its_digest() -> None:
    calls: list[int] = []

    def build() -> Any:
        calls.append(1)
        return (), (), ()

    code = PatchCode("d1", build)
    assert calls == []
    assert code.built == ((), (), ())
    assert code.built == ((), (), ())
    assert calls == [1]
    assert code == PatchCode("d1", lambda: ((), (), ())) and code != PatchCode("d2", build)


@pytest.mark.parametrize("value", ["1.5", "2e10", "3j", "x", "f(1)", "'s'", "(a + b)", "a.b", "a[1]", "'a' 'b'",
                                   "f'{a}'", "[a, b]", "{1: 2}", "{1, 2}", "[x for x in y]", "{x for x in y}",
                                   "{k: v for k, v in y}", "..."])
def test_an_expression_value_that_is_one_operand_is_written_as_it_is(value: str) -> None:
    from patcher.patchset.load import code_text

    assert code_text("expression", value) == value


def test_an_expression_value_of_several_operands_is_put_in_parentheses() -> None:
    from patcher.patchset.load import code_text

    assert code_text("expression", "a + 1.5") == "(a + 1.5)"
