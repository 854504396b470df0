"""What a check returns: each violation with the policy's severity, sorted by place, counted as error, warning, override or note."""

from __future__ import annotations

from patcher.checks import Severity, Violation, run_rules
from patcher.checks.base import Settings
from patcher.checks.runner import CheckResult

from tests.fixtures_rules import POLICY, readers


def test_settings_make_violations_with_the_policys_severity_and_notes() -> None:
    settings = Settings("v1-length-limit", Severity.WARNING, "V1 fails past 32K", {"max-tokens": 32768})
    assert settings.violation("a.py", 3, "found") == Violation("v1-length-limit", Severity.WARNING, "a.py", 3, "found")
    assert settings.note("a.py", 4, "dead") == Violation("v1-length-limit", Severity.NOTE, "a.py", 4, "dead")
    assert Settings("python-3.10", Severity.ERROR, "3.10").params == {}


KERNEL_IMPORT = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"


def _violation(rule: str, severity: Severity, path: str = "a.py", line: int = 1) -> Violation:
    return Violation(rule, severity, path, line, f"{rule} {severity.value}")


def test_a_result_sorts_findings_into_errors_warnings_overrides_and_notes() -> None:
    error = _violation("no-triton-kernels", Severity.ERROR)
    allowed_error = _violation("python-3.10", Severity.ERROR, line=2)
    warning = _violation("v1-length-limit", Severity.WARNING, line=3)
    allowed_warning = _violation("install-fails-loudly", Severity.WARNING, line=4)
    note = _violation("python-3.10", Severity.NOTE, line=5)  # a note of an allowed rule stays a note
    result = CheckResult(POLICY, (error, allowed_error, warning, allowed_warning, note), ("a.py",),
                         {"python-3.10": "checked by hand", "install-fails-loudly": "no install here"})
    assert result.errors == (error,)
    assert result.warnings == (warning,)
    assert result.overridden == (allowed_error, allowed_warning)
    assert result.notes == (note,)
    assert not result.is_allowed(note) and result.is_allowed(allowed_error) and not result.is_allowed(error)
    assert CheckResult(POLICY, (error,), ()).allowed == {}


def test_findings_come_sorted_by_path_line_and_rule_and_files_in_the_order_read() -> None:
    files = {"z.py": KERNEL_IMPORT, "a.py": b"x = 1\ndef f(:\n", "m.py": b"import os\n" + KERNEL_IMPORT}
    result = run_rules(readers(files), POLICY, use_cache=False)  # type: ignore[arg-type]
    assert result.checked == ("z.py", "a.py", "m.py")
    assert [(v.path, v.line, v.rule) for v in result.violations] == [
        ("a.py", 2, "python-3.10"), ("m.py", 2, "no-triton-kernels"), ("z.py", 1, "no-triton-kernels")]
