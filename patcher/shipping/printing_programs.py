"""Programs that only print, and those that change files the reader can bound (``sed -i``, ``find -exec``)."""

from __future__ import annotations

import posixpath

from .command_lookup import note_program
from .shell_interpreter import Shell
from .shell_records import CommandContext
from .shell_words import is_known
from .text_filters import filter_text
from .tool_options import TABLES, read_options

# Commands that change no file of the image and no state of the shell; what they print is unknown.
PRINTING = frozenset({
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "wc", "sort", "uniq", "cut", "tr", "date", "printenv",
    "id", "whoami", "hostname", "uname", "nproc", "which", "type", "df", "du", "stat", "file", "md5sum",
    "sha256sum", "sha1sum", "sha512sum", "cmp", "diff", "nvidia-smi", "ixsmi", "lscpu", "free", "uptime", "ps",
    "getconf", "locale", "tty", "arch", "ldd", "nm", "od", "xxd", "hexdump", "jq", "column", "fold", "rev", "seq",
    "yes", "tac", "nl", "expr", "sleep", "sync", "chmod", "chown", "chgrp", "ldconfig", "umask", "ulimit",
    "wait", "hash", "true", ":", "false", "sed", "awk", "find", "hostnamectl",
})

# find's actions that run a program, and those that write.
_FIND_RUNS = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITES = ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls")  # -delete the files walked, the others FILE
# Programs that, run by find on the files it lists, change nothing, or only the paths on their line.
_FIND_READS = frozenset({"echo", "printf", "true", "cat", "grep", "ls", "stat", "file", "test", "[", "head", "wc",
                         "md5sum", "sha256sum"})
_FIND_CHANGES = frozenset({"rm", "touch", "cp", "mv", "ln", "install", "mkdir", "sed", "chmod", "chown", "chgrp",
                           "dos2unix"})


def _find_scope(shell: Shell, args: list[str]) -> tuple[str, ...] | None:
    """What ``find ARGS`` could change: the trees it walks, a file its -fprint writes, the paths on an -exec line.

    Any other program (``sh -c``, ``python``, ``xargs``) could change anything: None. Under
    ``-execdir`` a relative path is in the folder of each file found, so inside the trees walked
    unless it climbs out with ``..``.
    """
    roots: list[str] = []  # the paths before the first test or action; none means "."
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        roots.append(arg)
    paths = roots or ["."]
    index = len(roots)
    while index < len(args):
        arg = args[index]
        index += 1
        if arg in _FIND_RUNS:
            end = next((i for i in range(index, len(args)) if args[i] in (";", "+")), len(args))
            command, index = args[index:end], end + 1
            program = posixpath.basename(command[0]) if command else ""
            if program not in _FIND_READS | _FIND_CHANGES:
                return None
            named = [a for a in _operands(program, command[1:]) if "{}" not in a]
            if arg in ("-execdir", "-okdir"):
                if any(".." in a.split("/") for a in named if not a.startswith("/")):
                    return None
                named = [a for a in named if a.startswith("/")]
            paths += named if program in _FIND_CHANGES else []
        elif arg in _FIND_WRITES[1:] and index < len(args):
            paths.append(args[index])
    if not all(is_known(path) for path in paths):
        return None
    return tuple(dict.fromkeys(shell.path(path) for path in paths))


def _operands(program: str, args: list[str]) -> list[str]:
    """The paths of a command line: its operands, less a mode, an owner or a sed script written before them."""
    if program in ("chmod", "chown", "chgrp"):
        operands = [a for a in args if not a.startswith("-")]
        return operands[1:]
    if program in TABLES:
        read = read_options(program, args)
        if program == "sed" and not read.values.keys() & {"e", "f", "expression", "file"}:
            return read.operands[1:]
        return read.operands + [v for k, v in read.values.items() if k in ("t", "target-directory")]
    return [a for a in args if not a.startswith("-")]


