"""Two faults of the Triton rule and the install-script readers, pinned where a user sees them.

1. ``no-triton-kernels`` reported a kernel decorated with a call
   (``@triton.autotune(...)``, ``@triton.heuristics(...)``) twice on one
   line: "compiles a Triton kernel" for the decorator's call, and "defines
   the Triton kernel". The definition is one finding; a bare
   ``autotune(...)(body)`` call still "compiles".
2. ``pip install ${TRITON_PKG:-triton==2.1.0}`` and its kin (``${VAR-x}``,
   ``${VAR:=x}``) went unread: only ``$VAR`` and ``${VAR}`` were expanded.
   The install-script reader (where files go) and the pip reader now share
   one expansion, which also takes a default that names another variable.
"""

from __future__ import annotations

import pytest

from patcher.checks.triton_installs import is_triton_project
from patcher.checks.pip_installs import logical_lines, pip_installs
from patcher.shipping.install_script import expand_variables, read_install_script
from tests.test_mutation_rules_triton import HANG, INSTALLS, SCRIPT, _errors, _found  # the rule's own test helpers


# -- 1. one decorator line, one finding ---------------------------------------------


def test_an_autotuned_jit_kernel_is_defined_once_and_launched() -> None:
    code = """\
# Triton V2 decode, tried for 8K-100K tokens.
import triton
import triton.language as tl


@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=4)], key=['n'])
@triton.jit
def _decode_kernel(out_ptr, q_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)


def decode(out, q):
    _decode_kernel[(q.shape[0],)](out, q, q.numel())
"""
    assert _errors(code) == [
        (6, "defines the Triton kernel _decode_kernel "
            "(`@triton.autotune(configs=[triton.Config({'BLOCK': 64}, num_warps=4)], key=['n'])`)"),
        (13, "launches the Triton kernel _decode_kernel (`_decode_kernel[(q.shape[0],)](...)`)"),
    ]


def test_an_autotune_without_jit_below_it_is_one_definition() -> None:
    code = "import triton\r\n\r\n@triton.autotune(configs=[], key=['n'])\r\ndef _k(x, n):\r\n    pass\r\n"
    assert _errors(code) == [(3, "defines the Triton kernel _k (`@triton.autotune(configs=[], key=['n'])`)")]


def test_a_stack_of_decorator_calls_through_aliases_is_one_definition() -> None:
    code = """\
from triton import autotune, heuristics, Config
import triton as tt


@heuristics({'EVEN_N': lambda args: args['n'] % 64 == 0})
@autotune(configs=[Config({'BLOCK': 64})], key=['n'])
@tt.jit
async def _k(x, n):
    pass
"""
    assert _errors(code) == [
        (5, "defines the Triton kernel _k (`@heuristics({'EVEN_N': lambda args: args['n'] % 64 == 0})`)"),
    ]


def test_an_autotuned_kernel_under_try_is_one_definition_with_its_guard() -> None:
    code = """\
try:
    import triton

    @triton.autotune(configs=[], key=['n'])
    @triton.jit
    def _decode(x, n):
        pass
except ImportError:
    _decode = None
"""
    assert _errors(code) == [
        (4, f"defines the Triton kernel _decode (`@triton.autotune(configs=[], key=['n'])`), "
            f"under `try:` ({HANG})"),
    ]


def test_an_autotuned_kernel_in_dead_code_is_one_note() -> None:
    code = "import triton\nif False:\n    @triton.autotune(configs=[], key=['n'])\n    def _k(x, n):\n        pass\n"
    assert _found(code) == [
        ("example.py", 3, "note", "defines the Triton kernel _k (`@triton.autotune(configs=[], key=['n'])`), "
                                  "under `if False:`: cannot run: its test `False` is always false"),
    ]


def test_a_bare_autotune_call_beside_a_decorated_kernel_still_compiles() -> None:
    code = """\
import triton


@triton.autotune(configs=[], key=['n'])
def _k(x, n):
    pass


def _body(x, n):
    pass


decode = triton.autotune(configs=[], key=['n'])(_body)
"""
    assert _errors(code) == [
        (4, "defines the Triton kernel _k (`@triton.autotune(configs=[], key=['n'])`)"),
        (13, "compiles a Triton kernel (`triton.autotune(configs=[], key=['n'])`)"),
    ]


def test_a_kernel_compiled_inside_another_decorator_s_arguments_still_compiles() -> None:
    code = ("import functools\nimport triton\n\n"
            "@functools.lru_cache(triton.jit(_body))\ndef f(x):\n    pass\n")
    assert _errors(code) == [(4, "compiles a Triton kernel (`triton.jit(_body)`)")]


def test_a_non_triton_decorator_call_on_a_kernel_adds_nothing() -> None:
    code = ("import functools\nimport triton\n\n"
            "@functools.lru_cache(maxsize=None)\n@triton.jit\ndef _k(x):\n    pass\n")
    assert _errors(code) == [(5, "defines the Triton kernel _k (`@triton.jit`)")]


# -- 2. ${VAR:-default} and its kin ----------------------------------------------------


