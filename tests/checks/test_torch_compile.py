"""torch.compile in what ships is a Triton kernel unless its backend writes none.

TorchInductor, torch.compile's default backend, generates Triton kernels, so
rule no-triton-kernels reports every way shipped code reaches it: a call or a
decorator (bare or with arguments), any alias of ``torch`` or of ``compile``,
``torch.compiler.compile``, ``torch._dynamo.optimize``, handing
``torch.compile`` on as a value, a backend it cannot read, and
``TORCHINDUCTOR_*`` set in the code, an install script or the Dockerfile.
A backend that writes no Triton (``eager``, ``aot_eager``, ``cudagraphs``,
``onnxrt``, ``tvm``, ...), ``disable=True``, the builtin ``compile`` and
``re.compile`` are fine. Dead code gets a note; ``try`` does not help.
"""

from __future__ import annotations

import pytest

from patcher.checks import RULES
from patcher.checks.torch_compile import TRITON_FREE_BACKENDS

from tests.fixtures_rules import HANG, SCRIPT, build_dockerfile, findings
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

RULE = RULES["no-triton-kernels"]
DEFAULT = "calls torch.compile(...) without a backend: its default, TorchInductor, generates Triton kernels"
CONFIGURES = "it configures TorchInductor, torch.compile's default backend, which generates Triton kernels"


def errors(code: str) -> list[tuple[int, str]]:
    """Return (line, message) of each error the rule reports on ``code`` read alone."""
    return [(line, message) for _, line, severity, message in findings(RULE, code) if severity == "error"]


@pytest.mark.parametrize("code, line, message", [
    ("import torch\nmodel = torch.compile(model)\n", 2, DEFAULT),
    ("import torch\nmodel = torch.compile(model, mode='reduce-overhead', fullgraph=True)\n", 2, DEFAULT),
    ("import torch\nmodel = torch.compile(model, backend='inductor')\n", 2,
     "calls torch.compile(..., backend='inductor'): TorchInductor generates Triton kernels"),
    ("import torch\n@torch.compile\ndef f(x):\n    return x\n", 2,
     "decorates f with `@torch.compile`, whose default backend, TorchInductor, generates Triton kernels"),
    ("import torch\n@torch.compile(dynamic=True)\nasync def f(x):\n    return x\n", 2, DEFAULT),
    ("import torch as t\nf = t.compile(g)\n", 2, DEFAULT),
    ("from torch import compile\nf = compile(g)\n", 2, DEFAULT),
    ("from torch import compile as tc\n@tc\ndef f(x):\n    return x\n", 2,
     "decorates f with `@tc`, whose default backend, TorchInductor, generates Triton kernels"),
    ("import torch\nf = torch.compiler.compile(g)\n", 2,
     "calls torch.compiler.compile(...) without a backend: its default, TorchInductor, generates Triton kernels"),
    ("import torch._dynamo\nf = torch._dynamo.optimize('inductor')(g)\n", 2,
     "calls torch._dynamo.optimize(..., backend='inductor'): TorchInductor generates Triton kernels"),
    ("import torch._dynamo as dynamo\nf = dynamo.optimize(nopython=True)(g)\n", 2,
     "calls torch._dynamo.optimize(...) without a backend: its default, TorchInductor, generates Triton kernels"),
    ("from torch._dynamo import optimize\n@optimize()\ndef f(x):\n    return x\n", 2,
     "calls torch._dynamo.optimize(...) without a backend: its default, TorchInductor, generates Triton kernels"),
    ("from torch import _dynamo\nf = _dynamo.optimize_assert('inductor')(g)\n", 2,
     "calls torch._dynamo.optimize_assert(..., backend='inductor'): TorchInductor generates Triton kernels"),
    ("import torch\nfrom functools import partial\njit = partial(torch.compile, dynamic=True)\n", 3,
     "hands on torch.compile (`partial(torch.compile, dynamic=True)`), whose default backend, TorchInductor, "
     "generates Triton kernels"),
    ("import torch\nf = torch.compile(g, backend=my_backend)\n", 2,
     "calls torch.compile(..., backend=`my_backend`), a backend not known to write no Triton kernels"),
    ("import torch\nf = torch.compile(g, backend='openxla')\n", 2,
     "calls torch.compile(..., backend='openxla'), a backend not known to write no Triton kernels"),
    ("import torch\nf = torch.compile(g, backend='Eager')\n", 2,
     "calls torch.compile(..., backend='Eager'), a backend not known to write no Triton kernels"),
    ("import torch\nf = torch.compile(g, **options)\n", 2, "calls torch.compile(..., **options), whose backend"),
    ("import torch\nf = torch.compile(g, disable=flag)\n", 2, DEFAULT),
    ("import torch._inductor.compile_fx as cf\nf = cf.compile_fx(gm, inputs)\n", 2,
     "calls torch._inductor.compile_fx.compile_fx(...), which compiles with TorchInductor"),
])
def test_each_way_to_reach_torchinductor_is_an_error(code: str, line: int, message: str) -> None:
    found = errors(code)
    assert len(found) == 1 and found[0][0] == line and found[0][1].startswith(message), found