def run_mktemp(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str]) -> bool | None:
    """GNU ``mktemp [-d] [-u] [-p DIR | --tmpdir[=DIR]] [-t] [--suffix=S] [TEMPLATE]``: a new file or folder.

    It never touches a file that is there, so it changes nothing the reader follows; what it prints is a
    random name (unknown, one word) in a known folder: TEMPLATE's own, relative to the current one, or
    with ``-p``/``--tmpdir``/``-t`` or no TEMPLATE, DIR, ``$TMPDIR`` or /tmp (``-t`` prefers ``$TMPDIR``
    to DIR). ``$TMPDIR`` is taken to be unset unless the build set it, as no common base image sets it.
    The random part is the last run of X's in TEMPLATE's last component (three at least); what follows
    it, or ``--suffix``, is kept.
    """
    o = read_options("mktemp", argv[1:])
    if o.unknown:
        return note_program(shell, ctx, "mktemp")
    if len(o.operands) > 1:
        shell.note(ctx, "fails", "mktemp takes one TEMPLATE at most")
        return False
    template = o.operands[0] if o.operands else "tmp.XXXXXXXXXX"
    given = o.values.get("p") or o.values.get("tmpdir") or None
    tmpdir = env.get("TMPDIR", shell.lookup("TMPDIR") if "TMPDIR" in shell.exported else None)
    if "t" in o.flags:
        folder = tmpdir or given or "/tmp"
    elif not o.operands or given is not None or "tmpdir" in o.flags or "tmpdir" in o.values:
        folder = given or tmpdir or "/tmp"
    else:
        folder = "."
    last = posixpath.basename(template)
    if "suffix" in o.values:
        end, suffix = len(last), o.values["suffix"]
    else:
        end = last.rfind("X") + 1
        suffix = last[end:]
    start = len(last[:end].rstrip("X"))
    if end - start < 3 or "/" in suffix:
        shell.note(ctx, "fails", f"mktemp: too few X's at the end of the template '{shell.show(template)}'")
        return False
    stem = template[:len(template) - len(last)] + last[:start]
    head = shell.path(posixpath.join(folder, posixpath.dirname(stem)))
    random = shell.unknowns.mark(f"$({' '.join(['mktemp', *(shell.show(a) for a in argv[1:])])})", word=True)
    shell.emit(posixpath.join(head, posixpath.basename(stem)) + random + suffix + "\n")
    return True


def run_printing(shell: Shell, base: str, argv: list[str], ctx: CommandContext, stdin: str | None = None) -> bool | None:
    if base in ("true", ":"):
        return True
    if base == "false":
        return False
    if base == "sed":
        o = read_options("sed", argv[1:])
        if "i" in o.flags or "in-place" in o.flags or "in-place" in o.values:
            scripts_given = o.values.keys() & {"e", "f", "expression", "file"}
            files = o.operands if scripts_given else o.operands[1:]  # the first operand is the script
            shell.unread(ctx, "edits files in place (sed -i)", scope=tuple(shell.path(f) for f in files) or None)
        else:
            shell.emit_unknown()
        return True
    if base == "cat":
        shell.emit(_catted_text(shell, argv[1:], stdin))
        return True
    if base in ("head", "tail", "cut", "tr"):
        result = filter_text(base, argv[1:], lambda operand: _standard_input(shell, stdin) if operand == "-"
                             else shell.placed_text(operand))
        if result.text is None:
            shell.emit_unknown()
            return True
        shell.emit(result.text)
        return result.ok
    if base in ("grep", "egrep", "fgrep"):
        shell.emit_unknown()
        return _grep_status(shell, base, argv[1:], stdin)
    if base in ("diff", "cmp"):
        shell.emit_unknown()
        return _compare_status(shell, argv[1:])
    if base == "awk" and any(">" in a or "system" in a for a in argv[1:]):
        return note_program(shell, ctx, "awk")
    if base == "find" and any(a in _FIND_RUNS or a in _FIND_WRITES for a in argv[1:]):
        shell.unread(ctx, "runs commands on the files find lists, which the reader does not follow",
                     scope=_find_scope(shell, argv[1:]))
        return None
    shell.emit_unknown()
    return True


