"""Rule no-triton-kernels: no Triton kernel reaches the card, in any shipped file or install step.

The BI-V100's runtime does not support the PTX that Triton compiles: the
Triton prefill kernel hangs the card, and so does the other card family's
Triton build. A hang cannot be caught by ``try/except``, so "try Triton
once, fall back on error" is no protection, and the rule says so.
"""

from __future__ import annotations

import ast
import posixpath
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

from .base import BuildContext, FileRule, Invalid, PythonSource, Settings, TreeRule, Valid, Violation
from .pip_installs import dockerfile_runs, logical_lines, pip_installs
from .syntax_index import SCOPES, TRY, SyntaxIndex, dotted

KERNEL = "context_attention_fwd"  # vllm/attention/ops/prefix_prefill.py
# Functions known to launch Triton kernels, and the modules that define them.
KERNELS = frozenset({KERNEL, "triton_attention", "decode_attention_fwd"})
KERNEL_MODULES = frozenset({"prefix_prefill", "triton_flash_attention", "triton_decode_attention"})
# The image uses vllm.triton_utils for tensor-parallel cache management, not for kernels.
ALLOWED_MODULE = "vllm.triton_utils"
TRITON = "triton"
DOCKERFILE = "Dockerfile"
DECORATORS = frozenset({"jit", "autotune", "heuristics"})  # triton.jit, triton.autotune, triton.heuristics
SWITCH = "HAS_TRITON"
IMPORTERS = frozenset({"import_module", "__import__"})
# Any of these bytes must be in a file this rule can flag (a pre-filter before parsing).
WORDS = ("triton", "Triton", "TRITON", KERNEL, *KERNEL_MODULES, "decode_attention_fwd")
HANG = "a hang cannot be caught by try/except"



def says_triton(name: str) -> bool:
    """Tell whether a module or function name says Triton (``paged_attention_v2_triton``, ``TritonDecode``)."""
    return TRITON in name.lower()


def excepted(module: str) -> bool:
    """Tell whether ``module`` is ``vllm.triton_utils`` or in it: cache management, not kernels."""
    return module == ALLOWED_MODULE or module.startswith(ALLOWED_MODULE + ".")


def kernel_module(module: str) -> bool:
    """Tell whether importing ``module`` loads Triton kernels: a known kernel module, or one whose name says Triton.

    The ``triton`` package itself (``import triton``, ``triton.language``) is
    a compiler, not a kernel: the kernels it compiles are found by their
    ``@triton.jit`` decorators. ``triton.ops`` holds ready-made kernels.
    """
    parts = [p for p in module.split(".") if p]
    if not parts or excepted(module):
        return False
    if parts[0] == TRITON:
        return len(parts) > 1 and parts[1] == "ops"
    return any(p in KERNEL_MODULES or says_triton(p) for p in parts)


@dataclass(frozen=True)
class Finding:
    """Something this rule flags in one file: the node, and what it is."""

    node: ast.AST
    message: str


