"""Builders the safety rules' tests share: the bundled policy, a rule run as ``patcher test`` runs it, vendor-shaped code.

A rule's tests assert whole findings (path, line, severity, message), so
they run the rule through ``run_example`` (one file read alone, or a small
build context) and compare tuples; the CLI tests edit a copy of the vendor
tree (``vendor_copy``) with ``edit`` and find lines with ``line_of``, so a
moved line never silently changes what they assert.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Callable, Mapping

from patcher.checks import load_policy
from patcher.checks.base import PythonSource, Rule, Severity, Valid, Violation
from patcher.checks.examples import example_settings, run_example
from patcher.checks.triton_installs import is_triton_project
from patcher.checks.pip_installs import logical_lines, pip_installs
from patcher.checks.python_3_10 import Python310

from tests.fixtures_vendor import PATCHES, SHIPPED

POLICY_FILE = PATCHES / "policy.toml"
POLICY_TEXT = POLICY_FILE.read_text()
POLICY = load_policy(POLICY_FILE)

SCRIPT = "qwen3_6_scripts/patch_ops.sh"  # the vendor's install script, run by the Dockerfile
HANG = "a hang cannot be caught by try/except"
INSTALLS = ("in the image; Triton's kernels hang the BI-V100 "
            "(its runtime does not support the PTX Triton compiles)")
# Where the vendor's install script copies paged_attn.py, and where the rule examples' scripts do.
COREX_OPS = "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops"
OPS = "/usr/local/lib/python3.10/dist-packages/vllm/attention/ops"

Finding = tuple[str, int, str, str]


# -- a rule run the way `patcher test` runs its examples ------------------------------


def findings(rule: Rule, code: str, *, files: Mapping[str, str] | None = None, path: str | None = None,
             params: Mapping[str, Any] | None = None) -> list[Finding]:
    """Return (path, line, severity, message) of everything ``rule`` reports on ``code``, notes included."""
    example = Valid(code, files=dict(files or {}), path=path, params=dict(params or {}))
    return [(v.path, v.line, v.severity.value, v.message) for v in run_example(rule, example)]


def errors_in(rule: Rule, code: str, params: Mapping[str, Any] | None = None) -> list[tuple[int, str]]:
    """Return (line, message) of each finding in ``code`` read alone: every one must be an error in ``example.py``."""
    found = findings(rule, code, params=params)
    assert all(path == "example.py" and severity == "error" for path, _, severity, _ in found), found
    return [(line, message) for _, line, _, message in found]


def python_3_10_findings(data: bytes) -> list[tuple[int, str]]:
    """Return (line, message) of each python-3.10 finding in ``data`` read as qwen3_6_scripts/qwen3_5.py."""
    rule = Python310()
    found = list(rule.check_file(PythonSource("qwen3_6_scripts/qwen3_5.py", data), example_settings(rule)))
    assert all(v.path == "qwen3_6_scripts/qwen3_5.py" and v.severity.value == "error" for v in found)
    return [(v.line, v.message) for v in found]


def why_dead(code: str) -> str | None:
    """Why the one call of ``target()`` in ``code`` cannot run, or None."""
    source = PythonSource("paged_attn.py", textwrap.dedent(code).encode())
    calls = source.index.calls("target")
    assert len(calls) == 1, calls
    return source.reachability.dead(calls[0])


def readers(files: Mapping[str, bytes]) -> list[tuple[str, Callable[[], bytes]]]:
    """Return ``run_rules``' (path, reader) pairs for ``files``, in their order."""
    return [(path, (lambda data=data: data)) for path, data in files.items()]


# -- install steps ---------------------------------------------------------------------


