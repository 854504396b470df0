"""A patch's ``[[examples]]``: each has a ``before``, the rest has defaults; anything else is refused naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.patchset.load import load_patch_set

from tests.fixtures_patches import refusal, write_patch_set
from tests.patchset.conftest import GUARD, edit_refusal, load_edit


def test_examples_get_defaults(tmp_path: Path) -> None:
    tail = ('[[examples]]\nbefore = "x = 1"\n'
            '[[examples]]\nname = "named"\nbefore = "a"\nafter = "b"\nerror = "c"\nparams = {n = 3}\n')
    first, second = load_edit(tmp_path, tail=tail).examples
    assert (first.name, first.before, first.after, first.error, first.params) == ("example 1", "x = 1", None, None, {})
    assert (second.name, second.before, second.after, second.error, second.params) == ("named", "a", "b", "c", {"n": 3})


@pytest.mark.parametrize(("tail", "message"), [
    ('[[examples]]\nbefore = "x"\n[[examples]]\nname = "x"\nafter = "b"\n', "edit.toml: 'examples[2]' has no 'before'"),
    ('[[examples]]\nbefore = "x"\nafterr = "b"\n', "edit.toml: unknown key 'examples[1].afterr'; did you mean 'after'?"),
])
def test_bad_examples_are_refused(tmp_path: Path, tail: str, message: str) -> None:
    assert edit_refusal(tmp_path, tail=tail) == message


@pytest.mark.parametrize("examples", [
    '[examples]\nbefore = "use_v1 = True"\n',
    'examples = ["use_v1 = True"]\n',
])
def test_examples_that_are_not_an_array_of_tables_are_refused(tmp_path: Path, examples: str) -> None:
    text = GUARD.split("[params.limit]")[0] + examples + "\n[params.limit]" + GUARD.split("[params.limit]")[1]
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text})
    assert refusal(load_patch_set, folder, lazy=True) == (
        f"{folder / 'v1-guard.toml'}: 'examples' must be an array of tables ([[examples]])")
