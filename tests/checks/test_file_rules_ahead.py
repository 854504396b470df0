"""The file rules run ahead in a forked child: it judges exactly what the rules would judge here, and never outlives the run.

``FileRulesAhead`` hands the child the shipped files whose middle byte is
in the second half of their bytes; ``Pending`` waits only for those. Where
there is no ``fork`` (or another thread runs, whose locks a child would
inherit) the rules run here instead, and nothing is left open.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import patcher
from patcher.archive import open_source
from patcher.checks import Severity, Violation, check_tree, run_rules
from patcher.checks import runner
from patcher.checks.base import PythonSource
from patcher.checks.inputs import check_path
from patcher.checks.runner import FileRulesAhead, Pending, last_half
from patcher.shipping import plan_shipping

from tests.fixtures_rules import POLICY, readers
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP

# Files the child judges: a kernel import, a file that does not parse, a clean one.
FILES = {"kernel.py": b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n",
         "bad.py": b"def f(:\n    pass\n", "clean.py": b"x = 1\n"}
# Files in path order, the kernel import in CRLF; the file that does not parse also calls the kernel.
SORTED_FILES = {
    "bad.py": b"def f(:\n    context_attention_fwd()\n",
    "clean.py": b"x = 1\n",
    "kernel.py": b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\r\n",
}
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="the rules run ahead only where fork exists")


@needs_fork
def test_the_child_finds_what_the_rules_find_here() -> None:
    with FileRulesAhead(SORTED_FILES, POLICY) as ahead:
        found = ahead.results()
    assert set(found) == set(SORTED_FILES)
    here = run_rules(readers(SORTED_FILES), POLICY, use_cache=False)  # type: ignore[arg-type]
    assert sorted((v for entry in found.values() for v in entry[1]), key=repr) == sorted(here.violations, key=repr)
    assert [(v.rule, v.path) for v in here.violations] == [("python-3.10", "bad.py"), ("no-triton-kernels", "kernel.py")]
    assert run_rules(readers(SORTED_FILES), POLICY, use_cache=False, ahead=found) == here  # type: ignore[arg-type]


@needs_fork
def test_an_entry_is_used_only_for_the_bytes_it_judged() -> None:
    planted = Violation("python-3.10", Severity.ERROR, "clean.py", 1, "planted by the test")
    right = {"clean.py": (hashlib.sha256(SORTED_FILES["clean.py"]).hexdigest(), (planted,), True)}
    wrong = {"clean.py": (hashlib.sha256(b"other bytes").hexdigest(), (planted,), True)}
    files = readers({"clean.py": SORTED_FILES["clean.py"]})
    assert run_rules(files, POLICY, use_cache=False, ahead=right).violations == (planted,)  # type: ignore[arg-type]
    assert run_rules(files, POLICY, use_cache=False, ahead=wrong).violations == ()  # type: ignore[arg-type]


@needs_fork
def test_leaving_early_ends_the_child() -> None:
    with FileRulesAhead(SORTED_FILES, POLICY) as ahead:
        pid = ahead._pid
    assert pid is not None
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # already reaped: no child left behind


@needs_fork
def test_check_with_the_child_reports_what_it_reports_without() -> None:
    with_child = check_path(VENDOR_ZIP, POLICY, targets=[SHIPPED])
    with open_source(VENDOR_ZIP) as tree:
        plan = plan_shipping(tree)
        alone = check_tree(tree, plan, POLICY, targets=[plan.shipped_copy(SHIPPED)], use_cache=False)
    assert with_child.violations == alone.violations and with_child.checked == alone.checked
    assert with_child.violations  # the fixture ships code the rules flag: the comparison means something


def test_the_second_half_of_the_shipped_files_is_judged_in_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = runner._check_file

    def recording(source: PythonSource, rules):  # type: ignore[no-untyped-def]
        parsed.append(source.path)  # the child's calls land in the child's copy of this list
        return real(source, rules)

    monkeypatch.setattr(runner, "_check_file", recording)
    with open_source(VENDOR_ZIP) as tree:
        files = {path: tree.read(path) for path in runner.shipped_python(plan_shipping(tree))}
    later = runner.last_half(files)
    assert later and len(later) < len(files)
    result = check_path(VENDOR_ZIP, POLICY, targets=[SHIPPED])
    assert result.checked == tuple(sorted(files))
    assert parsed == sorted(set(files) - set(later))
    rows = [(v.rule, v.severity.value, v.path, v.line) for v in result.violations]
    assert ("v2-needs-fallback", "note", SHIPPED, 253) in rows  # paged_attn.py is the child's


def test_the_child_says_which_files_it_could_not_read() -> None:
    with FileRulesAhead(FILES, POLICY) as ahead:
        found = ahead.results()
    assert {path: (len(entry[0]), [v.rule for v in entry[1]], entry[2]) for path, entry in found.items()} == {
        "kernel.py": (64, ["no-triton-kernels"], True), "bad.py": (64, ["python-3.10"], False),
        "clean.py": (64, [], True)}
    assert found["bad.py"][1][0].path == "bad.py"


def test_the_childs_share_is_judged_as_run_rules_judges_a_file() -> None:
    # What the child runs for each file, called here: what runs in the child is invisible to this process.
    rules = runner._file_rules(POLICY)
    found, readable = runner._judged("bad.py", FILES["bad.py"], rules)
    assert type(found) is tuple and readable is False
    assert [(v.rule, v.path, v.line) for v in found] == [("python-3.10", "bad.py", 1)]
    found, readable = runner._judged("kernel.py", FILES["kernel.py"], rules)
    assert [(v.rule, v.path, v.line) for v in found] == [("no-triton-kernels", "kernel.py", 1)] and readable is True


def test_the_second_half_of_the_bytes_goes_to_the_child() -> None:
    files = {"a.py": b"1" * 10, "b.py": b"2" * 10, "c.py": b"3" * 30, "d.py": b"4"}
    assert list(last_half(files)) == ["c.py", "d.py"]  # c.py's middle byte (35) is past half of 41
    assert last_half({}) == {}


@pytest.mark.parametrize("sizes, kept", [
    ({"a.py": 10}, ["a.py"]),
    ({"a.py": 2, "b.py": 2}, ["b.py"]),
    ({"a.py": 2, "b.py": 2, "c.py": 2}, ["b.py", "c.py"]),
    ({"a.py": 1, "b.py": 8, "c.py": 1}, ["b.py", "c.py"]),
    ({"a.py": 6, "b.py": 1, "c.py": 1, "d.py": 1, "e.py": 1}, ["b.py", "c.py", "d.py", "e.py"]),
    ({"c.py": 30, "a.py": 10, "b.py": 10, "d.py": 1}, ["c.py", "d.py"]),
    ({"a.py": 8, "b.py": 2, "c.py": 10}, ["c.py"]),  # b.py's middle (9) is short of half of 20
])
def test_the_child_gets_the_files_whose_middle_byte_is_in_the_second_half(sizes: dict[str, int],
                                                                          kept: list[str]) -> None:
    files = {path: b"#" * size for path, size in sizes.items()}
    half = last_half(files)
    assert list(half) == kept
    assert all(half[path] is files[path] for path in kept)


@needs_fork
def test_pending_waits_only_for_the_childs_paths() -> None:
    with FileRulesAhead({"kernel.py": SORTED_FILES["kernel.py"]}, POLICY) as ahead:
        pending = Pending(ahead, ["kernel.py"])
        assert pending.get("clean.py") is None and ahead._pid is not None  # not waited for
        assert [v.rule for v in pending["kernel.py"][1]] == ["no-triton-kernels"]
        assert ahead._pid is None  # waited for now


def test_pending_lists_its_paths_and_refuses_others_by_name() -> None:
    with FileRulesAhead({}, POLICY) as ahead:
        pending = Pending(ahead, ["b.py", "a.py", "b.py"])
        assert list(pending) == ["a.py", "b.py"] and len(pending) == 2
        with pytest.raises(KeyError, match="c.py"):
            pending["c.py"]


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files through /proc")
def test_without_a_child_the_rules_run_here_and_nothing_is_left_open(monkeypatch: pytest.MonkeyPatch) -> None:
    opened = _open_fds()
    with FileRulesAhead({}, POLICY) as nothing:
        assert nothing.results() == {}

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with FileRulesAhead(FILES, POLICY) as failed:
        assert failed.results() == {}
    assert _open_fds() == opened
    monkeypatch.delattr(os, "fork")  # e.g. Windows
    with FileRulesAhead(FILES, POLICY) as missing:
        assert missing.results() == {}


def test_no_child_is_forked_while_another_thread_runs() -> None:
    # A forked child would inherit a lock the other thread may hold.
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        with FileRulesAhead(FILES, POLICY) as ahead:
            assert ahead._pid is None and ahead.results() == {}
    finally:
        release.set()
        other.join()
    with FileRulesAhead(FILES, POLICY) as alone:
        assert alone._pid is not None and set(alone.results()) == set(FILES)


def test_patcher_check_in_its_own_process_reports_and_exits_once() -> None:
    # The forked child must end inside the run: the report comes from the process that was started.
    # (It runs the patcher under test, from wherever this process imported it, in this process's folder.)
    done = subprocess.run([sys.executable, "-m", "patcher", "check", str(VENDOR_ZIP), "--patches", str(PATCHES)],
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(patcher.__file__).parent.parent)})
    assert done.returncode == 0, done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("note: ")] == [
        f"note: {SHIPPED}:253: v2-needs-fallback: ops.paged_attention_v2 at line 253 cannot run: "
        "`use_v1` is always True here (line 219)"]
    assert done.stderr == f"{VENDOR_ZIP}: passes: 0 error(s), 1 warning(s), 0 allowed, 1 note(s), in 8 Python file(s) checked\n"
