"""The safety rules, one by one: tests generated from each rule's VALID / INVALID examples,
plus the policy file that declares them."""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any, Sequence

import pytest

from patcher.checks import RULES, Severity, load_policy, parse_allowed, run_rules
from patcher.checks.base import FileRule, Invalid, TreeRule, Valid
from patcher.checks.examples import check_example, example_path, judge_example
from patcher.checks.install_fails_loudly import EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.errors import PatcherError, PatchSetError

from tests.fixtures_vendor import PATCHES

POLICY = PATCHES / "policy.toml"


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Rule results (and patch results) are cached by content: keep them in this test's folder.
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))


def _cases(kind: str, rules: Sequence[Any] = tuple(RULES.values())) -> list[Any]:
    cases = []
    for rule in rules:
        for number, example in enumerate(getattr(rule, kind), 1):
            cases.append(pytest.param(rule, example, id=f"{rule.ID}-{kind.lower()}-{number}"))
    return cases


def _verdict(rule: Any, example: Valid | Invalid) -> None:
    # The judge patcher test uses: a VALID example draws no violation and exactly its note (if any);
    # an INVALID one only errors of this rule, one at its path and line with its text.
    verdict = judge_example(rule, example)
    assert verdict.passed, f"{verdict.problem}\nexpected:\n{verdict.expected}\ngot:\n{verdict.got}"


@pytest.mark.parametrize("rule, example", _cases("VALID"))
def test_valid_example_passes(rule: Any, example: Valid) -> None:
    _verdict(rule, example)


@pytest.mark.parametrize("rule, example", _cases("INVALID"))
def test_invalid_example_is_found_at_its_line(rule: Any, example: Invalid) -> None:
    _verdict(rule, example)


_OTHER_FILE_RULES = [r for r in RULES.values() if isinstance(r, FileRule) and r.ID != "python-3.10"]


@pytest.mark.parametrize("rule, example", _cases("VALID", _OTHER_FILE_RULES) + _cases("INVALID", _OTHER_FILE_RULES))
def test_file_rule_examples_are_python_3_10(rule: Any, example: Valid | Invalid) -> None:
    # The examples of every other rule must not trip python-3.10 by accident.
    sources = {example_path(rule, example): example.code, **example.files}
    for path, code in sources.items():
        if path.endswith(".py"):
            assert check_example(RULES["python-3.10"], Valid(code)) == [], path


def test_every_rule_has_examples_both_ways_and_lives_in_its_own_file() -> None:
    for rule_id, rule in RULES.items():
        assert rule.VALID and rule.INVALID, rule_id
        module = type(rule).__module__.rsplit(".", 1)[1]
        assert module == rule_id.replace("-", "_").replace(".", "_"), (rule_id, module)
        assert isinstance(rule, (FileRule, TreeRule))


def test_comments_and_strings_never_count() -> None:
    code = (
        "# from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
        "# ops.paged_attention_v2(output)\n"
        "# HAS_TRITON = True\n"
        "NOTE = 'context_attention_fwd(q) and HAS_TRITON = True'\n"
    )
    result = run_rules([("a.py", code.encode)], load_policy(POLICY))
    assert result.violations == ()


def test_nfkc_spelling_of_the_kernel_name_is_still_the_kernel() -> None:
    # Python folds identifiers with NFKC: this is the same name, spelled with a fullwidth letter.
    code = "from vllm.attention.ops.prefix_prefill import \uff43ontext_attention_fwd\n"
    result = run_rules([("a.py", code.encode)], load_policy(POLICY))
    assert [v.rule for v in result.violations] == ["no-triton-kernels"]


def test_an_unparsable_file_gets_only_the_python_3_10_finding() -> None:
    result = run_rules([("bad.py", lambda: b"def f(:\n    context_attention_fwd()\n")], load_policy(POLICY))
    assert [(v.rule, v.line) for v in result.violations] == [("python-3.10", 1)]


def test_crlf_and_no_final_newline_are_read_as_code() -> None:
    code = b"if HAS_TRITON:\r\n    from x.prefix_prefill import context_attention_fwd"
    result = run_rules([("a.py", lambda: code)], load_policy(POLICY))
    assert [(v.rule, v.line) for v in result.violations] == [("no-triton-kernels", 2)]


# -- the policy file ----------------------------------------------------


def test_bundled_policy_declares_every_rule_with_a_reason() -> None:
    policy = load_policy(POLICY)
    assert list(policy.rules) == list(RULES) or set(policy.rules) == set(RULES)
    assert policy.rules["v1-length-limit"].severity is Severity.WARNING
    assert policy.rules["install-fails-loudly"].severity is Severity.WARNING
    assert policy.rules["v1-length-limit"].params["max-tokens"] == 32768
    for settings in policy.rules.values():
        assert len(settings.reason) > 40 and "\n" not in settings.reason


def _write_policy(tmp_path: Path, edit: str, new: str) -> Path:
    text = POLICY.read_text()
    assert edit in text
    path = tmp_path / "policy.toml"
    path.write_text(text.replace(edit, new, 1))
    return path