def triton_installs(script: str, environment: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """Return (line, operand) of each Triton build the script pip-installs."""
    return pip_installs(logical_lines(script), is_triton_project, environment)


def all_installs(script: str) -> list[tuple[int, str]]:
    """Return (line, operand) of each named project the script pip-installs."""
    return pip_installs(logical_lines(script), lambda project: bool(project))


def build_dockerfile(*lines: str) -> str:
    """Return a Dockerfile that runs the install script, with ``lines`` after its FROM."""
    return "\n".join(["FROM base", *lines, "WORKDIR /workspace/",
                      "COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                      "RUN cd ./qwen3_6_scripts && ./patch_ops.sh", ""])


# -- class PagedAttention, as the fallback and length rules read it ------------------

PAGED_ATTENTION_HEAD = """\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD: int = 32768  # V1 fails past 32K

    @staticmethod
    def _forward_prefix_pytorch(query):
        return query

    @staticmethod
    async def _forward_decode_pytorch(query):
        return query

    @staticmethod
    def forward_prefix(query):
        return PagedAttention._forward_prefix_pytorch(query)

    @staticmethod
    def forward_decode(query, seq_lens):
        actual_max = int(seq_lens.max().item())
"""  # forward_decode's body goes on at line 19
PYTORCH_DECODE = "PagedAttention._forward_decode_pytorch(query)"

V1_CALL = "ops.paged_attention_v1(output, query, key_cache, value_cache)"
V2_SUBSTITUTE = "PagedAttention._paged_attention_v2_pytorch(output, query)"
RAISED = ("_PYTORCH_DECODE_THRESHOLD = 65536 sends sequences of 32769 to 65536 tokens to the V1 kernel "
          "(directly or after V2 fails), past its 32768-token limit")


def vendor_decode(v1: str, threshold: str = "65536") -> str:
    """The vendor's forward_decode with the threshold and the V1 block given."""
    return f"""\
class PagedAttention:
    # V1 fails past 32K on BI-V100: long contexts decode in PyTorch.
    _PYTORCH_DECODE_THRESHOLD = {threshold}

    @staticmethod
    def forward_decode(query, key_cache, value_cache, block_tables, seq_lens, max_seq_len, num_seqs):
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query, key_cache, value_cache, block_tables, seq_lens)
        output = torch.empty_like(query)
{v1}        return output
"""


# -- the policy file, edited by hand ---------------------------------------------------


def edited_policy(old: str, new: str) -> str:
    """Return the bundled policy's text with its first ``old`` replaced by ``new``."""
    assert old in POLICY_TEXT, f"the bundled policy no longer holds {old!r}"
    return POLICY_TEXT.replace(old, new, 1)


def write_policy(tmp_path: Path, old: str, new: str) -> Path:
    """Write the bundled policy, edited, as ``tmp_path/policy.toml``."""
    path = tmp_path / "policy.toml"
    path.write_text(edited_policy(old, new))
    return path


# -- the vendor tree, edited the way a version of it differs -----------------------------

TRITON_COMMENT = "# from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
TRITON_REENABLED = (
    "from vllm.triton_utils import HAS_TRITON\n"
    "if HAS_TRITON:\n"
    "    from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
)
V1_OVERRIDE = "        use_v1 = True  # BI-V100: the V2 kernel is not available\n"


def edit(tree: Path, path: str, old: str, new: str) -> None:
    """Replace the first ``old`` in ``tree/path`` by ``new``, bytes otherwise kept (CRLF included)."""
    file = tree / path
    text = file.read_bytes().decode()
    assert old in text, f"{path} no longer holds {old!r}"
    file.write_bytes(text.replace(old, new, 1).encode())


def line_of(tree: Path, path: str, text: str) -> int:
    """Return the number of the first line of ``tree/path`` that holds ``text``."""
    lines = (tree / path).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def reenable_triton(tree: Path) -> None:
    """Turn the shipped file's commented-out Triton import back on, under ``if HAS_TRITON:``."""
    edit(tree, SHIPPED, TRITON_COMMENT, TRITON_REENABLED)


def error_rows(output: str) -> list[str]:
    """Return the ``error:`` lines of ``output``, each without its ``(why: ...)``."""
    return [row.split(" (why:")[0] for row in output.splitlines() if row.startswith("error: ")]


# -- the rule cache ------------------------------------------------------------------------

# What the cache holds for a file at a.py: an error, and a note of a call that cannot run.
CACHED = [Violation("no-triton-kernels", Severity.ERROR, "a.py", 3, "imports context_attention_fwd"),
          Violation("v2-needs-fallback", Severity.NOTE, "a.py", 7, "ops.paged_attention_v2 at line 7 cannot run")]
