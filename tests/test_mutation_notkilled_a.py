"""Inputs that tell apart three mutants a mutation run left alive: each pins what the user should get.

- a V1/V2 flag read in a class body defined inside a function (reachability);
- a vendor zip whose last members include a stored wheel, itself a zip with its own end record;
- gzip output for text holding ``XXXX`` placeholders (a first block deflated with no preset window).
"""

from __future__ import annotations

import gzip
import io
import random
import struct
import textwrap
import zipfile
import zlib
from pathlib import Path

import pytest

from patcher.archive import Limits
from patcher.archive.gzip_stream import BLOCK, HEADER, WINDOW, GzipWriter
from patcher.archive.zip_source import ZipSource
from patcher.checks.base import PythonSource
from patcher.errors import BadArchive

# --- reachability: a class body inside a function ------------------------------------------

# A factory that builds the attention class; the flag is set in the function, read in the class body.
FACTORY = """\
def make_paged_attention(block_size):
    use_v1 = True
    class PagedAttentionImpl:
        # V2 splits long contexts into partitions; V1 fails for long contexts
        if not use_v1:
            target()
        {later}
    return PagedAttentionImpl
"""


def _dead(code: str) -> str | None:
    """Why the one call of ``target()`` in ``code`` cannot run, or None."""
    source = PythonSource("paged_attn.py", textwrap.dedent(code).encode())
    (call,) = source.index.calls("target")
    return source.reachability.dead(call)


def test_a_flag_read_in_a_class_body_inside_a_function_is_not_trusted() -> None:
    # In a function body the flag decides the branch.
    plain = "def make_paged_attention(block_size):\n    use_v1 = True\n    if not use_v1:\n        target()\n"
    assert _dead(plain) == "`use_v1` is always True here (line 2)"
    # In a class body names are never trusted, even with the function's literal just above.
    assert _dead(FACTORY.format(later="pass")) is None
    assert _dead(FACTORY.format(later="use_v1 = block_size > 16")) is None


def test_a_class_body_that_rebinds_the_flag_later_reads_another_one() -> None:
    # Why the branch is live: a class body binding `use_v1` anywhere looks the name up in the
    # class namespace and then the module, never in the function, so `if not use_v1` runs target().
    code = FACTORY.format(later="use_v1 = block_size > 16")
    calls: list[str] = []
    namespace = {"use_v1": False, "target": lambda: calls.append("v2")}
    exec(compile(code, "paged_attn.py", "exec"), namespace)
    namespace["make_paged_attention"](16)  # type: ignore[operator]
    assert calls == ["v2"]
    assert _dead(code) is None


# --- zip: the vendor's end record, not the one of a wheel inside it ------------------------


def _wheel(members: int) -> bytes:
    """Return a small wheel: a zip of ``members`` kernel modules plus its RECORD."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for i in range(members - 1):
            wheel.writestr(f"vllm_kernels/ops/kernel_{i}.py", f"# generated kernel {i}\nBLOCK = {16 << i % 4}\n")
        wheel.writestr("vllm_kernels-0.6.3.dist-info/RECORD", "vllm_kernels/ops/kernel_0.py,,\n")
    return buffer.getvalue()


def _vendor_zip(path: Path) -> Path:
    """Write a vendor drop whose wheel is stored (zip -n .whl) near the end, so its end record is in the tail."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("engine/Dockerfile", "FROM nvcr.io/nvidia/pytorch:24.05-py3\r\nRUN pip install /wheels/*.whl\r\n")
        archive.writestr("engine/wheels/vllm_kernels-0.6.3-cp311-cp311-linux_x86_64.whl", _wheel(12),
                         compress_type=zipfile.ZIP_STORED)
        archive.writestr("engine/README.md", "# Engine\n\nBuild with `docker build .`\n")
    return path


def test_the_member_count_comes_from_the_vendor_zip_not_from_a_stored_wheel_inside(tmp_path: Path) -> None:
    path = _vendor_zip(tmp_path / "v.zip")
    data = path.read_bytes()
    # Two end records in the file's tail: the wheel's (12 members) first, the vendor zip's (3) last.
    assert data.count(b"PK\x05\x06") == 2
    with ZipSource(path, Limits(max_members=3)) as source:
        assert sorted(f.path for f in source.files()) == [
            "Dockerfile", "README.md", "wheels/vllm_kernels-0.6.3-cp311-cp311-linux_x86_64.whl"]
    with pytest.raises(BadArchive) as caught:
        ZipSource(path, Limits(max_members=2))
    assert str(caught.value) == (
        "v.zip: zip declares 3 members, more than the limit of 2"
        " (if the archive is trusted, raise the limit with --max-members)"
    )


# --- gzip: the first block has nothing before it -------------------------------------------

# A vendor env file with masked secrets: `XXXX` placeholders, the bytes a primed window would hold.
ENV_FILE = b"".join(
    b"# engine %d\r\nHF_TOKEN=hf_XXXXXXXXXXXXXXXX\r\nNGC_API_KEY=XXXX-XXXX-XXXX\r\nTP_SIZE=%d\r\n" % (i, 1 << i % 4)
    for i in range(40)
)
# The masked license key the vendor ships in place of the real one.
LICENSE_KEY = b"XXXX-XXXX-XXXX-XXXX\n"


@pytest.mark.parametrize("data", [ENV_FILE, LICENSE_KEY], ids=["env file", "license key"])
def test_text_with_placeholders_round_trips_and_equals_plain_raw_deflate(data: bytes) -> None:
    out = io.BytesIO()
    with GzipWriter(out, 6, threads=1) as writer:
        writer.write(data)
    assert gzip.decompress(out.getvalue()) == data
    # One block: the deflate stream of the data alone (no preset dictionary), between gzip's framing.
    engine = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    raw = engine.compress(data) + engine.flush()
    trailer = struct.pack("<II", zlib.crc32(data), len(data))
    assert out.getvalue() == HEADER + raw + trailer


def _engine_log(size: int) -> bytes:
    """Return ``size`` bytes of an engine log: varied lines, so deflate's blocks fill as on real text."""
    rng = random.Random(7)
    words = "tensor cache block query key value layer head scale token prefill decode".split()
    out = bytearray()
    while len(out) < size:
        out += (f"[rank {rng.randint(0, 7)}] " + " ".join(rng.choice(words) for _ in range(rng.randint(3, 12))) + "\n").encode()
    return bytes(out[:size])


def test_each_block_is_zlibs_raw_deflate_primed_with_the_32_kib_before_it() -> None:
    # The pigz layout the module promises, built here from zlib's defaults: block one alone, each
    # later block with the previous 32 KiB as its dictionary, all but the last ended by a sync flush.
    # Compared with this process's zlib, so the bytes do not depend on the zlib build.
    data = _engine_log(BLOCK + 300_000)  # a full block and a shorter last one
    out = io.BytesIO()
    with GzipWriter(out, 6, threads=2) as writer:
        writer.write(data)
    expected = HEADER
    for start in range(0, len(data), BLOCK):
        before = data[max(0, start - WINDOW) : start]
        engine = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS, zdict=before) if before else \
            zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        last = start + BLOCK >= len(data)
        expected += engine.compress(data[start : start + BLOCK]) + engine.flush(zlib.Z_FINISH if last else zlib.Z_SYNC_FLUSH)
    expected += struct.pack("<II", zlib.crc32(data), len(data))
    assert out.getvalue() == expected
    assert gzip.decompress(out.getvalue()) == data