def _triton(script: str, environment: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """Return (line, operand) of each Triton build the script pip-installs."""
    return pip_installs(logical_lines(script), is_triton_project, environment)


def test_a_default_names_triton_when_the_variable_is_unset() -> None:
    script = ("#!/bin/bash\r\n"
              "# the other card family's build; override with TRITON_PKG\r\n"
              "pip install ${TRITON_PKG:-triton==2.1.0} --no-deps 2>/dev/null || true\r\n"
              "pip3 install \"${PKG:-triton}\"\r\n"
              "python3 -m pip install '${NOT_EXPANDED:-triton}'x\r\n")
    assert _triton(script) == [(3, "triton==2.1.0"), (4, "triton")]


def test_colon_dash_takes_the_default_when_empty_plain_dash_only_when_unset() -> None:
    script = ("PKG=\n"
              "pip install ${PKG:-triton}\n"
              "pip install ${PKG-triton}\n"
              "pip install ${OTHER-pytorch-triton}\n")
    assert _triton(script) == [(2, "triton"), (4, "pytorch-triton")]


def test_a_set_variable_wins_over_its_default() -> None:
    script = "pip install ${PKG:-triton} ${PKG2-triton}\n"
    assert _triton(script, {"PKG": "transformers==4.57.1", "PKG2": ""}) == []
    assert _triton("PKG=xformers\npip install ${PKG:=triton}\npip install $PKG\n") == []


def test_colon_equals_assigns_the_default_for_later_lines() -> None:
    script = (": \"${TRITON_WHEEL:=./triton-2.1.0-cp310-cp310-linux_x86_64.whl}\"\n"
              "echo installing $TRITON_WHEEL\n"
              "pip3 install \"$TRITON_WHEEL\" || true\n"
              "pip install ${PKG:=triton}; pip install --no-deps $PKG\n")
    assert _triton(script) == [(3, "./triton-2.1.0-cp310-cp310-linux_x86_64.whl"), (4, "triton"), (4, "triton")]


def test_a_default_that_names_another_variable() -> None:
    script = ("WHEELS=/opt/wheels\n"
              "pip install ${TRITON_WHEEL:-${WHEELS}/triton-2.1.0-cp310-cp310-linux_x86_64.whl}\n"
              "pip install ${TRITON_WHEEL:-$WHEELS/triton-2.1.0-cp310-cp310-linux_x86_64.whl}\n")
    wheel = "/opt/wheels/triton-2.1.0-cp310-cp310-linux_x86_64.whl"
    assert _triton(script) == [(2, wheel), (3, wheel)]


def test_colon_plus_gives_its_word_only_when_set_and_not_empty() -> None:
    script = "pip install transformers ${WITH_TRITON:+triton}\n"
    assert _triton(script, {"WITH_TRITON": "1"}) == [(1, "triton")]
    assert _triton(script, {"WITH_TRITON": ""}) == []
    assert _triton(script) == []


def test_the_rule_reports_a_default_from_the_install_script_and_a_dockerfile_env_overrides_it() -> None:
    script = ("set -e\r\n"
              "cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py\r\n"
              "pip install \"${TRITON_PKG:-triton==2.1.0}\"\r\n")
    assert _found(script, path=SCRIPT) == [(SCRIPT, 3, "error", f"installs Triton (`triton==2.1.0`) {INSTALLS}")]
    dockerfile = "\n".join(["FROM base", "ENV TRITON_PKG=tritonclient==2.41.0", "WORKDIR /workspace/",
                            "COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                            "RUN cd ./qwen3_6_scripts && ./patch_ops.sh", ""])
    assert _found(script, path=SCRIPT, files={"Dockerfile": dockerfile}) == []


# -- the shared expansion, and where files go -------------------------------------------


@pytest.mark.parametrize("word, variables, expected", [
    ("$A/${B}", {"A": "a", "B": "b"}, "a/b"),
    ("${A:-x}|${A-x}", {"A": ""}, "x|"),
    ("${A:-x}|${A-x}", {}, "x|x"),
    ("${A:+y}|${A+y}", {"A": ""}, "|y"),
    ("${A:?unset}", {"A": "v"}, "v"),
    ("$UNSET ${UNSET}", {}, "$UNSET ${UNSET}"),
])
def test_expand_variables_follows_the_shell(word: str, variables: dict[str, str], expected: str) -> None:
    assert expand_variables(word, dict(variables)) == expected


def test_expand_variables_assigns_and_records_unknown_names() -> None:
    variables = {"EMPTY": "", "KEPT": "k"}
    unknown: set[str] = set()
    assert expand_variables("${EMPTY:=a}${NEW=b}${KEPT=c}$MISSING", variables, unknown) == "abk$MISSING"
    assert variables == {"EMPTY": "a", "NEW": "b", "KEPT": "k"}
    assert unknown == {"MISSING"}


def test_an_install_script_places_files_under_a_default_that_names_another_variable() -> None:
    script = ("#!/bin/bash\r\n"
              "COREX=/usr/local/corex\r\n"
              ": \"${VLLM:=${COREX}/lib/python3/dist-packages/vllm}\"\r\n"
              "cp ./paged_attn.py \"$VLLM/attention/ops/paged_attn.py\" 2>/dev/null || true\r\n")
    read = read_install_script(script, "/workspace/qwen3_6_scripts")
    assert [(c.source, c.destination, c.line) for c in read.copies] == [
        ("/workspace/qwen3_6_scripts/paged_attn.py",
         "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py", 4)]
    assert read.unknown == ()
