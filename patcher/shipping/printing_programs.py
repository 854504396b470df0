"""Programs that only print, and those that change files the reader can bound (``sed -i``, ``find -exec``)."""

from __future__ import annotations

import posixpath
import re

from .command_lookup import finds_every, note_program
from .expr_program import run_expr
from .find_program import FIND_CHANGES, FIND_READS, find_roots, run_find
from .image_fs import Kind
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


def _find_scope(shell: Shell, args: list[str]) -> tuple[str, ...] | None:
    """What ``find ARGS`` could change: the trees it walks, a file its -fprint writes, the paths on an -exec line.

    Any other program (``sh -c``, ``python``, ``xargs``) could change anything: None. Under
    ``-execdir`` a relative path is in the folder of each file found, so inside the trees walked
    unless it climbs out with ``..``.
    """
    follows, roots, index = find_roots(args)
    if follows:
        return None  # through a link find reaches anything
    paths = roots or ["."]  # the trees it walks
    while index < len(args):
        arg = args[index]
        index += 1
        if arg in _FIND_RUNS:
            end = next((i for i in range(index, len(args)) if args[i] in (";", "+")), len(args))
            command, index = args[index:end], end + 1
            program = posixpath.basename(command[0]) if command else ""
            if program not in FIND_READS | FIND_CHANGES:
                return None
            named = [a for a in _operands(program, command[1:]) if "{}" not in a]
            if arg in ("-execdir", "-okdir"):
                if any(".." in a.split("/") for a in named if not a.startswith("/")):
                    return None
                named = [a for a in named if a.startswith("/")]
            paths += named if program in FIND_CHANGES else []
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
        return _cat_status(shell, ctx, argv[1:])
    if base in ("head", "tail", "cut", "tr"):
        result = filter_text(base, argv[1:], lambda operand: _standard_input(shell, stdin) if operand == "-"
                             else shell.placed_text(operand))
        if result.text is None:
            shell.emit_unknown()
            return True
        shell.emit(result.text)
        return result.ok
    if base == "ls":
        shell.emit_unknown()
        return _ls_status(shell, ctx, argv[1:])
    if base == "expr":
        return _expr(shell, ctx, argv[1:])
    if base in ("type", "hash", "which"):
        return _lookup(shell, base, argv[1:])
    if base in ("grep", "egrep", "fgrep"):
        status, printed = _grep(shell, base, argv[1:], stdin)
        if printed is None:
            shell.emit_unknown()
        else:
            shell.emit(printed)
        return status
    if base in ("diff", "cmp"):
        shell.emit_unknown()
        return _compare_status(shell, argv[1:])
    if base == "awk" and any(">" in a or "system" in a for a in argv[1:]):
        return note_program(shell, ctx, "awk")
    if base == "find":
        found = run_find(shell, argv, ctx, _operands)
        if not isinstance(found, str):
            return found
        if any(a in _FIND_RUNS or a in _FIND_WRITES for a in argv[1:]):
            shell.unread(ctx, "runs commands on the files find lists, which the reader does not follow",
                         scope=_find_scope(shell, argv[1:]))
            return None
    shell.emit_unknown()
    return True


def _lookup(shell: Shell, base: str, args: list[str]) -> bool | None:
    """``type NAME...``, ``hash NAME...`` and ``which NAME...`` succeed where each NAME is found: a function or
    builtin for the first two (which looks on PATH only), else a program only the image can say it has
    (``type nosuch`` fails: 1 in bash, 127 in dash). ``hash`` alone and ``hash -r`` (forget) succeed."""
    shell.emit_unknown()
    if base == "hash" and args in ([], ["-r"]):
        return True
    if base == "type" and args and args[0] in ("-t", "-a") and shell.program == "bash":
        args = args[1:]  # dash's type has no options: it looks for a command named -t
    if any(a.startswith("-") for a in args) or base == "which":
        return None
    return finds_every(shell, args) if args else True


def _expr(shell: Shell, ctx: CommandContext, args: list[str]) -> bool | None:
    """``expr ARGS``: what it prints and its status where the reader can work them out (``expr_program``)."""
    result = run_expr(args)
    if result is None:
        shell.emit_unknown()
        return None
    printed, status = result
    shell.emit(printed)
    if status == 2:
        shell.note(ctx, "fails", f"expr {' '.join(shell.show(a) for a in args)}: not an expression expr can "
                                 "work out (status 2)")
    if status:
        shell.ended_with(status)
    return status == 0


