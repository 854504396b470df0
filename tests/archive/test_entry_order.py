"""Entries are sorted by path, each folder right before its own contents.

Names that sort between a folder and its contents ('a-b', 'a.py' beside 'a/') do not split them.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

from patcher.archive import OutputFile, OutputFormat, write_output
from patcher.archive.layout import plan


# '-' and '.' sort before '/': a plain sort of names would put the folder 'a'
# before 'a-b' and 'a.py' and so apart from its own contents.
LOOK_ALIKES = ["a/x", "a-b", "a.py", "a/b/c", "a0"]


ORDER = ["a-b", "a.py", "a", "a/b", "a/b/c", "a/x", "a0"]


def look_alikes() -> list[OutputFile]:
    return [OutputFile(path, False, data=path.encode()) for path in LOOK_ALIKES]


def test_each_folder_comes_right_before_its_own_contents() -> None:
    names = [entry.name for entry in plan(look_alikes())]
    assert names == ORDER
    for index, name in enumerate(names):
        if name in ("a", "a/b"):  # the folders
            inside = [i for i, other in enumerate(names) if other.startswith(name + "/")]
            assert inside == list(range(index + 1, index + 1 + len(inside))), name


def test_the_tar_holds_entries_in_that_order_with_a_prefix_too(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar"
    write_output(dest, look_alikes(), fmt=OutputFormat.TAR, mtime=0)
    with tarfile.open(dest) as tar:
        assert tar.getnames() == ORDER
    assert [e.name for e in plan(look_alikes(), "top/")] == ["top"] + [f"top/{name}" for name in ORDER]


def test_a_file_sorts_before_a_longer_name_it_begins() -> None:
    files = [OutputFile(p, False, data=b"") for p in ("Dockerfile.dev", "run.sh.orig", "Dockerfile", "run.sh")]
    assert [e.name for e in plan(files)] == ["Dockerfile", "Dockerfile.dev", "run.sh", "run.sh.orig"]