class NoTritonKernels(FileRule, TreeRule):
    """No Triton kernel in what ships: defined, launched, imported, called, or installed.

    Flags a function decorated with ``triton.jit`` / ``triton.autotune`` /
    ``triton.heuristics`` (through any import alias) and each launch
    ``kernel[grid](...)`` of one; an import or call of a known Triton kernel
    (``context_attention_fwd``, ``vllm.attention.ops.prefix_prefill``,
    ``triton_flash_attention``, ``triton_decode_attention``) or of a module or
    function whose name says Triton, except ``vllm.triton_utils`` (cache
    management); ``HAS_TRITON = True``; an import of a shipped module whose
    own source defines a Triton kernel, whatever its name; and an install
    script that pip-installs a Triton package or wheel. Code that cannot run
    (see ``reachability``) gets a note instead. ``try/except`` around any of
    it does not help: a hang cannot be caught.
    """

    ID = "no-triton-kernels"
    ALIASES = ("no-triton-prefill",)
    WORDS = (TRITON,)  # a file that defines a kernel imports triton
    DESCRIPTION = __doc__ or ""
    VALID = (
        # The vendor's shape: the import only as a comment, a docstring naming it.
        Valid('# from vllm.attention.ops.prefix_prefill import context_attention_fwd\n'
              '# NOTE: the Triton context_attention_fwd kernel hangs BI-V100 cards.\n'
              'def forward_prefix():\n'
              '    """Never calls context_attention_fwd (it hangs the card)."""\n'
              '    return PagedAttention._forward_prefix_pytorch()\n'),
        Valid("from vllm.triton_utils import HAS_TRITON\nHAS_TRITON = False\n"),
        Valid("from vllm.triton_utils import HAS_TRITON\nif HAS_TRITON:\n    pass\n"),
        Valid("from vllm.triton_utils import maybe_set_triton_cache_manager\nmaybe_set_triton_cache_manager()\n"),
        Valid("import vllm.triton_utils.custom_cache_manager as cm\ncm.maybe_set_triton_cache_manager()\n"),
        Valid("import vllm.attention.ops.paged_attn as paged_attn\n"),
        Valid("x = {'context_attention_fwd': 1}\nprint('context_attention_fwd')\n"),
        # The Triton compiler's utilities are not kernels; numba's jit is not Triton's.
        Valid("import triton\nblocks = triton.cdiv(n, 64)\n"),
        Valid("from numba import jit\n@jit\ndef f(x):\n    return x\n"),
        # A class flag that only names Triton, and a handler for other kinds of kernel.
        Valid("class PagedAttention:\n    _triton_prefill_ok = False\n"),
        # Dead code: the import sits under `if False:`.
        Valid("if False:\n    from vllm.attention.ops.prefix_prefill import context_attention_fwd\n",
              note="cannot run: its test `False` is always false"),
        Valid("""\
def forward_prefix(query):
    use_triton = False
    if use_triton:
        from vllm.attention.ops.prefix_prefill import context_attention_fwd
        return context_attention_fwd(query)
    return PagedAttention._forward_prefix_pytorch(query)
""", note="`use_triton` is always False here (line 2)"),
        # A stale root copy that imports the kernel does not ship: only the shipped files count.
        Valid("x = 1\n", files={"paged_attn.py": "from vllm.attention.ops.prefix_prefill import "
                                                 "context_attention_fwd\n"}),
        # Diagnostics that only name Triton: a helper of this file is judged by its body.
        Valid("""\
import os
_TRITON_DISABLED_LOGGED = set()


def _log_triton_disabled():
    if os.getpid() not in _TRITON_DISABLED_LOGGED:
        _TRITON_DISABLED_LOGGED.add(os.getpid())
        print("[paged_attn] Triton prefill disabled on BI-V100 (it hangs the card)")


class PagedAttention:
    @staticmethod
    def forward_prefix(query):
        PagedAttention._note_triton_off()
        _log_triton_disabled()
        return PagedAttention._forward_prefix_pytorch(query)

    @staticmethod
    def _note_triton_off():
        pass
"""),
        # Installing other packages, or the same wheel name for another package, is fine.
        Valid("set -e\npip install transformers==4.57.1 --no-deps\npip install tritonclient\n"
              "pip uninstall -y triton\necho 'do not pip install triton here'\n",
              path="qwen3_6_scripts/patch_ops.sh"),
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
        # "Try once, fall back for good": the import and the call inside the function, a class flag.
        Invalid("""\
class PagedAttention:
    _triton_prefill_ok = None

    @staticmethod
    def forward_prefix(query, key, value):
        from vllm.triton_utils import HAS_TRITON
        if HAS_TRITON and PagedAttention._triton_prefill_ok is not False:
            try:
                from vllm.attention.ops.prefix_prefill import context_attention_fwd
                out = context_attention_fwd(query, key, value)
                PagedAttention._triton_prefill_ok = True
                return out
            except Exception:
                PagedAttention._triton_prefill_ok = False
        return PagedAttention._forward_prefix_pytorch(query, key, value)
""", line=9, found=f"under `try:` ({HANG})"),
        # A Triton decode kernel from a sibling module, imported under try, called under try.
        Invalid("""\
try:
    from .paged_attention_v2_triton import paged_attention_v2_triton
    _HAS_TRITON_V2 = True
except ImportError:
    _HAS_TRITON_V2 = False
    print("[paged_attn] Triton V2 decode unavailable")


def forward_decode(query, seq_lens, max_len):
    if _HAS_TRITON_V2 and 8192 < max_len <= 100000:
        try:
            return paged_attention_v2_triton(query, seq_lens)
        except Exception:
            pass
    return _forward_decode_pytorch(query, seq_lens)
""", line=2, found="imports paged_attention_v2_triton from .paged_attention_v2_triton"),
        Invalid("""\
from .paged_attention_v2_triton import paged_attention_v2_triton as decode_fast


def forward_decode(query):
    try:
        return decode_fast(query)
    except Exception:
        return None
""", line=6, found=f"calls decode_fast(...), imported from .paged_attention_v2_triton, under `try:` ({HANG})"),
        # Kernels defined and launched in a shipped file, through any alias of triton.
        Invalid("""\
import triton
import triton.language as tl


@triton.jit
def _decode_kernel(out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


def decode(out, q):
    grid = (q.shape[0],)
    _decode_kernel[grid](out, q, q.numel(), BLOCK=128)
""", line=5, found="defines the Triton kernel _decode_kernel (`@triton.jit`)"),
        Invalid("""\
import triton as tt


@tt.jit
def _kernel(x):
    pass


def run(x):
    _kernel[(1,)](x)
""", line=10, found="launches the Triton kernel _kernel"),
        Invalid("""\
from triton import autotune, jit as tjit, Config


@autotune(configs=[Config({})], key=["n"])
@tjit
def _kernel(x, n):
    pass
""", line=4, found="defines the Triton kernel _kernel (`@autotune"),
        Invalid("import triton\n@triton.heuristics({'EVEN': lambda a: True})\n@triton.jit\ndef k(x):\n    pass\n",
                line=2, found="defines the Triton kernel k"),
        Invalid("""\
def _prefill_triton(query):
    from vllm.attention.ops import prefix_prefill
    return prefix_prefill.context_attention_fwd(query)


def forward_prefix(query):
    return _prefill_triton(query)
""", line=2, found="imports prefix_prefill from vllm.attention.ops"),
        Invalid("from paged_attention_v2_triton import decode\nclass A:\n    def f(self):\n"
                "        return self.decode_triton()\n", line=4, found="calls self.decode_triton(...), whose name says"),
        Invalid("from vllm.attention.ops.triton_flash_attention import triton_attention\n",
                line=1, found="imports triton_attention from vllm.attention.ops.triton_flash_attention"),
        Invalid("from vllm.attention.ops import triton_decode_attention\n",
                line=1, found="imports triton_decode_attention from vllm.attention.ops"),
        # A shipped module that defines a kernel, imported by another whatever its name.
        Invalid("from .kernels import run_decode\n",
                files={"qwen3_6_scripts/kernels.py": "import triton\n\n@triton.jit\ndef _k(x):\n    pass\n\n"
                                                     "def run_decode(x):\n    _k[(1,)](x)\n"},
                line=1, found="imports .kernels (qwen3_6_scripts/kernels.py), which defines the Triton kernel _k"),
        Invalid("import kernels\n",
                files={"qwen3_6_scripts/kernels.py": "from triton import jit\n@jit\ndef _k(x):\n    pass\n"},
                line=1, found="which defines the Triton kernel _k"),
        # Install scripts that put a Triton build in the image.
        Invalid("set -e\npip install triton==2.1.0\n", path="qwen3_6_scripts/patch_ops.sh",
                line=2, found="installs Triton (`triton==2.1.0`)"),
        Invalid("set -e\nWHEEL=./triton-2.1.0-cp310-cp310-linux_x86_64.whl\npip3 install $WHEEL || true\n",
                path="qwen3_6_scripts/patch_ops.sh", line=3,
                found="installs Triton (`./triton-2.1.0-cp310-cp310-linux_x86_64.whl`)"),
        Invalid("PIP=\"python3 -m pip\"\n$PIP install -U --no-deps triton\n", path="qwen3_6_scripts/patch_ops.sh",
                line=2, found="installs Triton (`triton`)"),
    )

    # -- one file ---------------------------------------------------------

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield each Triton kernel definition, launch, import, call and ``HAS_TRITON = True``."""
        if not source.mentions(*WORDS):
            return
        dead = source.reachability.dead
        for found in sorted(_findings(source), key=lambda f: (source.line(f.node), f.message)):
            why = dead(found.node)
            if why is None:
                yield settings.violation(source.path, source.line(found.node), found.message)
            else:
                yield settings.note(source.path, source.line(found.node), f"{found.message}: cannot run: {why}")

    # -- the build: imports among shipped files, install scripts -------------

    def check_tree(self, build: BuildContext, settings: Settings) -> Iterator[Violation]:
        """Yield each import of a shipped module that defines a Triton kernel, and each Triton install."""
        yield from _shipped_kernel_imports(build, settings)
        environments = {run.line: run.environment for run in build.plan.dockerfile.runs}
        texts: list[tuple[str, str, Mapping[str, str]]] = [(DOCKERFILE, build.text(DOCKERFILE), {})]
        texts += [(s.path, build.text(s.path), environments.get(s.run_line, {})) for s in build.plan.scripts]
        for path, text, environment in texts:
            if TRITON not in text.lower() and not any(TRITON in v.lower() for v in environment.values()):
                continue  # installing Triton spells its name somewhere: a requirement, a wheel, a variable
            lines = dockerfile_runs(text) if path == DOCKERFILE else logical_lines(text)
            for line, what in pip_installs(lines, is_triton_project, environment):
                yield settings.violation(path, line, (
                    f"installs Triton (`{what}`) in the image; Triton's kernels hang the BI-V100 "
                    f"(its runtime does not support the PTX Triton compiles)"))


# -- reading one file ------------------------------------------------------


class _Names:
    """What the local names of a module stand for: ``tt`` -> ``triton``, ``caf`` -> ``x.context_attention_fwd``."""

    def __init__(self, index: SyntaxIndex, module_of: Mapping[int, str]):
        self.qualified: dict[str, str] = {}
        for imported in index.of(ast.Import):
            for alias in imported.names:
                if alias.asname:
                    self.qualified[alias.asname] = alias.name
                else:
                    first = alias.name.split(".")[0]
                    self.qualified[first] = first
        for node in index.of(ast.ImportFrom):
            module = module_of[id(node)]
            for alias in node.names:
                if alias.name != "*":
                    self.qualified[alias.asname or alias.name] = f"{module}.{alias.name}"

    def resolve(self, node: ast.AST) -> str:
        """Return the qualified name of a Name/Attribute chain (``tt.jit`` -> ``triton.jit``), else its dotted text."""
        name = dotted(node)
        if not name:
            return ""
        first, _, rest = name.partition(".")
        base = self.qualified.get(first, first)
        return f"{base}.{rest}" if rest else base


def _module_of(node: ast.ImportFrom) -> str:
    return "." * node.level + (node.module or "")


def kernel_decorator(names: _Names, decorator: ast.expr) -> str | None:
    """Return ``triton.jit`` etc. when ``decorator`` is one (``@tt.jit``, ``@autotune(...)``), else None."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    qualified = names.resolve(target)
    parts = qualified.split(".")
    if len(parts) >= 2 and parts[0] == TRITON and parts[-1] in DECORATORS:
        return qualified
    return None


