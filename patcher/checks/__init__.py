"""Hardware safety rules, checked on what ships: one rule a file, declared in ``patches/policy.toml``.

- ``base``: ``Violation``, ``Severity``, the rule base classes, ``PythonSource`` (one
  shared ``ast`` parse per file) and syntax helpers.
- ``reachability``: which branches cannot run (``use_v1 = True`` then ``if use_v1:``).
- ``cache``: what the file rules found, by file content.
- ``examples``: ``judge_example`` judges a rule on one of its VALID/INVALID examples.
- ``paged_attention``, ``pip_installs``: what several rules read (``class PagedAttention``,
  the ``pip install`` lines of install scripts and Dockerfile ``RUN``s).
- ``policy``: ``load_policy`` reads and validates the policy file; ``parse_allowed``
  pairs ``--allow RULE`` with ``--reason``.
- ``runner``: ``run_rules`` / ``check_tree`` run the policy over shipped files
  and return a ``CheckResult``.
- one module per rule: ``no_triton_kernels``, ``keep_pytorch_fallbacks``,
  ``v2_needs_fallback``, ``v1_length_limit``, ``python_3_10``,
  ``install_fails_loudly``; ``rules.RULES`` lists them by id.
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
