"""The file rules run ahead in a forked child judge exactly what the rules would judge here."""

from __future__ import annotations

import hashlib
import os

import pytest

from patcher.archive import open_source
from patcher.checks import Severity, Violation, check_tree, load_policy, run_rules
from patcher.checks.inputs import check_path
from patcher.checks.runner import FileRulesAhead, Pending, last_half
from patcher.shipping import plan_shipping

from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP

POLICY = PATCHES / "policy.toml"
FILES = {
    "kernel.py": b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n",
    "bad.py": b"def f(:\n    context_attention_fwd()\n",
    "clean.py": b"x = 1\n",
}
pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the rules run ahead only where fork exists")


def _readers(files: dict[str, bytes]) -> list[tuple[str, object]]:
    return [(path, (lambda data=data: data)) for path, data in sorted(files.items())]


def test_the_child_finds_what_the_rules_find_here() -> None:
    policy = load_policy(POLICY)
    with FileRulesAhead(FILES, policy) as ahead:
        found = ahead.results()
    assert set(found) == set(FILES)
    here = run_rules(_readers(FILES), policy, use_cache=False)  # type: ignore[arg-type]
    assert sorted((v for entry in found.values() for v in entry[1]), key=repr) == sorted(here.violations, key=repr)
    assert [(v.rule, v.path) for v in here.violations] == [("python-3.10", "bad.py"), ("no-triton-kernels", "kernel.py")]
    assert run_rules(_readers(FILES), policy, use_cache=False, ahead=found) == here  # type: ignore[arg-type]


def test_an_entry_is_used_only_for_the_bytes_it_judged() -> None:
    policy = load_policy(POLICY)
    planted = Violation("python-3.10", Severity.ERROR, "clean.py", 1, "planted by the test")
    right = {"clean.py": (hashlib.sha256(FILES["clean.py"]).hexdigest(), (planted,), True)}
    wrong = {"clean.py": (hashlib.sha256(b"other bytes").hexdigest(), (planted,), True)}
    files = _readers({"clean.py": FILES["clean.py"]})
    assert run_rules(files, policy, use_cache=False, ahead=right).violations == (planted,)  # type: ignore[arg-type]
    assert run_rules(files, policy, use_cache=False, ahead=wrong).violations == ()  # type: ignore[arg-type]


def test_leaving_early_ends_the_child() -> None:
    with FileRulesAhead(FILES, load_policy(POLICY)) as ahead:
        pid = ahead._pid
    assert pid is not None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no child left behind


def test_the_second_half_of_the_bytes_goes_to_the_child() -> None:
    files = {"a.py": b"1" * 10, "b.py": b"2" * 10, "c.py": b"3" * 30, "d.py": b"4"}
    assert list(last_half(files)) == ["c.py", "d.py"]  # c.py's middle byte (35) is past half of 41
    assert last_half({}) == {}


def test_pending_waits_only_for_the_childs_paths() -> None:
    policy = load_policy(POLICY)
    with FileRulesAhead({"kernel.py": FILES["kernel.py"]}, policy) as ahead:
        pending = Pending(ahead, ["kernel.py"])
        assert pending.get("clean.py") is None and ahead._pid is not None  # not waited for
        assert [v.rule for v in pending["kernel.py"][1]] == ["no-triton-kernels"]
        assert ahead._pid is None  # waited for now


def test_check_with_the_child_reports_what_it_reports_without() -> None:
    policy = load_policy(POLICY)
    with_child = check_path(VENDOR_ZIP, policy, targets=[SHIPPED])
    with open_source(VENDOR_ZIP) as tree:
        plan = plan_shipping(tree)
        alone = check_tree(tree, plan, policy, targets=[plan.shipped_copy(SHIPPED)], use_cache=False)
    assert with_child.violations == alone.violations and with_child.checked == alone.checked
    assert with_child.violations  # the fixture ships code the rules flag: the comparison means something
