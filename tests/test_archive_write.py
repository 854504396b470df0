"""Writing outputs: round trips, determinism, atomicity, bounded memory."""

from __future__ import annotations

import errno
import hashlib
import io
import os
import stat
import subprocess
import sys
import tarfile
import threading
import tracemalloc
import zipfile
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import BinaryIO

import pytest

from patcher.archive import OutputFile, OutputFormat, open_source, write_output
from patcher.archive.layout import plan
from patcher.archive.tar_format import write_tar
from patcher.errors import BadArchive, OutputError

REPO = Path(__file__).resolve().parents[1]
ARCHIVES = [OutputFormat.TAR, OutputFormat.TAR_GZ, OutputFormat.ZIP]
SUFFIX = {
    OutputFormat.TAR: "ctx.tar",
    OutputFormat.TAR_GZ: "ctx.tar.gz",
    OutputFormat.ZIP: "ctx.zip",
    OutputFormat.DIRECTORY: "ctx",
}
PREFIX = "enginex-demo-main/"

CONTENT = {
    "Dockerfile": (b"FROM base\r\nCOPY ./qwen3_6_scripts /w/\r\n", False),
    "qwen3_6_scripts/patch_ops.sh": (b"cp ./paged_attn.py /x/\n", True),
    "qwen3_6_scripts/paged_attn.py": (b"import torch\n", False),
    "qwen3_6_scripts/reasoning/__init__.py": (b"", False),
    "vllm/attention/ops/paged_attn.py": (b"# upstream", False),
    "caf\u00e9.txt": (b"non-ascii name\n", False),
}
FOLDERS = ["qwen3_6_scripts", "qwen3_6_scripts/reasoning", "vllm", "vllm/attention", "vllm/attention/ops"]


def sample_files() -> list[OutputFile]:
    """Return the sample, half as new bytes and half as streams, unsorted."""
    files = []
    for i, (path, (data, executable)) in enumerate(reversed(list(CONTENT.items()))):
        if i % 2:
            files.append(OutputFile(path, executable, data=data))
        else:
            files.append(
                OutputFile(path, executable, source=partial(io.BytesIO, data), size=len(data))
            )
    return files


def read_back(path: Path, fmt: OutputFormat) -> dict[str, tuple[bytes | None, int]]:
    """Return name -> (content or None for a folder, permission bits)."""
    found: dict[str, tuple[bytes | None, int]] = {}
    if fmt is OutputFormat.ZIP:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                mode = stat.S_IMODE(info.external_attr >> 16)
                data = None if info.is_dir() else archive.read(info)
                found[info.filename.rstrip("/")] = (data, mode)
    elif fmt is OutputFormat.DIRECTORY:
        for item in sorted(path.rglob("*")):
            rel = item.relative_to(path).as_posix()
            found[rel] = (None if item.is_dir() else item.read_bytes(), stat.S_IMODE(item.stat().st_mode))
    else:
        with tarfile.open(path) as archive:
            for member in archive.getmembers():
                handle = archive.extractfile(member)
                found[member.name] = (None if member.isdir() else handle.read() if handle else b"", member.mode)
    return found


def expected(prefix: str = "") -> dict[str, tuple[bytes | None, int]]:
    want: dict[str, tuple[bytes | None, int]] = {
        prefix + p: (d, 0o755 if x else 0o644) for p, (d, x) in CONTENT.items()
    }
    want.update({prefix + f: (None, 0o755) for f in FOLDERS})
    if prefix:
        want[prefix.rstrip("/")] = (None, 0o755)
    return want


# --- round trips ------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_round_trip_keeps_contents_modes_and_folders(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    write_output(dest, sample_files(), fmt=fmt, zip_prefix=PREFIX)
    assert read_back(dest, fmt) == expected(PREFIX if fmt is OutputFormat.ZIP else "")


