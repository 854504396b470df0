"""The builtins whose answer is what they print or their status: ``echo``, ``printf``, ``pwd``, ``dirname``,
``basename``, ``realpath``, ``test``/``[``, ``tee``."""

from __future__ import annotations

import operator
import posixpath
import re
from typing import Callable

from .file_commands import transfer
from .image_fs import Kind, normalise
from .printf_format import Unsure, printf_outcome, printf_output, read_escapes
from .shell_builtins import Builtin
from .shell_interpreter import Shell
from .shell_records import CommandContext
from .shell_words import is_known
from .tool_options import Options, read_options


def _echo(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``echo`` as the shell that runs it prints: bash's and dash's differ (options, backslashes).

    Under sh, or another shell, the base image decides: what they print alike is known, the rest is not.
    """
    printed = {"bash": _bash_echo, "dash": _dash_echo}.get(shell.program)
    if printed is not None:
        text = printed(argv[1:])
    else:
        text = _bash_echo(argv[1:])
        text = text if text == _dash_echo(argv[1:]) else None
    if text is None:
        shell.emit_unknown()
    else:
        shell.emit(text)  # an unknown part travels as its marker
    return True


def _bash_echo(args: list[str]) -> str | None:
    """bash's echo: leading words of -n, -e and -E letters are options; escapes are read only after -e."""
    newline, escapes = True, False
    while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= set("neE"):
        newline = newline and "n" not in args[0]
        for letter in args[0][1:]:
            escapes = {"e": True, "E": False}.get(letter, escapes)
        args = args[1:]
    text = " ".join(args)
    if escapes and "\\" in text:
        return None  # bash's own escapes (\e, \x41, \u00e9; \101 is not octal there): not printed here
    return text + ("\n" if newline else "")


def _dash_echo(args: list[str]) -> str | None:
    """dash's echo: only a first ``-n`` is an option; backslash escapes are always read, as printf's %b reads them."""
    newline = args[:1] != ["-n"]
    try:
        text, stopped = read_escapes(" ".join(args if newline else args[1:]))
    except Unsure:
        return None
    return text if stopped or not newline else text + "\n"


def _printf(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``printf FORMAT [ARG...]`` as POSIX printf: what it cannot work out exactly is unknown output, never a guess."""
    args = argv[1:]
    options_end = args[:1] == ["--"]
    if options_end:
        args = args[1:]
    if not args:
        return True
    if not options_end and args[0].startswith("-") and args[0] != "-" and is_known(args[0]):
        if args[0] == "-v" and len(args) > 2 and shell.program != "dash":
            # bash's printf -v NAME FORMAT ARGS: NAME holds what it would print.
            if not is_known(args[1]):
                shell.emit_unknown()
                return True
            rest = args[3:] if args[2:3] == ["--"] else args[2:]
            text = printf_output(rest[0], rest[1:]) if rest and shell.program == "bash" else None
            shell.assign(args[1], text if text is not None else shell.unknowns.mark(f"$({' '.join(argv)})"))
            if shell.program == "sh":
                shell.note(ctx, "assumed", "printf -v is bash's: under the base image's sh, dash refuses it "
                                           "(status 2); the reader reads on as bash does")
            return True
        # An option printf does not have (dash has none; bash only -v NAME): "invalid option", status 2 in both.
        shell.note(ctx, "fails", "printf -v without a name and a format prints nothing and fails (status 2)"
                   if args[0] == "-v" and shell.program != "dash" else
                   f"printf has no option {args[0]}: it prints nothing and fails (status 2)")
        shell.ended_with(2)
        return False
    text, failure = printf_outcome(args[0], args[1:])
    if text is None:
        shell.emit_unknown()
    else:
        shell.emit(text)
    if failure is None:
        return True  # where the reader cannot tell, it follows the build that succeeds: printf is taken to succeed
    if shell.program in ("bash", "dash"):
        status = failure.bash if shell.program == "bash" else failure.dash
        if status is None:
            return True
        shell.ended_with(status)
        return False
    # Under sh the image's sh decides: where only one of them fails, the reader reads on as bash does.
    if failure.bash is None or failure.dash is None:
        shell.note(ctx, "assumed", "under the base image's sh, bash's printf succeeds here and dash's fails "
                                   "(a number past 64 bits); the reader reads on as bash does")
        return True
    shell.ended_with(failure.bash if failure.bash == failure.dash else None)
    return False


def _path_tool(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``pwd``, ``dirname``, ``basename``, ``realpath``, ``readlink -f``: what they print is a path the reader knows
    (GNU coreutils 9.1's options); where a part the reader cannot know decides it, what they print is unknown."""
    head = argv[0]
    if head == "pwd":
        # -P names the folder the links lead to; the last of -L and -P counts (bash and dash print $PWD by default).
        physical = [a for a in argv[1:] if a in ("-P", "-L")][-1:] == ["-P"]
        if shell.lost is not None:  # after a cd into a folder the reader cannot name
            shell.emit_unknown()
            return True
        shell.emit((shell.build.fs.resolve(shell.cwd) if physical else shell.cwd) + "\n")
        return True
    o = read_options(head, argv[1:])
    if o.unknown or o.flags & {"z", "zero", "n", "no-newline"}:
        shell.emit_unknown()  # NUL-ended lines, no newline, or an option the reader does not follow
        return None if o.unknown else True
    operands = o.operands
    if not operands:
        shell.note(ctx, "fails", f"{head}: missing operand (status 1)")
        shell.ended_with(1)
        return False
    if head == "basename":
        suffix = o.values.get("s", o.values.get("suffix"))
        names = operands if suffix is not None or o.flags & {"a", "multiple"} else operands[:1]
        if suffix is None and not o.flags & {"a", "multiple"}:
            if len(operands) > 2:
                shell.note(ctx, "fails", f"basename: extra operand {operands[2]} (status 1)")
                shell.ended_with(1)
                return False
            suffix = operands[1] if len(operands) == 2 else None
        shell.emit("".join(_basename(name, suffix) + "\n" for name in names))
    elif head == "dirname":
        shell.emit("".join(_dirname_of(shell, o) + "\n" for o in operands))
    elif head == "realpath" or o.flags & {"f", "e", "m", "canonicalize", "canonicalize-existing",
                                          "canonicalize-missing"}:
        missing = [operand for operand in operands if _not_there(shell, operand, o)]
        printed = [_real(shell, operand, o) for operand in operands if operand not in missing]
        if any(p is None for p in printed):
            shell.emit_unknown()
        else:
            shell.emit("".join(f"{p}\n" for p in printed))
        if missing:
            # coreutils 9.1: "No such file or directory", status 1; the other operands are printed.
            shell.note(ctx, "fails", f"{head}: {shell.path(missing[0])} is not there at this point of the build")
            shell.ended_with(1)
            return False
    else:
        # readlink without -f prints what a link holds: of a file the build placed that is no link, nothing
        # (status 1).
        path = shell.path(operands[0]) if is_known(operands[0]) else ""
        if path and shell.build.fs.resolve(path, last=False) not in shell.build.fs.links and \
                shell.build.fs.kind(path) in (Kind.FILE, Kind.DIR, Kind.ABSENT) and len(operands) == 1:
            shell.ended_with(1)
            return False
        shell.emit_unknown()
    return True


def _not_there(shell: Shell, operand: str, o: Options) -> bool:
    """Whether realpath/readlink -f cannot name ``operand``: -e wants it there; the default (and -f) the folder
    it is in; -m nothing. A path of the base image may be there."""
    if not is_known(operand) or o.flags & {"m", "canonicalize-missing"}:
        return False
    path = shell.build.fs.resolve(shell.path(operand))
    if o.flags & {"e", "canonicalize-existing"}:
        return shell.build.fs.kind(path) is Kind.ABSENT
    return shell.build.fs.kind(posixpath.dirname(path)) in (Kind.ABSENT, Kind.FILE)


def _basename(name: str, suffix: str | None) -> str:
    """GNU basename: the last component (``/`` for a name of slashes only), less a SUFFIX that is not all of it."""
    stripped = name.rstrip("/")
    base = posixpath.basename(stripped) if stripped else ("/" if name else "")
    if suffix and base.endswith(suffix) and base != suffix and is_known(suffix):
        base = base[:-len(suffix)]
    return base


def _dirname_of(shell: Shell, path: str) -> str:
    """``dirname PATH``; unknown where a value the reader cannot know stands in the last component (it may hold
    a ``/`` of its own, so the folder may be deeper than the known part says)."""
    stripped = path.rstrip("/")
    if not is_known(stripped.rpartition("/")[2]):
        return shell.unknowns.mark(f"$(dirname {shell.show(path)})")
    return _dirname(path)


def _real(shell: Shell, operand: str, o: Options) -> str | None:
    """``realpath``/``readlink -f`` of one operand: the path the links lead to (``-s``: only cleaned), relative to
    ``--relative-to`` where given; None where the reader cannot tell."""
    if not is_known(operand):
        return operand if not o.values.get("relative-to") else None
    if o.flags & {"s", "strip", "no-symlinks"}:
        path = normalise(shell.path(operand, keep_slash=True))
    else:
        path = shell.build.fs.resolve(shell.path(operand))
    if "relative-base" in o.values:
        return None
    base = o.values.get("relative-to")
    if base is None:
        return path
    if not is_known(base):
        return None
    start = normalise(shell.path(base, keep_slash=True)) if o.flags & {"s", "strip", "no-symlinks"} else \
        shell.build.fs.resolve(shell.path(base))
    return posixpath.relpath(path, start)


def _dirname(path: str) -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    parent = posixpath.dirname(stripped)
    return parent.rstrip("/") or ("/" if parent else ".")


def _test(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``test``/``[``: decided where the build's own files or known values decide it, else unknown."""
    args = argv[1:]
    if argv[0] == "[[":
        # Under bash '[[ ... ]]' is a compound command (bash_conditional.py); a command named [[ is sh's.
        if shell.program == "dash":
            shell.note(ctx, "fails", "dash has no [[ ... ]]: the command [[ is not found")
            shell.ended_with(127)
            return False
        shell.unread(ctx, "[[ ... ]] is bash's: under the base image's sh it may not exist, and its '&&' or '||' "
                          "would end the command")
        return None
    if posixpath.basename(argv[0]) == "[":
        if args[-1:] != ["]"]:
            if args and not is_known(args[-1]):
                return None  # the last word may be ']'
            # bash, dash and coreutils: "missing ']'", status 2, whatever comes before it.
            shell.note(ctx, "fails", "[ without its closing ']' fails (status 2)")
            shell.ended_with(2)
            return False
        args = args[:-1]
    negate = False
    while args and args[0] == "!":
        negate, args = not negate, args[1:]
    result = decide_test(shell, args)
    return None if result is None else result != negate


def decide_test(shell: Shell, args: list[str]) -> bool | None:
    """``test ARGS``'s status where the build's files or known values decide it, else None."""
    if not args:
        return False  # 'test' alone fails
    if len(args) in (1, 2) and is_known(args[0]) and not is_known(args[-1]) and shell.unknowns.nonempty(args[-1]):
        # An unknown value known not to be empty ($BASH_VERSION under bash): [ X ], [ -n X ] and [ -z X ] are known.
        if len(args) == 1:
            return True
        return {"-n": True, "-z": False}.get(args[0])
    if any(not is_known(a) for a in args):
        return None
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2 and args[0] in ("-n", "-z"):
        return (args[1] != "") == (args[0] == "-n")
    if len(args) == 2 and args[0] in ("-d", "-f", "-e", "-a"):
        kind = shell.build.fs.kind(shell.path(args[1]))
        if kind is Kind.UNKNOWN:
            return None
        if args[0] == "-d":
            return kind is Kind.DIR
        if args[0] == "-f":
            return kind is Kind.FILE
        return kind is not Kind.ABSENT
    if len(args) == 3 and args[1] in ("=", "==", "!="):
        return (args[0] == args[2]) == (args[1] != "!=")
    if len(args) == 3 and args[1] in _INTEGER_TESTS and all(_INTEGER.fullmatch(a) for a in args[::2]):
        return _INTEGER_TESTS[args[1]](int(args[0]), int(args[2]))
    return None


# test's integer comparisons; an operand that is not an integer (or past 64 bits) is an error (status 2), left
# undecided here. Only spaces and tabs around it: bash 5.2, dash 0.5.12 and coreutils' test all read those, but
# not alike a newline, \r, \v or \f before it or after it; '\x1c' or a no-break space (which \s matches) none
# of them reads, and int() refused '\x1c1' (a crash).
_INTEGER = re.compile(r"[ \t]*[+-]?[0-9]{1,18}[ \t]*")
_INTEGER_TESTS: dict[str, Callable[[int, int], bool]] = {
    "-eq": operator.eq, "-ne": operator.ne, "-lt": operator.lt, "-le": operator.le, "-gt": operator.gt,
    "-ge": operator.ge}


def _tee(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    append = any(a in ("-a", "--append") for a in argv[1:])
    operands = [a for a in argv[1:] if not a.startswith("-")]
    if stdin is None and shell.piped_file is not None and operands and (
            not append or all(shell.build.fs.kind(shell.path(o)) is Kind.ABSENT for o in operands)):
        # 'cat x.py | tee DEST...': each DEST holds x.py's bytes, as 'cp x.py DEST' would give them (an append
        # too, onto what is not there yet).
        shell.emit_unknown()
        copied = [transfer(shell, ctx, "tee", [shell.piped_file], shell.path(o), recursive=False, into=False)
                  for o in operands if not o.startswith("/dev/")]
        return all(copied)
    for operand in operands:
        path = shell.path(operand)
        if path in shell.build.fs.files and append:
            shell.unread(ctx, f"appends to {path}, which the build placed there", scope=(path,))
        elif not append:
            shell.build.fs.write_other(path)
    shell.emit_unknown()
    return True


OUTPUT_BUILTINS: dict[str, Builtin] = {
    "echo": _echo, "printf": _printf, "pwd": _path_tool, "dirname": _path_tool, "basename": _path_tool,
    "realpath": _path_tool, "readlink": _path_tool, "test": _test, "[": _test, "[[": _test, "tee": _tee,
}
