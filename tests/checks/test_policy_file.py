"""The policy file (``patches/policy.toml``): the bundled one declares every rule, and each way a hand edit goes wrong
is refused with what, where and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.checks import RULES, Severity, load_policy, policy_path
from patcher.checks.base import Settings
from patcher.errors import PatchSetError

from tests.fixtures_rules import POLICY_FILE, POLICY_TEXT, edited_policy, write_policy

V2_REASON = ("the BI-V100 build has no native V2 decode kernel (ops.paged_attention_v2 raises "
             "NotImplementedError), so a V2 call with no way back to V1 fails every decode that reaches it")
PYTHON_RULE = '[[rules]]\nid = "python-3.10"\nseverity = "error"\n'


def test_bundled_policy_declares_every_rule_with_a_reason() -> None:
    policy = load_policy(POLICY_FILE)
    assert list(policy.rules) == list(RULES) or set(policy.rules) == set(RULES)
    assert policy.rules["v1-length-limit"].severity is Severity.WARNING
    assert policy.rules["install-fails-loudly"].severity is Severity.WARNING
    assert policy.rules["v1-length-limit"].params["max-tokens"] == 32768
    for settings in policy.rules.values():
        assert len(settings.reason) > 40 and "\n" not in settings.reason


def test_the_bundled_policy_keeps_the_files_order_and_joins_each_reason_on_one_line() -> None:
    policy = load_policy(POLICY_FILE)
    assert list(policy.rules) == ["no-triton-kernels", "keep-pytorch-fallbacks", "v2-needs-fallback",
                                  "v1-length-limit", "python-3.10", "install-fails-loudly"]
    assert policy.reason("v2-needs-fallback") == V2_REASON
    assert policy.rules["v2-needs-fallback"] == Settings("v2-needs-fallback", Severity.ERROR, V2_REASON, {})
    assert policy.path == POLICY_FILE


def test_params_the_policy_leaves_out_keep_their_defaults(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(edited_policy('params = { max-tokens = 32768, threshold-attribute = "_PYTORCH_DECODE_THRESHOLD" }',
                                  "params = { max-tokens = 65536 }"))
    assert load_policy(path).rules["v1-length-limit"].params == {
        "max-tokens": 65536, "threshold-attribute": "_PYTORCH_DECODE_THRESHOLD"}


def _error(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "policy.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(PatchSetError) as raised:
        load_policy(path)
    return str(raised.value).replace(f"{path}: ", "POLICY: ", 1)


@pytest.mark.parametrize("text, message", [
    (POLICY_TEXT.replace("[[rules]]", "[[rules]", 1), "POLICY: not valid TOML: "),
    ("rulez = 1\n" + POLICY_TEXT, "POLICY: unknown key 'rulez'; did you mean 'rules'?"),
    ("owner = 'platform team'\n" + POLICY_TEXT, "POLICY: unknown key 'owner'"),
    ('rules = "all of them"\n', "POLICY: 'rules' must be an array of tables ([[rules]])"),
    ('rules = ["no-triton-kernels"]\n', "POLICY: 'rules' must be an array of tables ([[rules]])"),
    (edited_policy('id = "keep-pytorch-fallbacks"\n', 'id = "  "\n'), "POLICY: 'rules[2].id' must be a non-empty string"),
    (edited_policy('id = "keep-pytorch-fallbacks"\n', ""), "POLICY: 'rules[2].id' must be a non-empty string"),
    (edited_policy('id = "keep-pytorch-fallbacks"\nseverity = "error"\n', 'id = "keep-pytorch-fallbacks"\nseverity = 2\n'),
     "POLICY: 'rules[2].severity' must be a non-empty string"),
    (edited_policy(PYTHON_RULE + 'reason = """', PYTHON_RULE + 'colour = "red"\nreason = """'),
     "POLICY: unknown key 'rules[5].colour'"),
    (edited_policy(PYTHON_RULE, '[[rules]]\nid = "gpu-melts"\nseverity = "error"\n'), "POLICY: 'rules[5]': no rule 'gpu-melts'"),
    (edited_policy(PYTHON_RULE, '[[rules]]\nid = "python-3.10"\nseverity = "fatal"\n'),
     "POLICY: 'rules[5].severity' must be one of error, warning, not 'fatal'"),
    (edited_policy(PYTHON_RULE, PYTHON_RULE + "params = 3\n"), "POLICY: 'rules[5].params' must be a table"),
    (edited_policy(PYTHON_RULE, PYTHON_RULE + "params = { target = 3.10 }\n"),
     "POLICY: rule 'python-3.10' has no parameter 'target' (it has none)"),
    (edited_policy("max-tokens = 32768, ", "max-tokens = 32768, colour = 1, "),
     "POLICY: rule 'v1-length-limit' has no parameter 'colour' (it has: max-tokens, threshold-attribute)"),
    (edited_policy("max-tokens = 32768", "max-tokens = 32768.0"),
     "POLICY: 'rules[4].params.max-tokens' must be a int, not 32768.0"),
    (edited_policy(PYTHON_RULE, '[[rules]]\nid = "install-fails-loudly"\nseverity = "error"\n'),
     "POLICY: rule 'install-fails-loudly' is declared twice"),
])
def test_a_hand_edited_policy_is_refused_with_what_and_where(tmp_path: Path, text: str, message: str) -> None:
    error = _error(tmp_path, text)
    if message.endswith(": "):
        assert error.startswith(message) and "line" in error
    else:
        assert error == message


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
def test_a_policy_error_names_the_file_and_the_rule_or_key_meant(tmp_path: Path, edit: str, new: str, message: str) -> None:
    with pytest.raises(PatchSetError) as error:
        load_policy(write_policy(tmp_path, edit, new))
    assert message in str(error.value)
    assert str(tmp_path / "policy.toml") in str(error.value)


def test_policy_must_declare_every_rule(tmp_path: Path) -> None:
    text = POLICY_FILE.read_text()
    start = text.index('[[rules]]\nid = "python-3.10"')
    end = text.index("[[rules]]", start + 1)
    path = tmp_path / "policy.toml"
    path.write_text(text[:start] + text[end:])
    with pytest.raises(PatchSetError, match="rule 'python-3.10' is not declared"):
        load_policy(path)


def test_a_rule_left_out_says_how_to_weaken_it_instead(tmp_path: Path) -> None:
    start = POLICY_TEXT.index('[[rules]]\nid = "v2-needs-fallback"')
    end = POLICY_TEXT.index("[[rules]]", start + 1)
    assert _error(tmp_path, POLICY_TEXT[:start] + POLICY_TEXT[end:]) == (
        "POLICY: rule 'v2-needs-fallback' is not declared (declare every rule with its severity and reason; "
        'weaken one with severity = "warning")')


def test_a_policy_of_comments_only_asks_for_the_first_rule(tmp_path: Path) -> None:
    comments = "".join(line + "\n" for line in POLICY_TEXT.splitlines() if line.startswith("#"))
    assert _error(tmp_path, comments) == (
        "POLICY: rule 'python-3.10' is not declared (declare every rule with its severity and reason; "
        'weaken one with severity = "warning")')


def test_a_missing_or_undecodable_policy_says_so(tmp_path: Path) -> None:
    assert _error(tmp_path, POLICY_TEXT.encode("utf-16")) == "POLICY: not UTF-8 text"
    missing = tmp_path / "nowhere" / "policy.toml"
    with pytest.raises(PatchSetError) as raised:
        load_policy(missing)
    assert str(raised.value) == f"{missing}: no policy file (the safety rules are declared there)"


def test_a_patch_set_without_its_own_policy_gets_the_bundled_one(tmp_path: Path) -> None:
    assert policy_path(tmp_path) == POLICY_FILE
    (tmp_path / "policy.toml").write_text(POLICY_TEXT)
    assert policy_path(tmp_path) == tmp_path / "policy.toml"
