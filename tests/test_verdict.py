"""One verdict for apply, check, test and upgrade: reasons most serious first, one table of exit codes.

``report.Verdict`` orders a command's reasons (broken, unsafe, review, warning, note), and its
exit code comes from the command's row of ``VERDICT_EXIT_CODES``: the worst reason decides.
"""

from __future__ import annotations

import pytest

from patcher.report import VERDICT_EXIT_CODES, ExitCode, Reason, Severity, Verdict


def _reasons(*severities: Severity) -> tuple[Reason, ...]:
    return tuple(Reason(s, f"subject {n}", s.name.lower()) for n, s in enumerate(severities))


def test_reasons_come_most_serious_first_and_equal_ones_keep_their_order() -> None:
    verdict = Verdict("upgrade", (), _reasons(Severity.NOTE, Severity.REVIEW, Severity.BROKEN,
                                               Severity.REVIEW, Severity.UNSAFE))
    assert [(r.severity, r.subject) for r in verdict.reasons] == [
        (Severity.BROKEN, "subject 2"), (Severity.UNSAFE, "subject 4"), (Severity.REVIEW, "subject 1"),
        (Severity.REVIEW, "subject 3"), (Severity.NOTE, "subject 0")]
    assert verdict.worst is Severity.BROKEN
    assert [r.subject for r in verdict.failing] == ["subject 2", "subject 4", "subject 1", "subject 3"]


@pytest.mark.parametrize("command, severity, code", [
    ("apply", Severity.BROKEN, ExitCode.BAD_INPUT),  # a patch that does not apply: nothing written
    ("apply", Severity.UNSAFE, ExitCode.BAD_INPUT),
    ("apply", Severity.WARNING, ExitCode.OK),
    ("check", Severity.UNSAFE, ExitCode.DIFFERENCE),
    ("check", Severity.WARNING, ExitCode.OK),
    ("check", Severity.NOTE, ExitCode.OK),
    ("test", Severity.BROKEN, ExitCode.DIFFERENCE),
    ("upgrade", Severity.BROKEN, ExitCode.DIFFERENCE),
    ("upgrade", Severity.UNSAFE, ExitCode.DIFFERENCE),
    ("upgrade", Severity.REVIEW, ExitCode.DIFFERENCE),
    ("upgrade", Severity.NOTE, ExitCode.OK),
])
def test_the_worst_reason_gives_the_exit_code_of_the_commands_table(command, severity, code) -> None:  # type: ignore[no-untyped-def]
    assert Verdict(command, (), _reasons(severity)).exit_code is code
    assert Verdict(command, (), _reasons(Severity.NOTE, severity, Severity.NOTE)).exit_code is code
    assert Verdict(command, (), ()).exit_code is ExitCode.OK


def test_every_table_maps_only_to_documented_codes_and_an_unknown_command_is_refused() -> None:
    assert set(VERDICT_EXIT_CODES) == {"apply", "check", "test", "upgrade"}
    assert {code for table in VERDICT_EXIT_CODES.values() for code in table.values()} <= {
        ExitCode.DIFFERENCE, ExitCode.BAD_INPUT}
    with pytest.raises(ValueError, match="no exit codes for command 'deploy'"):
        Verdict("deploy", (), ())


def test_the_verdict_as_data_says_the_same() -> None:
    verdict = Verdict("check", (("a.py", "fails"), ("b.py", "passes")),
                      (Reason(Severity.WARNING, "b.py:3", "w"), Reason(Severity.UNSAFE, "a.py:1", "e")), next="x")
    assert verdict.to_json() == {
        "exit_code": 1, "passed": False, "next": "x",
        "statuses": [{"subject": "a.py", "status": "fails"}, {"subject": "b.py", "status": "passes"}],
        "reasons": [{"severity": "unsafe", "subject": "a.py:1", "text": "e"},
                    {"severity": "warning", "subject": "b.py:3", "text": "w"}]}


def test_check_apply_and_test_keep_their_exit_codes(cli, vendor_copy) -> None:  # type: ignore[no-untyped-def]
    from patcher.checks.inputs import check_path
    from patcher.checks.policy import load_policy
    from patcher.report import CheckReport
    from tests.fixtures_vendor import PATCHES, SHIPPED

    (vendor_copy / SHIPPED).write_bytes((vendor_copy / "paged_attn.py").read_bytes())  # Triton, no fallbacks
    report = CheckReport(check_path(vendor_copy, load_policy(PATCHES / "policy.toml")), "drop")
    assert report.verdict.worst is Severity.UNSAFE and report.exit_code is ExitCode.DIFFERENCE
    assert (SHIPPED, "fails") in report.verdict.statuses
    assert cli("check", vendor_copy).exit_code == 1
    apply = cli("apply", vendor_copy, "-o", "ctx")
    assert apply.exit_code == 2 and not (cli.cwd / "ctx").exists()
    assert cli("test", "three-tier-decode").exit_code == 0


def test_checks_verdict_gives_each_finding_its_file_and_line_and_each_file_its_status() -> None:
    from patcher.checks import run_rules
    from patcher.report import CheckReport
    from tests.fixtures_rules import POLICY, readers

    code = (b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n"
            b"def f(o):\r\n    use_v1 = True\r\n    if not use_v1:\r\n        ops.paged_attention_v2(o)\r\n"
            b"    context_attention_fwd(o)\r\n")
    verdict = CheckReport(run_rules(readers({"a.py": code, "b.py": b"x = 1\n"}), POLICY), "drop").verdict
    assert verdict.statuses == (("a.py", "fails"), ("b.py", "passes"))
    assert [(r.severity, r.subject, r.text.split(":")[0]) for r in verdict.reasons] == [
        (Severity.UNSAFE, "a.py:1", "no-triton-kernels"), (Severity.UNSAFE, "a.py:6", "no-triton-kernels"),
        (Severity.NOTE, "a.py:5", "v2-needs-fallback")]
