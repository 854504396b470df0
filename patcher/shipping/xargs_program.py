"""``xargs``: the command it builds from its standard input, run as GNU xargs 4.9 runs it.

``grep -v '^#' files.txt | xargs -I{} cp {} "$DEST"`` installs what a list
in the context names; ``find ... | xargs rm -rf`` removes what find lists.
Where the reader knows the input, xargs splits it as GNU xargs does
(blanks and newlines, quotes and backslashes; lines under ``-I``, NULs
under ``-0``, one character under ``-d``) and each command it builds runs.
Where it does not, what the command could change is said: the paths on
its line for a copy (``xargs cp -t DEST``), anything for a program that
changes the files it is given (``xargs rm``), nothing for one that reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .shell_nodes import decimal

if TYPE_CHECKING:
    from .shell_interpreter import Shell
    from .shell_records import CommandContext

# xargs's options (GNU findutils 4.9): letters without a value, and those that take one (in the same word or the
# next), long names likewise. -i, -l and -e take an optional value in the same word only.
_SHORT = "0prtx"
_SHORT_VALUED = "aEdILnPs"
_OPTIONAL = "eil"
_LONG = frozenset({"null", "no-run-if-empty", "verbose", "exit", "interactive", "open-tty", "show-limits"})
_LONG_VALUED = frozenset({"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs",
                          "max-chars", "process-slot-var"})
_LONG_NAMES = {"null": "0", "no-run-if-empty": "r", "verbose": "t", "exit": "x", "interactive": "p",
               "open-tty": "o", "arg-file": "a", "delimiter": "d", "eof": "E", "replace": "I", "max-lines": "L",
               "max-args": "n", "max-procs": "P", "max-chars": "s",
               # only long: --show-limits prints xargs's limits to standard error and runs as without it;
               # --process-slot-var gives each command a variable of its own, which the reader does not follow
               "show-limits": "show-limits", "process-slot-var": "process-slot-var"}
_MAX_COMMANDS = 1_000  # the commands one xargs may build for the reader to run them
_MAX_ITEMS = 10_000  # and the items it may read for them


@dataclass
class XargsLine:
    options: dict[str, str] = field(default_factory=dict)  # by letter
    command: list[str] = field(default_factory=list)


def read_xargs(args: list[str]) -> XargsLine | str:
    """``args`` as xargs reads them (options up to the command), or why the reader does not follow them."""
    line = XargsLine()
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] != "-":
        arg = args[index]
        index += 1
        if arg == "--":
            break
        if arg.startswith("--"):
            name, equals, value = arg[2:].partition("=")
            if name in _LONG and not equals:
                line.options[_LONG_NAMES[name]] = ""
            elif name in _LONG_VALUED:
                if not equals:
                    if index >= len(args):
                        return f"xargs {arg} without its value"
                    value, index = args[index], index + 1
                line.options[_LONG_NAMES[name]] = value
            else:
                return f"xargs {arg}"
            continue
        letters = arg[1:]
        for position, letter in enumerate(letters):
            if letter in _OPTIONAL:
                line.options[letter.upper() if letter != "e" else "E"] = letters[position + 1:] or (
                    "{}" if letter == "i" else "1" if letter == "l" else "")
                break
            if letter in _SHORT_VALUED:
                value = letters[position + 1:]
                if not value:
                    if index >= len(args):
                        return f"xargs -{letter} without its value"
                    value, index = args[index], index + 1
                line.options[letter] = value
                break
            if letter not in _SHORT:
                return f"xargs -{letter}"
            line.options[letter] = ""
    line.command = args[index:] or ["echo"]
    if line.options.keys() & {"a", "E", "p", "o", "s", "L", "process-slot-var"} or "d" in line.options and len(
            _delimiter(line.options["d"]) or "xx") != 1:
        return "xargs with an option the reader does not follow"
    if "n" in line.options and not decimal(line.options["n"]):
        return f"xargs -n {line.options['n']}"  # GNU xargs refuses -n 0 ("should be >= 1") and runs nothing
    return line


def _delimiter(text: str) -> str | None:
    """-d's character: itself, or an escape (``\\n``, ``\\t``, ``\\0``...)."""
    escapes = {"\\n": "\n", "\\t": "\t", "\\0": "\0", "\\\\": "\\", "\\r": "\r"}
    return escapes.get(text, text if len(text) == 1 else None)


def split_input(line: XargsLine, text: str) -> list[str] | None:
    """The items xargs reads from ``text``; None where its quoting is one xargs refuses (an unmatched quote)."""
    items, unmatched = read_input(line, text)
    return None if unmatched else items


