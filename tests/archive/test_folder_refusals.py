"""An unpacked tree is held to the zip's rules: links out of the tree, broken or folder links, devices,
names differing only in case, backslashes, control characters and names that are not UTF-8 are refused,
each with its whole line; a folder that cannot be listed or a file gone after listing is named.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from patcher.archive import DirSource, open_source
from patcher.errors import BadArchive
from tests.fixtures_archives import bare_tree, small_tree


UNSAFE_IN_FOLDER: dict[str, tuple[Callable[[Path], object], str]] = {
    "symlink-out": (lambda c: (c / "evil").symlink_to("/etc/passwd"), "pointing outside the tree"),
    "dangling": (lambda c: (c / "dangling").symlink_to(c / "nowhere"), "broken symbolic link"),
    "dir-link": (lambda c: (c / "loop").symlink_to(c / "vllm"), "symbolic link to a folder"),
    "fifo": (lambda c: os.mkfifo(c / "pipe"), "not a regular file or folder"),
    "case": (lambda c: (c / "DOCKERFILE").write_bytes(b"x"), "differ only in letter case"),
    "backslash": (lambda c: (c / "a\\b").write_bytes(b"x"), "has a backslash"),
    "not-utf8": (
        lambda c: os.close(os.open(os.fsencode(c) + b"/caf\xe9", os.O_CREAT | os.O_WRONLY)),
        "is not valid UTF-8",
    ),
}


@pytest.mark.parametrize("case", sorted(UNSAFE_IN_FOLDER))
def test_folder_refuses_unsafe_entries(tmp_path: Path, case: str) -> None:
    setup, message = UNSAFE_IN_FOLDER[case]
    ctx = small_tree(tmp_path)
    with open_source(ctx):
        pass  # fine before the change
    setup(ctx)
    with pytest.raises(BadArchive, match=message):
        with open_source(ctx):
            pass


FOLDER_REFUSALS = {
    "symlink-out": (lambda s: (s / "evil").symlink_to("/etc/passwd"),
                    "'qwen3_6_scripts/evil' is a symbolic link pointing outside the tree"
                    " (replace it with the file it points to)"),
    "dangling": (lambda s: (s / "dangling").symlink_to(s / "nowhere"),
                 "'qwen3_6_scripts/dangling' is a broken symbolic link"),
    # A sibling whose name starts with the context's: outside, though its path starts with the context's path.
    "sibling-link": (lambda s: (Path(f"{s.parent}-secrets").mkdir(), Path(f"{s.parent}-secrets/key").write_bytes(b"k"),
                                (s / "key").symlink_to(f"{s.parent}-secrets/key")),
                     "'qwen3_6_scripts/key' is a symbolic link pointing outside the tree"
                     " (replace it with the file it points to)"),
    "git-link": (lambda s: ((s / ".git").mkdir(), (s / ".git" / "config").write_bytes(b"[remote]\n"),
                            (s / "config").symlink_to(s / ".git" / "config")),
                 "'qwen3_6_scripts/config' is a symbolic link into '.git', which is not part of a build context"
                 " (replace it with the file it points to)"),
    "dir-link": (lambda s: (s / "loop").symlink_to(s.parent / "vllm"),
                 "'qwen3_6_scripts/loop' is a symbolic link to a folder, which is not supported"),
    "fifo": (lambda s: os.mkfifo(s / "pipe"),
             "'qwen3_6_scripts/pipe' is a fifo (named pipe), not a regular file or folder"),
    "case": (lambda s: (s / "Paged_Attn.py").write_bytes(b"x"),
             "members 'qwen3_6_scripts/Paged_Attn.py' and 'qwen3_6_scripts/paged_attn.py' differ only in"
             " letter case and would collide on case-insensitive file systems"
             " (rename one of them: a macOS or Windows checkout keeps only one)"),
    "control": (lambda s: (s / "a\x01b").write_bytes(b"x"),
                "file 'qwen3_6_scripts/a\\x01b' has a control character in its name"),
    "not-utf8": (lambda s: os.close(os.open(os.fsencode(s) + b"/caf\xe9", os.O_CREAT | os.O_WRONLY)),
                 "file name 'qwen3_6_scripts/caf\\xe9' is not valid UTF-8"),
}


@pytest.mark.parametrize("case", sorted(FOLDER_REFUSALS))
def test_each_unsafe_folder_entry_is_refused_with_its_whole_line(tmp_path: Path, case: str) -> None:
    setup, message = FOLDER_REFUSALS[case]
    ctx = bare_tree(tmp_path)
    setup(ctx / "qwen3_6_scripts")
    with pytest.raises(BadArchive) as caught:
        DirSource(ctx)
    assert str(caught.value) == f"{ctx}: {message}"


@pytest.mark.parametrize(("unreadable", "shown"), [("", "."), ("qwen3_6_scripts", "qwen3_6_scripts/")])
def test_a_folder_that_cannot_be_listed_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unreadable: str, shown: str
) -> None:
    # Simulated: the tests may run as root, for whom chmod 0o000 means nothing.
    ctx = bare_tree(tmp_path)
    real_scandir = os.scandir

    def scandir(path: object) -> object:
        if Path(str(path)) == ctx / unreadable:  # ctx / "" is ctx itself
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(BadArchive) as caught:
        DirSource(ctx)
    assert str(caught.value) == f"{ctx}: cannot list '{shown}': Permission denied"


def test_a_folder_file_removed_after_listing_is_named(tmp_path: Path) -> None:
    ctx = bare_tree(tmp_path)
    tree = DirSource(ctx)
    (ctx / "qwen3_6_scripts" / "paged_attn.py").unlink()
    with pytest.raises(BadArchive) as caught:
        tree.read("qwen3_6_scripts/paged_attn.py")
    assert str(caught.value) == f"{ctx}: cannot read 'qwen3_6_scripts/paged_attn.py': No such file or directory"


@pytest.mark.parametrize("member", ["qwen3_6_scripts/paged_attn.py", "linked.py"])
def test_a_folder_file_swapped_for_a_link_out_after_listing_is_not_read(tmp_path: Path, member: str) -> None:
    # Between listing and reading, a file (or a link that pointed inside) becomes a link to a file outside.
    ctx = bare_tree(tmp_path)
    (ctx / "linked.py").symlink_to(ctx / "qwen3_6_scripts" / "paged_attn.py")
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"token=hunter2\n")
    tree = DirSource(ctx)
    (ctx / member).unlink()
    (ctx / member).symlink_to(secret)
    with pytest.raises(BadArchive) as caught:
        tree.read(member)
    assert str(caught.value) == (f"{ctx}: '{member}' now points outside the tree (it was replaced after it was "
                                 "listed) (run again on a folder nothing else is changing)")
