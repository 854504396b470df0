"""Rule no-triton-prefill: the Triton prefill kernel stays out of what ships."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from .base import FileRule, Invalid, PythonSource, Settings, SyntaxIndex, Valid, Violation, code, dotted, identifier

KERNEL = "context_attention_fwd"
KERNEL_MODULE = "prefix_prefill"  # vllm/attention/ops/prefix_prefill.py defines the kernel
SWITCH = "HAS_TRITON"
IMPORTERS = frozenset({"import_module", "__import__"})


class NoTritonPrefill(FileRule):
    """No import of ``context_attention_fwd`` in any form, no call of it, no ``HAS_TRITON = True``."""

    ID = "no-triton-prefill"
    DESCRIPTION = __doc__ or ""
    VALID = (
        # The vendor's shape: the import only as a comment, a docstring naming it.
        Valid('# from vllm.attention.ops.prefix_prefill import context_attention_fwd\n'
              'def forward_prefix():\n'
              '    """Never calls context_attention_fwd (it hangs the card)."""\n'
              '    return PagedAttention._forward_prefix_pytorch()\n'),
        Valid("from vllm.triton_utils import HAS_TRITON\nHAS_TRITON = False\n"),
        Valid("import vllm.attention.ops.paged_attn as paged_attn\n"),
        Valid("x = {'context_attention_fwd': 1}\nprint('context_attention_fwd')\n"),
    )
    INVALID = (
        Invalid("from vllm.attention.ops.prefix_prefill import context_attention_fwd\n",
                line=1, found="imports context_attention_fwd"),
        Invalid("from vllm.triton_utils import HAS_TRITON\n"
                "if HAS_TRITON:\n"
                "    from vllm.attention.ops.prefix_prefill import context_attention_fwd\n",
                line=3, found="under `if HAS_TRITON:`"),
        Invalid("try:\n"
                "    from vllm.attention.ops.prefix_prefill import (\n"
                "        context_attention_fwd as _prefill)\n"
                "except ImportError:\n"
                "    _prefill = None\n",
                line=2, found="as _prefill"),
        Invalid("from vllm.attention.ops.prefix_prefill import *\n", line=1, found="star-imports"),
        Invalid("import vllm.attention.ops.prefix_prefill as pp\n"
                "def f(q):\n"
                "    return pp.context_attention_fwd(q)\n",
                line=3, found="calls pp.context_attention_fwd"),
        Invalid("from x import context_attention_fwd as caf\n"
                "def f(q):\n"
                "    caf(q)\n",
                line=3, found="calls caf"),
        Invalid("m = importlib.import_module('vllm.attention.ops.prefix_prefill')\n",
                line=1, found="imports vllm.attention.ops.prefix_prefill dynamically"),
        Invalid("kernel = getattr(module, 'context_attention_fwd')\n", line=1, found="looks up"),
        Invalid("HAS_TRITON = True\n", line=1, found="sets HAS_TRITON = True"),
        Invalid("from vllm import triton_utils\ntriton_utils.HAS_TRITON = True\n", line=2,
                found="sets triton_utils.HAS_TRITON = True"),
        Invalid("HAS_TRITON: bool = True\n", line=1, found="sets HAS_TRITON = True"),
    )

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield each import, call, lookup of the kernel and each ``HAS_TRITON = True``."""
        if not source.mentions(KERNEL, KERNEL_MODULE, SWITCH):
            return
        for node, message in sorted(_findings(source.index), key=lambda found: source.line(found[0])):
            yield settings.violation(source.path, source.line(node), message)


def _findings(index: SyntaxIndex) -> Iterator[tuple[cst.CSTNode, str]]:
    aliases = {KERNEL}
    for node, chain in index.of(cst.ImportFrom):
        module = "." * len(node.relative) + (dotted(node.module) if node.module else "")
        if isinstance(node.names, cst.ImportStar):
            if module.split(".")[-1] == KERNEL_MODULE:
                yield node, f"star-imports {KERNEL} from {module} (`{code(node)}`){_guard(chain)}"
            continue
        for alias in node.names:
            if dotted(alias.name) == KERNEL:
                bound = _bound_name(alias)
                aliases.add(bound or KERNEL)
                suffix = f" as {bound}" if bound else ""
                yield node, f"imports {KERNEL}{suffix} from {module}{_guard(chain)}"
    for plain, chain in index.of(cst.Import):
        if any(KERNEL in dotted(alias.name).split(".") for alias in plain.names):
            yield plain, f"imports {KERNEL} (`{code(plain)}`){_guard(chain)}"
    callees = set()
    for call, chain in index.of(cst.Call):
        func = call.func
        callees.add(id(func))
        if isinstance(func, cst.Name) and identifier(func.value) in aliases:
            kernel = "" if identifier(func.value) == KERNEL else f", the Triton kernel {KERNEL}"
            yield call, f"calls {identifier(func.value)}(...){kernel}{_guard(chain)}"
        elif isinstance(func, cst.Attribute) and identifier(func.attr.value) == KERNEL:
            yield call, f"calls {dotted(func) or KERNEL}(...){_guard(chain)}"
        text = _string_argument(call)
        name = dotted(func).split(".")[-1]
        if text is not None and name in IMPORTERS and text.split(".")[-1] in (KERNEL_MODULE, KERNEL):
            yield call, f"imports {text} dynamically (`{code(call)}`){_guard(chain)}"
        elif text is not None and name == "getattr" and text == KERNEL:
            yield call, f"looks up {KERNEL} by name (`{code(call)}`){_guard(chain)}"
    for attribute, chain in index.of(cst.Attribute):
        # A reference without a call still hands the kernel to someone who will call it.
        if identifier(attribute.attr.value) == KERNEL and id(attribute) not in callees:
            yield attribute, f"refers to {dotted(attribute) or KERNEL}{_guard(chain)}"
    for assign, chain in index.of(cst.Assign):
        if _truthy(assign.value):
            for target in assign.targets:
                yield from _switch(assign, target.target, chain)
    for annotated, chain in index.of(cst.AnnAssign):
        if annotated.value is not None and _truthy(annotated.value):
            yield from _switch(annotated, annotated.target, chain)


def _switch(node: cst.CSTNode, target: cst.BaseExpression,
            chain: tuple[cst.CSTNode, ...]) -> Iterator[tuple[cst.CSTNode, str]]:
    name = dotted(target)
    if name.split(".")[-1] == SWITCH:
        yield node, f"sets {name} = True, which turns the Triton prefill path back on{_guard(chain)}"


def _guard(chain: tuple[cst.CSTNode, ...]) -> str:
    """Where the finding sits, for the message: the guards do not make it safe."""
    for node in reversed(chain):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            return ""
        if isinstance(node, cst.If):
            return f", under `if {code(node.test)}:`"
        if isinstance(node, cst.Try):
            return ", under `try:`"
    return ""


def _bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
        return identifier(alias.asname.name.value)
    return ""


def _string_argument(call: cst.Call) -> str | None:
    """The literal string among the first two arguments, if any (``import_module('x')``, ``getattr(m, 'x')``)."""
    for arg in call.args[:2]:
        if isinstance(arg.value, cst.SimpleString):
            value = arg.value.evaluated_value
            return value if isinstance(value, str) else None
    return None


def _truthy(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Name):
        return value.value == "True"
    if isinstance(value, cst.Integer):
        return int(value.evaluated_value) != 0
    return False
