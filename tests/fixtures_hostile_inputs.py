"""Builders of hostile vendor inputs: what a vendor drop, or a path given in its place, can hold.

A vendor zip (or folder, or build context) comes from elsewhere and nobody
reads it before ``patcher`` does. Each builder here writes under a test's
``tmp_path`` one such input, from the vendor-shaped fixture tree plus one
hostile change, and returns it; nothing outside ``tmp_path`` is written.
The shapes are those that crashed, hung or exhausted a process before the
guards: Python nested past what parsers survive (``deep_python``), and the
same depth hidden behind tokenizer tricks (``HIDDEN_DEPTH``); fifos,
devices, sockets and sparse files where a file is read; install scripts and
Dockerfiles whose following costs blow up; JSON and TOML nested past what
their parsers recurse through; ``.dockerignore`` patterns that backtrack.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Callable

from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_TREE

# -- Python nested too deep ------------------------------------------------------------------

# Each shape, N levels deep, as one statement. The guard counts brackets as three
# levels (the bracket, its element, the call it may be) and each operator as one.
SHAPES: dict[str, Callable[[int], str]] = {
    "brackets": lambda n: "x = " + "(" * n + "1" + ")" * n,  # what crashed libcst with SIGSEGV at 1,500
    "lists": lambda n: "x = " + "[" * n + "]" * n,
    "dicts": lambda n: "x = " + "{1: " * n + "1" + "}" * n,
    "unary minus": lambda n: "x = " + "-" * n + "1",
    "not": lambda n: "x = " + "not " * n + "y",
    "invert": lambda n: "x = " + "~" * n + "y",
    "attributes": lambda n: "x = a" + ".b" * n,
    "calls": lambda n: "x = f" + "()" * n,
    "subscripts": lambda n: "x = a" + "[0]" * n,
    "method chain": lambda n: "x = a" + ".f()" * n,
    "additions": lambda n: "x = a" + " + a" * n,
    "powers": lambda n: "x = a" + " ** a" * n,
    "lambdas": lambda n: "x = " + "lambda: " * n + "1",
    "conditionals": lambda n: "x = " + "a if b else " * n + "c",
    "parenthesised conditionals": lambda n: "x = " + "(a if b else " * n + "c" + ")" * n,
    "and chain": lambda n: "x = a" + " and a" * n,
    "adjacent strings": lambda n: "x = " + " ".join(["'a'"] * n),
    "f-string fields": lambda n: "x = " + "f'{" * n + "1" + "}'" * n,
    "walrus": lambda n: "x = " + "(y := " * n + "1" + ")" * n,
    "elif chain": lambda n: "if a:\n    pass\n" + "elif a:\n    pass\n" * n,
    "blocks": lambda n: "".join("    " * i + "if a:\n" for i in range(n)) + "    " * n + "pass",
}
# Shapes only libcst nests: ``ast`` joins adjacent strings into one constant.
LIBCST_ONLY = {"adjacent strings"}
# How many repetitions put each shape well past the 200 levels (and, for the
# first ones, past where a parser crashed), and well inside them.
DEEP = 1500
SHALLOW = 30


def deep_python(shape: str, count: int = DEEP, *, before: int = 3) -> str:
    """SHAPE repeated COUNT times as one statement, after BEFORE plain lines (so it starts on line BEFORE + 1)."""
    return "".join(f"v{i} = {i}\n" for i in range(before)) + SHAPES[shape](count) + "\n"


# Depth a scanner that read strings carelessly would miss: each hides 1,000 unary
# minus signs (or brackets) behind what only looks like a string or comment.
MINUSES = "- " * 1000
HIDDEN_DEPTH: dict[str, str] = {
    # Python 3.12 (and libcst) nests quotes inside f-string fields: the '}' ends no string
    "quotes nested in an f-string field": 'x = f"{"}"}" + ' + MINUSES + "1\n",
    # 'elif' ends in f, but it is no string prefix: the string is plain, what follows is code
    "a keyword ending in f before a quote": "if a:\n    pass\nelif\"{\" - " + MINUSES + "\"}\":\n    pass\n",
    # a number may end right before a keyword: '0x1for' is 0x1f or ...
    "keywords glued to numbers": "x = 0x1f" + "or 0x1f" * 1000 + "\n",
    "conditionals glued to numbers": "x = " + "1if y else " * 1000 + "2\n",
    # a raw f-string's backslash does not escape the brace: the field is code
    "a raw f-string field after a backslash": 'x = rf"\\{' + MINUSES + '1}"\n',
    # a format spec starts at the field's first ':', even one of ':=': the quotes there are text
    "a format spec that looks like a walrus": 'x = f"{y:=\'\'\'}"\nz = ' + MINUSES + "1\nw = '''\n",
    # a triple-quoted string read as three strings ("" "a" ...) would seem to close each bracket
    "brackets closed inside triple-quoted strings": "x = " + '("""a"b)c"d""", ' * 100 + "1" + ")" * 100 + "\n",
    # a comment holds what would close the brackets
    "closing brackets in a comment": "x = " + "(" * 80 + "1  # " + ")" * 80 + "\n" + ")" * 80 + "\n",
    # a line continuation carries the statement on
    "continued lines": "x = 1 \\\n" + "- \\\n" * 1000 + "1\n",
    # lone CR line endings still end lines
    "carriage returns only": "a = 1\rb = 2\rx = " + MINUSES + "1\r",
    # a lambda's commas separate its parameters, not the elements of a display
    "lambdas with parameters": "x = " + "lambda a, b: " * 300 + "1\n",
}


def vendor_tree(tmp_path: Path, name: str = "vendor") -> Path:
    """A writable copy of the vendor-shaped fixture tree (a folder input); return its top folder."""
    tree = tmp_path / name / VENDOR_TREE.name
    shutil.copytree(VENDOR_TREE, tree)
    return tree


def with_shipped_file(tmp_path: Path, source: str, relative: str = "qwen3_6_scripts/reasoning/deep.py") -> Path:
    """The vendor tree with SOURCE as a Python file the Dockerfile ships but no patch targets."""
    tree = vendor_tree(tmp_path)
    (tree / relative).write_text(source)
    return tree


def with_target_tail(tmp_path: Path, source: str) -> Path:
    """The vendor tree with SOURCE appended to the shipped ``paged_attn.py``, the patches' target."""
    tree = vendor_tree(tmp_path)
    target = tree / SHIPPED
    data = target.read_bytes()
    target.write_bytes(data + (b"" if data.endswith(b"\n") else b"\n") + source.encode())
    return tree


