"""Build a vendor-scale zip: the fixture tree plus generated filler, reproducibly.

Usage: python benchmarks/make_vendor_scale.py [--output PATH]

The zip holds the demo fixture tree unchanged (its Dockerfile and install
script included, so 'patcher apply' patches the same file) and, under the
same top folder, about a thousand generated members shaped like a real
vendor drop: hundreds of Python modules of varied size (a few with CRLF
line endings, a BOM or tabs), docs, configs, C sources, small shared
objects, and one large, poorly compressible wheel. Everything comes from a
seeded generator and is written sorted, dated 1980-01-01 and deflated at
zlib's default level, so building twice gives the same bytes. No network.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "fixtures"))
from build_demo_zip import TREE, _info, _members  # noqa: E402  (the demo zip's own member rules)

OUTPUT = HERE / "out" / "vendor-scale.zip"
SEED = 20261129
TOP = TREE.name
WHEEL = "wheels/vllm-0.6.3+corex.4.2.0-cp310-cp310-linux_x86_64.whl"
WHEEL_SIZE = 40 << 20  # already compressed in real life: random bytes model it

_WORDS = (
    "attention block cache config decode device dtype engine expert forward gate head hidden "
    "input kernel layer logits mask model norm output page prefill query rank request sampler "
    "scale scheduler sequence shape slot stream tensor token weight worker batch buffer chunk "
    "context group index key value lora metadata offset padding position quant rope shard "
    "split state step tile vocab window allocator executor runner loader manager handler"
).split()
_TYPES = ("int", "float", "bool", "str", "torch.Tensor", "Optional[int]", "List[int]", "Dict[str, Any]")
_PACKAGES = (
    "attention/backends attention/ops core distributed engine entrypoints/openai executor "
    "lora model_executor/layers model_executor/layers/quantization model_executor/models "
    "model_executor/guided_decoding multimodal platforms spec_decode transformers_utils "
    "transformers_utils/configs worker usage inputs prompt_adapter adapter_commons "
    "compilation plugins triton_utils"
).split()
_LICENSE = (
    "# SPDX-License-Identifier: Apache-2.0\n"
    "# Copyright contributors to the vLLM project and Iluvatar CoreX.\n"
    "# Adapted for BI-V100 by the vendor; see NOTICE for the original authors.\n"
)


def build(output: Path) -> Path:
    """Write the vendor-scale zip to OUTPUT (atomically) and return OUTPUT."""
    members = sorted(_fixture_members() + _filler(random.Random(SEED)))
    output.parent.mkdir(parents=True, exist_ok=True)
    temp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(temp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            folders: list[tuple[str, bytes | None, bool]] = [(name, None, False) for name in _with_folders([m[0] for m in members])]
            for name, data, executable in sorted([*folders, *members], key=lambda m: m[0]):
                if data is None:
                    archive.writestr(_folder_info(name), b"")
                else:
                    archive.writestr(_file_info(name, executable), data)
        os.replace(temp, output)
    finally:
        temp.unlink(missing_ok=True)
    return output


def _fixture_members() -> list[tuple[str, bytes, bool]]:
    found = []
    for name, path in _members(TREE):
        if not path.is_dir():
            found.append((name, path.read_bytes(), bool(_info(name, path).external_attr >> 16 & 0o111)))
    return found


def _with_folders(files: list[str]) -> list[str]:
    folders = {TOP + "/"}
    for name in files:
        parts = name.split("/")[:-1]
        folders.update("/".join(parts[: i + 1]) + "/" for i in range(len(parts)))
    return sorted(folders)


def _folder_info(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.create_system = 3
    info.external_attr = (0o40755 << 16) | 0x10
    return info


def _file_info(name: str, executable: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.create_system = 3
    info.external_attr = ((0o100755 if executable else 0o100644) << 16)
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def _filler(rng: random.Random) -> list[tuple[str, bytes, bool]]:
    """Return (zip name, content, executable) for every generated member."""
    out: list[tuple[str, bytes, bool]] = []
    used: set[str] = set()

    def add(path: str, data: bytes, executable: bool = False) -> None:
        while path in used:  # two random names may coincide
            stem, dot, ext = path.rpartition(".")
            path = f"{stem}_{len(used)}{dot}{ext}"
        used.add(path)
        out.append((f"{TOP}/{path}", data, executable))

    for number in range(720):
        package = rng.choice(_PACKAGES)
        text = _python_module(rng, _size(rng, 1_000, 260_000, 45_000))
        data = text.encode()
        if number % 23 == 0:
            data = data.replace(b"\n", b"\r\n")  # an editor on Windows touched these
        elif number % 61 == 0:
            data = b"\xef\xbb\xbf" + data
        elif number % 47 == 0:
            data = data.replace(b"    ", b"\t")
        add(f"vllm_src/vllm/{package}/{_ident(rng)}.py", data)
    for _ in range(60):
        add(f"vllm_src/csrc/{rng.choice(_WORDS)}/{_ident(rng)}.{rng.choice(('cu', 'h', 'cpp'))}",
            _c_source(rng, _size(rng, 2_000, 120_000, 20_000)).encode())
    for _ in range(70):
        add(f"docs/source/{rng.choice(_WORDS)}/{_ident(rng)}.md", _markdown(rng, _size(rng, 500, 60_000, 8_000)).encode())
    for _ in range(50):
        add(f"configs/{rng.choice(_WORDS)}/{_ident(rng)}.json", _json(rng, _size(rng, 300, 200_000, 6_000)))
    for _ in range(30):
        add(f"benchmarks/{_ident(rng)}.sh", _shell(rng).encode(), executable=True)
    for _ in range(25):
        add(f"requirements/{_ident(rng)}.txt", _requirements(rng).encode())
    for _ in range(40):
        add(f"vllm_src/vllm/_libs/lib{_ident(rng)}.so", _object_code(rng, _size(rng, 20_000, 2_000_000, 150_000)))
    add(WHEEL, rng.randbytes(WHEEL_SIZE))
    return out


def _size(rng: random.Random, low: int, high: int, typical: int) -> int:
    return max(low, min(high, int(rng.lognormvariate(0, 1.0) * typical)))


def _ident(rng: random.Random, parts: int = 0) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(parts or rng.randint(1, 3)))


def _python_module(rng: random.Random, size: int) -> str:
    lines = [_LICENSE, f'"""{_sentence(rng).capitalize()}."""\n',
             "from typing import Any, Dict, List, Optional\n\nimport torch\n",
             f"from vllm.{rng.choice(_PACKAGES).replace('/', '.')} import {_ident(rng)}\n\n"]
    length = sum(map(len, lines))
    while length < size:
        chunk = _python_class(rng) if rng.random() < 0.3 else _python_function(rng, "")
        lines.append(chunk)
        length += len(chunk)
    return "\n".join(lines)


def _python_class(rng: random.Random) -> str:
    name = "".join(w.capitalize() for w in _ident(rng, 2).split("_"))
    body = [f"\nclass {name}:\n", f'    """{_sentence(rng).capitalize()}."""\n\n']
    body += [f"    {line}\n" if line else "\n" for _ in range(rng.randint(1, 4))
             for line in _python_function(rng, "self, ").splitlines()]
    return "".join(body)


def _python_function(rng: random.Random, self: str) -> str:
    args = [f"{_ident(rng)}: {rng.choice(_TYPES)}" for _ in range(rng.randint(0, 4))]
    var, other, index = _ident(rng), _ident(rng), rng.choice("ijkn")
    body = [f"def {_ident(rng)}({self}{', '.join(args)}) -> {rng.choice(_TYPES)}:",
            f'    """{_sentence(rng).capitalize()}."""']
    for _ in range(rng.randint(2, 9)):
        kind = rng.random()
        if kind < 0.3:
            body.append(f"    {var} = {other}.{_ident(rng, 1)}({_ident(rng)}, dim={rng.randint(-2, 3)})")
        elif kind < 0.5:
            body += [f"    if {var} is None:", f"        return {rng.choice(('None', '0', 'False', other))}"]
        elif kind < 0.7:
            body += [f"    for {index} in range({_ident(rng)}.{rng.choice(_WORDS)}_size):",
                     f"        {var} += {other}[{index}] * {rng.uniform(0, 4):.4f}"]
        elif kind < 0.85:
            body.append(f"    # {_sentence(rng)}")
        else:
            body.append(f"    logger.debug(\"{_sentence(rng)}: %s\", {var})")
    body.append(f"    return {var}\n")
    return "\n".join(body) + "\n"


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))


def _c_source(rng: random.Random, size: int) -> str:
    parts = ["// SPDX-License-Identifier: Apache-2.0\n#include <torch/all.h>\n#include <cuda_fp16.h>\n"]
    length = len(parts[0])
    while length < size:
        name = _ident(rng)
        chunk = (f"\n__global__ void {name}_kernel(const half* __restrict__ {_ident(rng, 1)},"
                 f" half* __restrict__ out, int n) {{\n"
                 f"  // {_sentence(rng)}\n  int idx = blockIdx.x * blockDim.x + threadIdx.x;\n"
                 f"  if (idx < n) {{ out[idx] = __hmul(out[idx], __float2half({rng.uniform(0, 2):.3f}f)); }}\n}}\n")
        parts.append(chunk)
        length += len(chunk)
    return "".join(parts)


def _markdown(rng: random.Random, size: int) -> str:
    parts = [f"# {_sentence(rng).title()}\n"]
    length = len(parts[0])
    while length < size:
        chunk = (f"\n## {_sentence(rng).title()}\n\n{_sentence(rng).capitalize()}. {_sentence(rng)}.\n"
                 f"\n```python\nllm = LLM(model=\"{_ident(rng)}\", {_ident(rng, 1)}={rng.randint(1, 64)})\n```\n")
        parts.append(chunk)
        length += len(chunk)
    return "".join(parts)


def _json(rng: random.Random, size: int) -> bytes:
    rows = []
    length = 0
    while length < size:
        row = {_ident(rng, 1): rng.randint(0, 1 << 20), "name": _ident(rng), "scale": round(rng.random(), 6),
               "layers": [rng.randint(0, 95) for _ in range(rng.randint(1, 12))]}
        rows.append(row)
        length += 120
    return json.dumps({"version": 1, "entries": rows}, indent=2).encode()


def _shell(rng: random.Random) -> str:
    lines = ["#!/bin/bash", "set -euo pipefail", f"# {_sentence(rng)}"]
    lines += [f"python3 -m vllm.entrypoints.{_ident(rng, 1)} --{_ident(rng, 1)} {rng.randint(1, 8192)}"
              for _ in range(rng.randint(3, 40))]
    return "\n".join(lines) + "\n"


def _requirements(rng: random.Random) -> str:
    return "".join(f"{_ident(rng, 1)}>={rng.randint(0, 9)}.{rng.randint(0, 40)}\n" for _ in range(rng.randint(3, 30)))


def _object_code(rng: random.Random, size: int) -> bytes:
    # Machine code compresses about 2:1: random runs between padding and
    # repeated instruction-like patterns.
    parts = [b"\x7fELF\x02\x01\x01" + bytes(57)]
    length = len(parts[0])
    while length < size:
        run = rng.randint(64, 4096)
        kind = rng.random()
        chunk = rng.randbytes(run) if kind < 0.45 else (bytes(run) if kind < 0.6 else
                                                         (rng.randbytes(16) * (run // 16 + 1))[:run])
        parts.append(chunk)
        length += run
    return b"".join(parts)[:size]


def iter_summary(path: Path) -> Iterator[str]:
    """Yield a few lines describing the zip at PATH."""
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    files = [i for i in infos if not i.is_dir()]
    py = [i for i in files if i.filename.endswith(".py")]
    yield f"{path}: {len(infos)} members ({len(files)} files, {len(py)} .py)"
    yield (f"  {sum(i.file_size for i in files) / 1e6:.1f} MB uncompressed,"
           f" {path.stat().st_size / 1e6:.1f} MB on disk; largest {max(i.file_size for i in files) / 1e6:.1f} MB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write the zip (default: %(default)s)")
    args = parser.parse_args(argv)
    build(args.output)
    for line in iter_summary(args.output):
        print(line, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