@pytest.mark.parametrize("backend", sorted(TRITON_FREE_BACKENDS))
def test_a_backend_that_writes_no_triton_is_fine(backend: str) -> None:
    assert findings(RULE, f"import torch\nf = torch.compile(g, backend={backend!r})\n") == []
    assert findings(RULE, f"import torch\n@torch.compile(backend={backend!r}, dynamic=True)\ndef f(x):\n"
                          f"    return x\n") == []
    assert findings(RULE, f"import torch._dynamo\nf = torch._dynamo.optimize({backend!r})(g)\n") == []


@pytest.mark.parametrize("code", [
    "import torch\nBACKEND = 'eager'\nf = torch.compile(g, backend=BACKEND)\n",
    "import torch\ndef build(g):\n    backend = 'aot_eager'\n    return torch.compile(g, backend=backend)\n",
    "import torch\nf = torch.compile(g, disable=True)\n",
    "import re\nimport torch\nPATTERN = re.compile('[0-9]+')\ncode = compile('1 + 1', '<x>', 'eval')\n",
    "import torch\nclass Model:\n    def compile(self):\n        return self\nm = Model().compile()\n",
    "import torch\nif hasattr(torch, 'compile'):\n    pass\n",
    "import os\nprint(os.environ.get('TORCHINDUCTOR_CACHE_DIR', ''))\nos.environ['TORCH_COMPILE_DISABLE'] = '1'\n",
])
def test_what_compiles_nothing_with_inductor_is_fine(code: str) -> None:
    assert findings(RULE, code) == []


@pytest.mark.parametrize("code", [
    "import functools\nimport torch\njit = functools.partial(torch.compile, backend='eager', dynamic=True)\n",
    "from functools import partial\nimport torch._dynamo\nopt = partial(torch._dynamo.optimize, 'cudagraphs')\n",
    "import torch\nf = getattr(torch, 'compile')(g, backend='aot_eager')\n",
])
def test_compile_bound_by_partial_or_looked_up_by_name_with_a_backend_that_writes_no_triton_is_fine(code: str) -> None:
    assert findings(RULE, code) == []


def test_a_backend_named_by_a_variable_is_judged_by_its_value_when_it_has_one() -> None:
    assert errors("import torch\nBACKEND = 'inductor'\nf = torch.compile(g, backend=BACKEND)\n") == [
        (3, "calls torch.compile(..., backend='inductor'): TorchInductor generates Triton kernels")]
    # A name set twice (or a parameter) has no one value.
    found = errors("import torch\nBACKEND = 'eager'\nBACKEND = pick()\nf = torch.compile(g, backend=BACKEND)\n")
    assert [line for line, _ in found] == [4] and "`BACKEND`" in found[0][1]
    found = errors("import torch\ndef build(g, backend='eager'):\n    return torch.compile(g, backend=backend)\n")
    assert [line for line, _ in found] == [3]


