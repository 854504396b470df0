"""What runs out is bad input or a machine to enlarge, not a bug: exit 2 with one line saying what and what to do.

Memory, the stack, file descriptors and disk space run out for real here
wherever a test can make them: a child process under ``setrlimit`` (memory,
open files) or with a lowered recursion limit (the stack). A full disk
cannot be made in a test without a small file system to mount, so it is
injected where the writer and the tar reader meet the operating system.
Exit 3 stays for bugs.
"""

from __future__ import annotations

import errno
import io
import random
import resource
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_hostile_inputs import one_error_line, run_patcher, vendor_tree
from tests.fixtures_vendor import VENDOR_ZIP

MEMORY = 600 << 20  # address space: the fixture's check and apply run in it; a 12 MB module's parse does not


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def with_big_module(tmp_path: Path) -> Path:
    """The vendor tree with a 12 MB shipped module (under the 16 MiB patcher parses): its ast is gigabytes."""
    tree = vendor_tree(tmp_path)
    rng = random.Random(1)
    lines = (f"v{rng.randrange(10**9)} = [{rng.randrange(10**6)}, 'x{rng.randrange(10**6)}']\n"
             for _ in range(330_000))
    (tree / "qwen3_6_scripts" / "reasoning" / "big.py").write_text("".join(lines))
    return tree


def test_running_out_of_memory_is_exit_2_with_one_line(tmp_path: Path) -> None:
    output = tmp_path / "out.tar.gz"
    control = run_patcher("apply", vendor_tree(tmp_path / "control"), "-o", output, preexec=limit_memory)
    assert control.returncode == 0, control.stderr  # the same limit is enough for the vendor's own tree
    output.unlink()
    tree = with_big_module(tmp_path)
    for command in (("check", tree), ("apply", tree, "-o", output)):
        result = run_patcher(*command, preexec=limit_memory)
        assert result.returncode == 2, result.stderr
        line = one_error_line(result)
        assert f"patcher {command[0]}: out of memory (the input may be too large or hostile; " \
               "give the process more memory, or check the input, and run again)" in line
    assert not output.exists()


def limit_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (12, 12))


def test_running_out_of_file_descriptors_is_exit_2_with_one_line(tmp_path: Path) -> None:
    # With 12 descriptors a diff runs, but GitPython (for --base) cannot start its
    # git processes: it reports EMFILE as an ImportError, which was exit 3.
    from tests.fixtures_patches import commit_all, copy_patch_set, git

    patches = copy_patch_set(tmp_path / "team")
    git(tmp_path / "team", "init", "-q")
    commit_all(tmp_path / "team", "the patch set")
    control = run_patcher("diff", "--patches", patches, VENDOR_ZIP, preexec=limit_open_files)
    assert control.returncode == 0, control.stderr
    result = run_patcher("diff", "--base", "HEAD", "--patches", patches, VENDOR_ZIP, preexec=limit_open_files)
    assert result.returncode == 2, result.stderr
    assert one_error_line(result).endswith(
        ": too many open files, the limit being 12 (raise the limit, e.g. 'ulimit -n 4096', and run again)")


def test_running_out_of_stack_is_exit_2_with_one_line() -> None:
    # The child's recursion limit is lowered after import: the check's own calls exhaust it.
    result = run_patcher("check", VENDOR_ZIP, python=("from patcher.cli import main as _m",
                                                      "sys.setrecursionlimit(80)"))
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == ("error: patcher check: the input nests too deeply to process "
                                      "(maximum recursion depth exceeded; --verbose shows where: simplify that input)")


def test_a_full_disk_while_writing_leaves_no_output_and_no_temporary(tmp_path: Path, cli: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from patcher.archive import writer

    def fill_the_disk(out: Any, *args: Any, **kwargs: Any) -> Any:
        out.write(b"\0" * 4096)  # part of the archive is on disk when the device fills
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer, "write_tar", fill_the_disk)
    folder = tmp_path / "out"
    folder.mkdir()
    result = cli("apply", VENDOR_ZIP, "-o", folder / "ctx.tar.gz")
    assert result.exit_code == 2, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {folder / 'ctx.tar.gz'}: disk full while writing ctx.tar.gz (free space and retry)"]
    assert list(folder.iterdir()) == []


def test_a_full_disk_while_inflating_a_build_context_says_so(tmp_path: Path, cli: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from patcher.archive import tar_source

    context = tmp_path / "ctx.tar.gz"
    assert cli("apply", VENDOR_ZIP, "-o", context).exit_code == 0

    class FullDisk(io.BytesIO):  # the temporary file a .tar.gz is inflated into, on a full disk
        def write(self, data: Any) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tar_source, "temporary_file", FullDisk)  # where TarSource looks it up
    result = cli("check", context)
    assert result.exit_code == 2, result.stderr
    line = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert line == [f"error: {tempfile.gettempdir()}: cannot hold the inflated tar: No space left on device "
                    "(free some space there, or point TMPDIR at a folder with more)"]
    assert "Traceback" not in result.stderr and "not a tar" not in result.stderr  # the machine ran out, not the input


def test_a_bug_is_still_exit_3(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import patcher.review.inspect  # the command imports what it calls from here when it runs

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("a bug")

    monkeypatch.setattr(patcher.review.inspect, "inspect_tree", broken)
    result = cli("inspect", VENDOR_ZIP)
    assert result.exit_code == 3
    assert result.stderr.strip().endswith("internal error: ValueError: a bug "
                                          "(a bug in patcher; rerun with --verbose for the traceback and report it)")
