"""Rule no-triton-kernels: no Triton kernel reaches the card, in any shipped file or install step.

The BI-V100's runtime does not support the PTX that Triton compiles: the
Triton prefill kernel hangs the card, and so does the other card family's
Triton build. A hang cannot be caught by ``try/except``, so "try Triton
once, fall back on error" is no protection, and the rule says so.
"""

from __future__ import annotations

from typing import Iterator

from .base import BuildContext, FileRule, Invalid, PythonSource, Settings, Severity, TreeRule, Valid, Violation
from .triton_imports import shipped_kernel_imports
from .triton_installs import triton_installs
from .triton_names import HANG, TRITON, WORDS
from .torch_compile import compile_findings
from .triton_python import findings


class NoTritonKernels(FileRule, TreeRule):
    """No Triton kernel in what ships: defined, launched, imported, called, or installed.

    Flags a function decorated with ``triton.jit`` / ``triton.autotune`` /
    ``triton.heuristics`` (through any import alias) and each launch
    ``kernel[grid](...)`` of one; an import or call of a known Triton kernel
    (``context_attention_fwd``, ``vllm.attention.ops.prefix_prefill``,
    ``triton_flash_attention``, ``triton_decode_attention``) or of a module or
    function whose name says Triton, except ``vllm.triton_utils`` (cache
    management); ``HAS_TRITON = True``; an import of a shipped module whose
    own source defines a Triton kernel, whatever its name; ``torch.compile``
    (any alias, as a call or a decorator, ``torch._dynamo.optimize``) unless
    its backend writes no Triton (``torch_compile``), and a ``TORCHINDUCTOR_*``
    variable set in code, a script or the Dockerfile; and an install step that
    pip-installs a Triton package or wheel, requirements files followed
    (``triton_installs``). Code that cannot run (see ``reachability``) gets
    a note instead. ``try/except`` around any of it does not help: a hang
    cannot be caught.
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
        # A star import binds what the module's __all__ holds: os's has no compile, torch.compiler's one is
        # given a backend without Triton.
        Valid("from os import *\ncode = compile(source, 'setup.py', 'exec')\n"),
        Valid("from torch.compiler import *\nfast = compile(model, backend='eager')\n"),
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
        # A module flag set once and never reassigned, anywhere: the guarded import cannot run.
        Valid("""\
USE_TRITON = False  # the Triton prefill hangs the BI-V100


class PagedAttention:
    @staticmethod
    def forward_prefix(query):
        if USE_TRITON:
            from vllm.attention.ops.prefix_prefill import context_attention_fwd
            return context_attention_fwd(query)
        return PagedAttention._forward_prefix_pytorch(query)
""", note="`USE_TRITON` is always False (a module flag set once, at line 1, and never reassigned)"),
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
        # torch.compile with a backend that writes no Triton kernel, or turned off; other compile()s.
        Valid("import torch\n\n\n@torch.compile(backend='eager')\ndef gather(x):\n    return x\n\n\n"
              "decode = torch.compile(model, backend='aot_eager', mode='reduce-overhead')\n"
              "graphs = torch._dynamo.optimize('cudagraphs')(model)\n"
              "off = torch.compile(model, disable=True)\n"),
        Valid("import functools\nimport torch\n\njit = functools.partial(torch.compile, backend='eager')\n"),
        Valid("import os\nimport re\n\nPATTERN = re.compile(r'\\d+')\ncode = compile('x + 1', '<expr>', 'eval')\n"
              "cache = os.environ.get('TORCHINDUCTOR_CACHE_DIR')\n"),
        # A requirements file the install script reads, without Triton (comments, options, markers, hashes).
        Valid("# serving extras\n--index-url https://mirror.example/simple\ntransformers==4.57.1 \\\n"
              "    --hash=sha256:0000\ntritonclient[grpc]>=2.40 ; python_version >= '3.8'\n",
              path="qwen3_6_scripts/requirements.txt",
              files={"qwen3_6_scripts/patch_ops.sh": "set -e\npip install -r requirements.txt\n"}),
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
        # A module flag that something can set again guards nothing: a function's `global`, another shipped module.
        Invalid("""\
USE_TRITON = False


def enable_triton():
    global USE_TRITON
    USE_TRITON = True


def forward_prefix(query):
    if USE_TRITON:
        from vllm.attention.ops.prefix_prefill import context_attention_fwd
        return context_attention_fwd(query)
""", line=11, found="imports context_attention_fwd from vllm.attention.ops.prefix_prefill, under `if USE_TRITON:`"),
        Invalid("""\
USE_TRITON = False
if USE_TRITON:
    from vllm.attention.ops.prefix_prefill import context_attention_fwd
