"""Programs that run the command after their own options: ``env``, ``timeout``, ``nice``, ``flock``...

Each reads its options up to the first word that is not one (their
getopt strings start with ``+``: ``env cp -r a b`` gives ``-r`` to cp),
then the operands it needs (timeout's duration, taskset's mask, flock's
lock file), then the command. Reading an option wrongly moves a word
between the wrapper and the command: ``env -C sub cp y.py /d`` copies
``sub/y.py``, ``timeout -s KILL 5 cp ...`` runs cp, not ``KILL``. The tables
are the tools' own (GNU coreutils 9.1, util-linux 2.38).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .tool_options import OptionTable, getopt


@dataclass(frozen=True)
class _Wrapper:
    options: OptionTable
    before: int = 0  # operands between the options and the command (a duration, a mask, a lock file)
    no_command: frozenset[str] = frozenset()  # options under which the operands are no command (taskset -p PID)


def _wrapper(short: str, short_valued: str, long: str, long_valued: str, before: int = 0,
             no_command: str = "") -> _Wrapper:
    return _Wrapper(OptionTable(short, short_valued, frozenset(long.split()), frozenset(long_valued.split())),
                    before, frozenset(no_command.split()))


# A long option in both lists takes a value only after '=' (env's --block-signal[=SIG]).
WRAPPERS: dict[str, _Wrapper] = {
    "env": _wrapper("iv0", "CSu", "ignore-environment null debug block-signal default-signal ignore-signal "
                    "list-signal-handling", "chdir unset split-string block-signal default-signal ignore-signal"),
    "timeout": _wrapper("v", "ks", "foreground preserve-status verbose", "kill-after signal", before=1),
    "nice": _wrapper("", "n", "", "adjustment"),
    "stdbuf": _wrapper("", "ioe", "", "input output error"),
    "nohup": _wrapper("", "", "", ""),
    "setsid": _wrapper("cfw", "", "ctty fork wait", ""),
    "ionice": _wrapper("t", "cnpPu", "ignore", "class classdata pid pgid uid", no_command="p P u pid pgid uid"),
    "taskset": _wrapper("acp", "", "all-tasks cpu-list pid", "", before=1, no_command="p pid"),
    # util-linux 2.38: -c/--command is read only after the lock file ('flock -c STRING FILE' is refused)
    "flock": _wrapper("sexnuoF", "wE", "shared exclusive unlock nonblock nb close no-fork verbose",
                      "timeout wait conflict-exit-code", before=1),
}

# The status a wrapper's usage error gives: coreutils' 125 (EXIT_CANCELED), util-linux's own (flock's EX_USAGE 64;
# setsid, taskset and ionice 1). Checked with coreutils 9.1 and util-linux 2.38.
USAGE_STATUS = {"flock": 64, "setsid": 1, "taskset": 1, "ionice": 1}

_LEGACY_NICE = re.compile(r"-[-+]?[0-9]+")  # nice -5, nice --5: an adjustment, written before POSIX's -n


@dataclass
class Wrapped:
    """What a wrapper runs: the command's words, in which folder, with which environment.

    ``problem``: why the reader does not follow it (an option it does not
    know, a form that runs no command); ``fails``: why the wrapper itself
    refuses the line (its status is ``USAGE_STATUS``'s, else 125; the command does not run).
    """

    command: list[str] = field(default_factory=list)
    chdir: str | None = None  # env -C DIR
    clear: bool = False  # env -i: the command inherits no variable
    unset: list[str] = field(default_factory=list)  # env -u NAME
    assignments: dict[str, str] = field(default_factory=dict)  # env NAME=VALUE
    shell_string: str | None = None  # flock FILE -c STRING: sh -c STRING
    problem: str | None = None
    fails: str | None = None


def read_wrapper(program: str, args: list[str]) -> Wrapped:
    """``args`` as ``program`` reads them: its options, the operands it takes, then the command it runs."""
    wrapper = WRAPPERS[program]
    if program == "nice" and args and _LEGACY_NICE.fullmatch(args[0]):
        args = args[1:]
    table = wrapper.options
    # getopt_long takes a prefix that names one long option alone (timeout --sig=KILL).
    o = getopt(args, table.short, table.short_valued, table.long, table.long_valued, others=frozenset(),
               permute=False)
    if o.unknown:
        return Wrapped(problem=f"{program} {o.unknown[0]}")
    given = dict.fromkeys(o.flags, "") | o.values
    rest = o.operands
    if program == "env" and rest[:1] == ["-"]:  # 'env -' is env -i
        given["i"], rest = "", rest[1:]
    if given.keys() & wrapper.no_command:
        return Wrapped(problem=f"{program} {' '.join(args)}, which works on running processes")
    unset = o.every.get("u", []) + o.every.get("unset", [])
    return _command(program, given, rest, wrapper.before, unset)


# Wrappers that, given no command, only print something (the environment, the niceness, the I/O class).
_PRINT_ALONE = frozenset({"env", "nice", "ionice"})


def _command(program: str, given: dict[str, str], rest: list[str], before: int, unset: list[str]) -> Wrapped:
    wrapped = Wrapped()
    if program == "env":
        wrapped.clear = "i" in given or "ignore-environment" in given
        wrapped.unset = unset
        wrapped.chdir = given.get("C", given.get("chdir"))
        split = given.get("S", given.get("split-string"))
        if split is not None:
            if re.search(r"[\\'\"$#]", split):
                return Wrapped(problem=f"env -S {split!r}, whose quoting and escapes the reader does not follow")
            rest = split.split() + rest
        while rest and "=" in rest[0]:  # '=x' too: GNU env 9.1 sets it (a variable with no name)
            name, _, value = rest.pop(0).partition("=")
            wrapped.assignments[name] = value
        if rest and ("0" in given or "null" in given):
            wrapped.fails = "env cannot end its listing with NUL (-0) and run a command"
        elif not rest and wrapped.chdir is not None:
            wrapped.fails = "env must be given a command with --chdir (-C)"
    operands, wrapped.command = rest[:before], rest[before:]
    if program == "flock":
        string = None
        if wrapped.command[:1] in (["-c"], ["--command"]):  # flock FILE -c STRING
            if len(wrapped.command) != 2:
                return Wrapped(fails="flock -c takes exactly one command" if len(wrapped.command) > 2
                               else "flock -c is missing its command")
            string, wrapped.command = wrapped.command[1], []
        wrapped.shell_string = string
        if string is not None or operands and operands[0].isdigit() and not wrapped.command:
            return wrapped  # sh -c STRING under the lock, or a lock taken on an open file descriptor
    if wrapped.fails is None and (len(operands) < before or not wrapped.command and program not in _PRINT_ALONE):
        wrapped.fails = f"{program} is missing an operand"
    return wrapped
