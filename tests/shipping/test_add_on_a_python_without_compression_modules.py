"""``ADD`` of an xz- or bzip2-compressed file read by a CPython built without liblzma or libbz2.

Such a CPython has no ``lzma`` (or ``bz2``) module to import: the reader
then cannot look inside a file whose first bytes are that compression's
magic, and takes it for the archive the magic says (BuildKit unpacks an xz
or bzip2 tar): its files are unread, and the note says so, never a guess
that it is no archive. Here the module is made unimportable, as on such a
build, and the reader's module loaded afresh; it is loaded again, with the
module back, when the test ends.
"""

from __future__ import annotations

import importlib
import sys
from typing import Iterator

import pytest

from patcher.shipping import add_archives
from tests.shipping.conftest import plan_of


@pytest.fixture
def without(request: pytest.FixtureRequest) -> Iterator[None]:
    """The module named by the test's parameter cannot be imported while the reader loads."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, request.param, None)  # 'import NAME' raises ImportError
        importlib.reload(add_archives)
        try:
            yield
        finally:
            patch.undo()
            importlib.reload(add_archives)


@pytest.mark.parametrize(("without", "magic"), [("lzma", b"\xfd7zXZ\x00"), ("bz2", b"BZh9")], indirect=["without"])
@pytest.mark.usefixtures("without")
def test_a_file_with_the_magic_of_a_compression_python_cannot_read_is_taken_for_an_archive(magic: bytes) -> None:
    # With the module, these bytes are found not to decompress and the file is copied as it is.
    plan = plan_of({"Dockerfile": "FROM base\nADD payload.bin /opt/\n", "payload.bin": magic + b"garbage" * 20})
    assert "/opt/payload.bin" not in plan.image
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("unread", 2, "ADD payload.bin /opt/", "ADD unpacks the archive it names; the files in it are not followed")]


@pytest.mark.parametrize("magic", [b"\xfd7zXZ\x00", b"BZh9"])
def test_with_the_modules_a_file_whose_magic_lies_is_copied_as_it_is(magic: bytes) -> None:
    plan = plan_of({"Dockerfile": "FROM base\nADD payload.bin /opt/\n", "payload.bin": magic + b"garbage" * 20})
    assert plan.image["/opt/payload.bin"].source == "payload.bin" and plan.notes == ()
