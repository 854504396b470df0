"""An output file is a safe relative path with exactly one of new bytes or a sized source.

Two files may not clash (the same name, or a file and a folder); an archive prefix ends with '/'.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from patcher.archive import OutputFile, OutputFormat, write_output
from patcher.archive.layout import plan
from tests.fixtures_archives import corpus_files


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(path="../x", executable=False, data=b""),
        dict(path="/x", executable=False, data=b""),
        dict(path="a//b", executable=False, data=b""),
        dict(path="a/", executable=False, data=b""),
        dict(path="a", executable=False),
        dict(path="a", executable=False, data=b"", source=lambda: io.BytesIO(b"")),
        dict(path="a", executable=False, source=lambda: io.BytesIO(b"")),
        dict(path="a", executable=False, data=b"ab", size=3),
    ],
)
def test_output_file_refuses_bad_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        OutputFile(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(path="../x", data=b""), "output path '../x' escapes the tree with a '..' component"),
        (dict(path="a/", data=b""), "output path 'a/' ends with a slash"),
        (dict(path="a"), "a: give exactly one of data and source"),
        (dict(path="a", source=lambda: io.BytesIO(b"")), "a: a source needs its size"),
        (dict(path="a", source=lambda: io.BytesIO(b""), size=-1), "a: a source needs its size"),
        (dict(path="a", data=b"ab", size=3), "a: size 3 but 2 bytes of data"),
    ],
)
def test_each_bad_output_file_says_what_is_wrong(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        OutputFile(executable=False, **kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.parametrize(
    "paths, message",
    [(["a", "a"], "two output files named 'a'"), (["a", "a/b"], "both a file and a folder")],
)
def test_clashing_output_paths_are_refused(tmp_path: Path, paths: list[str], message: str) -> None:
    files = [OutputFile(p, False, data=b"") for p in paths]
    with pytest.raises(ValueError, match=message):
        write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR)
    assert list(tmp_path.iterdir()) == []


def test_a_prefix_without_its_slash_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^bad archive prefix 'top': want 'folder/' or ''$"):
        plan(corpus_files(), "top")
