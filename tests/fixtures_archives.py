"""Builders of the archives the reader and the writer are judged on (tests/archive, tests/cli).

- The corpus of broken and malicious zips (``fixtures/bad/``, built by
  ``fixtures/make_bad_archives.py``) and builders of more hostile zips from
  its minimal valid tree.
- A small vendor-shaped zip and folder (a Dockerfile, the shipped scripts,
  a stale root copy), to read back exactly.
- The files a writer packs (new bytes and streams, an accented name, an
  executable script), to write in every format and read back.
- Text and noise for the block-parallel gzip writer.
"""

from __future__ import annotations

import io
import random
import stat
import tarfile
import zipfile
from collections.abc import Mapping, Set
from functools import partial
from pathlib import Path

import pytest

import tests.fixtures_vendor  # noqa: F401  (puts fixtures/ on sys.path)

import make_bad_archives as corpus  # noqa: E402

from patcher.archive import Limits, OutputFile, OutputFormat
from patcher.archive.gzip_stream import GzipWriter
from patcher.archive.layout import Entry
from patcher.archive.zip_source import ZipSource
from patcher.errors import BadArchive

# --- the corpus of bad zips and hostile variants of its base tree ----------------------------

CASES = {case.name: case for case in corpus.CASES}
TOP = corpus.TOP


def members_zip(path: Path, members: list[corpus.Member]) -> Path:
    """Write MEMBERS as a zip at PATH (fixed times, unix attributes) and return PATH."""
    path.write_bytes(corpus.write_zip(members))
    return path


def corpus_zip(path: Path, *extra: corpus.Member) -> Path:
    """Write the corpus's minimal valid tree plus EXTRA members at PATH and return PATH."""
    path.write_bytes(corpus.with_base(*extra))
    return path


def zip_refusal(path: Path, limits: Limits | None = None) -> str:
    """Return the message of the BadArchive that opening the zip at PATH (under LIMITS, else the defaults) raises."""
    with pytest.raises(BadArchive) as caught:
        ZipSource(path) if limits is None else ZipSource(path, limits)
    return str(caught.value)


def corpus_files() -> list[OutputFile]:
    """Return the corpus tree's Dockerfile (new bytes) and run.sh (a stream) as files to write."""
    return [
        OutputFile("Dockerfile", False, data=corpus.DOCKERFILE),
        OutputFile("scripts/run.sh", True, source=lambda: io.BytesIO(corpus.SCRIPT), size=len(corpus.SCRIPT)),
    ]


# --- a small vendor-shaped zip and folder -------------------------------------------------------

DOCKERFILE = b"FROM vendor/base:1\r\nRUN mkdir /workspace\r\nCOPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\r\n"
PATCH_OPS = b"cp ./paged_attn.py /usr/local/x/paged_attn.py\r\n"
PAGED = b"import torch\n\n_PARTITION_SIZE = 512\n"