def _ls_status(shell: Shell, ctx: CommandContext, args: list[str]) -> bool:
    """``ls PATH...`` fails (status 2) where a path it is given is not there at this point of the build; the base
    image's paths are taken to be there, as the build that succeeds has them. An option its table does not hold
    leaves the status to the image (taken to succeed)."""
    o = read_options("ls", args)
    missing = [p for p in o.operands if is_known(p) and shell.build.fs.kind(shell.path(p)) is Kind.ABSENT]
    if o.unknown or not missing:
        return True
    shell.note(ctx, "fails", f"ls: {shell.path(missing[0])} does not exist at this point of the build")
    shell.ended_with(2)
    return False


def _cat_status(shell: Shell, ctx: CommandContext, args: list[str]) -> bool:
    """``cat FILE...`` fails (status 1, after printing the others) where a FILE is not there at this point of the
    build, or is a folder. With an option (``-n``, ``--help``) the status is left to the image, taken to succeed."""
    operands = args[1:] if args[:1] == ["--"] else args
    if any(o.startswith("-") and o != "-" for o in operands):
        return True
    for operand in operands:
        if operand == "-" or not is_known(operand):
            continue
        kind = shell.build.fs.kind(shell.path(operand))
        if kind in (Kind.ABSENT, Kind.DIR):
            shell.note(ctx, "fails", f"cat: {shell.path(operand)} "
                                     f"{'does not exist at this point of the build' if kind is Kind.ABSENT else 'is a folder'}")
            shell.ended_with(1)
            return False
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


_GREP_STEPS = 20_000_000  # what the matches of one grep may cost, in steps of a backtracking search (see _grep)
# grep's options under which it prints the lines it selects, as they are (no counts, names, numbers or context).
_GREP_PRINTS_LINES = frozenset({"q", "quiet", "silent", "s", "no-messages", "F", "E", "G", "i", "v", "x", "w", "h",
                                "no-filename", "extended-regexp", "basic-regexp", "fixed-strings", "ignore-case",
                                "invert-match", "line-regexp", "word-regexp"})


def _grep(shell: Shell, base: str, args: list[str], stdin: str | None) -> tuple[bool | None, str | None]:
    """Whether ``grep`` finds a line, and what it prints, where the reader knows the text it reads and the pattern
    is one it reads as grep does (``_regex``: literal text, ``.``, ``*``, anchors, plain bracket expressions).

    Any other regular expression, an option its table does not follow, or
    a file or input the reader does not know leaves both to the image;
    counts, names, numbers and context leave what it prints.
    """
    o = read_options("grep", args)
    if o.unknown:
        return None, None
    flags = {_GREP_LONG.get(flag, flag) for flag in o.flags} | ({"F"} if base == "fgrep" else set())
    if "no-ignore-case" in flags and "i" in flags:
        return None, None  # the last of the two counts, and the reading does not keep their order
    patterns, operands = o.every.get("e", []) + o.every.get("regexp", []), o.operands
    if not patterns:
        if not operands:
            return False, ""  # grep without a pattern: a usage error
        patterns, operands = [operands[0]], operands[1:]
    if not all(is_known(p) for p in patterns):
        return None, None
    # Each pattern may hold several, one per line; an empty one matches every line.
    needles = [n for p in patterns for n in p.split("\n")]
    extended = "E" in flags or "extended-regexp" in flags or base == "egrep"
    regexes = [re.escape(n) if "F" in flags else _regex(n, extended) for n in needles]
    plain = "F" in flags or not any(c in _REGEX_CHARACTERS for n in needles for c in n)
    if None in regexes or "w" in flags and not plain:
        return None, None
    texts = [shell.placed_text(operand) for operand in operands] if operands else [_standard_input(shell, stdin)]
    if any(text is None for text in texts):
        return None, None
    # Past ASCII the answer is the image's locale's (a Docker image often has none: C, where grep reads bytes):
    # '.', '*' and brackets take one byte of 'é' there, -i folds no 'K' (Kelvin) to 'k', -w sees no letter in 'é'.
    # Only a literal search of text is the same in every locale.
    if (not plain or flags & {"i", "w"}) and not all(t.isascii() for t in [*needles, *texts] if t is not None):
        return None, None
    # Python's re backtracks: a search with k stars costs up to (length of the line) ** (k + 1) steps, where grep's
    # automaton is linear. A line or a pattern that could cost more than the reader spends is left to the image.
    stars = max(r.count("*") for r in regexes if r is not None)
    if stars > 2 or sum(len(line) ** (stars + 1) for text in texts if text is not None
                        for line in text.split("\n")) * len(regexes) > _GREP_STEPS:
        return None, None
    matchers = [re.compile(r, re.IGNORECASE if "i" in flags else 0) for r in regexes if r is not None]
    fold = (lambda t: t.lower()) if "i" in flags else (lambda t: t)
    printed: list[str] = []
    for text in texts:
        assert text is not None
        for line in text.split("\n")[:-1] if text.endswith("\n") else text.split("\n"):
            if "w" in flags:
                hit = any(_word_in(fold(line), fold(n)) for n in needles)
            else:
                hit = any((m.fullmatch if "x" in flags else m.search)(line) is not None for m in matchers)
            if hit != ("v" in flags):
                printed.append(line + "\n")
    prints = flags <= _GREP_PRINTS_LINES and (len(texts) == 1 or "h" in flags or "no-filename" in flags)
    quiet = bool(flags & {"q", "quiet", "silent"})
    return bool(printed), ("" if quiet else "".join(printed)) if prints else None


