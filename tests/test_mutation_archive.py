"""Archive behaviours that mutation testing found unasserted (issue 13).

Each test fails for at least one mutant of patcher/archive that survived
the rest of the suite: the exact text of every refusal (what, where and
what to do), limits at their boundaries, and the streaming backstop.
"""

from __future__ import annotations

import importlib.util
import stat
import struct
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.fixtures_vendor import FIXTURES
from patcher.archive import Limits, open_source
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive


def _load_corpus() -> ModuleType:
    name = "make_bad_archives"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, FIXTURES / "make_bad_archives.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


corpus = _load_corpus()
TOP = corpus.TOP


def _methods() -> str:
    """Return the methods this interpreter can decompress, as the message lists them."""
    names = ["stored", "deflate"]
    for module, name in (("bz2", "bzip2"), ("lzma", "lzma")):
        if importlib.util.find_spec(module) is not None:
            names.append(name)
    return ", ".join(names)


# The whole line a user sees for each zip of the corpus: where, what, and
# what to do next. The corpus itself names only a fragment of each.
MESSAGES = {
    "not_a_zip.zip": "not a zip file (pass the vendor .zip or an unpacked folder)",
    "empty_file.zip": "the file is empty, not a zip",
    "truncated.zip": "the zip is truncated or corrupt: its central directory cannot be read"
    " (download it again)",
    "empty_zip.zip": "the zip holds no members",
    "only_folders.zip": "the zip holds only folders, no files",
    "no_dockerfile.zip": "no Dockerfile found (the build context is the folder holding the Dockerfile)",
    "two_contexts.zip": "several candidate build contexts at the same depth:"
    " 'vendor-demo/a/', 'vendor-demo/b/' (keep one folder with a Dockerfile at the top)",
    "outside_context.zip": "member 'vendor-demo/README.md' lies outside the build context"
    " 'vendor-demo/app/' (the folder holding the Dockerfile) (keep one build context per zip)",
    "dotdot.zip": "member 'vendor-demo/../../evil.sh' escapes the tree with a '..' component",
    "absolute.zip": "member '/etc/cron.d/evil.sh' has an absolute path",
    "backslash.zip": "member 'vendor-demo/..\\evil.sh' has a backslash in its name",
    "drive_letter.zip": "member 'C:/Windows/evil.sh' has a drive letter",
    "nul_in_name.zip": "member 'vendor-demo/a\\x00b.txt' has a control character in its name",
    "symlink.zip": "member 'vendor-demo/scripts/link' is a symbolic link; links are not allowed"
    " (re-create the zip without links)",
    "fifo.zip": "member 'vendor-demo/scripts/pipe' is a fifo, not a regular file or folder",
    "device.zip": "member 'vendor-demo/scripts/tty' is a character device, not a regular file or folder",
    "dir_mode_without_slash.zip": "member 'vendor-demo/scripts/sub' is marked as a folder"
    " but its name has no trailing slash",
    "duplicate.zip": "member 'vendor-demo/scripts/run.sh' appears twice",
    "case_collision.zip": "members 'vendor-demo/scripts/RUN.sh' and 'vendor-demo/scripts/run.sh'"
    " differ only in letter case and would collide on case-insensitive file systems",
    "file_and_folder.zip": "member 'vendor-demo/scripts/run.sh' is both a file and a folder",
    "encrypted.zip": "member 'vendor-demo/scripts/run.sh' is encrypted; encrypted zips are not"
    " supported (re-create the zip without a password)",
    "unsupported_method.zip": "member 'vendor-demo/scripts/run.sh' uses unsupported compression"
    f" method 99 (supported: {_methods()}) (re-create the zip with deflate)",
    "non_utf8_name.zip": "member name 'vendor-demo/caf\\xe9.txt' is not ASCII and the zip does"
    " not mark its names as UTF-8, so its encoding is unknown (re-create the zip with UTF-8 names)",
    "bad_utf8_name.zip": "a member name is marked as UTF-8 but is not valid UTF-8 (re-create the zip)",
    "bomb_ratio.zip": "member 'vendor-demo/scripts/zeros.bin' would expand 1023 times (limit 100):"
    " possible zip bomb (if the archive is trusted, raise the limit with --max-ratio)",
    "bomb_overlapping.zip": "members 'vendor-demo/scripts/a.txt' and 'vendor-demo/scripts/b.txt'"
    " share the same data: possible zip bomb",
    "bomb_lying_size.zip": "member 'vendor-demo/scripts/data.bin' expands beyond its declared size"
    " of 1000 bytes: possible zip bomb",
    "short_member.zip": "member 'vendor-demo/scripts/data.txt' holds 100 bytes, fewer than the 110"
    " it declares (truncated or corrupt) (download the zip again)",
    "bad_crc.zip": "member 'vendor-demo/scripts/data.txt' fails its CRC check (the data is corrupt)"
    " (download the zip again)",
    "bad_deflate.zip": "member 'vendor-demo/scripts/data.txt' is corrupt (Error -3 while"
    " decompressing data: invalid block type) (download the zip again)",
}


def test_every_corpus_zip_has_an_expected_line() -> None:
    assert sorted(MESSAGES) == sorted(case.name for case in corpus.CASES)


@pytest.mark.parametrize("case", corpus.CASES, ids=lambda case: case.name)
def test_each_bad_zip_is_refused_with_its_whole_line(case: object) -> None:
    with pytest.raises(BadArchive) as caught:
        with open_source(FIXTURES / "bad" / case.name) as tree:  # type: ignore[attr-defined]
            tree.read(case.read)  # type: ignore[attr-defined]
    assert str(caught.value) == f"{case.name}: {MESSAGES[case.name]}"  # type: ignore[attr-defined]


def _zip(path: Path, members: list[object]) -> Path:
    path.write_bytes(corpus.write_zip(members))
    return path


def _base(path: Path, *extra: object) -> Path:
    path.write_bytes(corpus.with_base(*extra))
    return path


# --- limits at their boundaries ----------------------------------------------


def _set_declared_count(data: bytes, count: int) -> bytes:
    """Return DATA with the end record's two entry counts set to COUNT."""
    end = data.rindex(b"PK\x05\x06")
    return data[: end + 8] + struct.pack("<HH", count, count) + data[end + 12 :]


def test_too_many_members_says_which_limit_to_raise(tmp_path: Path) -> None:
    path = _base(tmp_path / "v.zip")
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(max_members=4))
    assert str(caught.value) == (
        "v.zip: zip declares 5 members, more than the limit of 4"
        " (if the archive is trusted, raise the limit with --max-members)"
    )


