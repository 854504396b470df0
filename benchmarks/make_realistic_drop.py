"""Build a zip shaped like the real vendor drop, reproducibly from a seed.

Usage: python benchmarks/make_realistic_drop.py [--profile real-size|benchmark] [--output PATH] [--seed N]

Where ``make_vendor_scale.py`` adds filler that never ships, this drop
has the real one's proportions where they cost time: about 480 members
under one top folder, of which the Dockerfile ships ``qwen3_6_scripts/``
only, and there 26 Python files (100 to about 1,200 lines each, some
11,000 lines and 460 KB in all, CRLF and LF mixed, one without a final
newline) that ``patch_ops.sh`` installs with ``cp`` lines. The shipped
``paged_attn.py`` is the fixture's, in CRLF and with the kind of
diagnostics helpers later versions grew appended, so the patch series
applies to it. The rest: the stale root copies and service files of the
fixture, a few hundred modules of the vendor's vLLM that do not ship,
JSON and YAML data, and a wheel-like incompressible blob.

Two profiles (``PROFILES``), the same shipped files in both:

- ``real-size`` (the default): the real drop's size, 480 members, 6.1 MB
  unpacked, 1.5 MB zipped, the shipped ``paged_attn.py`` 547 lines. On a
  drop this small the GNU pipeline is quick, and patcher's fixed costs
  (start, imports, parsing, the whole-tree rules) are what shows.
- ``benchmark``: the drop the bench used before (512 members, 11.3 MB
  unpacked, 7.8 MB zipped: a 6 MB wheel, a 634-line ``paged_attn.py``),
  byte for byte as before, so figures across sessions compare.

Python is generated from a small grammar (imports, constants, dataclasses,
classes with methods, functions with loops, branches, try blocks,
comments and docstrings), never one repeated line. Members are sorted,
dated 1980-01-01 and deflated at zlib's default level: the same seed gives
the same bytes. No network.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_vendor_scale as scale  # noqa: E402  (zip member rules and the binary/JSON makers)

SEED = 20261201
TOP = scale.TOP
FIXTURE = scale.TREE
SCRIPTS = "qwen3_6_scripts"
DIST = "/usr/local/corex/lib/python3/dist-packages/vllm"
WHEEL = "wheels/ixformer-0.6.0+corex.4.2.0-cp310-cp310-linux_x86_64.whl"

# The shipped modules besides paged_attn.py: (path under qwen3_6_scripts/,
# where patch_ops.sh installs it, lines). 25 files, 100 to 1,210 lines.
SHIPPED: tuple[tuple[str, str, int], ...] = (
    ("qwen3_5.py", "model_executor/models/qwen3_5.py", 1210),
    ("serving_chat.py", "entrypoints/openai/serving_chat.py", 980),
    ("scheduler.py", "core/scheduler.py", 870),
    ("qwen3_5_moe/modeling_qwen3_5_moe.py", "model_executor/models/qwen3_5_moe/modeling_qwen3_5_moe.py", 790),
    ("protocol.py", "entrypoints/openai/protocol.py", 720),
    ("api_server.py", "entrypoints/openai/api_server.py", 660),
    ("qwen3_5/gated_delta_net.py", "model_executor/models/qwen3_5/gated_delta_net.py", 610),
    ("sequence.py", "sequence.py", 560),
    ("chat_utils.py", "entrypoints/chat_utils.py", 520),
    ("qwen3coder_tool_parser.py", "entrypoints/openai/tool_parsers/qwen3coder_tool_parser.py", 480),
    ("mamba_cache.py", "model_executor/models/mamba_cache.py", 440),
    ("qwen3_5/modeling_qwen3_5.py", "model_executor/models/qwen3_5/modeling_qwen3_5.py", 410),
    ("cli_args.py", "entrypoints/openai/cli_args.py", 370),
    ("qwen3_5_moe/fused_moe_router.py", "model_executor/models/qwen3_5_moe/fused_moe_router.py", 340),
    ("reasoning/qwen3_reasoning_parser.py", "reasoning/qwen3_reasoning_parser.py", 310),
    ("reasoning/abs_reasoning_parsers.py", "reasoning/abs_reasoning_parsers.py", 280),
    ("qwen3_5/configuration_qwen3_5.py", "model_executor/models/qwen3_5/configuration_qwen3_5.py", 250),
    ("qwen3_5_moe/configuration_qwen3_5_moe.py",
     "model_executor/models/qwen3_5_moe/configuration_qwen3_5_moe.py", 230),
    ("patch_scheduler.py", "", 210),
    ("patch_registry.py", "", 190),
    ("patch_sampler.py", "", 160),
    ("reasoning/__init__.py", "reasoning/__init__.py", 140),
    ("qwen3_5/__init__.py", "model_executor/models/qwen3_5/__init__.py", 120),
    ("qwen3_5_moe/__init__.py", "model_executor/models/qwen3_5_moe/__init__.py", 110),
    ("tokenizer_patch.py", "transformers_utils/tokenizer_patch.py", 100),
)


@dataclass(frozen=True)
class Profile:
    """How large the parts of a drop are that do not ship, and how the shipped paged_attn.py ends."""

    name: str
    output: Path
    vllm_modules: int  # unshipped vendored vLLM sources
    vllm_lines: int  # their median length in lines (lognormal)
    data_files: int  # JSON and YAML next to them
    json_scale: float  # the JSON files' size against the benchmark profile's
    requests: int  # entries of data/sample_requests.json
    wheel_size: int  # a wheel-like incompressible blob
    diagnostics: bool  # paged_attn.py grew the diagnostics helpers (634 lines), else a short tail (547)
    triton_utils: tuple[str, ...] = ()  # shipped modules that import vllm.triton_utils (cache management)


PROFILES = {
    profile.name: profile
    for profile in (
        Profile("real-size", HERE / "out" / "real-size-drop.zip", vllm_modules=358, vllm_lines=116, data_files=45,
                json_scale=4.5, requests=1200, wheel_size=24 << 10, diagnostics=False,
                triton_utils=("api_server.py", "scheduler.py", "qwen3_5/gated_delta_net.py")),
        Profile("benchmark", HERE / "out" / "realistic-drop.zip", vllm_modules=390, vllm_lines=160, data_files=45,
                json_scale=1.0, requests=200, wheel_size=6 << 20, diagnostics=True),
    )
}
DEFAULT = PROFILES["real-size"]
OUTPUT = DEFAULT.output

_WORDS = (
    "attention block cache config decode device dtype engine expert forward gate head hidden "
    "input layer logits mask model norm output page prefill query rank request sampler "
    "scale scheduler sequence shape slot stream tensor token weight worker batch buffer chunk "
    "context group index key value lora metadata offset padding position quant rope shard "
    "split state step tile vocab window allocator executor runner loader manager handler "
    "prompt reasoning tool parser delta linear conv router topk bias residual"
).split()
_TYPES = ("int", "float", "bool", "str", "torch.Tensor", "Optional[int]", "List[int]",
          "Dict[str, Any]", "Optional[torch.Tensor]", "Tuple[int, int]", "Sequence[str]")
_STDLIB = ("os", "sys", "time", "json", "math", "enum", "functools", "itertools", "logging", "re",
           "threading", "asyncio", "dataclasses", "collections")
_VLLM_FROM = (
    ("vllm.config", "CacheConfig, ModelConfig, SchedulerConfig"),
    ("vllm.logger", "init_logger"),
    ("vllm.sequence", "SequenceGroup, SequenceStatus"),
    ("vllm.sampling_params", "SamplingParams"),
    ("vllm.attention", "Attention, AttentionMetadata"),
    ("vllm.model_executor.layers.linear", "ColumnParallelLinear, RowParallelLinear"),
    ("vllm.model_executor.layers.layernorm", "RMSNorm"),
    ("vllm.distributed", "get_tensor_model_parallel_world_size"),
    ("vllm.utils", "random_uuid, is_list_of"),
    ("vllm.entrypoints.openai.protocol", "ChatCompletionRequest, ErrorResponse"),
)


@dataclass(frozen=True)
class Member:
    """One file of the zip: its name under the top folder, bytes, and exec bit."""

    name: str
    data: bytes
    executable: bool = False


def build(output: Path, seed: int = SEED, profile: Profile = DEFAULT) -> Path:
    """Write the drop PROFILE describes to OUTPUT (atomically) and return OUTPUT."""
    rng = random.Random(seed)
    members = _fixture_members() + _shipped(rng, profile) + _vendored(rng, profile) + _data(rng, profile)
    members.append(Member(WHEEL, _wheel(rng, profile)))
    files = {m.name: m for m in members}  # generated names never replace fixture files: checked below
    if len(files) != len(members):
        raise AssertionError("two members of the drop share a name")
    output.parent.mkdir(parents=True, exist_ok=True)
    temp = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        with zipfile.ZipFile(temp, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            names = [f"{TOP}/{name}" for name in files]
            entries: list[tuple[str, Member | None]] = [(name, None) for name in scale._with_folders(names)]
            entries += [(f"{TOP}/{m.name}", m) for m in files.values()]
            for name, member in sorted(entries, key=lambda e: e[0]):
                if member is None:
                    archive.writestr(scale._folder_info(name), b"")
                else:
                    archive.writestr(scale._file_info(name, member.executable), member.data)
        os.replace(temp, output)
    finally:
        temp.unlink(missing_ok=True)
    return output


def _fixture_members() -> list[Member]:
    """The fixture's root files, stale copies and vLLM stubs; not its scripts folder (rebuilt here)."""
    found = []
    for name, data, executable in scale._fixture_members():
        relative = name.removeprefix(TOP + "/")
        if relative.startswith(SCRIPTS + "/"):
            if relative.endswith("chat_template.jinja"):
                found.append(Member(relative, data))
            continue
        if relative.endswith(".py") or relative == "Dockerfile":
            data = _crlf(data)  # the vendor's Windows editor: the Dockerfile and the stale copies
        found.append(Member(relative, data, executable))
    return found