@pytest.mark.parametrize("fmt", ARCHIVES, ids=lambda f: f.name)
def test_returned_digest_is_the_archive_sha256(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    digest = write_output(dest, sample_files(), fmt=fmt)
    assert digest == hashlib.sha256(dest.read_bytes()).hexdigest()


def test_directory_digest_is_over_the_sorted_listing(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    digest = write_output(dest, sample_files(), fmt=OutputFormat.DIRECTORY)
    listing = "".join(
        f"{0o755 if x else 0o644:04o} {hashlib.sha256(d).hexdigest()} {p}\n"
        for p, (d, x) in sorted(CONTENT.items())
    )
    assert digest == hashlib.sha256(listing.encode()).hexdigest()


def test_directory_output_has_fixed_times(tmp_path: Path) -> None:
    dest = tmp_path / "ctx"
    write_output(dest, sample_files(), fmt=OutputFormat.DIRECTORY, mtime=1_700_000_000)
    for item in [dest, *dest.rglob("*")]:
        assert item.stat().st_mtime == 1_700_000_000, item


def test_tar_entries_are_sorted_owned_by_root_and_unnamed(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar"
    write_output(dest, sample_files(), fmt=OutputFormat.TAR, zip_prefix=PREFIX, mtime=1_700_000_000)
    with tarfile.open(dest) as archive:
        members = archive.getmembers()
    names = [m.name + ("/" if m.isdir() else "") for m in members]
    assert names == sorted(names)
    assert names[0] == "Dockerfile"  # at the root, for 'docker build - < ctx.tar'
    for member in members:
        assert (member.uid, member.gid, member.uname, member.gname) == (0, 0, "", "")
        assert member.mtime == 1_700_000_000
    # Folders come right before their contents.
    assert names.index("qwen3_6_scripts/") + 1 == names.index("qwen3_6_scripts/paged_attn.py")


def test_tar_writes_pax_headers_only_where_needed(tmp_path: Path) -> None:
    ascii_only = [f for f in sample_files() if f.path.isascii()]
    write_output(tmp_path / "a.tar", ascii_only, fmt=OutputFormat.TAR)
    assert b"PaxHeader" not in (tmp_path / "a.tar").read_bytes()
    write_output(tmp_path / "b.tar", sample_files(), fmt=OutputFormat.TAR)
    assert (tmp_path / "b.tar").read_bytes().count(b"PaxHeader") == 1  # the accented name


def test_gzip_header_has_no_name_and_no_time(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.tar.gz"
    write_output(dest, sample_files(), fmt=OutputFormat.TAR_GZ, mtime=1_700_000_000)
    header = dest.read_bytes()[:10]
    assert header[:3] == b"\x1f\x8b\x08"
    assert header[3] == 0  # FLG: no FNAME, no comment, no extra
    assert header[4:8] == b"\0\0\0\0"  # MTIME
    assert b"ctx.tar" not in dest.read_bytes()


def test_gzip_header_stays_nameless_on_a_named_file(tmp_path: Path) -> None:
    # GzipFile records fileobj.name unless told otherwise; write_output's
    # own handle has no name, so check the packer on a file that has one.
    with open(tmp_path / "named.tar.gz", "wb") as out:
        write_tar(out, plan(sample_files()), 0, gz=True)
    header = (tmp_path / "named.tar.gz").read_bytes()[:10]
    assert header[3] == 0 and header[4:8] == b"\0\0\0\0"


def test_zip_entries_carry_prefix_unix_modes_and_a_1980_or_later_date(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.zip"
    write_output(dest, sample_files(), fmt=OutputFormat.ZIP, zip_prefix=PREFIX, mtime=0)
    with zipfile.ZipFile(dest) as archive:
        infos = archive.infolist()
    assert infos[0].filename == PREFIX
    for info in infos:
        assert info.filename.startswith(PREFIX)
        assert info.create_system == 3
        assert info.date_time == (1980, 1, 1, 0, 0, 0)
        kind = stat.S_IFMT(info.external_attr >> 16)
        assert kind == (stat.S_IFDIR if info.is_dir() else stat.S_IFREG)
        if not info.is_dir():
            assert info.compress_type == zipfile.ZIP_DEFLATED


def test_zip_output_reads_back_as_a_source_with_the_same_layout(tmp_path: Path) -> None:
    dest = tmp_path / "ctx.zip"
    write_output(dest, sample_files(), fmt=OutputFormat.ZIP, zip_prefix=PREFIX)
    with open_source(dest) as tree:
        assert getattr(tree, "prefix") == PREFIX
        assert {f.path: (tree.read(f.path), f.executable) for f in tree.files()} == CONTENT


# --- determinism --------------------------------------------------------------------

_WRITE_SCRIPT = """
import os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[2])
os.umask(int(sys.argv[3], 8))
from tests.test_archive_write import sample_files
from patcher.archive import OutputFormat, write_output
for fmt in OutputFormat:
    print(write_output(Path(sys.argv[4]) / fmt.name, sample_files(), fmt=fmt, zip_prefix="top/"))
"""


def run_writer(out: Path, *, tz: str, umask: str, epoch: str | None, cwd: Path) -> list[str]:
    """Write every format in a fresh interpreter; return the digests."""
    out.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    env.update(TZ=tz, LC_ALL="C" if umask == "022" else "C.UTF-8", PYTHONHASHSEED="random")
    if epoch is not None:
        env["SOURCE_DATE_EPOCH"] = epoch
    result = subprocess.run(
        [sys.executable, "-c", _WRITE_SCRIPT, str(REPO), str(Path(__file__).parent), umask, str(out)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.split()


def test_same_inputs_give_same_bytes_whatever_the_zone_umask_locale_or_cwd(tmp_path: Path) -> None:
    first = run_writer(tmp_path / "a", tz="UTC", umask="022", epoch=None, cwd=tmp_path)
    second = run_writer(tmp_path / "b", tz="Asia/Tokyo", umask="077", epoch=None, cwd=REPO)
    assert first == second
    for fmt in ARCHIVES:
        assert (tmp_path / "a" / fmt.name).read_bytes() == (tmp_path / "b" / fmt.name).read_bytes()
    # The folder output's own modes do not follow the umask either.
    assert read_back(tmp_path / "a" / "DIRECTORY", OutputFormat.DIRECTORY) == read_back(
        tmp_path / "b" / "DIRECTORY", OutputFormat.DIRECTORY
    )


def test_source_date_epoch_sets_the_time(tmp_path: Path) -> None:
    default = run_writer(tmp_path / "a", tz="UTC", umask="022", epoch=None, cwd=tmp_path)
    pinned = run_writer(tmp_path / "b", tz="UTC", umask="022", epoch="1700000000", cwd=tmp_path)
    # Every archive changes; the folder digest covers only paths, modes and content.
    assert [a != b for a, b in zip(default, pinned)] == [True, True, True, False]
    with zipfile.ZipFile(tmp_path / "b" / "ZIP") as archive:
        assert archive.infolist()[0].date_time == (2023, 11, 14, 22, 13, 20)  # UTC
    with tarfile.open(tmp_path / "b" / "TAR_GZ") as archive:
        assert {m.mtime for m in archive.getmembers()} == {1_700_000_000}


def test_default_time_is_1980(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    write_output(tmp_path / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)
    with tarfile.open(tmp_path / "ctx.tar") as archive:
        assert {m.mtime for m in archive.getmembers()} == {315532800}


def test_input_order_does_not_matter(tmp_path: Path) -> None:
    files = sample_files()
    for fmt in ARCHIVES:
        one = write_output(tmp_path / f"1{SUFFIX[fmt]}", files, fmt=fmt)
        two = write_output(tmp_path / f"2{SUFFIX[fmt]}", list(reversed(files)), fmt=fmt)
        assert one == two


def test_malformed_source_date_epoch_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(OutputError, match="SOURCE_DATE_EPOCH must be a whole number"):
        write_output(tmp_path / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)
    assert list(tmp_path.iterdir()) == []


# --- overwriting and atomicity --------------------------------------------------------


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_existing_output_is_kept_without_force(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    dest.write_bytes(b"precious")
    with pytest.raises(OutputError, match="exists; pass --force to overwrite"):
        write_output(dest, sample_files(), fmt=fmt)
    assert dest.read_bytes() == b"precious"
    assert sorted(p.name for p in tmp_path.iterdir()) == [dest.name]


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
@pytest.mark.parametrize("old", ["file", "folder"])
def test_force_replaces_a_file_or_a_folder(tmp_path: Path, fmt: OutputFormat, old: str) -> None:
    dest = tmp_path / SUFFIX[fmt]
    if old == "file":
        dest.write_bytes(b"old")
    else:
        (dest / "stale").mkdir(parents=True)
        (dest / "stale" / "x").write_bytes(b"old")
    write_output(dest, sample_files(), fmt=fmt, force=True)
    assert read_back(dest, fmt) == expected()
    assert sorted(p.name for p in tmp_path.iterdir()) == [dest.name]


def _failing_files(exc: BaseException) -> Iterator[OutputFile]:
    yield from sample_files()[:3]
    raise exc


class _Interrupting(io.RawIOBase):
    """A stream that raises after a few reads, as Ctrl-C would mid-copy."""

    def __init__(self, exc: BaseException, after: int) -> None:
        self._exc = exc
        self._left = after

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if self._left == 0:
            raise self._exc
        self._left -= 1
        return b"x" * 1000


def _interrupted_files(exc: BaseException) -> list[OutputFile]:
    stream = OutputFile(
        "qwen3_6_scripts/big.bin",
        False,
        source=lambda: _Interrupting(exc, after=3),  # type: ignore[arg-type,return-value]
        size=10_000,
    )
    return [*sample_files(), stream]


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
@pytest.mark.parametrize("where", ["iterator", "stream"])
def test_failure_mid_write_leaves_nothing(tmp_path: Path, fmt: OutputFormat, where: str) -> None:
    dest = tmp_path / "made" / "for" / SUFFIX[fmt]
    files: Callable[[BaseException], object] = _failing_files if where == "iterator" else _interrupted_files
    with pytest.raises(KeyboardInterrupt):
        write_output(dest, files(KeyboardInterrupt()), fmt=fmt)  # type: ignore[arg-type]
    # The parents this call created are gone with the temporary.
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_failure_with_force_keeps_the_old_output(tmp_path: Path, fmt: OutputFormat) -> None:
    dest = tmp_path / SUFFIX[fmt]
    dest.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        write_output(dest, _interrupted_files(RuntimeError("boom")), fmt=fmt, force=True)
    assert dest.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == [dest.name]


def test_existing_parent_folders_are_not_removed_on_failure(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    with pytest.raises(RuntimeError):
        write_output(tmp_path / "out" / "ctx.tar", _failing_files(RuntimeError()), fmt=OutputFormat.TAR)
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert list((tmp_path / "out").iterdir()) == []


def test_missing_parent_folders_are_created(tmp_path: Path) -> None:
    dest = tmp_path / "a" / "b" / "ctx.tar.gz"
    write_output(dest, sample_files(), fmt=OutputFormat.TAR_GZ)
    assert dest.is_file()


def test_parent_that_is_a_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "a").write_bytes(b"")
    with pytest.raises(OutputError, match="a parent of the output is a file"):
        write_output(tmp_path / "a" / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)


def test_unwritable_folder_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulated: the tests may run as root, for whom chmod 0o555 means nothing.
    real_open = os.open

    def deny(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith(".tmp"):  # the temporary beside the output
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(OutputError, match="permission denied") as caught:
        write_output(tmp_path / "ctx.tar", sample_files(), fmt=OutputFormat.TAR)
    assert str(tmp_path) in str(caught.value)


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_full_disk_is_reported_and_cleaned_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: OutputFormat
) -> None:
    # Simulated at fsync, where delayed allocation reports a full disk.
    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OutputError, match="disk full while writing .*free space and retry"):
        write_output(tmp_path / SUFFIX[fmt], sample_files(), fmt=fmt)
    assert list(tmp_path.iterdir()) == []


def test_concurrent_runs_use_distinct_temporaries(tmp_path: Path) -> None:
    # The timeout only turns a hang (runs serialised by a bug) into a failure;
    # it is far above any real wait, even on a loaded machine.
    both_writing = threading.Barrier(2, timeout=120)
    seen: list[list[str]] = []

    def opener() -> BinaryIO:
        both_writing.wait()  # each run is now mid-write, its temporary on disk
        seen.append(sorted(p.name for p in tmp_path.iterdir()))
        return io.BytesIO(b"data")

    def run(name: str) -> None:
        files = [*sample_files(), OutputFile("z.bin", False, source=opener, size=4)]
        write_output(tmp_path / name, files, fmt=OutputFormat.TAR)

    threads = [threading.Thread(target=run, args=(name,)) for name in ("one.tar", "two.tar")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 2 and all(len(names) == 2 for names in seen)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one.tar", "two.tar"]
    assert (tmp_path / "one.tar").read_bytes() == (tmp_path / "two.tar").read_bytes()


# --- streaming and memory ---------------------------------------------------------------


class _BoundedStream(io.RawIOBase):
    """Produce SIZE bytes on the fly, failing on any unbounded read."""

    def __init__(self, size: int, bound: int = 1 << 20) -> None:
        self._left = size
        self._bound = bound
        self.largest = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        assert 0 < n <= self._bound, f"unbounded read({n})"
        self.largest = max(self.largest, n)
        n = min(n, self._left)
        self._left -= n
        return bytes([n % 251]) * n


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
def test_large_member_is_copied_in_bounded_reads(tmp_path: Path, fmt: OutputFormat) -> None:
    size = 40 << 20
    streams: list[_BoundedStream] = []

    def opener() -> BinaryIO:
        streams.append(_BoundedStream(size))
        return streams[-1]  # type: ignore[return-value]

    files = [*sample_files(), OutputFile("wheels/engine.whl", False, source=opener, size=size)]
    write_output(tmp_path / SUFFIX[fmt], files, fmt=fmt)
    assert len(streams) == 1 and 0 < streams[0].largest <= 1 << 20


def test_zip_to_tar_gz_streams_a_40_mb_member_in_little_memory(tmp_path: Path) -> None:
    source = tmp_path / "vendor.zip"
    wheel = os.urandom(40 << 20)
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("v/Dockerfile", b"FROM x\n")
        archive.writestr("v/wheels/engine.whl", wheel)  # stored: fast to build
    with open_source(source) as tree:
        files = [
            OutputFile(f.path, f.executable, source=partial(tree.open, f.path), size=f.size)
            for f in tree.files()
        ]
        tracemalloc.start()
        try:
            write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak} bytes"
    with tarfile.open(tmp_path / "ctx.tar") as archive:
        handle = archive.extractfile("wheels/engine.whl")
        assert handle is not None and hashlib.sha256(handle.read()).digest() == hashlib.sha256(wheel).digest()


@pytest.mark.parametrize("fmt", list(OutputFormat), ids=lambda f: f.name)
@pytest.mark.parametrize("actual, message", [(3, "ended after 3 of its 4 bytes"), (5, "holds more than its declared 4")])
def test_source_of_the_wrong_size_is_refused(
    tmp_path: Path, fmt: OutputFormat, actual: int, message: str
) -> None:
    wrong = OutputFile("x.bin", False, source=lambda: io.BytesIO(b"x" * actual), size=4)
    with pytest.raises(BadArchive, match=message):
        write_output(tmp_path / SUFFIX[fmt], [*sample_files(), wrong], fmt=fmt)
    assert list(tmp_path.iterdir()) == []


# --- values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, fmt",
    [
        ("ctx.tar.gz", OutputFormat.TAR_GZ),
        ("CTX.TGZ", OutputFormat.TAR_GZ),
        ("ctx.tar", OutputFormat.TAR),
        ("ctx.zip", OutputFormat.ZIP),
        ("ctx", OutputFormat.DIRECTORY),
        ("ctx.gz", OutputFormat.DIRECTORY),
    ],
)
def test_format_follows_the_destination_name(name: str, fmt: OutputFormat) -> None:
    assert OutputFormat.for_path(Path("out") / name) is fmt


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
    "paths, message",
    [(["a", "a"], "two output files named 'a'"), (["a", "a/b"], "both a file and a folder")],
)
def test_clashing_output_paths_are_refused(tmp_path: Path, paths: list[str], message: str) -> None:
    files = [OutputFile(p, False, data=b"") for p in paths]
    with pytest.raises(ValueError, match=message):
        write_output(tmp_path / "ctx.tar", files, fmt=OutputFormat.TAR)
    assert list(tmp_path.iterdir()) == []


def _tarfile_reference(entries: list, mtime: int) -> bytes:  # type: ignore[type-arg]
    """What tarfile.TarFile itself writes for ENTRIES: the bytes tar_format must reproduce."""
    buffer = io.BytesIO()
    with tarfile.TarFile(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
        for entry in entries:
            info = tarfile.TarInfo(entry.name)
            info.mode, info.mtime, info.uid, info.gid, info.uname, info.gname = entry.mode, mtime, 0, 0, "", ""
            if entry.file is None:
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = entry.file.length
                data = entry.file.data if entry.file.data is not None else entry.file.source().read()
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize("total", [0, 1, 511, 512, 513, 9 * 512, 10 * 512, 20 * 512 - 1, (1 << 20) + 7])
def test_tar_bytes_are_the_ones_tarfile_writes(total: int) -> None:
    # Sizes around the 512-byte block and the 10 KiB record, a name past the
    # 100 bytes ustar holds (a PAX header), non-ASCII names, folders, an empty file.
    long_name = "qwen3_6_scripts/" + "deeply_nested_folder_name/" * 5 + "paged_attn.py"
    files = [
        OutputFile("Dockerfile", False, data=b"FROM base\r\n"),
        OutputFile("empty.txt", False, data=b""),
        OutputFile(long_name, False, data=b"# long\n" * 3),
        OutputFile("caf\u00e9/\u00fcber.py", True, source=partial(io.BytesIO, b"x" * total), size=total),
        OutputFile("z.bin", False, data=bytes(range(256)) * 3),
    ]
    entries = plan(files)
    ours = io.BytesIO()
    write_tar(ours, entries, 315532800, gz=False)
    assert ours.getvalue() == _tarfile_reference(entries, 315532800)
    assert len(ours.getvalue()) % tarfile.RECORDSIZE == 0