""", files={"qwen3_6_scripts/launch.py": "import paged_attn\npaged_attn.USE_TRITON = True\n"},
                line=3, found="imports context_attention_fwd from vllm.attention.ops.prefix_prefill, under `if USE_TRITON:`"),
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
        Invalid("import importlib\ntt = importlib.import_module('triton')\n\n\n@tt.jit\ndef _k(x):\n    pass\n",
                line=5, found="defines the Triton kernel _k (`@tt.jit`)"),
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
        # torch.compile: TorchInductor, its default backend, generates Triton kernels.
        Invalid("import torch\nmodel = torch.compile(model)\n", line=2,
                found="calls torch.compile(...) without a backend: its default, TorchInductor, generates Triton kernels"),
        Invalid("import torch\n\n\n@torch.compile\ndef gather(x):\n    return x\n", line=4,
                found="decorates gather with `@torch.compile`, whose default backend, TorchInductor"),
        Invalid("import torch\n\n\n@torch.compile(dynamic=True)\ndef gather(x):\n    return x\n", line=4,
                found="calls torch.compile(...) without a backend"),
        Invalid("import torch\nmodel = torch.compile(model, mode='max-autotune')\n", line=2,
                found="calls torch.compile(...) without a backend"),
        Invalid("from triton import *\n\n\n@jit\ndef _k(x):\n    pass\n", line=4, found="defines the Triton kernel _k"),
        Invalid("from torch import *\nmodel = compile(model)\n", line=2,
                found="calls torch.compile(...) without a backend"),
        Invalid("from torch import compile as jit\nfast = jit(model, backend='inductor')\n", line=2,
                found="calls torch.compile(..., backend='inductor'): TorchInductor generates Triton kernels"),
        Invalid("import torch as t\nfast = t.compile(model, backend=current_platform.simple_compile_backend)\n",
                line=2, found="a backend not known to write no Triton kernels"),
        Invalid("import torch._dynamo\nfast = torch._dynamo.optimize(nopython=True)(model)\n", line=2,
                found="calls torch._dynamo.optimize(...) without a backend"),
        Invalid("import torch._inductor.config\n\nwith torch._inductor.config.patch(max_autotune=True):\n    pass\n",
                line=3, found="calls torch._inductor.config.patch(...): it configures TorchInductor"),
        Invalid("import os\nos.environ['TORCHINDUCTOR_MAX_AUTOTUNE'] = '1'\n", line=2,
                found="sets TORCHINDUCTOR_MAX_AUTOTUNE (`os.environ['TORCHINDUCTOR_MAX_AUTOTUNE']`)"),
        Invalid("set -e\nexport TORCHINDUCTOR_FX_GRAPH_CACHE=1\n", path="qwen3_6_scripts/patch_ops.sh", line=2,
                found="sets TORCHINDUCTOR_FX_GRAPH_CACHE for the commands the build runs"),
        Invalid("FROM base\nENV TORCHINDUCTOR_CACHE_DIR=/tmp/inductor\nWORKDIR /workspace/\n"
                "COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts\nRUN cd ./qwen3_6_scripts && ./patch_ops.sh\n",
                path="Dockerfile", line=2, found="sets TORCHINDUCTOR_CACHE_DIR in the image's environment"),
        # Requirements files: followed from the script's folder, nested -r relative to the file.
        Invalid("transformers==4.57.1\ntriton==2.1.0  # the other card family's build\n",
                path="qwen3_6_scripts/requirements.txt",
                files={"qwen3_6_scripts/patch_ops.sh": "set -e\npip install --no-deps -r requirements.txt\n"},
                line=2, found="installs Triton (`triton==2.1.0`, read through `pip install -r requirements.txt` "
                              "at qwen3_6_scripts/patch_ops.sh:2)"),
        Invalid("pytorch-triton==3.0.0\n", path="qwen3_6_scripts/reqs/gpu.txt",
                files={"qwen3_6_scripts/patch_ops.sh": "set -e\ncd reqs\npip install --requirement=base.txt\n",
                       "qwen3_6_scripts/reqs/base.txt": "-r gpu.txt\n"},
                line=1, found="read through `pip install -r base.txt` at qwen3_6_scripts/patch_ops.sh:3, 2 files deep"),
        # Install scripts that put a Triton build in the image.
        Invalid("set -e\npip install triton==2.1.0\n", path="qwen3_6_scripts/patch_ops.sh",
                line=2, found="installs Triton (`triton==2.1.0`)"),
        Invalid("set -e\nWHEEL=./triton-2.1.0-cp310-cp310-linux_x86_64.whl\npip3 install $WHEEL || true\n",
                path="qwen3_6_scripts/patch_ops.sh", line=3,
                found="installs Triton (`./triton-2.1.0-cp310-cp310-linux_x86_64.whl`)"),
        Invalid("PIP=\"python3 -m pip\"\n$PIP install -U --no-deps triton\n", path="qwen3_6_scripts/patch_ops.sh",
                line=2, found="installs Triton (`triton`)"),
        # A one-line `if`/`for` puts pip after `then`/`do`.
        Invalid("set -e\nif ! python3 -c 'import triton'; then pip install triton==2.1.0; fi\n",
                path="qwen3_6_scripts/patch_ops.sh", line=2, found="installs Triton (`triton==2.1.0`)"),
    )

    # -- one file ---------------------------------------------------------

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield each Triton kernel definition, launch, import, call, ``HAS_TRITON = True`` and ``torch.compile``."""
        every = [*(findings(source) if source.mentions(*WORDS) else ()), *compile_findings(source)]
        if not every:
            return
        dead = source.reachability.dead
        for found in sorted(every, key=lambda f: (source.line(f.node), f.message)):
            why = dead(found.node)
            if why is None and not found.certain:
                yield Violation(settings.rule, Severity.WARNING, source.path, source.line(found.node), found.message)
            elif why is None:
                yield settings.violation(source.path, source.line(found.node), found.message)
            else:
                yield settings.note(source.path, source.line(found.node), f"{found.message}: cannot run: {why}")

    # -- the build: imports among shipped files, install scripts -------------

    def check_tree(self, build: BuildContext, settings: Settings) -> Iterator[Violation]:
        """Yield each import of a shipped module that defines a Triton kernel, and each Triton install."""
        yield from shipped_kernel_imports(build, settings)
        yield from triton_installs(build, settings)