def _crlf(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _shipped(rng: random.Random, profile: Profile = DEFAULT) -> list[Member]:
    members = [Member(f"{SCRIPTS}/paged_attn.py", _paged_attn(rng, profile)), Member(f"{SCRIPTS}/patch_ops.sh", _patch_ops(),
                                                                             executable=True)]
    for number, (path, _, lines) in enumerate(SHIPPED):
        text = _python_file(rng, lines, package=path.endswith("__init__.py"))
        if path in profile.triton_utils:
            text = text.replace("\nfrom torch import nn\n", "\nfrom torch import nn\n" + _TRITON_UTILS, 1)
        ast.parse(text, filename=path, feature_version=(3, 10))  # a shipped file the image cannot import is a bug here
        data = text.encode()
        if number % 5 == 3:
            data = data.rstrip(b"\n")  # saved without a final newline
        if rng.random() < 0.6:
            data = _crlf(data)
        members.append(Member(f"{SCRIPTS}/{path}", data))
    return members


# As the vendor's vLLM still does: Triton's cache manager for tensor
# parallelism, never a kernel (HAS_TRITON is hard-coded False there).
_TRITON_UTILS = ("# Triton kernels hang the BI-V100; only its cache manager is used (tensor parallel).\n"
                 "from vllm.triton_utils import maybe_set_triton_cache_manager\n")


def _paged_attn(rng: random.Random, profile: Profile) -> bytes:
    # The fixture's shipped copy, with the diagnostics helpers that later
    # versions appended (module level, after the class the patches edit).
    base = (FIXTURE / SCRIPTS / "paged_attn.py").read_text(encoding="utf-8")
    if not profile.diagnostics:  # the real drop's copy: 547 lines, a debug switch read at import
        tail = ["", "", "# Diagnostics (BI-V100 bring-up): read once at import.", "import os", "",
                '_DEBUG_LEVEL = int(os.environ.get("PAGED_ATTN_DEBUG", "0"))']
        return _crlf((base.rstrip("\n") + "\n" + "\n".join(tail) + "\n").encode())
    extra = [
        "",
        "",
        "# ---------------------------------------------------------------------------",
        "# Diagnostics (BI-V100 bring-up). Read once at import; cheap when disabled.",
        "# ---------------------------------------------------------------------------",
        "",
        "import os",
        "",
        '_DEBUG_LEVEL = int(os.environ.get("PAGED_ATTN_DEBUG", "0"))',
        "_LOGGED_SHAPES: set = set()",
        "",
    ]
    for name in ("block_tables", "seq_lens", "query_start_loc", "context_lens", "key_cache", "value_cache"):
        extra += [
            "",
            f"def _describe_{name}({name}: torch.Tensor) -> str:",
            f'    """Return a one-line summary of ``{name}`` for the bring-up logs."""',
            f"    if {name} is None:",
            f'        return "{name}=None"',
            f"    shape = tuple({name}.shape)",
            f"    # Each distinct shape is logged once per process: decode calls this per step.",
            f"    if _DEBUG_LEVEL < 2 and ('{name}', shape) in _LOGGED_SHAPES:",
            '        return ""',
            f"    _LOGGED_SHAPES.add(('{name}', shape))",
            f'    return "{name}=%s dtype=%s device=%s" % (shape, {name}.dtype, {name}.device)',
            "",
        ]
    extra += [
        "",
        "def _log_call(where: str, *tensors: torch.Tensor) -> None:",
        '    """Print the shapes a kernel call sees when PAGED_ATTN_DEBUG is set."""',
        "    if not _DEBUG_LEVEL:",
        "        return",
        "    parts = [where, str(os.getpid())]",
        "    for tensor in tensors:",
        "        if isinstance(tensor, torch.Tensor):",
        "            parts.append(str(tuple(tensor.shape)))",
        '    print("[paged_attn] " + " ".join(parts), file=sys.stderr)',
    ]
    del rng  # the derived copy is fixed: the patches' golden output does not depend on the seed
    return _crlf((base.rstrip("\n") + "\n" + "\n".join(extra) + "\n").encode())


def _patch_ops() -> bytes:
    lines = [
        "# Install the Qwen3.6 support files over the base image's vLLM.",
        "# Run from inside qwen3_6_scripts/ (the Dockerfile does: cd ./qwen3_6_scripts && ./patch_ops.sh)",
        "",
        'echo "==== qwen3.6 patch_ops: start ===="',
        "",
        "# ---- attention ----",
        'echo "[1/5] attention ops"',
        f"cp ./paged_attn.py {DIST}/attention/ops/paged_attn.py",
        "# stale bytecode of the old paged_attn would otherwise be picked up",
        f"rm -rf {DIST}/attention/ops/__pycache__",
        "",
        "# ---- models, engine, entrypoints ----",
        'echo "[2/5] qwen3.5 / qwen3.6 model, engine and server"',
    ]
    folders = set()
    for path, destination, _ in SHIPPED:
        if not destination:
            continue
        folder = path.partition("/")[0] if "/" in path else ""
        if folder:
            if folder not in folders:
                folders.add(folder)
                parent = destination.rsplit("/", 2)[0] if destination.count("/") > 1 else ""
                lines.append(f"cp -r ./{folder} {DIST}/{parent + '/' if parent else ''}")
            continue
        lines.append(f"cp ./{path} {DIST}/{destination}")
    lines += [
        "",
        "# ---- chat template ----",
        'echo "[3/5] chat template"',
        "mkdir -p /workspace/templates",
        "cp ./chat_template.jinja /workspace/templates/qwen3_6.jinja",
        "",
        "# ---- in-place edits of files we do not ship whole ----",
        'echo "[4/5] scheduler / registry / sampler edits"',
        "python3 ./patch_scheduler.py",
        "python3 ./patch_registry.py",
        "python3 ./patch_sampler.py",
        "",
        "# tokenizer needs a newer transformers than the base image has",
        "pip install transformers==4.57.1 --no-deps",
        "",
        'echo "[5/5] sanity check"',
        f"ls -l {DIST}/attention/ops/paged_attn.py",
        f"ls -l {DIST}/model_executor/models/qwen3_5.py",
        'python3 -c "import vllm; print(\'vllm\', vllm.__version__)"',
        "",
        'echo "==== qwen3.6 patch_ops: done ===="',
    ]
    return ("\n".join(lines) + "\n").encode()


# --------------------------------------------------------------------------- Python


def _python_file(rng: random.Random, lines: int, *, package: bool = False) -> str:
    """Return a module of about LINES lines (never fewer) that parses under Python 3.10."""
    out = [
        "# SPDX-License-Identifier: Apache-2.0",
        "# Adapted from vLLM for the BI-V100 (CoreX 4.2); see NOTICE for the original authors.",
        f'"""{_sentence(rng).capitalize()}.',
        "",
        f"{_sentence(rng).capitalize()}, {_sentence(rng)}.",
        '"""',
    ]
    for module in sorted(rng.sample(_STDLIB, rng.randint(2, 5))):
        out.append(f"import {module}")
    out.append("from typing import Any, Dict, List, Optional, Sequence, Tuple")
    out += ["", "import torch", "from torch import nn", ""]
    for module, names in sorted(rng.sample(_VLLM_FROM, rng.randint(2, 5))):
        out.append(f"from {module} import {names}")
    out += ["", "logger = init_logger(__name__)" if rng.random() < 0.8 else "logger = logging.getLogger(__name__)"]
    if package:
        out += ["", "__all__ = ["] + [f'    "{_camel(rng)}",' for _ in range(rng.randint(3, 8))] + ["]"]
    for _ in range(rng.randint(1, 4)):
        out.append(f"_{_ident(rng).upper()} = {rng.randint(1, 65536)}")
    misses = 0
    while len(out) < lines:
        kind = rng.random()
        if kind < 0.45:
            unit = _class(rng)
        elif kind < 0.55:
            unit = _dataclass(rng)
        else:
            unit = ["", ""] + _function(rng, indent="", method=False)
        if len(out) + len(unit) > lines * 1.02:
            misses += 1  # too long for what is left: draw a smaller one, to land near LINES
            if misses < 30:
                continue
            unit = ["", "", f"def {_ident(rng)}() -> {rng.choice(_TYPES)}:",
                    f'    """{_sentence(rng).capitalize()}."""', f"    return _{_ident(rng).upper()}"]
        out += unit
    return "\n".join(out) + "\n"


def _class(rng: random.Random) -> list[str]:
    name = _camel(rng)
    base = rng.choice(("nn.Module", "object", "Exception", "enum.Enum")) if rng.random() < 0.7 else ""
    if base in ("object", "Exception", "enum.Enum"):
        base = "" if base == "object" else base
    out = ["", "", f"class {name}({base}):" if base else f"class {name}:", f'    """{_sentence(rng).capitalize()}.']
    if rng.random() < 0.5:
        out += ["", f"    {_sentence(rng).capitalize()}; {_sentence(rng)}."]
    out.append('    """')
    if base == "enum.Enum":
        out.append("")
        out += [f"    {_ident(rng, 1).upper()}_{n} = {n}" for n in range(rng.randint(3, 7))]
        return out
    attributes = [_ident(rng) for _ in range(rng.randint(2, 6))]
    args = ", ".join(f"{a}: {rng.choice(_TYPES)}" for a in attributes)
    out += ["", f"    def __init__(self, {args}) -> None:"]
    if base == "nn.Module":
        out.append("        super().__init__()")
    for attribute in attributes:
        if rng.random() < 0.2:
            out.append(f"        # {_sentence(rng)}")
        out.append(f"        self.{attribute} = {attribute}")
    for _ in range(rng.randint(1, 5)):
        out += [""] + _function(rng, indent="    ", method=True, attributes=attributes)
    return out


def _dataclass(rng: random.Random) -> list[str]:
    out = ["", "", "@dataclasses.dataclass", f"class {_camel(rng)}:", f'    """{_sentence(rng).capitalize()}."""', ""]
    for _ in range(rng.randint(2, 9)):
        kind = rng.choice(_TYPES)
        default = {"int": str(rng.randint(0, 4096)), "float": f"{rng.random():.3f}", "bool": rng.choice(("True", "False")),
                   "str": f'"{_ident(rng)}"'}.get(kind, "None")
        comment = f"  # {_sentence(rng)}" if rng.random() < 0.3 else ""
        out.append(f"    {_ident(rng)}: {kind} = {default}{comment}")
    return out


def _function(rng: random.Random, *, indent: str, method: bool, attributes: list[str] | None = None) -> list[str]:
    params = [f"{_ident(rng)}: {rng.choice(_TYPES)}" for _ in range(rng.randint(0, 4))]
    head = ", ".join((["self"] if method else []) + params)
    prefix = "async def" if rng.random() < 0.1 else "def"
    name = ("_" if rng.random() < 0.3 else "") + _ident(rng)
    out = [f"{indent}{prefix} {name}({head}) -> {rng.choice(_TYPES)}:"]
    if rng.random() < 0.7:
        out.append(f'{indent}    """{_sentence(rng).capitalize()}."""')
    names = [p.split(":")[0] for p in params] + [f"self.{a}" for a in (attributes or [])] or ["torch"]
    var = _ident(rng)
    out.append(f"{indent}    {var} = {rng.choice(names)}")
    out += _body(rng, indent + "    ", var, names, depth=0)
    out.append(f"{indent}    return {var}")
    return out


def _body(rng: random.Random, indent: str, var: str, names: list[str], depth: int) -> list[str]:
    out: list[str] = []
    for _ in range(rng.randint(2, 7 - 2 * depth)):
        kind = rng.random()
        other = rng.choice(names)
        if kind < 0.25:
            out.append(f"{indent}{var} = {other}.{_ident(rng, 1)}({_ident(rng)}, dim={rng.randint(-2, 3)})"
                       if rng.random() < 0.5 else f"{indent}{var} = {_ident(rng)}({other}, {rng.randint(1, 64)})")
        elif kind < 0.38 and depth < 2:
            out.append(f"{indent}if {var} is None or {rng.choice(names)} {rng.choice(('<', '>', '=='))} {rng.randint(0, 9)}:")
            out += _body(rng, indent + "    ", var, names, depth + 1)
            if rng.random() < 0.4:
                out += [f"{indent}else:", f"{indent}    {var} = {_ident(rng)}({other})"]
        elif kind < 0.48 and depth < 2:
            index = rng.choice("ijk")
            out.append(f"{indent}for {index} in range(len({other})):")
            out.append(f"{indent}    {var} += {other}[{index}] * {rng.uniform(0, 4):.4f}")
            if rng.random() < 0.5:
                out += _body(rng, indent + "    ", var, names, depth + 1)
        elif kind < 0.55 and depth < 2:
            out.append(f"{indent}try:")
            out += _body(rng, indent + "    ", var, names, depth + 1)
            out += [f"{indent}except (ValueError, RuntimeError) as error:",
                    f'{indent}    logger.warning("{_sentence(rng)}: %s", error)',
                    f"{indent}    raise"]
        elif kind < 0.72:
            out.append(f"{indent}# {_sentence(rng)}")
        elif kind < 0.85:
            out.append(f'{indent}logger.debug("{_sentence(rng)}: %s", {var})')
        elif kind < 0.93:
            out += [f"{indent}{_ident(rng)} = {{", *(f'{indent}    "{_ident(rng)}": {rng.randint(0, 999)},'
                                                     for _ in range(rng.randint(1, 4))), f"{indent}}}"]
        else:
            out.append(f"{indent}assert {var} is not None, \"{_sentence(rng)}\"")
    if all(line.lstrip().startswith("#") for line in out):
        out.append(f"{indent}{var} = {var}.{_ident(rng, 1)}()")  # a block needs a statement, not only comments
    return out


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 8)))