def test_an_end_record_that_understates_the_members_is_counted_again(tmp_path: Path) -> None:
    # zipfile reads the central directory by its size, not by the count the
    # end record gives: five entries are found although it declares two.
    path = tmp_path / "v.zip"
    path.write_bytes(_set_declared_count(corpus.with_base(), 2))
    with zipfile.ZipFile(path) as archive:
        assert len(archive.infolist()) == 5
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(max_members=4))
    assert str(caught.value) == (
        "v.zip: zip declares 5 members, more than the limit of 4"
        " (if the archive is trusted, raise the limit with --max-members)"
    )
    with ZipSource(path, Limits(max_members=5)) as source:
        assert [f.path for f in source.files()] == ["Dockerfile", "scripts/run.sh", "scripts/tool.py"]


def test_declared_total_size_says_which_limit_to_raise(tmp_path: Path) -> None:
    path = _base(tmp_path / "v.zip")
    total = len(corpus.DOCKERFILE) + len(corpus.SCRIPT) + len(b"LEVEL = 1\n")
    with ZipSource(path, Limits(max_total_size=total)):
        pass  # exactly the limit is allowed
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(max_total_size=total - 1))
    assert str(caught.value) == (
        f"v.zip: members declare more than {total - 1} bytes in all: possible zip bomb"
        " (if the archive is trusted, raise the limit with --max-size)"
    )


def test_a_member_of_exactly_the_minimum_size_is_ratio_checked(tmp_path: Path) -> None:
    limits = Limits()
    path = _base(tmp_path / "v.zip", corpus.Member(TOP + "scripts/blank.txt", b"\n" * limits.ratio_min_size))
    with pytest.raises(BadArchive, match=r"'vendor-demo/scripts/blank.txt' would expand \d+ times \(limit 100\)"):
        ZipSource(path, limits)
    with ZipSource(path, Limits(ratio_min_size=limits.ratio_min_size + 1)) as source:
        assert source.read("scripts/blank.txt") == b"\n" * limits.ratio_min_size


def test_a_stored_member_expands_exactly_once(tmp_path: Path) -> None:
    # Stored data is as large on disk as it expands to: a ratio of exactly 1
    # stays within a limit of 1.
    members = [
        corpus.Member(TOP + "Dockerfile", corpus.DOCKERFILE, method=zipfile.ZIP_STORED),
        corpus.Member(TOP + "scripts/data.txt", b"payload " * 20, method=zipfile.ZIP_STORED),
    ]
    path = _zip(tmp_path / "v.zip", members)
    with ZipSource(path, Limits(max_ratio=1, ratio_min_size=0)) as source:
        assert source.read("scripts/data.txt") == b"payload " * 20


def test_a_one_byte_member_that_declares_150_is_refused_with_its_ratio(tmp_path: Path) -> None:
    name = TOP + "scripts/data.txt"
    stored = corpus.with_base(corpus.Member(name, b"x", method=zipfile.ZIP_STORED))
    path = tmp_path / "v.zip"
    path.write_bytes(corpus.patch(stored, name, file_size=150))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(ratio_min_size=100))
    assert str(caught.value) == (
        "v.zip: member 'vendor-demo/scripts/data.txt' would expand 150 times (limit 100):"
        " possible zip bomb (if the archive is trusted, raise the limit with --max-ratio)"
    )


# --- the streaming backstop ----------------------------------------------------

BIG = b"first member, read twice\n" * 8
SMALL = b"second, smaller\n"


def _two_members(tmp_path: Path) -> Path:
    return _base(
        tmp_path / "v.zip",
        corpus.Member(TOP + "scripts/big.txt", BIG),
        corpus.Member(TOP + "scripts/small.txt", SMALL),
    )


def test_the_backstop_counts_a_member_read_twice_once(tmp_path: Path) -> None:
    # The limits checked on opening make the backstop unreachable; lowering
    # the limit afterwards stands in for those checks being loosened.
    with ZipSource(_two_members(tmp_path)) as source:
        source._limits = Limits(max_total_size=len(BIG) + len(SMALL))
        assert source.read("scripts/big.txt") == BIG
        assert source.read("scripts/big.txt") == BIG
        assert source.read("scripts/small.txt") == SMALL  # exactly the limit: allowed


def test_the_backstop_trips_on_the_member_that_passes_the_limit(tmp_path: Path) -> None:
    with ZipSource(_two_members(tmp_path)) as source:
        limit = len(BIG) + len(SMALL) - 1
        source._limits = Limits(max_total_size=limit)
        assert source.read("scripts/big.txt") == BIG
        with pytest.raises(BadArchive) as caught:
            source.read("scripts/small.txt")
    assert str(caught.value) == (
        f"v.zip: members expanded past the limit of {limit} bytes while reading"
        " 'scripts/small.txt': possible zip bomb (if the archive is trusted, raise the limit with --max-size)"
    )


# --- names and entries -----------------------------------------------------------


def test_a_folder_entry_listed_twice_is_refused(tmp_path: Path) -> None:
    path = _zip(tmp_path / "v.zip", corpus.base_members() + [corpus.Member(TOP + "scripts/")])
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == "v.zip: member 'vendor-demo/scripts/' appears twice"


def test_folder_entries_above_a_nested_context_are_accepted_whatever_their_names(tmp_path: Path) -> None:
    # The Dockerfile sits two folders down; the folders above it have entries
    # of their own, one of them ending in 'X'.
    top = "enginex-LINUX/"
    members = [
        corpus.Member(top),
        corpus.Member(top + "docker/"),
        corpus.Member(top + "docker/Dockerfile", corpus.DOCKERFILE),
        corpus.Member(top + "docker/run.sh", corpus.SCRIPT, stat.S_IFREG | 0o755),
    ]
    with ZipSource(_zip(tmp_path / "v.zip", members)) as source:
        assert source.prefix == "enginex-LINUX/docker/"
        assert [(f.path, f.executable) for f in source.files()] == [("Dockerfile", False), ("run.sh", True)]