@pytest.mark.parametrize("edit, new, message", [
    ('severity = "error"', 'severity = "eror"', "must be one of error, warning, not 'eror'"),
    # A note never fails a run: a rule cannot be turned into one.
    ('severity = "error"', 'severity = "note"', "must be one of error, warning, not 'note'"),
    ('severity = "error"', 'severty = "error"', "unknown key 'rules[1].severty'; did you mean 'severity'?"),
    ('id = "no-triton-kernels"', 'id = "no-triton-kernel"', "no rule 'no-triton-kernel'; did you mean 'no-triton-kernels'?"),
    ('id = "no-triton-kernels"', 'id = "no-triton-prefil"', "no rule 'no-triton-prefil'; did you mean 'no-triton-prefill'?"),
    ("max-tokens = 32768", "max-token = 32768", "has no parameter 'max-token'; did you mean 'max-tokens'?"),
    ("max-tokens = 32768", 'max-tokens = "32768"', "must be a int"),
    ('id = "python-3.10"', 'id = "no-triton-kernels"', "declared twice"),
    # The former id names the same rule.
    ('id = "python-3.10"', 'id = "no-triton-prefill"', "rule 'no-triton-kernels' is declared twice"),
])
def test_policy_errors_say_what_and_where(tmp_path: Path, edit: str, new: str, message: str) -> None:
    with pytest.raises(PatchSetError) as error:
        load_policy(_write_policy(tmp_path, edit, new))
    assert message in str(error.value)
    assert str(tmp_path / "policy.toml") in str(error.value)


def test_policy_must_declare_every_rule(tmp_path: Path) -> None:
    text = POLICY.read_text()
    start = text.index('[[rules]]\nid = "python-3.10"')
    end = text.index("[[rules]]", start + 1)
    path = tmp_path / "policy.toml"
    path.write_text(text[:start] + text[end:])
    with pytest.raises(PatchSetError, match="rule 'python-3.10' is not declared"):
        load_policy(path)


def test_allow_pairs_rules_with_reasons_in_order() -> None:
    policy = load_policy(POLICY)
    pairs = parse_allowed(["v1-length-limit", "python-3.10"], ["long  contexts\ntested", "b"], policy)
    assert pairs == (("v1-length-limit", "long contexts tested"), ("python-3.10", "b"))
    with pytest.raises(PatcherError, match="1 --allow but 0 --reason"):
        parse_allowed(["python-3.10"], [], policy)
    with pytest.raises(PatcherError, match="did you mean 'python-3.10'"):
        parse_allowed(["python3.10"], ["x"], policy)
    with pytest.raises(PatcherError, match="the --reason is empty"):
        parse_allowed(["python-3.10"], ["  "], policy)


def test_the_former_triton_rule_id_still_names_the_rule(tmp_path: Path) -> None:
    policy = load_policy(POLICY)
    assert parse_allowed(["no-triton-prefill"], ["tested on another card"], policy) == (
        ("no-triton-kernels", "tested on another card"),)
    # A policy file written before the rename still loads, with its severity.
    old = load_policy(_write_policy(tmp_path, 'id = "no-triton-kernels"\nseverity = "error"',
                                    'id = "no-triton-prefill"\nseverity = "warning"'))
    assert old.rules["no-triton-kernels"].severity is Severity.WARNING
    code = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
    result = run_rules([("a.py", lambda: code)], policy, allowed=[("no-triton-prefill", "why")])
    assert result.errors == () and [v.rule for v in result.overridden] == ["no-triton-kernels"]


def test_examples_paths_are_posix() -> None:
    assert posixpath.dirname(EXAMPLE_SCRIPT) == posixpath.dirname(EXAMPLE_TARGET)


@pytest.mark.parametrize("data, line", [
    (b"# caf\xe9\nx = 1\n", 0),  # libcst's own detection, on the first two lines
    (b"x = 1\n\n# \xd6\xd0\xce\xc4 (GBK)\ny = 2\n", 3),
])
def test_a_file_that_does_not_decode_gets_only_the_python_3_10_finding(data: bytes, line: int) -> None:
    # CPython refuses to import such a file; the check must say so, not crash.
    result = run_rules([("vendor.py", lambda: data)], load_policy(POLICY))
    assert [(v.rule, v.line) for v in result.violations] == [("python-3.10", line)]
    assert "cannot be decoded" in result.violations[0].message


@pytest.mark.parametrize("code, line", [
    ("x[\n    *a,\n]\n", 2),
    ("y = x[a,\n      *b]\n", 2),
    ("def f(*args: *Ts):\n    pass\n", 1),
])
def test_pep_646_forms_split_over_lines_are_found(code: str, line: int) -> None:
    found = check_example(RULES["python-3.10"], Invalid(code, line, "PEP 646"))
    assert [(v.line, "PEP 646" in v.message) for v in found] == [(line, True)]


@pytest.mark.parametrize("code", ["print(*args, **kwargs)\n", "x = [*a, b]\ny = f(a, *b)\n", "x[(*a, b)]\n"])
def test_stars_that_3_10_allows_are_not_pep_646(code: str) -> None:
    assert check_example(RULES["python-3.10"], Valid(code)) == []
