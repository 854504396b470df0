"""The policy file and ``--allow``: every way a hand-edited policy.toml goes wrong, with the exact message.

Written against the survivors of a mutation run of ``patcher/checks/policy.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from patcher.checks import Severity, load_policy, parse_allowed, policy_path
from patcher.checks.base import Settings
from patcher.checks.policy import Policy, canonical
from patcher.errors import PatcherError, PatchSetError

from tests.fixtures_vendor import PATCHES

POLICY = PATCHES / "policy.toml"
TEXT = POLICY.read_text()
V2_REASON = ("the BI-V100 build has no native V2 decode kernel (ops.paged_attention_v2 raises "
             "NotImplementedError), so a V2 call with no way back to V1 fails every decode that reaches it")
PYTHON_RULE = '[[rules]]\nid = "python-3.10"\nseverity = "error"\n'


def _error(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "policy.toml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    with pytest.raises(PatchSetError) as raised:
        load_policy(path)
    return str(raised.value).replace(f"{path}: ", "POLICY: ", 1)


def _edited(old: str, new: str) -> str:
    assert old in TEXT
    return TEXT.replace(old, new, 1)


def test_the_bundled_policy_keeps_the_files_order_and_joins_each_reason_on_one_line() -> None:
    policy = load_policy(POLICY)
    assert list(policy.rules) == ["no-triton-kernels", "keep-pytorch-fallbacks", "v2-needs-fallback",
                                  "v1-length-limit", "python-3.10", "install-fails-loudly"]
    assert policy.reason("v2-needs-fallback") == V2_REASON
    assert policy.rules["v2-needs-fallback"] == Settings("v2-needs-fallback", Severity.ERROR, V2_REASON, {})
    assert policy.path == POLICY


def test_params_the_policy_leaves_out_keep_their_defaults(tmp_path: Path) -> None:
    path = tmp_path / "policy.toml"
    path.write_text(_edited('params = { max-tokens = 32768, threshold-attribute = "_PYTORCH_DECODE_THRESHOLD" }',
                            "params = { max-tokens = 65536 }"))
    assert load_policy(path).rules["v1-length-limit"].params == {
        "max-tokens": 65536, "threshold-attribute": "_PYTORCH_DECODE_THRESHOLD"}


@pytest.mark.parametrize("text, message", [
    (TEXT.replace("[[rules]]", "[[rules]", 1), "POLICY: not valid TOML: "),
    ("rulez = 1\n" + TEXT, "POLICY: unknown key 'rulez'; did you mean 'rules'?"),
    ("owner = 'platform team'\n" + TEXT, "POLICY: unknown key 'owner'"),
    ('rules = "all of them"\n', "POLICY: 'rules' must be an array of tables ([[rules]])"),
    ('rules = ["no-triton-kernels"]\n', "POLICY: 'rules' must be an array of tables ([[rules]])"),
    (_edited('id = "keep-pytorch-fallbacks"\n', 'id = "  "\n'), "POLICY: 'rules[2].id' must be a non-empty string"),
    (_edited('id = "keep-pytorch-fallbacks"\n', ""), "POLICY: 'rules[2].id' must be a non-empty string"),
    (_edited('id = "keep-pytorch-fallbacks"\nseverity = "error"\n', 'id = "keep-pytorch-fallbacks"\nseverity = 2\n'),
     "POLICY: 'rules[2].severity' must be a non-empty string"),
    (_edited(PYTHON_RULE + 'reason = """', PYTHON_RULE + 'colour = "red"\nreason = """'),
     "POLICY: unknown key 'rules[5].colour'"),
    (_edited(PYTHON_RULE, '[[rules]]\nid = "gpu-melts"\nseverity = "error"\n'), "POLICY: 'rules[5]': no rule 'gpu-melts'"),
    (_edited(PYTHON_RULE, '[[rules]]\nid = "python-3.10"\nseverity = "fatal"\n'),
     "POLICY: 'rules[5].severity' must be one of error, warning, not 'fatal'"),
    (_edited(PYTHON_RULE, PYTHON_RULE + "params = 3\n"), "POLICY: 'rules[5].params' must be a table"),
    (_edited(PYTHON_RULE, PYTHON_RULE + "params = { target = 3.10 }\n"),
     "POLICY: rule 'python-3.10' has no parameter 'target' (it has none)"),
    (_edited("max-tokens = 32768, ", "max-tokens = 32768, colour = 1, "),
     "POLICY: rule 'v1-length-limit' has no parameter 'colour' (it has: max-tokens, threshold-attribute)"),
    (_edited("max-tokens = 32768", "max-tokens = 32768.0"),
     "POLICY: 'rules[4].params.max-tokens' must be a int, not 32768.0"),
    (_edited(PYTHON_RULE, '[[rules]]\nid = "install-fails-loudly"\nseverity = "error"\n'),
     "POLICY: rule 'install-fails-loudly' is declared twice"),
])
def test_a_hand_edited_policy_is_refused_with_what_and_where(tmp_path: Path, text: str, message: str) -> None:
    error = _error(tmp_path, text)
    if message.endswith(": "):
        assert error.startswith(message) and "line" in error
    else:
        assert error == message


def test_a_rule_left_out_says_how_to_weaken_it_instead(tmp_path: Path) -> None:
    start = TEXT.index('[[rules]]\nid = "v2-needs-fallback"')
    end = TEXT.index("[[rules]]", start + 1)
    assert _error(tmp_path, TEXT[:start] + TEXT[end:]) == (
        "POLICY: rule 'v2-needs-fallback' is not declared (declare every rule with its severity and reason; "
        'weaken one with severity = "warning")')


def test_a_policy_of_comments_only_asks_for_the_first_rule(tmp_path: Path) -> None:
    comments = "".join(line + "\n" for line in TEXT.splitlines() if line.startswith("#"))
    assert _error(tmp_path, comments) == (
        "POLICY: rule 'python-3.10' is not declared (declare every rule with its severity and reason; "
        'weaken one with severity = "warning")')


def test_a_missing_or_undecodable_policy_says_so(tmp_path: Path) -> None:
    assert _error(tmp_path, TEXT.encode("utf-16")) == "POLICY: not UTF-8 text"
    missing = tmp_path / "nowhere" / "policy.toml"
    with pytest.raises(PatchSetError) as raised:
        load_policy(missing)
    assert str(raised.value) == f"{missing}: no policy file (the safety rules are declared there)"


def test_a_patch_set_without_its_own_policy_gets_the_bundled_one(tmp_path: Path) -> None:
    assert policy_path(tmp_path) == POLICY
    (tmp_path / "policy.toml").write_text(TEXT)
    assert policy_path(tmp_path) == tmp_path / "policy.toml"


def test_a_former_id_names_the_current_rule_and_an_unknown_one_is_kept() -> None:
    assert canonical("no-triton-prefill") == "no-triton-kernels"
    assert canonical("python-3.10") == "python-3.10"
    assert canonical("gpu-melts") == "gpu-melts"


def test_allow_errors_say_what_to_do() -> None:
    policy = load_policy(POLICY)
    with pytest.raises(PatcherError) as counts:
        parse_allowed(["python-3.10", "v1-length-limit"], ["tested"], policy)
    assert str(counts.value) == ('2 --allow but 1 --reason (give each --allow RULE its own --reason '
                                 '"why this run may break it")')
    with pytest.raises(PatcherError) as unknown:
        parse_allowed(["gpu-melts"], ["x"], policy)
    assert str(unknown.value) == ("--allow gpu-melts: no such rule (rules: no-triton-kernels, keep-pytorch-fallbacks, "
                                  "v2-needs-fallback, v1-length-limit, python-3.10, install-fails-loudly)")
    with pytest.raises(PatcherError) as empty:
        parse_allowed(["no-triton-prefill"], ["\t\n"], policy)
    assert str(empty.value) == "--allow no-triton-kernels: the --reason is empty (say why this run may break the rule)"


def test_allow_suggests_only_the_rules_of_the_policy_in_use() -> None:
    settings = Settings("no-triton-kernels", Severity.ERROR, "hangs the card")
    only_triton = Policy(Path("<one rule>"), {"no-triton-kernels": settings})
    with pytest.raises(PatcherError) as raised:
        parse_allowed(["python-3.1"], ["x"], only_triton)
    assert str(raised.value) == "--allow python-3.1: no such rule (rules: no-triton-kernels)"
    with pytest.raises(PatcherError, match="no such rule; did you mean 'no-triton-prefill'"):
        parse_allowed(["no-triton-prefil"], ["x"], only_triton)