def test_a_corrupt_local_header_is_reported_with_zipfiles_reason(tmp_path: Path) -> None:
    path = _base(tmp_path / "v.zip")
    data = bytearray(path.read_bytes())
    name = (TOP + "scripts/run.sh").encode()
    local = data.index(name) - 30  # the local header comes before the central entry
    assert data[local : local + 4] == b"PK\x03\x04"
    data[local : local + 4] = b"PK\x00\x00"
    path.write_bytes(bytes(data))
    with ZipSource(path) as source, pytest.raises(BadArchive) as caught:
        source.read("scripts/run.sh")
    assert str(caught.value) == (
        "v.zip: member 'vendor-demo/scripts/run.sh' is corrupt (Bad magic number for file header)"
        " (download the zip again)"
    )


def test_compressed_patched_data_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(corpus.patch(corpus.with_base(), TOP + "scripts/run.sh", flags_or=0x20))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: member 'vendor-demo/scripts/run.sh' uses compressed patched data,"
        " which is not supported (re-create the zip with deflate)"
    )


def test_a_member_of_an_unknown_file_type_is_refused_with_the_type(tmp_path: Path) -> None:
    # 0o070000 is no type POSIX defines (not a file, folder, link, device, fifo or socket).
    path = _base(tmp_path / "v.zip", corpus.Member(TOP + "scripts/odd", b"", 0o070000 | 0o644))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: member 'vendor-demo/scripts/odd' is of unknown file type 0o70000,"
        " not a regular file or folder"
    )


def test_a_folder_entry_holding_data_is_refused(tmp_path: Path) -> None:
    members = [m for m in corpus.base_members() if m.name != TOP + "scripts/"]
    path = _zip(tmp_path / "v.zip", members + [corpus.Member(TOP + "scripts/", b"hidden payload\n")])
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == "v.zip: folder entry 'vendor-demo/scripts/' holds data"


@pytest.mark.parametrize("name", ["run", "LINUX"])
def test_an_empty_folder_entry_named_like_a_file_is_a_clash(tmp_path: Path, name: str) -> None:
    members = corpus.base_members() + [
        corpus.Member(TOP + f"scripts/{name}", corpus.SCRIPT),
        corpus.Member(TOP + f"scripts/{name}/"),
    ]
    with pytest.raises(BadArchive) as caught:
        ZipSource(_zip(tmp_path / "v.zip", members))
    assert str(caught.value) == f"v.zip: member 'vendor-demo/scripts/{name}' is both a file and a folder"


def test_an_empty_folder_entry_differing_in_case_from_a_folder_is_a_clash(tmp_path: Path) -> None:
    members = corpus.base_members() + [corpus.Member(TOP + "Scripts/")]
    with pytest.raises(BadArchive) as caught:
        ZipSource(_zip(tmp_path / "v.zip", members))
    assert str(caught.value) == (
        "v.zip: members 'vendor-demo/Scripts' and 'vendor-demo/scripts' differ only in letter case"
        " and would collide on case-insensitive file systems"
    )


def test_a_member_running_past_the_end_of_the_file_names_the_error(tmp_path: Path) -> None:
    # The last member's headers claim 100,000 stored bytes; the file ends long
    # before. zipfile raises a bare EOFError, whose text is empty: the message
    # names the error's type instead of showing '()'. Newer Pythons catch the
    # overrun earlier, as entries overlapping the central directory.
    name = TOP + "scripts/data.txt"
    data = bytearray(corpus.with_base(corpus.Member(name, b"0123456789" * 10, method=zipfile.ZIP_STORED)))
    local, central = corpus._headers(bytes(data), name.encode())
    for header, sizes_at in ((local, 18), (central, 20)):
        data[header.at + sizes_at : header.at + sizes_at + 8] = struct.pack("<II", 100_000, 100_000)
    path = tmp_path / "v.zip"
    path.write_bytes(bytes(data))
    with ZipSource(path) as source, pytest.raises(BadArchive) as caught:
        source.read("scripts/data.txt")
    assert str(caught.value) in {
        f"v.zip: member '{name}' is corrupt ({detail}) (download the zip again)"
        for detail in ("EOFError", "Overlapped entries")
    }


def test_a_missing_or_unreadable_zip_path_is_named(tmp_path: Path) -> None:
    with pytest.raises(BadArchive) as caught:
        ZipSource(tmp_path / "gone.zip")
    assert str(caught.value) == f"{tmp_path / 'gone.zip'}: no such file"
    with pytest.raises(BadArchive) as caught:
        ZipSource(tmp_path)  # a folder given where a zip file is expected
    assert str(caught.value) == (f"{tmp_path}: is a folder, not a regular file "
                                 "(pass the vendor .zip, a build context, or an unpacked folder)")


def test_an_end_record_that_overstates_the_members_is_refused_before_parsing(tmp_path: Path) -> None:
    # Refusing from the end record alone keeps zipfile from building an
    # object per entry of a zip declaring millions of them.
    path = tmp_path / "v.zip"
    path.write_bytes(_set_declared_count(corpus.with_base(), 60_000))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: zip declares 60000 members, more than the limit of 50000"
        " (if the archive is trusted, raise the limit with --max-members)"
    )


def test_exactly_the_member_limit_is_allowed(tmp_path: Path) -> None:
    with ZipSource(_base(tmp_path / "v.zip"), Limits(max_members=5)) as source:
        assert len(source.files()) == 3


def test_any_execute_bit_makes_a_file_executable_and_write_bits_do_not(tmp_path: Path) -> None:
    modes = {"rw-all.sh": 0o666, "owner-x.sh": 0o744, "group-x.sh": 0o654, "other-x.sh": 0o645}
    extra = [corpus.Member(TOP + f"scripts/{name}", corpus.SCRIPT, stat.S_IFREG | mode) for name, mode in modes.items()]
    with ZipSource(_base(tmp_path / "v.zip", *extra)) as source:
        executable = {f.path: f.executable for f in source.files()}
    assert {name: executable[f"scripts/{name}"] for name in modes} == {
        "rw-all.sh": False,
        "owner-x.sh": True,
        "group-x.sh": True,
        "other-x.sh": True,
    }


def test_a_zip_needing_a_newer_zip_version_is_refused_with_zipfiles_reason(tmp_path: Path) -> None:
    data = bytearray(corpus.with_base())
    _, central = corpus._headers(bytes(data), (TOP + "scripts/run.sh").encode())
    data[central.at + 6] = 80  # 'version needed to extract': 8.0, beyond what zipfile reads
    path = tmp_path / "v.zip"
    path.write_bytes(bytes(data))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: the zip uses a feature that is not supported (zip file version 8.0)"
        " (re-create the zip with a common tool)"
    )