def defined_kernels(source: PythonSource) -> list[tuple[ast.expr, str, str]]:
    """Return each function ``source`` decorates as a Triton kernel: (node, name, the decorator's source)."""
    if not source.mentions(TRITON):
        return []
    index = source.index
    names = _Names(index, {id(n): _module_of(n) for n in index.of(ast.ImportFrom)})
    found: list[tuple[ast.expr, str, str]] = []
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*index.of(ast.FunctionDef),
                                                               *index.of(ast.AsyncFunctionDef)]
    for function in functions:
        for decorator in function.decorator_list:
            if kernel_decorator(names, decorator):
                found.append((decorator, function.name, source.code(decorator)))
                break
    return sorted(found, key=lambda f: f[0].lineno)


def _findings(source: PythonSource) -> Iterator[Finding]:
    index = source.index
    module_of = {id(n): _module_of(n) for n in index.of(ast.ImportFrom)}
    names = _Names(index, module_of)
    guard = _Guard(source)
    kernels: dict[str, str] = {}  # local name -> what it is, for calls: "the Triton kernel context_attention_fwd"
    for decorated, name, decorator in defined_kernels(source):
        kernels[name] = f"the Triton kernel {name}"
        # The guards around the function, not the decorator's (the function is the decorator's scope).
        function = index.parent(decorated) or decorated
        yield Finding(decorated, f"defines the Triton kernel {name} (`@{decorator}`){guard(function)}")
    for node in index.of(ast.ImportFrom):
        module = module_of[id(node)]
        if excepted(module):
            continue
        if any(alias.name == "*" for alias in node.names):
            if kernel_module(module):
                yield Finding(node, f"star-imports {KERNEL if module.endswith('prefix_prefill') else 'the kernels'} "
                                    f"from {module} (`{source.code(node)}`){guard(node)}")
            continue
        from_kernels = kernel_module(module)
        for alias in node.names:
            if excepted(f"{module}.{alias.name}"):
                continue
            if not (from_kernels or alias.name in KERNELS or alias.name in KERNEL_MODULES
                    or (says_triton(alias.name) and module.split(".")[0] != TRITON)):
                continue
            bound = alias.asname or alias.name
            kernels[bound] = (f"the Triton kernel {alias.name}" if alias.name in KERNELS
                              else f"imported from {module}")
            suffix = f" as {alias.asname}" if alias.asname else ""
            yield Finding(node, f"imports {alias.name}{suffix} from {module}{guard(node)}")
    for plain in index.of(ast.Import):
        for alias in plain.names:
            if kernel_module(alias.name) or KERNEL in alias.name.split("."):
                yield Finding(plain, f"imports {alias.name} (`{source.code(plain)}`){guard(plain)}")
    callees = set()
    # A function of this file is judged by its body, not its name (`_log_triton_disabled()`).
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*index.of(ast.FunctionDef),
                                                               *index.of(ast.AsyncFunctionDef)]
    own = {f.name for f in functions}
    # A decorator call (`@triton.autotune(...)`) is part of the kernel it defines: "defines" says it once.
    decorating = {id(d) for f in functions for d in f.decorator_list}
    for call in index.of(ast.Call):
        func = call.func
        callees.add(id(func))
        if id(call) in decorating and kernel_decorator(names, call):
            continue
        message = _call(call, names, kernels, source, own)
        if message:
            yield Finding(call, f"{message}{guard(call)}")
    for attribute in index.of(ast.Attribute):
        # A reference without a call still hands the kernel to someone who will call it.
        if attribute.attr == KERNEL and id(attribute) not in callees:
            yield Finding(attribute, f"refers to {dotted(attribute) or KERNEL}{guard(attribute)}")
    for assign in index.of(ast.Assign):
        if _truthy(assign.value):
            for target in assign.targets:
                yield from _switch(assign, target, guard)
    for annotated in index.of(ast.AnnAssign):
        if annotated.value is not None and _truthy(annotated.value):
            yield from _switch(annotated, annotated.target, guard)