def read_input(line: XargsLine, text: str) -> tuple[list[str], bool]:
    """The items xargs reads from ``text`` up to an unmatched quote, and whether it meets one: GNU xargs then runs
    the command for the items it has read before the one the quote is in (the line it is on, under -I), and fails."""
    if "0" in line.options:
        return ([item for item in text.split("\0") if item] if text else []), False
    if "d" in line.options:
        delimiter = _delimiter(line.options["d"])
        assert delimiter is not None
        items = text.split(delimiter)
        return (items[:-1] if items and items[-1] == "" else items), False
    if "I" in line.options:
        # Each line is one item: blanks inside it stay, those it starts with go (isspace's: \r, \v and \f as
        # well), quotes still group, and a backslash before the newline joins the next line to it.
        items = []
        for raw in _lines(text):
            words, unmatched = _words(raw.lstrip(" \t\r\v\f"), blanks_split=False)
            if unmatched:
                return items, True
            if words:
                items.append(words[0])
        return items, False
    return _words(text, blanks_split=True)


def _lines(text: str) -> list[str]:
    """``text`` split at each newline no backslash escapes."""
    lines, start, index = [], 0, 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == "\n":
            lines.append(text[start:index])
            start = index + 1
        index += 1
    lines.append(text[start:])
    return lines


def _words(text: str, blanks_split: bool) -> tuple[list[str], bool]:
    """The words of ``text`` up to an unmatched quote (not the one it is in), and whether there is one."""
    words: list[str] = []
    current: list[str] = []
    started = False
    index = 0
    while index < len(text):
        char = text[index]
        if char in "'\"":
            end = text.find(char, index + 1)
            if end < 0 or "\n" in text[index + 1:end]:
                return words, True  # xargs: unmatched quote
            current.append(text[index + 1:end])
            started, index = True, end + 1
            continue
        if char == "\\":
            # It takes the next character as it is; at the very end of the input there is none, and it goes.
            current.append(text[index + 1:index + 2])
            started, index = True, index + 2
            continue
        if char == "\n" or blanks_split and char in " \t":
            if started:
                words.append("".join(current))
            current, started = [], False
        else:
            current.append(char)
            started = True
        index += 1
    if started:
        words.append("".join(current))
    return words, False


def commands(line: XargsLine, items: list[str]) -> list[list[str]]:
    """The command lines xargs runs for ``items``: one per item under -I (its string replaced in each word), in
    groups of -n, or all at once; one with no item on empty input unless -r."""
    if "I" in line.options:
        mark = line.options["I"]
        return [[word.replace(mark, item) for word in line.command] for item in items]
    if not items:
        return [] if "r" in line.options else [list(line.command)]
    size = decimal(line.options.get("n", "")) or len(items)  # no -n: every item in one command
    return [[*line.command, *items[at:at + size]] for at in range(0, len(items), size)]


def run_xargs(shell: "Shell", argv: list[str], ctx: "CommandContext", stdin: str | None) -> bool | None:
    """Run ``xargs ARGS`` on its standard input as the reader knows it; see the module's docstring."""
    import posixpath

    from .command_lookup import note_program
    from .find_program import FIND_READS
    from .printing_programs import _standard_input
    from .shell_commands import dispatch
    from .shell_words import is_known
    from .tool_options import read_options

    line = read_xargs(argv[1:])
    if isinstance(line, str):
        return note_program(shell, ctx, line)
    program = posixpath.basename(line.command[0])
    if not all(is_known(word) for word in line.command):
        return note_program(shell, ctx, "xargs with a command the reader cannot work out")
    text = _standard_input(shell, stdin)
    items, unmatched = read_input(line, text) if text is not None else (None, False)
    if unmatched and not items:
        shell.note(ctx, "fails", "xargs finds an unmatched quote in its input (status 1) and runs nothing")
        return False
    built = commands(line, items) if items is not None and len(items) <= _MAX_ITEMS else None
    if built is None or len(built) > _MAX_COMMANDS:
        if program in FIND_READS or program in _HARMLESS:
            shell.emit_unknown()
            return None
        if program in ("cp", "install", "ln"):
            # The items are what it copies; where to, its line says: -t DEST, or under -I the last word.
            o = read_options(program, line.command[1:])
            mark = line.options.get("I")
            target = o.values.get("t") or o.values.get("target-directory") or (
                o.operands[-1] if mark is not None and o.operands and mark not in o.operands[-1] else None)
            if target is not None:
                shell.unread(ctx, f"runs {program} on input the reader does not know", scope=(shell.path(target),))
                return None
        return note_program(shell, ctx, f"xargs {program} on input the reader does not know")
    status: bool | None = True
    for command in built:
        result = dispatch(shell, command, ctx)
        if result is False:
            status = False  # xargs goes on, and ends with 123
        elif result is None and status:
            status = None
    if unmatched:
        # It runs the command for the items before the quote, then fails: 123 where one of those failed, else 1.
        shell.note(ctx, "fails", "xargs finds an unmatched quote in its input: it runs the command for the items "
                                 "before it, then fails (status 1, or 123 where one of those commands failed)")
        shell.ended_with(123 if status is False else 1 if status else None)
        return False
    if status is False:
        shell.ended_with(123)
    return status


# Programs that, given any files, change no file's content: what they are given does not matter to the reader.
_HARMLESS = frozenset({"chmod", "chown", "chgrp", "touch", "mkdir"})
