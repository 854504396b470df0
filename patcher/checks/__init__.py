"""Hardware safety rules, checked on what ships: one rule a file, declared in ``patches/policy.toml``.

From the bottom up: each module imports only modules listed before it.

- ``syntax_index``: every node of a parse by kind, with its parent, and the syntax
  helpers the rules share (``dotted``, ``called_name``, ``integer_value``).
- ``reachability``: which branches cannot run (``use_v1 = True`` then ``if use_v1:``).
- ``base``: ``Violation``, ``Severity``, the rule base classes, ``PythonSource`` (one
  shared ``ast`` parse per file).
- ``paged_attention``, ``requirement_files``, ``dockerfile_lines``, ``pip_installs``: what several
  rules read (``class PagedAttention``; what a pip operand names and a requirements file holds; a
  Dockerfile's ``RUN`` lines, where each runs, its ``ENV`` names; the ``pip install`` lines of install
  scripts and ``RUN``s).
- ``triton_names``, ``triton_python``, ``torch_compile``, ``triton_imports``, ``triton_installs``:
  what rule no-triton-kernels reads, by what it reads: the names that say Triton, one Python
  file, ``torch.compile`` and ``TORCHINDUCTOR_*`` (TorchInductor writes Triton kernels), imports
  of a shipped module that defines a kernel, pip installs of Triton (requirements files
  followed) and Inductor's variables in the Dockerfile and install scripts.
- one module per rule: ``python_3_10``, ``keep_pytorch_fallbacks``, ``v2_needs_fallback``,
  ``v1_length_limit``, ``install_fails_loudly``, ``no_triton_kernels``; ``rules.RULES``
  lists them by id.
- ``policy``: ``load_policy`` reads and validates the policy file; ``parse_allowed``
  pairs ``--allow RULE`` with ``--reason``.
- ``cache``: what the file rules found, by file content.
- ``runner``: ``run_rules`` / ``check_tree`` run the policy over shipped files
  and return a ``CheckResult``.
- ``examples``: ``judge_example`` judges a rule on one of its VALID/INVALID examples.
- ``inputs``: ``check_path``, what ``patcher check PATH`` is given (a zip, a folder, a tar, a file).

Nothing here imports the pipeline or the CLI: they call the checks, and pass in what they need.
"""

from .base import Severity, Violation
from .policy import Policy, load_policy, parse_allowed, policy_path
from .rules import RULES
from .runner import CheckResult, check_tree, run_rules, shipped_python

__all__ = [
    "RULES",
    "CheckResult",
    "Policy",
    "Severity",
    "Violation",
    "check_tree",
    "load_policy",
    "parse_allowed",
    "policy_path",
    "run_rules",
    "shipped_python",
]
