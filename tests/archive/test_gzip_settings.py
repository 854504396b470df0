"""Levels 0 to 9 (6 by default) and blocks of at least the 32 KiB window; anything else is refused.

A refusal says what is allowed.
"""

from __future__ import annotations

import io

import pytest

from patcher.archive.gzip_stream import GzipWriter, WINDOW


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        GzipWriter(io.BytesIO(), 10)
    with pytest.raises(ValueError):
        GzipWriter(io.BytesIO(), block=WINDOW - 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(level=10), "gzip level must be 0-9, got 10"),
        (dict(level=-1), "gzip level must be 0-9, got -1"),
        (dict(block=WINDOW - 1), f"block size must be at least {WINDOW}, got {WINDOW - 1}"),
    ],
)
def test_bad_gzip_settings_say_what_is_allowed(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        GzipWriter(io.BytesIO(), threads=1, **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message