def _call(call: ast.Call, names: _Names, kernels: Mapping[str, str], source: PythonSource,
          own: set[str]) -> str | None:
    """Return what a call does that this rule flags, or None."""
    func = call.func
    if isinstance(func, ast.Subscript):  # kernel[grid](...)
        launched = dotted(func.value).split(".")[-1]
        if launched in kernels:
            return f"launches the Triton kernel {launched} (`{source.code(func)}(...)`)"
        return None
    if isinstance(func, ast.Name):
        if func.id in kernels:
            what = kernels[func.id]
            return f"calls {func.id}(...)" + ("" if what == f"the Triton kernel {func.id}" else f", {what}")
        if func.id in KERNELS:
            return f"calls {func.id}(...)"
        qualified = names.resolve(func)
        if excepted(qualified):
            return None
        if kernel_decorator(names, func):
            return f"compiles a Triton kernel (`{source.code(call)}`)"
        if says_triton(func.id) and func.id not in own:
            return f"calls {func.id}(...), whose name says Triton"
    elif isinstance(func, ast.Attribute):
        qualified = names.resolve(func)
        if excepted(qualified.rpartition(".")[0]):
            return None
        if kernel_decorator(names, func):
            return f"compiles a Triton kernel (`{source.code(call)}`)"
        if func.attr == KERNEL or func.attr in KERNELS:
            return f"calls {dotted(func) or func.attr}(...)"
        imported = dotted(func).split(".")[0] in names.qualified  # a module, not a variable named like one
        if imported and kernel_module(qualified.rpartition(".")[0]):
            return f"calls {dotted(func) or func.attr}(...) from {qualified.rpartition('.')[0]}"
        if says_triton(func.attr) and func.attr not in own:
            return f"calls {dotted(func) or func.attr}(...), whose name says Triton"
    text = _string_argument(call)
    name = dotted(func).split(".")[-1]
    if text is not None and name in IMPORTERS and (kernel_module(text) or text.split(".")[-1] == KERNEL):
        return f"imports {text} dynamically (`{source.code(call)}`)"
    if text is not None and name == "getattr" and (text in KERNELS or text in KERNEL_MODULES):
        return f"looks up {text} by name (`{source.code(call)}`)"
    return None


