"""An expected failure is one line: where, what (newlines folded), and what to do; its exit code is 2."""

from __future__ import annotations

from patcher.errors import BadArchive, PatcherError


def test_error_text_is_one_line_with_where_and_hint() -> None:
    error = PatcherError("bad\nthing", where="x.zip", hint="do this")
    assert str(error) == "x.zip: bad thing (do this)"
    assert error.exit_code == 2
    assert isinstance(BadArchive("m"), PatcherError)
