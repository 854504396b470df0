"""A module-level literal flag decides its branches only while nothing can set it again.

``USE_TRITON = False`` at the top of a module, never rebound, makes
``if USE_TRITON:`` dead wherever the module reads it (at module level after
that line, and in functions where the name is not local): what a rule would
flag there is a note. Any other binding of the name in the module, a
``global`` of it, an assignment through the module object (``globals()``,
``setattr``, ``sys.modules[__name__]``) or from another shipped module makes
the guarded code live again, and the rule reports it as an error.
"""

from __future__ import annotations

import textwrap

import pytest

from patcher.checks import RULES

from tests.fixtures_rules import SHIPPED, findings, why_dead

RULE = RULES["no-triton-kernels"]
IMPORT = "from vllm.attention.ops.prefix_prefill import context_attention_fwd"
TRUSTED = "`USE_TRITON` is always False (a module flag set once, at line 1, and never reassigned)"
SIBLING = "qwen3_6_scripts/launch.py"  # shipped beside the example's paged_attn.py
# What the rule says of the guarded import: an error where the flag can be set again, a note (and why) where not.
GUARDED = "imports context_attention_fwd from vllm.attention.ops.prefix_prefill, under `if USE_TRITON:`"


def guarded_module(elsewhere: str = "") -> str:
    """Return a shipped paged_attn.py whose Triton prefill sits under a module flag; ``elsewhere`` goes after the flag.

    The guarded import is the last line, in ``forward_prefix``, reading the module's global.
    """
    return "\n".join([
        "USE_TRITON = False  # the Triton prefill hangs the BI-V100",
        textwrap.dedent(elsewhere).strip("\n"),
        "",
        "def forward_prefix(query):",
        "    if USE_TRITON:",
        f"        {IMPORT}",
        "",
    ])


def last_line(code: str) -> int:
    return len(code.rstrip("\n").splitlines())


def test_a_flag_set_once_and_never_reassigned_turns_the_guarded_import_into_a_note() -> None:
    code = guarded_module("x = 1")
    assert findings(RULE, code) == [("example.py", last_line(code), "note", f"{GUARDED}: cannot run: {TRUSTED}")]


@pytest.mark.parametrize("code", [
    # Read at module level, after the flag; with `not`, `and`, `or`, and in a conditional expression.
    "USE_TRITON = False\nif USE_TRITON:\n    target()\n",
    "USE_TRITON = False\nif not USE_TRITON:\n    pass\nelse:\n    target()\n",
    "USE_TRITON = False\nif USE_TRITON and other():\n    target()\n",
    "USE_TRITON: bool = False\nkernel = target() if USE_TRITON else None\n",
    # Read in a function, a method, a nested function, a lambda, a comprehension.
    "USE_TRITON = False\ndef f():\n    if USE_TRITON:\n        target()\n",
    "USE_TRITON = False\nclass PagedAttention:\n    @staticmethod\n    def f():\n        if USE_TRITON:\n            target()\n",
    "USE_TRITON = False\ndef f():\n    def g():\n        if USE_TRITON:\n            target()\n    return g\n",
    "USE_TRITON = False\nf = lambda q: target() if USE_TRITON else q\n",
    "USE_TRITON = False\ndef f(xs):\n    return [target() if USE_TRITON else x for x in xs]\n",
    # Read in a class body that does not bind it; a function that only reads globals().
    "USE_TRITON = False\nclass A:\n    if USE_TRITON:\n        target()\n",
    "USE_TRITON = 0\nif globals().get('DEBUG'):\n    pass\nif USE_TRITON:\n    target()\n",
])
def test_the_flag_decides_every_read_of_the_module_global(code: str) -> None:
    assert why_dead(code) is not None and "a module flag set once, at line 1" in why_dead(code)  # type: ignore[operator]


# Each entry: a line (or lines) after the flag that can set it again. The flag must not be trusted.
REASSIGNMENTS = {
    "global in a function": "def enable():\n    global USE_TRITON\n    USE_TRITON = True",
    "global alone": "def enable(value):\n    global USE_TRITON\n    exec_later(value)",
    "assignment": "USE_TRITON = os.environ.get('USE_TRITON') == '1'",
    "augmented assignment": "USE_TRITON |= True",
    "annotated assignment": "USE_TRITON: bool = True",
    "tuple target": "USE_TRITON, DEBUG = True, False",
    "for target": "for USE_TRITON in (True,):\n    pass",
    "walrus": "if (USE_TRITON := probe()):\n    pass",
    "walrus in a comprehension": "found = [(USE_TRITON := p) for p in probes()]",
    "del": "del USE_TRITON",
    "import as": "import vllm.triton_utils as USE_TRITON",
    "from import": "from vllm.triton_utils import HAS_TRITON as USE_TRITON",
    "star import": "from vllm.envs import *",
    "with as": "with probe() as USE_TRITON:\n    pass",
    "except as": "try:\n    probe()\nexcept ImportError as USE_TRITON:\n    pass",
    "def": "def USE_TRITON():\n    return True",
    "class": "class USE_TRITON:\n    pass",
    "match capture": "match probe():\n    case USE_TRITON:\n        pass",
    "globals subscript": "globals()['USE_TRITON'] = True",
    "globals update": "globals().update(USE_TRITON=True)",
    "globals update with a dict": "globals().update(flags)",
    "vars subscript": "vars()['USE_TRITON'] = True",
    "setattr on sys.modules": "import sys\nsetattr(sys.modules[__name__], 'USE_TRITON', True)",
    "setattr with a computed name": "import sys\nfor name in ('USE_TRITON',):\n    setattr(sys.modules[__name__], name, True)",
    "attribute of sys.modules": "import sys\nsys.modules[__name__].USE_TRITON = True",
    "module __dict__": "import sys\nsys.modules[__name__].__dict__.update(USE_TRITON=True)",
    "exec": "exec('USE_TRITON = True')",
    "eval": "eval(compile('USE_TRITON = True', 'x', 'exec'))",
}


