"""The rule's former id ``no-triton-prefill`` still names ``no-triton-kernels``: in ``--allow``, in a policy written before
the rename, in an override; an id no rule had is kept as written, for the error to name."""

from __future__ import annotations

from pathlib import Path

from patcher.checks import Severity, load_policy, parse_allowed, run_rules
from patcher.checks.policy import canonical

from tests.fixtures_rules import POLICY_FILE, write_policy


def test_the_former_triton_rule_id_still_names_the_rule(tmp_path: Path) -> None:
    policy = load_policy(POLICY_FILE)
    assert parse_allowed(["no-triton-prefill"], ["tested on another card"], policy) == (
        ("no-triton-kernels", "tested on another card"),)
    # A policy file written before the rename still loads, with its severity.
    old = load_policy(write_policy(tmp_path, 'id = "no-triton-kernels"\nseverity = "error"',
                                   'id = "no-triton-prefill"\nseverity = "warning"'))
    assert old.rules["no-triton-kernels"].severity is Severity.WARNING
    code = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
    result = run_rules([("a.py", lambda: code)], policy, allowed=[("no-triton-prefill", "why")])
    assert result.errors == () and [v.rule for v in result.overridden] == ["no-triton-kernels"]


def test_a_former_id_names_the_current_rule_and_an_unknown_one_is_kept() -> None:
    assert canonical("no-triton-prefill") == "no-triton-kernels"
    assert canonical("python-3.10") == "python-3.10"
    assert canonical("gpu-melts") == "gpu-melts"
