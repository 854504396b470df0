"""``find`` over the part of the image the build made, as GNU find 4.9 walks it.

``find $VLLM -name __pycache__ -exec rm -rf {} +`` cleans stale bytecode:
it can only remove what is named ``__pycache__``, never the
``paged_attn.py`` the script copied beside it. Reading it as "could change
anything under $VLLM" made every file installed there depend on an unread
line. So a find line whose expression the reader can evaluate (names,
paths, types, depths, ``!``, ``-o``, ``-prune`` and parentheses) is run
over the paths the build knows under its roots: ``-delete`` and ``-exec``
act on each match. What the base image holds there the reader cannot
list; what a command run on those files writes (``-exec cp {} DEST``) is
noted, scoped to where it writes. What find prints is known only where
the whole tree is the build's and at most one path matches (find's order
is the file system's).
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Union

from .image_fs import ImageFS, under
from .shell_nodes import decimal
from .shell_words import _glob_regex

if TYPE_CHECKING:
    from .shell_interpreter import Shell
    from .shell_records import CommandContext

# Global options and tests that hold of every path, and the tests the reader evaluates (each with its operand).
_ALWAYS = frozenset({"-depth", "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race",
                     "-true", "-nowarn", "-warn"})
_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-type"})
_DEPTHS = frozenset({"-maxdepth", "-mindepth"})
_ACTIONS = frozenset({"-print", "-print0", "-delete", "-prune"})
_EXEC = frozenset({"-exec"})
_MAX_WORDS = 200  # the words of an expression the reader evaluates: real ones hold a dozen
_MAX_RUNS = 1_000  # the -exec commands one find may run for the reader to follow them


@dataclass(frozen=True)
class _Test:
    name: str  # -name, -path, -type, -true, -false, -prune, -print, -delete, -exec
    operand: str = ""
    command: tuple[str, ...] = ()  # -exec's words, '{}' among them
    batch: bool = False  # -exec ... +
    pattern: re.Pattern[str] | None = None  # -name, -path...: the operand as a regular expression, made once


@dataclass(frozen=True)
class _Not:
    inner: "_Node"


@dataclass(frozen=True)
class _Both:
    left: "_Node"
    right: "_Node"
    either: bool  # -o; else -a


_Node = Union[_Test, _Not, _Both]


@dataclass
class FindLine:
    """A find command line as find reads it."""

    roots: list[str]
    expression: _Node
    maxdepth: int | None = None
    mindepth: int = 0
    acts: bool = False  # the expression has an action of its own (else -print is implied)
    execs: list[_Test] = field(default_factory=list)


# GNU find reads -maxdepth and -mindepth as a C int: past it, "Numerical result out of range" (status 1).
_MAX_DEPTH = (1 << 31) - 1


class _Unread(Exception):
    """A part of the line the reader does not evaluate."""


class _Refused(_Unread):
    """A line find itself refuses (a test or -exec without its argument, an unclosed parenthesis): status 1."""


def _check_types(operand: str) -> None:
    """``-type LIST`` as GNU find 4.9 reads it: one letter of ``bcdpfls`` each, separated by commas, none twice
    (else find refuses the line, status 1); the reader evaluates ``f``, ``d`` and ``l``."""
    letters = operand.split(",")
    if "" in letters[:-1] or operand == "" or any(len(letter) > 1 for letter in letters) \
            or any(letter not in "bcdpfls" for letter in letters if letter) or len(set(letters)) < len(letters) \
            or letters[-1] == "":
        raise _Refused(f"find -type {operand}: find refuses that list of file types")
    if not set(letters) <= {"f", "d", "l"}:
        raise _Unread(f"find -type {operand}")


@dataclass(frozen=True)
class Unevaluated:
    reason: str
    refused: bool = False  # find refuses the line: it walks nothing and fails


def find_roots(args: list[str]) -> tuple[str | None, list[str], int]:
    """The start of a find line as GNU find reads it: the last of its -H/-L options (None: links are not followed),
    the paths it walks, and the index of the expression's first word.

    Before the paths come -P, -H, -L, -D LIST and -OLEVEL; a path is any word up to the first that starts with '-'
    (``-`` alone is a path) or is ``(`` or ``!`` alone: ``)`` and ``,`` there, and ``(x``, ``!x``, are paths too.
    """
    index, follows = 0, None
    while index < len(args) and (args[index] in ("-P", "-H", "-L", "-D") or re.fullmatch(r"-O[0-9]*", args[index])):
        if args[index] != "-D" and not args[index].startswith("-O"):
            follows = None if args[index] == "-P" else args[index]  # the last one counts
        index += 2 if args[index] == "-D" else 1
    roots = []
    while index < len(args) and not (args[index][:1] == "-" and len(args[index]) > 1) and args[index] not in ("(", "!"):
        roots.append(args[index])
        index += 1
    return follows, roots, index


def read_find(args: list[str]) -> FindLine | Unevaluated:
    """``args`` as find reads them, or why the reader does not evaluate them."""
    follows, roots, index = find_roots(args)
    if follows:
        return Unevaluated(f"find {follows} follows links")
    line = FindLine(roots or ["."], _Test("-true"))
    if len(args) - index > _MAX_WORDS:
        return Unevaluated(f"a find expression of more than {_MAX_WORDS} words")  # each nests the evaluation
    parser = _Parser(args[index:], line)
    try:
        line.expression = parser.expression() if parser.tokens else _Test("-true")
        if parser.at < len(parser.tokens):
            raise _Refused(f"find's '{parser.tokens[parser.at]}' where the expression ends")
    except _Unread as unread:
        return Unevaluated(str(unread), isinstance(unread, _Refused))
    if not line.acts:
        line.expression = _Both(line.expression, _Test("-print"), either=False)
    return line


class _Parser:
    def __init__(self, tokens: list[str], line: FindLine):
        self.tokens, self.at, self.line = tokens, 0, line

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise _Refused("a find expression that ends too soon (a test without its argument)")
        self.at += 1
        return token

    def expression(self) -> _Node:
        node = self.conjunction()
        while self.peek() in ("-o", "-or"):
            self.at += 1
            node = _Both(node, self.conjunction(), either=True)
        if self.peek() == ",":
            raise _Unread("find's ',' operator")
        return node

    def conjunction(self) -> _Node:
        node = self.unary()
        while self.peek() not in (None, "-o", "-or", ")", ","):
            if self.peek() in ("-a", "-and"):
                self.at += 1
            node = _Both(node, self.unary(), either=False)
        return node

    def unary(self) -> _Node:
        token = self.take()
        if token in ("!", "-not"):
            return _Not(self.unary())
        if token == "(":
            node = self.expression()
            if self.take() != ")":
                raise _Refused("an unclosed '(' in a find expression")
            return node
        if token in _ALWAYS:
            return _Test("-true")
        if token == "-false":
            return _Test("-false")
        if token in _DEPTHS:
            value = self.take()
            depth = decimal(value)  # ASCII digits (read up to 18 of them)
            if depth is None:
                raise _Unread(f"find {token} {value}")
            if depth > _MAX_DEPTH:
                raise _Refused(f"find {token} {value}: past what find takes ('Numerical result out of range')")
            if token == "-maxdepth":
                self.line.maxdepth = depth
            else:
                self.line.mindepth = depth
            return _Test("-true")
        if token in _TESTS:
            operand = self.take()
            if token == "-type":
                _check_types(operand)
            name = {"-wholename": "-path", "-iwholename": "-ipath"}.get(token, token)
            if name == "-type":
                return _Test(name, operand)
            flags = re.DOTALL | (re.IGNORECASE if name in ("-iname", "-ipath") else 0)
            return _Test(name, operand, pattern=re.compile(_glob_regex(operand, paths=False), flags))
        if token in _ACTIONS:
            self.line.acts = self.line.acts or token != "-prune"
            return _Test(token)
        if token in _EXEC:
            words = []
            while self.peek() not in (";", "+"):
                if self.peek() is None:
                    raise _Refused("find -exec without its ';' or '+'")
                words.append(self.take())
            end = self.take()
            if not words or end == "+" and words[-1] != "{}":
                raise _Refused("find -exec without a command, or its '+' not right after '{}'")
            test = _Test("-exec", command=tuple(words), batch=end == "+")
            self.line.acts = True
            self.line.execs.append(test)
            return test
        raise _Unread(f"find {token}")


@dataclass
class Walk:
    """What a find line matched among the paths the build knows, in the order the reader takes for find's."""

    printed: list[str] = field(default_factory=list)  # as find prints them
    deleted: list[str] = field(default_factory=list)  # image paths
    undeletable: list[str] = field(default_factory=list)  # as find prints them: '..' and './', which -delete fails
    runs: list[tuple[_Test, list[str]]] = field(default_factory=list)  # -exec and the printed paths it gets


def walk(line: FindLine, fs: ImageFS, root_paths: list[str]) -> Walk:
    """Evaluate ``line`` over every path ``fs`` knows below each root (``root_paths``: the roots as image paths).

    find -P does not walk through a link: what the reader shows at a link's own paths is not walked.
    """
    result = Walk()
    every = set(fs.files) | fs.others | fs.dirs | set(fs.links)
    known = sorted(every)
    for written, root in zip(line.roots, root_paths):
        pruned: set[str] = set()
        # A root of the base image's is the image's to match (see run_find); what the build put below it is not.
        for path in [root] * (root in every) + [p for p in known if p != root and under(p, root)]:
            # Not below a link (find -P shows the link, not what it leads to), nor below a pruned folder.
            if path != root and (root in pruned
                                 or any(folder in fs.links or folder in pruned for folder in _folders(path, root))):
                continue
            rest = path[len(root):].lstrip("/") if path != root else ""
            depth = rest.count("/") + 1 if rest else 0
            if line.maxdepth is not None and depth > line.maxdepth:
                continue
            shown = written if not rest else (written if written.endswith("/") else written + "/") + rest
            kind = "l" if path in fs.links else "d" if path in fs.dirs else "f"
            if depth >= line.mindepth:
                _evaluate(line.expression, shown, path, kind, result, pruned)
    return result


def _folders(path: str, root: str) -> list[str]:
    """The folders between ``root`` (not itself) and ``path`` (not itself)."""
    found = []
    folder = posixpath.dirname(path)
    while folder != root and len(folder) > len(root):
        found.append(folder)
        folder = posixpath.dirname(folder)
    return found


def _evaluate(node: _Node, shown: str, path: str, kind: str, result: Walk, pruned: set[str]) -> bool:
    if isinstance(node, _Not):
        return not _evaluate(node.inner, shown, path, kind, result, pruned)
    if isinstance(node, _Both):
        first = _evaluate(node.left, shown, path, kind, result, pruned)
        if first == node.either:
            return first
        return _evaluate(node.right, shown, path, kind, result, pruned)
    test = node.name
    if test in ("-true", "-print", "-print0"):
        if test != "-true":
            result.printed.append(shown)
        return True
    if test == "-false":
        return False
    if test == "-prune":
        if kind == "d":
            pruned.add(path)
        return True
    if test == "-delete":
        name = posixpath.basename(shown.rstrip("/"))
        if name == ".." or name == "." and shown != ".":
            result.undeletable.append(shown)  # GNU find 4.9: rmdir('..') and rmdir('./') fail, and so does find
        elif name != ".":  # find never removes '.' itself, and says nothing
            result.deleted.append(path)
        return True
    if test == "-exec":
        result.runs.append((node, [shown]))
        return True  # its status: the reader takes the command to succeed
    if test == "-type":
        return kind in node.operand.split(",")
    name = posixpath.basename(shown.rstrip("/")) or shown if test in ("-name", "-iname") else shown
    assert node.pattern is not None  # the parser makes one for every test but -type
    return node.pattern.fullmatch(name) is not None


# What -exec may run for the reader to follow it: commands it reads, each changing at most the paths on its line.
FIND_READS = frozenset({"echo", "printf", "true", "cat", "grep", "ls", "stat", "file", "test", "[", "head", "wc",
                        "md5sum", "sha256sum"})
FIND_CHANGES = frozenset({"rm", "touch", "cp", "mv", "ln", "install", "mkdir", "sed", "chmod", "chown", "chgrp",
                          "dos2unix"})


def run_find(shell: "Shell", argv: list[str], ctx: "CommandContext", operands: "Callable[[str, list[str]], list[str]]",
             ) -> bool | None | str:
    """Run ``find`` over what the build knows; a string where the line is one the reader does not evaluate (why).

    ``operands(program, args)`` gives the paths of an -exec command line (those on it besides ``{}`` are what it
    could write, run on files the reader cannot see).
    """
    from .image_fs import Kind
    from .shell_commands import dispatch
    from .shell_records import MAX_GLOBBED
    from .shell_words import is_known

    line = read_find(argv[1:])
    if isinstance(line, Unevaluated):
        if line.refused:
            shell.note(ctx, "fails", f"find refuses the line: {line.reason}")
            return False
        return line.reason
    programs = [posixpath.basename(test.command[0]) for test in line.execs]
    if any(p not in FIND_READS | FIND_CHANGES for p in programs) or not all(is_known(r) for r in line.roots) or \
            not all(is_known(w) for test in line.execs for w in test.command):
        return "find runs a command the reader does not follow"
    fs = shell.build.fs
    roots: list[str] = []  # the roots there, as image paths, and as written
    kept: list[str] = []
    status: bool | None = True
    for root in line.roots:
        path = fs.resolve(shell.path(root), last=False)
        if path in fs.links:
            return "find walks from a symbolic link"
        kind = fs.kind(path)
        if kind is Kind.ABSENT:
            shell.note(ctx, "fails", f"find: {path} does not exist at this point of the build")
            status = False
            continue
        status = None if kind is Kind.UNKNOWN and status else status
        roots.append(path)
        kept.append(root)
    shell.build.globbed += len(fs.files) + len(fs.dirs) + len(fs.others)
    if shell.build.globbed > MAX_GLOBBED:
        shell.stop(ctx, f"the build's patterns look at more than {MAX_GLOBBED:,} paths; the reader stops here")
    line.roots = kept
    found = walk(line, fs, roots)
    if sum(not test.batch for test, _ in found.runs) > _MAX_RUNS:
        return f"find runs its command more than {_MAX_RUNS:,} times"  # before anything ran
    complete = all(fs.made(root) for root in roots)
    for kept_path in [*found.undeletable, *_delete(fs, found.deleted)]:
        shell.note(ctx, "fails", f"find cannot delete {kept_path}: it stays, and find fails")
        status = False
    if _deletes_all(line):
        _delete_trees(fs, line, roots)
    _note_order(shell, ctx, found, operands)
    batches: dict[_Test, list[str]] = {}
    for test, shown in found.runs:
        if test.batch:
            batches.setdefault(test, []).extend(shown)
        else:
            dispatch(shell, [word.replace("{}", shown[0]) for word in test.command], ctx)
    for test, shown in batches.items():
        dispatch(shell, [*test.command[:-1], *shown], ctx)
    if not complete:
        for test, program in zip(line.execs, programs):
            paths = operands(program, list(test.command[1:]))
            named = [a for a in paths if "{}" not in a]
            # A file the base image alone holds there is none the build placed (the walk met every folder above
            # those), so removing or editing it changes nothing the reader follows; but a copy onto it
            # ('cp ./paged_attn.py {}': each one found replaced) puts a context file where only the image knows.
            # ('cp -t {} ./x.py' too: the operands name -t's folder last)
            changes_found = program in ("cp", "install", "ln") and bool(paths) and "{}" in paths[-1]
            if program in FIND_CHANGES and (named or changes_found):
                scope = [*(roots if changes_found else []), *(shell.path(a) for a in named)]
                shell.unread(ctx, f"runs {program} on the files find lists that the base image holds, which the "
                                  "reader cannot see", scope=tuple(dict.fromkeys(scope)))
    printed = [] if any(test.name == "-print0" for test in _tests(line.expression)) else found.printed
    if complete and len(printed) <= 1 and printed == found.printed:
        shell.emit("".join(p + "\n" for p in printed))
    else:
        shell.emit_unknown()  # the base image's files, or find's order, which is the file system's
    return status


def _note_order(shell: "Shell", ctx: "CommandContext", found: Walk,
                operands: "Callable[[str, list[str]], list[str]]") -> None:
    """Say where the file system's order decides: an -exec copy of two matches to one place keeps the last."""
    from .image_fs import Kind

    by_test: dict[_Test, list[str]] = {}
    for test, shown in found.runs:
        if not test.batch and posixpath.basename(test.command[0]) in ("cp", "mv", "install", "ln"):
            by_test.setdefault(test, []).extend(shown)
    for test, matches in by_test.items():
        named = operands(posixpath.basename(test.command[0]), list(test.command[1:]))
        if len(matches) < 2 or not named or "{}" in named[-1]:
            continue
        destination = shell.path(named[-1])
        into = named[-1].endswith("/") or shell.build.fs.kind(destination) is Kind.DIR or "-t" in test.command
        landing = [posixpath.basename(m) if into else destination for m in matches]
        if len(set(landing)) < len(landing):
            shell.note(ctx, "assumed", f"find lists {len(matches)} files that {test.command[0]} puts at the same "
                                       f"place in {destination}: which is last is the file system's order; the "
                                       "reader takes find's paths sorted")


def _delete(fs: ImageFS, paths: list[str]) -> list[str]:
    """-delete: each file, then each folder left empty, deepest first (-delete implies -depth); the folders the
    build knows still hold something, whose rmdir fails (find then fails too).

    rmdir of a folder that holds anything, or may (one the base image has), fails: it stays.
    """
    fs.remove_all(p for p in paths if p not in fs.dirs)
    held = Counter(posixpath.dirname(p) for p in itertools.chain(fs.files, fs.others, fs.dirs, fs.links))
    emptied, kept = [], []
    for folder in sorted((p for p in paths if p in fs.dirs), key=lambda p: -p.count("/")):
        if fs.made(folder) and not held[folder]:
            emptied.append(folder)
            held[posixpath.dirname(folder)] -= 1
        elif held[folder]:
            kept.append(folder)  # the base image's own folder may hold files too: that failure is its to say
    fs.remove_all(emptied)
    return kept


def _deletes_all(line: FindLine) -> bool:
    """Whether ``line`` deletes every path it walks at or past its -mindepth: no -maxdepth, and an expression of
    -delete with only tests that hold of every path (``find DIR -delete``, ``find DIR -depth -print -delete``)."""
    def parts(node: _Node) -> list[_Node]:
        return parts(node.left) + parts(node.right) if isinstance(node, _Both) and not node.either else [node]

    found = parts(line.expression)
    return line.maxdepth is None and any(isinstance(n, _Test) and n.name == "-delete" for n in found) and all(
        isinstance(n, _Test) and n.name in ("-true", "-print", "-print0", "-delete") for n in found)


def _delete_trees(fs: ImageFS, line: FindLine, roots: list[str]) -> None:
    """find -delete of every path below a folder: depth first, each folder once it is empty, so what the base image
    holds there goes too (run as root, nothing there refuses it). With -mindepth 0 the folder it starts from goes
    as well (a root find could not walk, the base image's alone, is absent either way); with -mindepth 1, or from
    '.', which find never removes, the folder stays, known to be empty."""
    for written, root in zip(line.roots, roots):
        name = posixpath.basename(written.rstrip("/")) or written
        if name == ".." or name == "." and written != "." or root in fs.links or root == "/":
            continue  # find fails on '..' and './' (noted by the walk); '/' the reader does not empty
        if line.mindepth == 0 and name != ".":
            if root in fs.dirs or root not in fs.files and root not in fs.others:
                fs.remove_all([root])
        elif line.mindepth <= 1 and root in fs.dirs and len(fs.aliases(root)) == 1:
            fs.remove_all([p for p in itertools.chain(fs.files, fs.others, fs.dirs, fs.links)
                           if p != root and posixpath.dirname(p) == root])
            fs.owned.add(root)  # what the build writes into it from now on is all it holds


def _tests(node: _Node) -> list[_Test]:
    if isinstance(node, _Test):
        return [node]
    if isinstance(node, _Not):
        return _tests(node.inner)
    return _tests(node.left) + _tests(node.right)