@pytest.mark.parametrize("code, line", [
    ("import os\nos.environ['TORCHINDUCTOR_MAX_AUTOTUNE'] = '1'\n", 2),
    ("from os import environ\nenviron['TORCHINDUCTOR_FX_GRAPH_CACHE'] = '1'\n", 2),
    ("import os\nos.environ.setdefault('TORCHINDUCTOR_CACHE_DIR', '/tmp/inductor')\n", 2),
    ("import os\nos.environ.update(TORCHINDUCTOR_COORDINATE_DESCENT_TUNING='1')\n", 2),
    ("import os\nos.environ.update({'HF_HOME': '/m', 'TORCHINDUCTOR_FREEZING': '1'})\n", 2),
    ("import os\nos.putenv('TORCHINDUCTOR_MAX_AUTOTUNE', '1')\n", 2),
    ("import os\nos.environ |= {'HF_HOME': '/m', 'TORCHINDUCTOR_FREEZING': '1'}\n", 2),
    ("import os\n_AUTOTUNE = 'TORCHINDUCTOR_MAX_AUTOTUNE'\nos.environ[_AUTOTUNE] = '1'\n", 3),
    ("import os\ndef warm():\n    key = 'TORCHINDUCTOR_CACHE_DIR'\n    os.environ.setdefault(key, '/tmp/i')\n", 4),
])
def test_setting_torchinductor_variables_in_code_is_an_error(code: str, line: int) -> None:
    found = errors(code)
    assert [number for number, _ in found] == [line] and found[0][1].endswith(CONFIGURES), found


@pytest.mark.parametrize("script, line", [
    ("set -e\nexport TORCHINDUCTOR_FX_GRAPH_CACHE=1\n", 2),
    ("set -e\nTORCHINDUCTOR_MAX_AUTOTUNE=1 python3 ./warmup.py\n", 2),
    ("set -e\nenv TORCHINDUCTOR_CACHE_DIR=/tmp/i python3 ./warmup.py\n", 2),
    ("set -e\nTORCHINDUCTOR_FREEZING=1\nexport TORCHINDUCTOR_FREEZING\n", 2),
    ("set -e\ncd /tmp && export TORCHINDUCTOR_X=1 && python3 -c 'import vllm'\n", 2),
])
def test_setting_torchinductor_variables_in_the_install_script_is_an_error(script: str, line: int) -> None:
    found = findings(RULE, script, path=SCRIPT)
    assert [(path, number, severity) for path, number, severity, _ in found] == [(SCRIPT, line, "error")]
    assert "for the commands the build runs" in found[0][3] and found[0][3].endswith(CONFIGURES)


def test_setting_torchinductor_variables_in_the_dockerfile_is_an_error() -> None:
    dockerfile = build_dockerfile("ENV HF_HOME=/models TORCHINDUCTOR_CACHE_DIR=/tmp/inductor",
                                  "ENV TORCHINDUCTOR_MAX_AUTOTUNE 1", "ENV TORCH_COMPILE_DISABLE=1",
                                  "RUN TORCHINDUCTOR_FREEZING=1 python3 -c 'import torch'")
    found = findings(RULE, "set -e\n", path=SCRIPT, files={"Dockerfile": dockerfile})
    assert [(path, line, severity, message.split(" (`")[0]) for path, line, severity, message in found] == [
        ("Dockerfile", 2, "error", "sets TORCHINDUCTOR_CACHE_DIR in the image's environment"),
        ("Dockerfile", 3, "error", "sets TORCHINDUCTOR_MAX_AUTOTUNE in the image's environment"),
        ("Dockerfile", 5, "error", "sets TORCHINDUCTOR_FREEZING for the commands the build runs"),
    ]


def test_echoing_or_reading_a_torchinductor_variable_sets_nothing() -> None:
    script = "set -e\necho TORCHINDUCTOR_MAX_AUTOTUNE=1\nprintenv TORCHINDUCTOR_CACHE_DIR\n# export TORCHINDUCTOR_X=1\n"
    assert findings(RULE, script, path=SCRIPT) == []


def test_dead_compiles_are_notes_and_try_does_not_help() -> None:
    found = findings(RULE, "import torch\nif False:\n    f = torch.compile(g)\n")
    assert found == [("example.py", 3, "note", f"{DEFAULT}, under `if False:`: cannot run: its test `False` is "
                                                "always false")]
    found = findings(RULE, "import torch\nUSE_COMPILE = False\ndef f(g):\n    if USE_COMPILE:\n"
                           "        return torch.compile(g)\n    return g\n")
    assert [(line, severity) for _, line, severity, _ in found] == [(5, "note")]
    assert errors("import torch\ntry:\n    f = torch.compile(g)\nexcept Exception:\n    f = g\n") == [
        (3, f"{DEFAULT}, under `try:` ({HANG})")]