def _ident(rng: random.Random, parts: int = 0) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(parts or rng.choice((1, 1, 2, 2, 3))))


def _camel(rng: random.Random) -> str:
    return "".join(word.capitalize() for word in _ident(rng, rng.randint(2, 3)).split("_"))


# --------------------------------------------------------------------------- what does not ship

_VLLM_PACKAGES = (
    "attention/backends attention/ops core distributed engine entrypoints entrypoints/openai executor "
    "lora model_executor/layers model_executor/layers/quantization model_executor/models "
    "model_executor/guided_decoding multimodal platforms spec_decode transformers_utils worker inputs"
).split()


def _vendored(rng: random.Random, profile: Profile) -> list[Member]:
    used: set[str] = set()
    out = []
    for number in range(profile.vllm_modules):
        name = f"vllm/{rng.choice(_VLLM_PACKAGES)}/{_ident(rng)}.py"
        while name in used or name.startswith("vllm/attention/ops/__init__") or name == "vllm/utils.py":
            name = name.removesuffix(".py") + f"_{number}.py"
        used.add(name)
        lines = max(20, min(2500, int(rng.lognormvariate(0, 0.9) * profile.vllm_lines)))
        data = _python_file(rng, lines).encode()
        out.append(Member(name, _crlf(data) if rng.random() < 0.7 else data))
    return out