def target_line_count(tree: Path) -> int:
    """How many lines the shipped target has (so a tail appended by ``with_target_tail`` starts after it)."""
    return (tree / SHIPPED).read_bytes().count(b"\n")


# -- not regular files ------------------------------------------------------------------------


def fifo(path: Path) -> Path:
    """A named pipe at PATH: opening it for reading blocks until a writer comes, and none will."""
    os.mkfifo(path)
    return path


def unix_socket(path: Path) -> tuple[Path, socket.socket]:
    """A unix socket bound at PATH; keep the returned socket open for as long as the file must live."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    here = os.getcwd()
    os.chdir(path.parent)  # bound by its short name: a socket's whole path must fit in 108 bytes
    try:
        server.bind(path.name)
    finally:
        os.chdir(here)
    return path, server


def sparse_file(path: Path, size: int) -> Path:
    """A file claiming SIZE bytes that holds no data on disk (a hole): cheap to make, huge to read."""
    with open(path, "wb") as out:
        out.truncate(size)
    return path


# -- install scripts and Dockerfiles ------------------------------------------------------------


def _patch_ops() -> str:
    return (VENDOR_TREE / "qwen3_6_scripts" / "patch_ops.sh").read_text()


# What each made cost before it had a bound: a line of the script is named in the refusal.
HOSTILE_SCRIPTS: dict[str, Callable[[], str]] = {
    "a variable doubled forty times": lambda: "A=x\n" + "A=$A$A\n" * 40 + _patch_ops(),  # MemoryError
    "six nested loops of thirty values": lambda: "".join(
        f"for v{i} in {' '.join(map(str, range(30)))}; do\n" for i in range(6))
        + "cp ./paged_attn.py /x/$v0\n" + "done\n" * 6 + _patch_ops(),  # 729 million commands
    "spaces after a cd substitution": lambda: "echo $(cd " + " " * 200_000 + "\n" + _patch_ops(),  # cubic regex
    "a 5 MB line": lambda: "cp ./paged_attn.py " + "a" * 5_000_000 + "\n" + _patch_ops(),
    "200,000 continued lines": lambda: "cp ./paged_attn.py \\\n" * 200_000 + "/x\n" + _patch_ops(),
    "an 8 MB script": lambda: _patch_ops() + "echo hello world\n" * 500_000,
    "loops nested 40 deep": lambda: "for a in 1; do\n" * 40 + "done\n" * 40 + _patch_ops(),
    # A long name in arithmetic, read from each of its letters, is quadratic: hours.
    "a 400,000-letter name in arithmetic": lambda: (": $((" + "a" * 400_000 + " + 1))\n"
                                                    ": $((" + "b" * 400_000 + "++ + 1))\n" + _patch_ops()),
}
# The same kinds just inside each bound: followed, in bounded time.
BOUNDED_SCRIPTS: dict[str, Callable[[], str]] = {
    "long lines of spaces after cd": lambda: ("echo $(cd " + " " * 60_000 + "\n") * 16 + _patch_ops(),
    "long lines": lambda: ("cp ./paged_attn.py " + "a" * 60_000 + "\n") * 16 + _patch_ops(),
    "nested defaults": lambda: ("cp ./paged_attn.py " + "${A:-" * 2_500 + "x" + "}" * 2_500 + "\n") * 60
    + _patch_ops(),
    "a 1 MB script": lambda: _patch_ops() + "echo hello world\n" * 60_000,
}


def _dockerfile() -> str:
    return (VENDOR_TREE / "Dockerfile").read_text().rstrip("\r\n") + "\n"


HOSTILE_DOCKERFILES: dict[str, Callable[[], str]] = {
    "a COPY array nested 100,000 deep": lambda: _dockerfile() + "COPY " + "[" * 100_000 + "]" * 100_000 + " /x\n",
    "200,000 continued lines": lambda: _dockerfile() + "RUN echo \\\n" * 200_000 + "hi\n",
}


def with_script(tmp_path: Path, text: str) -> Path:
    """The vendor tree whose install script (run by the Dockerfile) is TEXT."""
    tree = vendor_tree(tmp_path)
    (tree / "qwen3_6_scripts" / "patch_ops.sh").write_text(text)
    return tree


def with_dockerfile(tmp_path: Path, text: str) -> Path:
    """The vendor tree whose Dockerfile is TEXT."""
    tree = vendor_tree(tmp_path)
    (tree / "Dockerfile").write_text(text)
    return tree


def with_dockerignore(tmp_path: Path, text: str) -> Path:
    """The vendor tree with TEXT as its .dockerignore."""
    tree = vendor_tree(tmp_path)
    (tree / ".dockerignore").write_text(text)
    return tree


# Eight stars against a 60-letter name took 76 s as a regular expression.
BACKTRACKING_PATTERN = "*a" * 30 + "*b"
LONG_NAME = "a" * 200


def with_long_names(tmp_path: Path, pattern: str = BACKTRACKING_PATTERN) -> Path:
    """The vendor tree with files whose long names a backtracking .dockerignore PATTERN cannot match."""
    tree = with_dockerignore(tmp_path, pattern + "\n")
    folder = tree / "qwen3_6_scripts" / LONG_NAME
    folder.mkdir()
    for index in range(5):
        (folder / f"{LONG_NAME}{index}").write_text("x\n")
    return tree


# -- JSON and TOML nested too deep --------------------------------------------------------------

DEEP_JSON_LINE = 3


def deep_manifest(tmp_path: Path, depth: int = 100_000) -> Path:
    """The vendor tree with a ``patcher-manifest.json`` whose allowed_rules nest DEPTH arrays deep on line 3."""
    tree = vendor_tree(tmp_path)
    text = '{\n  "tool": "patcher",\n  "allowed_rules": ' + "[" * depth + "]" * depth + "\n}\n"
    (tree / "patcher-manifest.json").write_text(text)
    return tree


def deep_patcher_toml(tmp_path: Path, depth: int = 100_000) -> Path:
    """The vendor tree with a ``patcher.toml`` holding an array DEPTH deep on line 3."""
    tree = vendor_tree(tmp_path)
    text = "# mirrors\n[verify-sync]\nx = " + "[" * depth + "]" * depth + "\n"
    (tree / "patcher.toml").write_text(text)
    return tree


# -- running patcher on them ----------------------------------------------------------------------

# A command that went back to hanging on one of these inputs fails the test at
# this limit, never passes it; the commands finish in a few seconds.
HANG_LIMIT = 300


def run_patcher(*args: object, cwd: Path | None = None, preexec: Callable[[], None] | None = None,
                python: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``python -m patcher ARGS`` in a child process (a crash there cannot take the test run with it).

    PYTHON, if given, is Python code run before the command in the child
    (``-c``), with ``main`` imported from ``patcher.cli``.
    """
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [str(a) for a in args]
    if python:
        code = "\n".join(("import sys", *python, "from patcher.cli import main",
                          f"main({argv!r}, prog_name='patcher')"))
        command = [sys.executable, "-c", code]
    else:
        command = [sys.executable, "-m", "patcher", *argv]
    try:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=HANG_LIMIT,
                              preexec_fn=preexec)
    except subprocess.TimeoutExpired as timeout:
        raise AssertionError(f"patcher {' '.join(argv)} did not finish in {HANG_LIMIT} s: it hangs") from timeout


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line a refused run prints, after checking it printed no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]