def _switch(node: ast.AST, target: ast.expr, guard: "_Guard") -> Iterator[Finding]:
    name = dotted(target)
    if name.split(".")[-1] == SWITCH:
        yield Finding(node, f"sets {name} = True, which turns the Triton prefill path back on{guard(node)}")


class _Guard:
    """Where a finding sits, for the message: the guards around it do not make it safe."""

    def __init__(self, source: PythonSource):
        self.source = source

    def __call__(self, node: ast.AST) -> str:
        child = node
        for parent in reversed(self.source.index.ancestors(node)):
            if isinstance(parent, SCOPES) and not isinstance(parent, ast.Lambda):
                return ""
            if isinstance(parent, TRY) and any(s is child for s in parent.body):
                return f", under `try:` ({HANG})"
            if isinstance(parent, ast.If) and child is not parent.test:
                return f", under `if {self.source.code(parent.test)}:`"
            child = parent
        return ""


def _string_argument(call: ast.Call) -> str | None:
    """Return the literal string among the first two arguments, if any (``import_module('x')``, ``getattr(m, 'x')``)."""
    for arg in call.args[:2]:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
    return None


def _truthy(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and type(value.value) in (bool, int) and bool(value.value)


# -- the build --------------------------------------------------------------


def _shipped_kernel_imports(build: BuildContext, settings: Settings) -> Iterator[Violation]:
    """Flag each import, in a shipped file, of another shipped file that defines a Triton kernel (one level)."""
    definers: dict[str, str] = {}  # context path -> "the Triton kernel _k" (or "kernels _a, _b")
    for path in build.mentioning(TRITON):
        source = build.source(path)
        if source is None or not source.mentions(TRITON):
            continue
        try:
            found = defined_kernels(source)
        except (SyntaxError, ValueError):
            continue
        if found:
            names = [name for _, name, _ in found]
            definers[path] = (f"the Triton kernel {names[0]}" if len(names) == 1
                              else f"the Triton kernels {', '.join(names)}")
    if not definers:
        return
    modules = {path: _module_names(path, build) for path in definers}
    words = sorted({name.split(".")[-1] for names in modules.values() for name in names})
    for path in build.python:
        source = build.source(path)
        if source is None or not source.mentions(*words):
            continue
        try:
            index = source.index
        except (SyntaxError, ValueError):
            continue
        dead = source.reachability.dead
        for node, module, target in _imports_of(index, path, modules):
            if target == path or kernel_module(module):
                continue  # itself, or a name that says Triton: the file rule flags that import already
            message = f"imports {module} ({target}), which defines {definers[target]}{_Guard(source)(node)}"
            why = dead(node)
            if why is None:
                yield settings.violation(path, node.lineno, message)  # type: ignore[attr-defined]
            else:
                yield settings.note(path, node.lineno, f"{message}: cannot run: {why}")  # type: ignore[attr-defined]


def _module_names(path: str, build: BuildContext) -> set[str]:
    """Return the dotted names a shipped file can be imported by: under dist-/site-packages, and as a sibling."""
    names = set()
    images = [build.plan.copied.get(path, "")] + [i.image_path for i in build.plan.installed if i.path == path]
    for image in images:
        for root in ("dist-packages/", "site-packages/"):
            if root in image:
                # The last one is the folder on sys.path: a name further up holding it
                # (``/opt/corex-dist-packages/lib/...``) is not where imports start.
                names.add(_dotted_path(image.rsplit(root, 1)[1]))
    names.add(_dotted_path(posixpath.basename(path) if not path.endswith("/__init__.py")
                           else posixpath.basename(posixpath.dirname(path)) + "/__init__.py"))
    return {n for n in names if n}


def _dotted_path(path: str) -> str:
    path = path[:-3] if path.endswith(".py") else path
    if path.endswith("/__init__"):
        path = path[: -len("/__init__")]
    return path.replace("/", ".")


def _imports_of(index: SyntaxIndex, importer: str,
                modules: Mapping[str, set[str]]) -> Iterator[tuple[ast.AST, str, str]]:
    """Return (node, module as written, context path) for each import in ``importer`` of a file in ``modules``."""
    folder = posixpath.dirname(importer)
    for node in index.of(ast.ImportFrom):
        written = _module_of(node)
        candidates: list[str] = []
        if node.level:
            base = folder
            for _ in range(node.level - 1):
                base = posixpath.dirname(base)
            parts = [p for p in (node.module or "").split(".") if p]
            stem = posixpath.join(base, *parts) if parts else base
            candidates_paths = [stem + ".py", stem + "/__init__.py"]
            candidates_paths += [posixpath.join(stem, a.name) + ".py" for a in node.names]
            candidates_paths += [posixpath.join(stem, a.name, "__init__.py") for a in node.names]
            for target in modules:
                if target in candidates_paths:
                    yield node, written, target
            continue
        candidates = [written] + [f"{written}.{a.name}" for a in node.names]
        yield from _match(node, written, candidates, importer, modules)
    for imported in index.of(ast.Import):
        for alias in imported.names:
            yield from _match(imported, alias.name, [alias.name], importer, modules)


def _match(node: ast.AST, written: str, candidates: Sequence[str], importer: str,
           modules: Mapping[str, set[str]]) -> Iterator[tuple[ast.AST, str, str]]:
    folder = posixpath.dirname(importer)
    for target, names in modules.items():
        home = posixpath.dirname(target)
        if target.endswith("/__init__.py"):
            home = posixpath.dirname(home)  # a package is a sibling of the files beside its folder
        sibling = home == folder
        for candidate in candidates:
            full = candidate in names and "." in candidate
            # A bare name is a sibling module (the script's folder is on sys.path).
            if full or (sibling and candidate in names and "." not in candidate):
                yield node, written, target
                break


def is_triton_project(project: str) -> bool:
    """Tell whether a pip project is a Triton build: triton, triton-nightly, pytorch-triton (not tritonclient)."""
    return project == TRITON or project.startswith(TRITON + "-") or project.endswith("-" + TRITON) \
        or f"-{TRITON}-" in project