def _catted_text(shell: Shell, operands: list[str], stdin: str | None = None) -> str:
    """What ``cat FILE...`` prints when each FILE is a text file the build placed, or its standard input (no FILE,
    or ``-``) is known: a here-document, a here-string, what a pipe or a loop's input holds; else a marker."""
    operands = operands[1:] if operands[:1] == ["--"] else operands
    texts = []
    for operand in operands or ["-"]:
        if operand == "-":
            text = _standard_input(shell, stdin)
        else:
            text = shell.placed_text(operand) if not operand.startswith("-") else None
        if text is None:
            return shell.unknowns.mark(f"$(cat {' '.join(shell.show(o) for o in operands)})")
        texts.append(text)
    return "".join(texts)


def _standard_input(shell: Shell, stdin: str | None) -> str | None:
    """All that is left of the command's standard input, when the reader knows it (cat reads it to the end)."""
    if stdin is not None:
        return stdin if is_known(stdin) else None
    if shell.input is None:
        return None
    text, shell.input.at = shell.input.text[shell.input.at:], len(shell.input.text)
    return text


_REGEX_CHARACTERS = frozenset(".[]*^$\\+?(){}|")
# grep's long options, as the letters the reading below looks at.
_GREP_LONG = {"fixed-strings": "F", "ignore-case": "i", "invert-match": "v", "line-regexp": "x", "word-regexp": "w"}


def _grep_status(shell: Shell, base: str, args: list[str], stdin: str | None) -> bool | None:
    """Whether ``grep`` finds a line, where the reader knows the text it reads and the pattern is plain text.

    A pattern with a regular expression's characters (BRE and ERE differ, and neither is Python's), an
    option its table does not follow, or a file or input the reader does not know leaves it to the image.
    """
    o = read_options("grep", args)
    if o.unknown:
        return None
    flags = {_GREP_LONG.get(flag, flag) for flag in o.flags} | ({"F"} if base == "fgrep" else set())
    if "no-ignore-case" in flags and "i" in flags:
        return None  # the last of the two counts, and the reading does not keep their order
    patterns, operands = o.every.get("e", []) + o.every.get("regexp", []), o.operands
    if not patterns:
        if not operands:
            return False  # grep without a pattern: a usage error
        patterns, operands = [operands[0]], operands[1:]
    if not all(is_known(p) for p in patterns) or "F" not in flags and any(
            c in _REGEX_CHARACTERS for p in patterns for c in p):
        return None
    texts = [shell.placed_text(operand) for operand in operands] if operands else [_standard_input(shell, stdin)]
    if any(text is None for text in texts):
        return None
    # Each pattern may hold several, one per line; an empty one matches every line.
    needles = [n for p in patterns for n in p.split("\n")]
    fold = (lambda t: t.lower()) if "i" in flags else (lambda t: t)
    found = False
    for text in texts:
        assert text is not None
        for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
            hit = any(_grep_line(fold(line), fold(needle), flags) for needle in needles)
            if hit != ("v" in flags):
                found = True
    return found


def _grep_line(line: str, needle: str, flags: set[str]) -> bool:
    if "x" in flags:
        return line == needle
    if "w" in flags:
        return needle == "" or any(
            (start == 0 or not (line[start - 1].isalnum() or line[start - 1] == "_"))
            and (start + len(needle) == len(line)
                 or not (line[start + len(needle)].isalnum() or line[start + len(needle)] == "_"))
            for start in _starts(line, needle))
    return needle in line


def _starts(line: str, needle: str) -> list[int]:
    found, at = [], line.find(needle)
    while at >= 0 and needle:
        found.append(at)
        at = line.find(needle, at + 1)
    return found


def _compare_status(shell: Shell, args: list[str]) -> bool | None:
    """``diff`` or ``cmp`` of two files the build placed: whether their bytes are the same; else the image's."""
    operands = [a for a in args if not a.startswith("-")]
    options = [a for a in args if a.startswith("-")]
    if len(operands) != 2 or any(o not in ("-q", "-s", "--brief", "--quiet", "--silent", "-u") for o in options):
        return None
    texts = [shell.placed_text(o) for o in operands]
    if any(text is None for text in texts):
        return None
    return texts[0] == texts[1]
