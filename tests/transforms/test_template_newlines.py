"""Code a template writes into a CRLF file has CRLF line breaks inside its tokens too (docstrings, continuations)."""

from __future__ import annotations

from typing import Any

from patcher.patchset.runner import patch_source

from tests.fixtures_patches import insert_step, patch_toml


def _crlf(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode()


def test_a_docstring_and_a_continuation_in_inserted_code_take_the_files_line_endings(load_patch: Any) -> None:
    code = 'def g():\n    """Two\n    lines."""\n    return 1 + \\\n        2\n'
    patch = load_patch(patch_toml(steps=insert_step("after", "x = 1", code), scope=""))
    source = "x = 1\ny = 2\n"
    expected = "x = 1\n" + code + "y = 2\n"
    assert patch_source("x.py", _crlf(source), [patch]).patched == _crlf(expected)
    assert patch_source("x.py", source.encode(), [patch]).patched == expected.encode()