def _data(rng: random.Random, profile: Profile) -> list[Member]:
    out = []
    for number in range(profile.data_files):
        stem = f"{_ident(rng)}_{number}"
        if number % 3 == 0:
            lines = [f"# {_sentence(rng)}", f"name: {stem}"]
            for _ in range(rng.randint(5, 60)):
                lines.append(f"{_ident(rng, 1)}_{rng.randint(0, 99)}: {rng.choice((str(rng.randint(0, 9999)), _ident(rng)))}")
            out.append(Member(f"configs/{stem}.yaml", ("\n".join(lines) + "\n").encode()))
        else:
            size = max(300, min(400_000, int(rng.lognormvariate(0, 1.2) * 8_000)))
            out.append(Member(f"data/{stem}.json", scale._json(rng, int(size * profile.json_scale))))
    out.append(Member("data/sample_requests.json", json.dumps(
        [{"role": "user", "content": _sentence(rng)} for _ in range(profile.requests)], indent=2).encode()))
    return out


def _wheel(rng: random.Random, profile: Profile) -> bytes:
    return b"PK\x03\x04" + rng.randbytes(profile.wheel_size - 4)


# --------------------------------------------------------------------------- summary


def summary(path: Path) -> dict[str, object]:
    """Describe the zip at PATH: member counts, and lines, bytes and line endings of the shipped Python."""
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        files = [i for i in infos if not i.is_dir()]
        shipped = [i for i in files if i.filename.startswith(f"{TOP}/{SCRIPTS}/") and i.filename.endswith(".py")]
        texts = {i.filename.removeprefix(f"{TOP}/"): archive.read(i) for i in shipped}
    lines = {name: data.count(b"\n") + (not data.endswith(b"\n")) for name, data in texts.items()}
    return {
        "paged_attn_lines": lines.get(f"{SCRIPTS}/paged_attn.py", 0),
        "members": len(infos),
        "files": len(files),
        "shipped_py": len(texts),
        "shipped_lines": sum(lines.values()),
        "shipped_bytes": sum(map(len, texts.values())),
        "largest_lines": max(lines.values()),
        "smallest_lines": min(lines.values()),
        "crlf": sum(b"\r\n" in data for data in texts.values()),
        "lf": sum(b"\r\n" not in data for data in texts.values()),
        "zip_bytes": path.stat().st_size,
        "uncompressed_bytes": sum(i.file_size for i in files),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=sorted(PROFILES), default=DEFAULT.name,
                        help="which drop: the real one's size, or the bench's former larger one (default: %(default)s)")
    parser.add_argument("--output", type=Path, default=None,
                        help="where to write the zip (default: benchmarks/out/<the profile's name>)")
    parser.add_argument("--seed", type=int, default=SEED, help="generator seed (default: %(default)s)")
    args = parser.parse_args(argv)
    profile = PROFILES[args.profile]
    output = args.output or profile.output
    build(output, args.seed, profile)
    print(json.dumps({"path": str(output), "profile": profile.name, **summary(output)}, indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