def vendor_with_compile(statement: str) -> bytes:
    """Return the vendor's shipped paged_attn.py (CRLF kept) with ``statement`` added after its imports."""
    data = (VENDOR_TREE / SHIPPED).read_bytes()
    anchor = b"from vllm import _custom_ops as ops"
    assert anchor in data
    return data.replace(anchor, anchor + b"\r\n" + statement.encode(), 1)


def test_the_vendors_own_file_passes_and_a_compile_added_to_it_is_found_at_its_line() -> None:
    original = (VENDOR_TREE / SHIPPED).read_bytes().decode()
    assert findings(RULE, original, files={"qwen3_6_scripts/other.py": "y = 2\n"}) == []
    data = vendor_with_compile("_decode = torch.compile(lambda q: q, mode='max-autotune')").decode()
    line = next(n for n, text in enumerate(data.splitlines(), 1) if "torch.compile" in text)
    found = findings(RULE, data, files={"qwen3_6_scripts/other.py": "y = 2\n"})
    assert [(path, number, severity) for path, number, severity, _ in found] == [(SHIPPED, line, "error")]


@pytest.mark.parametrize("code, line, message", [
    ("import torch._inductor.config as ic\nic.max_autotune = True\n", 2,
     "sets torch._inductor.config.max_autotune: it configures TorchInductor"),
    ("from torch._inductor import config\nconfig.freezing = True\n", 2,
     "sets torch._inductor.config.freezing: it configures TorchInductor"),
    ("import torch\ntorch._inductor.config.fx_graph_cache = True\n", 2,
     "sets torch._inductor.config.fx_graph_cache: it configures TorchInductor"),
    ("import torch\nf = getattr(torch, 'compile')(g)\n", 2, "looks up torch.compile by name"),
    ("import torch\nwith torch._inductor.config.patch(max_autotune=True):\n    f(x)\n", 2,
     "calls torch._inductor.config.patch(...): it configures TorchInductor"),
    ("from torch._inductor import config\n@config.patch({'freezing': True})\ndef f(x):\n    return x\n", 2,
     "calls torch._inductor.config.patch(...): it configures TorchInductor"),
])
def test_configuring_inductor_or_looking_up_compile_by_name_is_an_error(code: str, line: int, message: str) -> None:
    found = errors(code)
    assert len(found) == 1 and found[0][0] == line and found[0][1].startswith(message), found


def test_reading_inductor_settings_and_dynamo_s_own_settings_compile_nothing() -> None:
    # Dynamo only traces; the kernels come from the backend that compile() picks, judged where it is called.
    assert findings(RULE, "import torch\nprint(torch._inductor.config.max_autotune)\n"
                          "torch._dynamo.config.suppress_errors = True\ntorch._dynamo.reset()\n"
                          "@torch._dynamo.disable\ndef f(x):\n    return x\n") == []


MODULE_COMPILE = "which is torch.compile if the object is a torch.nn.Module (nn.Module.compile)"


@pytest.mark.parametrize("code, line", [
    ("import torch\n\n\nclass Runner:\n    def load(self):\n        self.model.compile()\n", 6),
    ("import torch\nlayer = torch.nn.Linear(8, 8)\nlayer.compile(mode='max-autotune')\n", 3),
])
def test_a_compile_method_called_with_torch_compile_s_arguments_only_is_a_warning(code: str, line: int) -> None:
    found = findings(RULE, code)
    assert [(number, severity, MODULE_COMPILE in message) for _, number, severity, message in found] == [
        (line, "warning", True)]


@pytest.mark.parametrize("code", [
    "import torch\nmodel.compile(backend='eager')\n",
    "import re\nimport torch\nPATTERN = re.compile(r'[0-9]+')\ntemplate = environment.compile(source)\n",
    "import regex\nimport torch\nPATTERN = regex.compile(pattern='[0-9]+')\n",
])
def test_a_compile_method_with_a_safe_backend_or_a_positional_argument_or_of_a_module_is_fine(code: str) -> None:
    assert findings(RULE, code) == []