@pytest.mark.parametrize("how", sorted(REASSIGNMENTS))
def test_a_flag_that_the_module_can_set_again_guards_nothing(how: str) -> None:
    code = guarded_module(REASSIGNMENTS[how])
    assert findings(RULE, code) == [("example.py", last_line(code), "error", GUARDED)], how


@pytest.mark.parametrize("code", [
    # Read before the flag is set; a parameter, a local or a comprehension variable of that name.
    "if USE_TRITON:\n    target()\nUSE_TRITON = False\n",
    "USE_TRITON = False\ndef f(USE_TRITON=True):\n    if USE_TRITON:\n        target()\n",
    "USE_TRITON = False\ndef f(q):\n    if USE_TRITON:\n        target()\n    USE_TRITON = q\n",
    "USE_TRITON = False\ndef f(qs):\n    return [target() for USE_TRITON in qs if USE_TRITON]\n",
    "USE_TRITON = False\ndef f(qs):\n    return [target() if USE_TRITON else None for USE_TRITON in qs]\n",
    "USE_TRITON = False\ndef outer(q):\n    USE_TRITON = q\n    def inner():\n        if USE_TRITON:\n            target()\n    return inner\n",
    # A class body that binds it reads its own; a flag set under an `if` or in a `try` is no flag.
    "USE_TRITON = False\nclass A:\n    USE_TRITON = True\n    if USE_TRITON:\n        pass\n    else:\n        target()\n",
    "if probe():\n    USE_TRITON = False\nif USE_TRITON:\n    target()\n",
    "try:\n    USE_TRITON = False\nexcept Exception:\n    pass\nif USE_TRITON:\n    target()\n",
    # Not a literal.
    "USE_TRITON = probe()\nif USE_TRITON:\n    target()\n",
])
def test_a_name_that_is_not_the_trusted_module_global_leaves_the_branch_live(code: str) -> None:
    assert why_dead(code) is None


# Each entry: a sibling shipped module that sets paged_attn's flag.
FROM_ANOTHER_MODULE = {
    "attribute": "import paged_attn\npaged_attn.USE_TRITON = True\n",
    "attribute of a package path": "import vllm.attention.ops.paged_attn as pa\npa.USE_TRITON = True\n",
    "augmented attribute": "from vllm.attention.ops import paged_attn\npaged_attn.USE_TRITON |= True\n",
    "setattr": "import paged_attn\nsetattr(paged_attn, 'USE_TRITON', True)\n",
    "setattr with a computed name": "import sys\nfor name in FLAGS:\n    setattr(sys.modules['paged_attn'], name, True)\n",
    "module __dict__": "import paged_attn\nvars(paged_attn)['USE_TRITON'] = True\n",
    "in a function": "def enable(module):\n    module.USE_TRITON = True\n",
}


@pytest.mark.parametrize("how", sorted(FROM_ANOTHER_MODULE))
def test_a_flag_another_shipped_module_sets_guards_nothing(how: str) -> None:
    code = guarded_module()
    found = findings(RULE, code, files={SIBLING: FROM_ANOTHER_MODULE[how]})
    assert found == [(SHIPPED, last_line(code), "error", GUARDED)], how


def test_another_module_that_only_reads_the_flag_leaves_it_trusted() -> None:
    code = guarded_module()
    reader = "import paged_attn\nif paged_attn.USE_TRITON:\n    print('triton')\nsettings = {'USE_TRITON': False}\n"
    found = findings(RULE, code, files={SIBLING: reader})
    assert [(path, severity) for path, _, severity, _ in found] == [(SHIPPED, "note")]
    # A stale copy that does not ship may say anything: only what the image runs can set the flag.
    found = findings(RULE, code, files={"paged_attn.py": "import paged_attn\npaged_attn.USE_TRITON = True\n"})
    assert [(path, severity) for path, _, severity, _ in found] == [(SHIPPED, "note")]


def test_the_vendors_own_module_constants_are_flags_that_decide_nothing_it_flags() -> None:
    # `_PARTITION_SIZE = 512` is a trusted module literal, but no test reads it: nothing changes.
    code = guarded_module("_PARTITION_SIZE = 512\nif _PARTITION_SIZE:\n    pass")
    assert [severity for _, _, severity, _ in findings(RULE, code)] == ["note"]
