"""Only regular files are read: a fifo, device, socket or folder where a file is read is refused at once, by name.

Opening a fifo for reading blocks until a writer comes; /dev/zero never
ends; a sparse file claims gigabytes it holds no data for. Each used to
hang a command or eat memory. Every command runs in a child process here:
one that went back to blocking fails at a generous limit instead of
hanging the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from patcher.archive import DirSource, open_source
from patcher.archive.limits import Limits
from patcher.errors import BadArchive
from tests.fixtures_hostile_inputs import (
    HANG_LIMIT,
    fifo,
    one_error_line,
    run_patcher,
    sparse_file,
    unix_socket,
    vendor_tree,
)
from tests.fixtures_vendor import ROOT, VENDOR_ZIP

NOT_A_FILE = "(pass the vendor .zip, a build context, or an unpacked folder)"
# Every command that takes a vendor input, with the input last.
COMMANDS = {
    "apply": ("apply", "-o", "OUT"),
    "check": ("check",),
    "diff": ("diff",),
    "inspect": ("inspect",),
    "verify-sync": ("verify-sync",),
    "upgrade (as NEW)": ("upgrade", VENDOR_ZIP),
    "explain --in": ("explain", "three-tier-decode", "--in"),
}


def command_on(name: str, tmp_path: Path, path: Path) -> list[object]:
    return [tmp_path / "out.tar.gz" if part == "OUT" else part for part in COMMANDS[name]] + [path]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_fifo_as_the_input_is_refused_without_waiting_for_a_writer(tmp_path: Path, command: str) -> None:
    pipe = fifo(tmp_path / "drop.zip")
    result = run_patcher(*command_on(command, tmp_path, pipe))
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == f"error: {pipe}: is a fifo (named pipe), not a regular file {NOT_A_FILE}"
    assert not (tmp_path / "out.tar.gz").exists()


@pytest.mark.parametrize("command", ["apply", "check", "upgrade (as NEW)"])
def test_a_character_device_as_the_input_is_refused_before_reading(tmp_path: Path, command: str) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero on this system")
    result = run_patcher(*command_on(command, tmp_path, Path("/dev/zero")))
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == f"error: /dev/zero: is a character device, not a regular file {NOT_A_FILE}"


def test_a_socket_as_the_input_is_refused(tmp_path: Path) -> None:
    path, server = unix_socket(tmp_path / "drop.zip")
    with server:
        result = run_patcher("inspect", path)
    assert result.returncode == 2
    assert one_error_line(result) == f"error: {path}: is a socket, not a regular file {NOT_A_FILE}"


def test_a_sparse_input_larger_than_the_limits_is_refused_before_reading(tmp_path: Path) -> None:
    limit = Limits().max_input_size
    path = sparse_file(tmp_path / "drop.zip", limit + 1)
    result = run_patcher("check", path)
    assert result.returncode == 2
    assert one_error_line(result) == (f"error: {path}: is {limit + 1} bytes, more than the limit of {limit} "
                                      "(if the input is trusted, raise the limit with --max-size)")


@pytest.mark.parametrize("name", ["deep.py", "context.tar.gz", "context.tar"])
def test_a_fifo_named_as_a_file_check_reads_whole_is_refused(tmp_path: Path, name: str) -> None:
    pipe = fifo(tmp_path / name)
    result = run_patcher("check", pipe)
    assert result.returncode == 2
    assert one_error_line(result) == f"error: {pipe}: is a fifo (named pipe), not a regular file {NOT_A_FILE}"


def test_a_fifo_as_the_sync_configuration_is_refused(tmp_path: Path) -> None:
    pipe = fifo(tmp_path / "patcher.toml")
    result = run_patcher("verify-sync", VENDOR_ZIP, "--config", pipe)
    assert result.returncode == 2
    assert one_error_line(result) == (f"error: {pipe}: is a fifo (named pipe), not a regular file "
                                      "(pass the patcher.toml file itself)")


# -- inside a folder input ------------------------------------------------------------------------


SPECIAL_IN_CONTEXT = {
    "fifo": "is a fifo (named pipe), not a regular file or folder",
    "socket": "is a socket, not a regular file or folder",
    "link to a fifo in the tree": "is a symbolic link to something that is not a regular file",
    "link to /dev/zero": "is a symbolic link pointing outside the tree",
}


@pytest.mark.parametrize("kind", sorted(SPECIAL_IN_CONTEXT))
def test_a_special_file_inside_the_build_context_is_named_and_refused(tmp_path: Path, kind: str) -> None:
    tree = vendor_tree(tmp_path)
    place = tree / "qwen3_6_scripts" / "patch_ops.sh"
    place.unlink()
    server = None
    if kind == "fifo":
        fifo(place)
    elif kind == "socket":
        _, server = unix_socket(place)
    elif kind == "link to a fifo in the tree":
        (tree / "qwen3_6_scripts" / "zz").mkdir()
        place.symlink_to(fifo(tree / "qwen3_6_scripts" / "zz" / "pipe"))
    else:
        place.symlink_to("/dev/zero")
    try:
        result = run_patcher("apply", tree, "-o", tmp_path / "out.tar.gz")
    finally:
        if server is not None:
            server.close()
    assert result.returncode == 2
    line = one_error_line(result)
    assert line.startswith(f"error: {tree}: 'qwen3_6_scripts/patch_ops.sh' {SPECIAL_IN_CONTEXT[kind]}")
    assert not (tmp_path / "out.tar.gz").exists()


def test_a_fifo_beside_the_build_context_is_never_read(tmp_path: Path) -> None:
    # The context is the folder holding the Dockerfile; what lies beside it is a workspace's.
    tree = vendor_tree(tmp_path)
    fifo(tree.parent / "notes.fifo")
    result = run_patcher("apply", tree.parent, "-o", tmp_path / "out.tar.gz")
    assert result.returncode == 0, result.stderr


def test_a_file_swapped_for_a_fifo_after_listing_is_refused_without_blocking(tmp_path: Path) -> None:
    tree = vendor_tree(tmp_path)
    script = "\n".join((
        "import os, sys",
        "from pathlib import Path",
        "from patcher.archive import DirSource",
        "from patcher.errors import BadArchive",
        f"tree = DirSource(Path({str(tree)!r}))",
        f"path = Path({str(tree)!r}) / 'qwen3_6_scripts' / 'patch_ops.sh'",
        "path.unlink()",
        "os.mkfifo(path)",
        "try:",
        "    tree.read('qwen3_6_scripts/patch_ops.sh')",
        "except BadArchive as error:",
        "    print(error)",
    ))
    result = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, PYTHONPATH=str(ROOT)),
                            capture_output=True, text=True, timeout=HANG_LIMIT)
    assert result.stdout.strip() == (f"{tree}: 'qwen3_6_scripts/patch_ops.sh' is a fifo (named pipe), "
                                     "not a regular file")


def test_a_file_grown_after_listing_is_read_as_far_as_it_was_listed(tmp_path: Path) -> None:
    tree = vendor_tree(tmp_path)
    source = DirSource(tree)
    path = tree / "qwen3_6_scripts" / "patch_ops.sh"
    listed = path.read_bytes()
    with open(path, "ab") as grow:
        grow.write(b"echo appended\n" * 1000)
    assert source.read("qwen3_6_scripts/patch_ops.sh") == listed


def test_a_folder_is_held_to_the_limits_a_zip_is(tmp_path: Path) -> None:
    tree = vendor_tree(tmp_path)
    sparse_file(tree / "qwen3_6_scripts" / "weights.bin", 3 << 30)
    with pytest.raises(BadArchive) as caught:
        with open_source(tree):
            pass
    assert str(caught.value) == (
        f"{tree}: its files hold more than {Limits().max_total_size} bytes in all "
        "(at 'qwen3_6_scripts/weights.bin') (if the folder is trusted, raise the limit with --max-size)")
    with pytest.raises(BadArchive, match="the folder holds more than 5 files"):
        DirSource(tree, Limits(max_members=5))


# -- build contexts (tar) given to check ------------------------------------------------------------


def tar_with(tmp_path: Path, members: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    path = tmp_path / "context.tar"
    with tarfile.open(path, "w") as archive:
        for info, data in members:
            import io

            archive.addfile(info, io.BytesIO(data) if data else None)
    return path


def file_member(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def test_a_fifo_member_of_a_build_context_is_refused(tmp_path: Path, cli: Any) -> None:
    pipe = tarfile.TarInfo("qwen3_6_scripts/pipe")
    pipe.type = tarfile.FIFOTYPE
    path = tar_with(tmp_path, [file_member("Dockerfile", b"FROM x\n"), (pipe, b"")])
    result = cli("check", path)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path.name}: ") and result.stderr.count("\n") == 1
    assert "is a fifo, not a regular file or folder" in result.stderr