def _regex(pattern: str, extended: bool) -> str | None:
    """A grep pattern (BRE, or ERE when ``extended``) as Python's ``re`` reads it, where both read it alike: text,
    ``.``, ``*`` after something to repeat, ``^`` first and ``$`` last only, ``\\`` before one of ``.[]*^$\\/``, and
    bracket expressions of single characters (``[abc]``, ``[^#]``). None for anything else (ranges, classes,
    back-references, ERE's ``+?|(){}``), whose meaning depends on the dialect or the locale."""
    out: list[str] = []
    index, atom = 0, False  # atom: something stands before, for '*' to repeat
    while index < len(pattern):
        char = pattern[index]
        if char == "^" and index == 0:
            out.append("^")
        elif char == "$" and index == len(pattern) - 1:
            out.append(r"\Z")
        elif char == "^" or char == "$":
            return None  # an anchor in an ERE, and in GNU's BRE too in places (before '\\|', after '\\(')
        elif char == ".":
            out.append(".")
            atom = True
        elif char == "*":
            if atom:
                out.append("*")
                atom = False
            elif extended or out and out[-1] == "*":
                return None  # 'a**' repeats the star in grep, and is an error in Python
            else:
                out.append(re.escape("*"))  # a BRE's leading '*' is itself
                atom = True
        elif char == "\\":
            if index + 1 >= len(pattern) or pattern[index + 1] not in ".[]*^$\\/":
                return None
            index += 1
            out.append(re.escape(pattern[index]))
            atom = True
        elif char == "[":
            end = pattern.find("]", index + 2 if pattern[index + 1:index + 2] in ("]", "^") else index + 1)
            if pattern[index + 1:index + 3] == "^]":
                end = pattern.find("]", index + 3)
            body = pattern[index + 1:end] if end > 0 else ""
            negated, members = body.startswith("^"), body.removeprefix("^")
            if end < 0 or not members or "[" in members or "\\" in members or "-" in members[1:-1]:
                return None
            out.append(("[^" if negated else "[") + "".join(re.escape(c) for c in members) + "]")
            index, atom = end, True
        elif char in "+?|(){}":
            if extended:
                return None
            out.append(re.escape(char))
            atom = True
        else:
            out.append(re.escape(char))
            atom = True
        index += 1
    return "".join(out)


def _word_in(line: str, needle: str) -> bool:
    """grep -w: ``needle`` stands in ``line`` with no word character (letter, digit, underscore) on either side."""
    if needle == "":  # an empty word stands where no word character touches it: '', '-a', 'a--b', not 'a-b'
        word = [c.isalnum() or c == "_" for c in line]
        return any(not (at > 0 and word[at - 1]) and not (at < len(line) and word[at]) for at in range(len(line) + 1))
    return any(
        (at == 0 or not (line[at - 1].isalnum() or line[at - 1] == "_"))
        and (at + len(needle) == len(line) or not (line[at + len(needle)].isalnum() or line[at + len(needle)] == "_"))
        for at in _starts(line, needle))


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