def zip_of(path: Path, members: Mapping[str, bytes | None], *, executable: Set[str] = frozenset()) -> Path:
    """Write a zip; a None value is a folder entry."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2024, 5, 1, 12, 0, 0))
            info.create_system = 3
            if data is None:
                info.external_attr = (stat.S_IFDIR | 0o755) << 16 | 0x10
                archive.writestr(info, b"")
            else:
                mode = 0o755 if name in executable else 0o644
                info.external_attr = (stat.S_IFREG | mode) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
    return path


def vendor_members(top: str = "enginex-demo-main/") -> dict[str, bytes | None]:
    """Return the small vendor tree under TOP: name -> bytes, or None for a folder entry."""
    return {
        top: None,
        top + "Dockerfile": DOCKERFILE,
        top + "paged_attn.py": b"# stale root copy\n",
        top + "qwen3_6_scripts/": None,
        top + "qwen3_6_scripts/patch_ops.sh": PATCH_OPS,
        top + "qwen3_6_scripts/paged_attn.py": PAGED,
        top + "vllm/attention/ops/paged_attn.py": b"# upstream\n",
    }


def small_zip(path: Path) -> Path:
    """Write the small vendor tree as a zip at PATH, patch_ops.sh executable."""
    return zip_of(path, vendor_members(), executable={"enginex-demo-main/qwen3_6_scripts/patch_ops.sh"})


# The same context without its stale root copy, with the corpus's Dockerfile and a one-line paged_attn.py.
FOLDER_VENDOR = {
    "Dockerfile": corpus.DOCKERFILE,
    "qwen3_6_scripts/patch_ops.sh": PATCH_OPS,
    "qwen3_6_scripts/paged_attn.py": b"import torch\n",
    "vllm/attention/ops/paged_attn.py": b"# upstream\n",
}


def context_folder(root: Path, files: Mapping[str, bytes]) -> Path:
    """Write FILES into ROOT/enginex-demo-main, patch_ops.sh executable, and return that folder."""
    ctx = root / "enginex-demo-main"
    for name, data in files.items():
        (ctx / name).parent.mkdir(parents=True, exist_ok=True)
        (ctx / name).write_bytes(data)
    (ctx / "qwen3_6_scripts" / "patch_ops.sh").chmod(0o755)
    return ctx


def small_tree(root: Path) -> Path:
    """Write the small vendor tree (the files of small_zip) as a folder under ROOT."""
    return context_folder(root, {name: data for name, data in vendor_members("").items() if name and data is not None})


def bare_tree(root: Path) -> Path:
    """Write FOLDER_VENDOR as a folder under ROOT."""
    return context_folder(root, FOLDER_VENDOR)


def wheels_zip(tmp_path: Path, sizes: list[int]) -> Path:
    """Write a vendor drop holding one wheel of each of SIZES bytes, as drops hold their engine wheels."""
    path = tmp_path / "enginex-demo.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("enginex-demo/Dockerfile", b"FROM base\r\nCOPY ./wheels /wheels\r\n")
        for number, size in enumerate(sizes):
            archive.writestr(f"enginex-demo/wheels/engine_{number}-0.6.3-py3-none-any.whl",
                             bytes((number + i) % 251 for i in range(size)))
    return path


# --- files to write -----------------------------------------------------------------------------

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
    """Return what read_back must find for the sample written under PREFIX."""
    want: dict[str, tuple[bytes | None, int]] = {
        prefix + p: (d, 0o755 if x else 0o644) for p, (d, x) in CONTENT.items()
    }
    want.update({prefix + f: (None, 0o755) for f in FOLDERS})
    if prefix:
        want[prefix.rstrip("/")] = (None, 0o755)
    return want


def tarfile_reference(entries: list[Entry], mtime: int) -> bytes:
    """Return what tarfile.TarFile itself writes (PAX, UTF-8) for ENTRIES: the bytes tar_format must reproduce."""
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


# --- data for the gzip writer ---------------------------------------------------------------------

SMALL_BLOCK = 64 * 1024


def text(size: int, seed: int = 1) -> bytes:
    """Return SIZE bytes of seeded word salad: text that deflates like source code."""
    rng = random.Random(seed)
    words = "tensor cache block query key value layer head scale token".split()
    out = bytearray()
    while len(out) < size:
        out += (" ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) + "\n").encode()
    return bytes(out[:size])


def noise(size: int, seed: int = 2) -> bytes:
    """Return SIZE seeded random bytes: data that does not compress."""
    return random.Random(seed).randbytes(size)


def compress(data: bytes, *, threads: int = 1, block: int = SMALL_BLOCK, writes: int = 10_000, level: int = 6) -> bytes:
    """Gzip DATA with GzipWriter, handed over in writes of WRITES bytes."""
    out = io.BytesIO()
    with GzipWriter(out, level, threads=threads, block=block) as stream:
        for start in range(0, len(data), writes):
            stream.write(data[start : start + writes])
    return out.getvalue()


MIXED = text(300_000) + noise(200_000) + text(90_000, seed=3) + b"\0" * 70_000
