"""Running the policy over shipped files: the result's verdicts, the tree rules' word index, and the forked child.

Written against the survivors of a mutation run of ``patcher/checks/runner.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import patcher
from patcher.checks import Severity, Violation, check_tree, load_policy, run_rules
from patcher.checks import runner
from patcher.checks.examples import MemoryTree
from patcher.checks.install_fails_loudly import EXAMPLE_FILES, EXAMPLE_SCRIPT, EXAMPLE_TARGET
from patcher.checks.runner import CheckResult, FileRulesAhead, Pending, last_half, shipped_python
from patcher.shipping import plan_shipping

from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_ZIP

POLICY = load_policy(PATCHES / "policy.toml")
KERNEL_IMPORT = b"from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
INSTALL = "set -e\ncp ./paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/paged_attn.py\n"
FILES = {"kernel.py": KERNEL_IMPORT, "bad.py": b"def f(:\n    pass\n", "clean.py": b"x = 1\n"}


def _readers(files: dict[str, bytes]) -> list[tuple[str, object]]:
    return [(path, (lambda data=data: data)) for path, data in files.items()]


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
    result = run_rules(_readers(files), POLICY, use_cache=False)  # type: ignore[arg-type]
    assert result.checked == ("z.py", "a.py", "m.py")
    assert [(v.path, v.line, v.rule) for v in result.violations] == [
        ("a.py", 2, "python-3.10"), ("m.py", 2, "no-triton-kernels"), ("z.py", 1, "no-triton-kernels")]


def test_only_shipped_python_files_are_read() -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL, "qwen3_6_scripts/notes.txt": "python notes\n",
                       "unshipped.py": KERNEL_IMPORT.decode()}, executable=[EXAMPLE_SCRIPT])
    assert shipped_python(plan_shipping(tree)) == ["qwen3_6_scripts/other.py", EXAMPLE_TARGET]


@pytest.mark.parametrize("kernels", [
    "import triton\n\n@triton.jit\ndef _fwd_kernel(x):\n    pass\n",
    # Spelled in full-width letters that Python folds to `triton`: the bytes never hold the word.
    "# Kernels (résumé of the vendor's notes)\nimport \uff54riton\n\n@\uff54riton.jit\ndef _fwd_kernel(x):\n    pass\n",
])
def test_a_tree_rule_reads_every_file_that_can_hold_its_word(kernels: str) -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL, "qwen3_6_scripts/kernels.py": kernels,
                       EXAMPLE_TARGET: "from kernels import _fwd_kernel\n"}, executable=[EXAMPLE_SCRIPT])
    result = check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    imports = [(v.path, v.line, v.message) for v in result.violations if v.path == EXAMPLE_TARGET]
    assert imports == [(EXAMPLE_TARGET, 1, "imports kernels (qwen3_6_scripts/kernels.py), "
                                           "which defines the Triton kernel _fwd_kernel")]


def test_changes_are_checked_instead_of_the_trees_files() -> None:
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL}, executable=[EXAMPLE_SCRIPT])
    plan = plan_shipping(tree)
    before = check_tree(tree, plan, POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    after = check_tree(tree, plan, POLICY, changes={EXAMPLE_TARGET: b"x = 1\n" + KERNEL_IMPORT},
                       targets=[EXAMPLE_TARGET], use_cache=False)
    assert before.violations == ()
    assert [(v.rule, v.path, v.line) for v in after.violations] == [("no-triton-kernels", EXAMPLE_TARGET, 2)]


def test_the_child_says_which_files_it_could_not_read() -> None:
    with FileRulesAhead(FILES, POLICY) as ahead:
        found = ahead.results()
    assert {path: (len(entry[0]), [v.rule for v in entry[1]], entry[2]) for path, entry in found.items()} == {
        "kernel.py": (64, ["no-triton-kernels"], True), "bad.py": (64, ["python-3.10"], False),
        "clean.py": (64, [], True)}
    assert found["bad.py"][1][0].path == "bad.py"


def test_the_childs_share_is_judged_as_run_rules_judges_a_file() -> None:
    # What the child runs for each file (in the child, so only a direct call shows it to mutmut).
    rules = runner._file_rules(POLICY)
    found, readable = runner._judged("bad.py", FILES["bad.py"], rules)
    assert type(found) is tuple and readable is False
    assert [(v.rule, v.path, v.line) for v in found] == [("python-3.10", "bad.py", 1)]
    found, readable = runner._judged("kernel.py", FILES["kernel.py"], rules)
    assert [(v.rule, v.path, v.line) for v in found] == [("no-triton-kernels", "kernel.py", 1)] and readable is True


def test_check_tree_caches_what_the_file_rules_find_unless_told_not_to(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    tree = MemoryTree({**EXAMPLE_FILES, EXAMPLE_SCRIPT: INSTALL}, executable=[EXAMPLE_SCRIPT])
    check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET], use_cache=False)
    assert not (tmp_path / "cache").exists()
    check_tree(tree, plan_shipping(tree), POLICY, targets=[EXAMPLE_TARGET])
    assert len(list((tmp_path / "cache" / "checks").iterdir())) == 2  # paged_attn.py and other.py differ


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


def test_pending_lists_its_paths_and_refuses_others_by_name() -> None:
    with FileRulesAhead({}, POLICY) as ahead:
        pending = Pending(ahead, ["b.py", "a.py", "b.py"])
        assert list(pending) == ["a.py", "b.py"] and len(pending) == 2
        with pytest.raises(KeyError, match="c.py"):
            pending["c.py"]


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