# --- writing: errors, the test hook, modes ----------------------------------------

import errno  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402

from patcher.archive import OutputFile, OutputFormat, write_output  # noqa: E402
from patcher.archive import writer  # noqa: E402
from patcher.errors import OutputError  # noqa: E402


def _files() -> list[OutputFile]:
    return [
        OutputFile("Dockerfile", False, data=corpus.DOCKERFILE),
        OutputFile("scripts/run.sh", True, source=lambda: io.BytesIO(corpus.SCRIPT), size=len(corpus.SCRIPT)),
    ]


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (errno.ENOSPC, "{dest}: disk full while writing ctx.tar (free space and retry)"),
        (getattr(errno, "EDQUOT", errno.ENOSPC), "{dest}: disk full while writing ctx.tar (free space and retry)"),
        (errno.EACCES, "{dest}: cannot write to {parent}: permission denied"
         " (choose another output path or fix the folder's permissions)"),
        (errno.EPERM, "{dest}: cannot write to {parent}: permission denied"
         " (choose another output path or fix the folder's permissions)"),
        (errno.EROFS, "{dest}: cannot write to {parent}: permission denied"
         " (choose another output path or fix the folder's permissions)"),
        (errno.EIO, "{dest}: cannot write: Input/output error"),
    ],
    ids=lambda value: errno.errorcode.get(value, "message") if isinstance(value, int) else "",
)
def test_each_write_failure_has_its_own_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: int, message: str
) -> None:
    # Simulated at fsync, where a network or full file system reports late.
    def fail(fd: int) -> None:
        raise OSError(error, os.strerror(error))

    monkeypatch.setattr(os, "fsync", fail)
    dest = tmp_path / "ctx.tar"
    with pytest.raises(OutputError) as caught:
        write_output(dest, _files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == message.format(dest=dest, parent=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_os_error_without_a_reason_is_shown_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(fd: int) -> None:
        raise OSError("the device went away")

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(OutputError) as caught:
        write_output(tmp_path / "ctx.tar", _files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == f"{tmp_path / 'ctx.tar'}: cannot write: the device went away"


def test_a_parent_that_is_a_file_is_named_with_the_folder_it_blocks(tmp_path: Path) -> None:
    (tmp_path / "build").write_bytes(b"not a folder\n")
    dest = tmp_path / "build" / "out" / "ctx.tar"
    with pytest.raises(OutputError) as caught:
        write_output(dest, _files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == (
        f"{tmp_path / 'build' / 'out'}: a parent of the output is a file, not a folder (choose another output path)"
    )


def test_an_existing_output_is_named(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar.gz"
    dest.write_bytes(b"yesterday's build\n")
    with pytest.raises(OutputError) as caught:
        write_output(dest, _files(), fmt=OutputFormat.TAR_GZ)
    assert str(caught.value) == f"{dest}: exists; pass --force to overwrite"


def test_an_output_made_by_another_run_meanwhile_is_kept(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar"

    def other_run_finishes_first() -> io.BytesIO:
        dest.write_bytes(b"the other run's output\n")
        return io.BytesIO(corpus.SCRIPT)

    files = [OutputFile("Dockerfile", False, data=corpus.DOCKERFILE),
             OutputFile("run.sh", True, source=other_run_finishes_first, size=len(corpus.SCRIPT))]
    with pytest.raises(OutputError) as caught:
        write_output(dest, files, fmt=OutputFormat.TAR)
    assert str(caught.value) == f"{dest}: exists; pass --force to overwrite"
    assert dest.read_bytes() == b"the other run's output\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ctx.tar"]


def test_a_folder_replaced_with_force_is_put_back_if_the_new_one_cannot_move_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "ctx"
    (dest / "scripts").mkdir(parents=True)
    (dest / "scripts" / "run.sh").write_bytes(b"echo old\n")
    real_rename = os.rename

    def rename(src: object, dst: object) -> None:
        if str(src).endswith(".tmp"):  # the new output, moving into place
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real_rename(src, dst)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OutputError, match="cannot write: Input/output error"):
        write_output(dest, _files(), fmt=OutputFormat.DIRECTORY, force=True)
    assert [p.name for p in tmp_path.iterdir()] == ["ctx"]
    assert (dest / "scripts" / "run.sh").read_bytes() == b"echo old\n"
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*")) == ["scripts", "scripts/run.sh"]


def test_the_archive_file_itself_gets_the_modes_the_umask_allows(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_output(tmp_path / "ctx.tar", _files(), fmt=OutputFormat.TAR)
        os.umask(0o002)
        write_output(tmp_path / "ctx.zip", _files(), fmt=OutputFormat.ZIP)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "ctx.tar").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "ctx.zip").stat().st_mode) == 0o664


def test_the_write_started_hook_announces_once_then_waits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The hook lets the CLI's interruption test signal a write in progress;
    # here the wait is replaced, so the write runs on at once.
    marker = tmp_path / "started"
    waits: list[float] = []
    monkeypatch.setenv(writer.TEST_WRITE_STARTED, str(marker))
    monkeypatch.setattr(writer.time, "sleep", waits.append)
    seen: list[tuple[int, int]] = []
    big = b"x" * (3 << 20)  # several chunks: the hook is called once per chunk
    files = [OutputFile("Dockerfile", False, data=corpus.DOCKERFILE),
             OutputFile("big.bin", False, source=lambda: io.BytesIO(big), size=len(big))]
    write_output(tmp_path / "out" / "ctx.tar", files, fmt=OutputFormat.TAR,
                 progress=lambda done, total: seen.append((done, total)))
    assert marker.read_bytes() == b"write started\n"
    assert waits == [60]
    total = len(big) + len(corpus.DOCKERFILE)
    assert seen[0] == (0, total) and seen[-1] == (total, total) and len(seen) > 3


def test_without_the_hook_nothing_is_announced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(writer.TEST_WRITE_STARTED, raising=False)
    waits: list[float] = []
    monkeypatch.setattr(writer.time, "sleep", waits.append)
    write_output(tmp_path / "ctx.tar", _files(), fmt=OutputFormat.TAR)
    assert waits == []


@pytest.mark.parametrize("fmt", [OutputFormat.TAR, OutputFormat.DIRECTORY], ids=lambda f: f.name)
def test_a_temporary_name_already_taken_is_neither_written_through_nor_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    # Names are unique by pid and 64 random bits; should one ever exist, it
    # is someone else's file: opened exclusively, and left alone on failure.
    monkeypatch.setattr(writer.secrets, "token_hex", lambda n: "0" * (2 * n))
    dest = tmp_path / "ctx"
    taken = tmp_path / f".ctx.{os.getpid()}.{'0' * 16}.tmp"
    taken.write_bytes(b"someone else's\n")
    with pytest.raises(OutputError) as caught:
        write_output(dest, _files(), fmt=fmt)
    assert str(caught.value) == f"{dest}: cannot write: File exists"
    assert taken.read_bytes() == b"someone else's\n"
    assert [p.name for p in tmp_path.iterdir()] == [taken.name]


def test_a_parent_made_meanwhile_by_another_run_is_used_and_not_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_mkdir = os.mkdir

    def mkdir(path: object, *args: object) -> None:
        if Path(str(path)) == tmp_path / "build":  # another run creates it first
            real_mkdir(path)  # type: ignore[arg-type]
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path))
        real_mkdir(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    dest = tmp_path / "build" / "ctx" / "out.tar"
    write_output(dest, _files(), fmt=OutputFormat.TAR)
    assert dest.is_file()
    with pytest.raises(RuntimeError):
        write_output(tmp_path / "build" / "new" / "out.tar", iter_then_fail(), fmt=OutputFormat.TAR)
    assert sorted(p.name for p in (tmp_path / "build").iterdir()) == ["ctx"]


def iter_then_fail() -> object:
    yield from _files()
    raise RuntimeError("the caller's own failure")


def test_parents_made_before_a_failing_one_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_mkdir = os.mkdir

    def mkdir(path: object, *args: object) -> None:
        if Path(str(path)).name == "locked":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        real_mkdir(path, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "mkdir", mkdir)
    folder = tmp_path / "build" / "locked"
    with pytest.raises(OutputError) as caught:
        write_output(folder / "ctx.tar", _files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == (
        f"{folder}: cannot write to {tmp_path / 'build'}: permission denied"
        " (choose another output path or fix the folder's permissions)"
    )
    assert list(tmp_path.iterdir()) == []


# --- SizedReader: bounded, exact reads -----------------------------------------------

from patcher.archive.layout import CHUNK, SizedReader  # noqa: E402


class _Trickle(io.RawIOBase):
    """Hand out at most three bytes a read, as a pipe or a slow disk may."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        n = 3 if n < 0 else min(n, 3)
        block, self._data = self._data[:n], self._data[n:]
        return block


def test_short_reads_are_joined_into_exactly_the_bytes_asked_for() -> None:
    reader = SizedReader("scripts/run.sh", _Trickle(b"0123456789"), 10)  # type: ignore[arg-type]
    assert reader.read(8) == b"01234567"
    assert reader.read(8) == b"89"
    assert reader.read(8) == b""


@pytest.mark.parametrize("n", [None, -1, CHUNK + 1])
def test_an_unbounded_or_oversized_read_gets_one_chunk(n: int | None) -> None:
    data = bytes(range(256)) * (CHUNK // 256 + 1)
    reader = SizedReader("big.bin", io.BytesIO(data), len(data))  # type: ignore[arg-type]
    assert reader.read(n) == data[:CHUNK]
    assert reader.read(n) == data[CHUNK:]


def test_a_read_of_nothing_gets_nothing() -> None:
    reader = SizedReader("x.txt", io.BytesIO(b"abc"), 3)  # type: ignore[arg-type]
    assert reader.read(0) == b""
    assert reader.read(2) == b"ab"


class _Failing(io.RawIOBase):
    def __init__(self, exc: OSError) -> None:
        self._exc = exc

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        raise self._exc


@pytest.mark.parametrize(
    ("exc", "message"),
    [
        (OSError(errno.EIO, os.strerror(errno.EIO)), "cannot read 'scripts/run.sh': Input/output error"),
        (OSError("the share went away"), "cannot read 'scripts/run.sh': the share went away"),
    ],
)
def test_a_source_that_fails_to_read_is_named_as_the_input(exc: OSError, message: str) -> None:
    file = OutputFile("scripts/run.sh", True, source=lambda: _Failing(exc), size=4)  # type: ignore[arg-type,return-value]
    with file.reader() as reader, pytest.raises(BadArchive) as caught:
        reader.read(4)
    assert str(caught.value) == message


def test_a_source_that_ends_early_says_how_far_it_got() -> None:
    file = OutputFile("scripts/run.sh", True, source=lambda: _Trickle(b"echo"), size=10)  # type: ignore[arg-type,return-value]
    with file.reader() as reader, pytest.raises(BadArchive) as caught:
        reader.read(10)
    assert str(caught.value) == "'scripts/run.sh' ended after 4 of its 10 bytes (did it change while being read?)"


def test_a_source_that_runs_long_says_its_declared_size() -> None:
    file = OutputFile("scripts/run.sh", True, source=lambda: io.BytesIO(b"echo hi\n"), size=4)
    reader = file.reader()
    assert reader.read(4) == b"echo"
    with pytest.raises(BadArchive) as caught:
        reader.finish()
    assert str(caught.value) == "'scripts/run.sh' holds more than its declared 4 bytes (did it change while being read?)"


def test_a_prefix_without_its_slash_is_refused() -> None:
    from patcher.archive.layout import plan

    with pytest.raises(ValueError, match=r"^bad archive prefix 'top': want 'folder/' or ''$"):
        plan(_files(), "top")


def test_source_date_epoch_sets_every_time_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    monkeypatch.setenv("SOURCE_DATE_EPOCH", " 1700000000\n")  # as a shell or CI file may leave it
    write_output(tmp_path / "ctx.tar", _files(), fmt=OutputFormat.TAR)
    with tarfile.open(tmp_path / "ctx.tar") as archive:
        assert {m.mtime for m in archive.getmembers()} == {1_700_000_000}


def test_a_malformed_source_date_epoch_says_what_to_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(OutputError) as caught:
        write_output(tmp_path / "ctx.tar", _files(), fmt=OutputFormat.TAR)
    assert str(caught.value) == (
        "SOURCE_DATE_EPOCH must be a whole number of seconds, got 'yesterday'"
        " (unset it or give an integer such as 315532800)"
    )
    assert list(tmp_path.iterdir()) == []


def test_a_negative_mtime_is_refused_with_its_value(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^mtime must not be negative, got -1$"):
        write_output(tmp_path / "ctx.tar", _files(), fmt=OutputFormat.TAR, mtime=-1)


def test_a_file_sorts_before_a_longer_name_it_begins() -> None:
    from patcher.archive.layout import plan

    files = [OutputFile(p, False, data=b"") for p in ("Dockerfile.dev", "run.sh.orig", "Dockerfile", "run.sh")]
    assert [e.name for e in plan(files)] == ["Dockerfile", "Dockerfile.dev", "run.sh", "run.sh.orig"]


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


# --- folders: each refusal's whole line --------------------------------------------------

from patcher.archive import DirSource  # noqa: E402

FOLDER_VENDOR = {
    "Dockerfile": corpus.DOCKERFILE,
    "qwen3_6_scripts/patch_ops.sh": b"cp ./paged_attn.py /usr/local/x/paged_attn.py\r\n",
    "qwen3_6_scripts/paged_attn.py": b"import torch\n",
    "vllm/attention/ops/paged_attn.py": b"# upstream\n",
}


def _tree(root: Path) -> Path:
    ctx = root / "enginex-demo-main"
    for name, data in FOLDER_VENDOR.items():
        (ctx / name).parent.mkdir(parents=True, exist_ok=True)
        (ctx / name).write_bytes(data)
    (ctx / "qwen3_6_scripts" / "patch_ops.sh").chmod(0o755)
    return ctx


FOLDER_REFUSALS = {
    "symlink-out": (lambda s: (s / "evil").symlink_to("/etc/passwd"),
                    "'qwen3_6_scripts/evil' is a symbolic link pointing outside the tree"
                    " (replace it with the file it points to)"),
    "dangling": (lambda s: (s / "dangling").symlink_to(s / "nowhere"),
                 "'qwen3_6_scripts/dangling' is a broken symbolic link"),
    "dir-link": (lambda s: (s / "loop").symlink_to(s.parent / "vllm"),
                 "'qwen3_6_scripts/loop' is a symbolic link to a folder, which is not supported"),
    "fifo": (lambda s: os.mkfifo(s / "pipe"),
             "'qwen3_6_scripts/pipe' is not a regular file or folder (a device, fifo or socket)"),
    "case": (lambda s: (s / "Paged_Attn.py").write_bytes(b"x"),
             "members 'qwen3_6_scripts/Paged_Attn.py' and 'qwen3_6_scripts/paged_attn.py' differ only in"
             " letter case and would collide on case-insensitive file systems"),
    "control": (lambda s: (s / "a\x01b").write_bytes(b"x"),
                "file 'qwen3_6_scripts/a\\x01b' has a control character in its name"),
    "not-utf8": (lambda s: os.close(os.open(os.fsencode(s) + b"/caf\xe9", os.O_CREAT | os.O_WRONLY)),
                 "file name 'qwen3_6_scripts/caf\\xe9' is not valid UTF-8"),
}


@pytest.mark.parametrize("case", sorted(FOLDER_REFUSALS))
def test_each_unsafe_folder_entry_is_refused_with_its_whole_line(tmp_path: Path, case: str) -> None:
    setup, message = FOLDER_REFUSALS[case]
    ctx = _tree(tmp_path)
    setup(ctx / "qwen3_6_scripts")
    with pytest.raises(BadArchive) as caught:
        DirSource(ctx)
    assert str(caught.value) == f"{ctx}: {message}"


def test_a_folder_without_a_dockerfile_or_with_two_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "empty" / "a").mkdir(parents=True)
    with pytest.raises(BadArchive) as caught:
        DirSource(tmp_path / "empty")
    assert str(caught.value) == (
        f"{tmp_path / 'empty'}: no Dockerfile found (the build context is the folder holding the Dockerfile)"
    )
    _tree(tmp_path / "two" / "one")
    _tree(tmp_path / "two" / "two")
    with pytest.raises(BadArchive) as caught:
        DirSource(tmp_path / "two")
    assert str(caught.value) == (
        f"{tmp_path / 'two'}: several candidate build contexts at the same depth:"
        " 'one/enginex-demo-main/', 'two/enginex-demo-main/' (point at the folder holding the Dockerfile)"
    )
    with pytest.raises(BadArchive) as caught:
        DirSource(tmp_path / "gone")
    assert str(caught.value) == f"{tmp_path / 'gone'}: no such folder"


def test_a_folder_file_removed_after_listing_is_named(tmp_path: Path) -> None:
    ctx = _tree(tmp_path)
    tree = DirSource(ctx)
    (ctx / "qwen3_6_scripts" / "paged_attn.py").unlink()
    with pytest.raises(BadArchive) as caught:
        tree.read("qwen3_6_scripts/paged_attn.py")
    assert str(caught.value) == f"{ctx}: cannot read 'qwen3_6_scripts/paged_attn.py': No such file or directory"


def test_a_folder_lists_its_files_sorted_with_sizes_and_modes_ignoring_git(tmp_path: Path) -> None:
    ctx = _tree(tmp_path)
    (ctx / ".git").mkdir()
    (ctx / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ctx / "qwen3_6_scripts" / "run.sh").symlink_to("patch_ops.sh")
    (ctx / "empty").mkdir()
    with DirSource(ctx) as tree:
        assert tree.root == ctx
        assert [(f.path, f.size, f.executable) for f in tree.files()] == [
            ("Dockerfile", len(corpus.DOCKERFILE), False),
            ("qwen3_6_scripts/paged_attn.py", 13, False),
            ("qwen3_6_scripts/patch_ops.sh", 47, True),
            ("qwen3_6_scripts/run.sh", 47, True),
            ("vllm/attention/ops/paged_attn.py", 11, False),
        ]
        assert tree.read("qwen3_6_scripts/run.sh") == FOLDER_VENDOR["qwen3_6_scripts/patch_ops.sh"]
        assert not tree.exists(".git/HEAD") and not tree.exists("empty")


# --- gzip: back-references across blocks, stored blocks, threads ----------------------------

import gzip  # noqa: E402
import random  # noqa: E402

from patcher.archive import gzip_stream  # noqa: E402
from patcher.archive.gzip_stream import WINDOW, GzipWriter, deflate_block  # noqa: E402


@pytest.mark.parametrize("threads", [1, 3])
def test_each_block_refers_back_into_the_one_before(threads: int) -> None:
    # 20,000 bytes of noise, repeated across five blocks of 32 KiB: each
    # block starts with bytes the block before it holds, so primed with that
    # block it costs almost nothing; alone, each would cost ~20 KB again.
    chunk = random.Random(13).randbytes(20_000)
    out = io.BytesIO()
    with GzipWriter(out, 6, threads=threads, block=WINDOW) as stream:
        assert stream.writable()
        stream.write(chunk * 7)
    assert gzip.decompress(out.getvalue()) == chunk * 7
    assert len(out.getvalue()) < 20_000 + 4096


def _stored(block: bytes) -> bytes:
    """Return BLOCK as raw deflate at level 0: stored blocks only, the form judged-incompressible data takes."""
    import zlib

    engine = zlib.compressobj(0, zlib.DEFLATED, -zlib.MAX_WBITS, 8, zlib.Z_DEFAULT_STRATEGY)
    return engine.compress(block) + engine.flush(zlib.Z_FINISH)


def test_an_incompressible_block_is_stored_not_deflated() -> None:
    # zlib would fall back to stored blocks by itself, but only after trying:
    # the bytes differ from level 0's, which is what a judged block gets.
    block = random.Random(7).randbytes(1 << 20)
    raw = deflate_block(block, b"", 6, True)
    assert raw == _stored(block)
    assert zlib_decompress_raw(raw) == block


def zlib_decompress_raw(raw: bytes) -> bytes:
    import zlib

    return zlib.decompress(raw, -zlib.MAX_WBITS)


@pytest.mark.parametrize(("cpus", "threads"), [({0}, 1), (set(range(16)), 8), ({0, 1, 2}, 3)])
def test_threads_follow_the_cpus_this_process_may_use_up_to_eight(
    monkeypatch: pytest.MonkeyPatch, cpus: set[int], threads: int
) -> None:
    monkeypatch.setattr(gzip_stream.os, "sched_getaffinity", lambda pid: cpus, raising=False)
    assert gzip_stream.default_threads() == threads


@pytest.mark.parametrize(("count", "threads"), [(None, 1), (1, 1), (4, 4), (32, 8)])
def test_without_cpu_affinity_the_cpu_count_decides(
    monkeypatch: pytest.MonkeyPatch, count: int | None, threads: int
) -> None:
    monkeypatch.delattr(gzip_stream.os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(gzip_stream.os, "cpu_count", lambda: count)
    assert gzip_stream.default_threads() == threads


@pytest.mark.parametrize("writes", [1000, WINDOW, WINDOW // 2 * 3])
def test_the_bytes_do_not_depend_on_writes_that_end_on_a_block_edge(writes: int) -> None:
    data = random.Random(5).randbytes(4 * WINDOW)  # exactly four blocks

    def compress(size: int) -> bytes:
        out = io.BytesIO()
        with GzipWriter(out, 6, threads=1, block=WINDOW) as stream:
            for start in range(0, len(data), size):
                stream.write(data[start : start + size])
        return out.getvalue()

    assert compress(writes) == compress(len(data))
    assert gzip.decompress(compress(writes)) == data


def test_a_block_just_large_enough_to_judge_is_judged() -> None:
    block = random.Random(3).randbytes(4 * 4096 * 4)  # the smallest block sampled: 64 KiB
    assert deflate_block(block, b"", 6, True) == _stored(block)


def test_writing_after_close_is_refused() -> None:
    stream = GzipWriter(io.BytesIO(), threads=1)
    stream.close()
    with pytest.raises(ValueError, match=r"^write to a closed GzipWriter$"):
        stream.write(b"late")


@pytest.mark.parametrize("level", [0, 9])
def test_levels_zero_and_nine_are_both_allowed(level: int) -> None:
    data = b"token cache block\n" * 2000
    out = io.BytesIO()
    with GzipWriter(out, level, threads=1, block=WINDOW) as stream:
        stream.write(data)
    assert gzip.decompress(out.getvalue()) == data


def test_the_default_level_is_gzips_own_six() -> None:
    data = b"token cache block query key value\n" * 4000
    outputs = []
    for args in ((), (6,)):
        out = io.BytesIO()
        with GzipWriter(out, *args, threads=1) as stream:
            stream.write(data)
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]


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


def test_a_folder_file_is_executable_by_any_execute_bit_linked_or_not(tmp_path: Path) -> None:
    ctx = _tree(tmp_path)
    modes = {"rw-all.sh": 0o666, "group-x.sh": 0o654, "other-x.sh": 0o645, "plain.py": 0o644}
    for name, mode in modes.items():
        (ctx / name).write_bytes(b"echo\n")
        (ctx / name).chmod(mode)
        (ctx / f"link-{name}").symlink_to(name)
    with DirSource(ctx) as tree:
        executable = {f.path: f.executable for f in tree.files()}
    want = {"rw-all.sh": False, "group-x.sh": True, "other-x.sh": True, "plain.py": False}
    assert {name: executable[name] for name in modes} == want
    assert {name: executable[f"link-{name}"] for name in modes} == want


@pytest.mark.parametrize(("unreadable", "shown"), [("", "."), ("qwen3_6_scripts", "qwen3_6_scripts/")])
def test_a_folder_that_cannot_be_listed_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unreadable: str, shown: str
) -> None:
    # Simulated: the tests may run as root, for whom chmod 0o000 means nothing.
    ctx = _tree(tmp_path)
    real_scandir = os.scandir

    def scandir(path: object) -> object:
        if Path(str(path)) == ctx / unreadable:  # ctx / "" is ctx itself
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(BadArchive) as caught:
        DirSource(ctx)
    assert str(caught.value) == f"{ctx}: cannot list '{shown}': Permission denied"


# --- path rules ------------------------------------------------------------------------------

from patcher.archive.paths import parents, path_problem  # noqa: E402


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "has an empty name"),
        ("/", "has an empty name"),
        ("vendor-demo/../", "escapes the tree with a '..' component"),
        ("vendor-demo/./", "has an empty or '.' path component"),
        ("vendor-demo//", "has an empty or '.' path component"),
        ("vendor-demo/scripts/", None),
    ],
)
def test_folder_entries_are_judged_by_their_components(name: str, problem: str | None) -> None:
    assert path_problem(name) == problem


def test_a_folders_ancestors_leave_out_the_folder_itself() -> None:
    assert parents("vendor-demo/scripts/") == ["vendor-demo"]
    assert parents("vendor-demo/scripts/run.sh") == ["vendor-demo", "vendor-demo/scripts"]
    assert parents("Dockerfile") == []


def test_an_unreadable_zip_says_permission_denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated: the tests may run as root, for whom chmod 0o000 means nothing.
    from patcher.archive import limits

    def deny(path: object, flags: int, mode: int = 0o777) -> object:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    path = _base(tmp_path / "v.zip")
    monkeypatch.setattr(limits.os, "open", deny)
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == f"{path}: cannot read the file: permission denied"


# --- tar.gz and zip formats ------------------------------------------------------------------


def test_the_tar_gz_is_the_tar_gzipped_at_level_five(tmp_path: Path) -> None:
    files = _files() + [OutputFile("vllm/model.py", False, data=b"import torch\n" * 5000)]
    write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR, mtime=0)
    write_output(tmp_path / "ctx.tar.gz", files, fmt=OutputFormat.TAR_GZ, mtime=0)
    tar = (tmp_path / "ctx.tar").read_bytes()
    out = io.BytesIO()
    with GzipWriter(out, 5) as stream:
        stream.write(tar)
    assert (tmp_path / "ctx.tar.gz").read_bytes() == out.getvalue()


@pytest.mark.parametrize(
    ("mtime", "date_time"),
    [
        (0, (1980, 1, 1, 0, 0, 0)),  # before a zip can store: the earliest it can
        (315_532_799, (1980, 1, 1, 0, 0, 0)),
        (315_532_800, (1980, 1, 1, 0, 0, 0)),
        (1_700_000_000, (2023, 11, 14, 22, 13, 20)),  # UTC, whatever the zone
        (4_354_819_198, (2107, 12, 31, 23, 59, 58)),
        (4_354_819_199, (2107, 12, 31, 23, 59, 58)),  # after it: the latest it can
        (5_000_000_000, (2107, 12, 31, 23, 59, 58)),
    ],
)
def test_zip_times_are_utc_clamped_to_what_a_zip_can_store(mtime: int, date_time: tuple[int, ...]) -> None:
    from patcher.archive.zip_format import zip_date_time

    assert zip_date_time(mtime) == date_time


def test_zip_entries_carry_unix_types_modes_and_methods(tmp_path: Path) -> None:
    write_output(tmp_path / "ctx.zip", _files(), fmt=OutputFormat.ZIP, zip_prefix="top/", mtime=1_700_000_000)
    with zipfile.ZipFile(tmp_path / "ctx.zip") as archive:
        got = [(i.filename, i.create_system, i.external_attr, i.compress_type, i.date_time) for i in archive.infolist()]
    when = (2023, 11, 14, 22, 13, 20)
    assert got == [
        ("top/", 3, (stat.S_IFDIR | 0o755) << 16 | 0x10, zipfile.ZIP_STORED, when),
        ("top/Dockerfile", 3, (stat.S_IFREG | 0o644) << 16, zipfile.ZIP_DEFLATED, when),
        ("top/scripts/", 3, (stat.S_IFDIR | 0o755) << 16 | 0x10, zipfile.ZIP_STORED, when),
        ("top/scripts/run.sh", 3, (stat.S_IFREG | 0o755) << 16, zipfile.ZIP_DEFLATED, when),
    ]


def test_a_folder_output_has_normalised_modes_and_times_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o077)
    try:
        digest = write_output(tmp_path / "ctx", _files(), fmt=OutputFormat.DIRECTORY, mtime=1_700_000_000)
    finally:
        os.umask(old)
    found = {
        p.relative_to(tmp_path / "ctx").as_posix(): (stat.S_IMODE(p.stat().st_mode), p.stat().st_mtime)
        for p in [tmp_path / "ctx", *(tmp_path / "ctx").rglob("*")]
    }
    assert found == {
        ".": (0o755, 1_700_000_000),
        "Dockerfile": (0o644, 1_700_000_000),
        "scripts": (0o755, 1_700_000_000),
        "scripts/run.sh": (0o755, 1_700_000_000),
    }
    listing = "".join(
        f"{mode:04o} {hashlib.sha256(data).hexdigest()} {path}\n"
        for path, mode, data in (("Dockerfile", 0o644, corpus.DOCKERFILE), ("scripts/run.sh", 0o755, corpus.SCRIPT))
    )
    assert digest == hashlib.sha256(listing.encode()).hexdigest()


import hashlib  # noqa: E402


# --- the end record's count, zip64 too ---------------------------------------------------------


def _as_zip64(data: bytes, declared: int) -> bytes:
    """Return DATA with a zip64 end record and locator declaring DECLARED entries, as zip tools write past 65,535."""
    end = data.rindex(b"PK\x05\x06")
    size_cd, offset_cd = struct.unpack("<LL", data[end + 12 : end + 20])
    record = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, declared, declared, size_cd, offset_cd)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, end, 1)
    eocd = data[end : end + 8] + struct.pack("<HH", 0xFFFF, 0xFFFF) + data[end + 12 :]
    return data[:end] + record + locator + eocd


def test_a_zip64_end_record_declaring_too_many_members_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(_as_zip64(corpus.with_base(), 70_000))
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: zip declares 70000 members, more than the limit of 50000"
        " (if the archive is trusted, raise the limit with --max-members)"
    )


def test_a_zip64_end_record_is_read_exactly(tmp_path: Path) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(_as_zip64(corpus.with_base(), 5))
    with ZipSource(path, Limits(max_members=5)) as source:
        assert [f.path for f in source.files()] == ["Dockerfile", "scripts/run.sh", "scripts/tool.py"]
    path.write_bytes(_as_zip64(corpus.with_base(), 6))
    with pytest.raises(BadArchive, match=r"^v\.zip: zip declares 6 members, more than the limit of 5 "):
        ZipSource(path, Limits(max_members=5))


@pytest.mark.parametrize("cut", [1, 11, 21])
def test_a_zip_cut_inside_its_end_record_is_truncated(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "v.zip"
    path.write_bytes(corpus.with_base()[:-cut])
    with pytest.raises(BadArchive) as caught:
        ZipSource(path)
    assert str(caught.value) == (
        "v.zip: the zip is truncated or corrupt: its central directory cannot be read (download it again)"
    )


def test_a_symlink_beside_the_vendor_folder_is_not_a_second_context(tmp_path: Path) -> None:
    # drops/latest -> enginex-demo-main, as a hurried engineer keeps one.
    ctx = _tree(tmp_path / "drops")
    (tmp_path / "drops" / "latest").symlink_to(ctx.name)
    with DirSource(tmp_path / "drops") as tree:
        assert tree.root == ctx
        assert tree.exists("qwen3_6_scripts/patch_ops.sh")
