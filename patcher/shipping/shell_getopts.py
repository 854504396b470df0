"""``getopts OPTSTRING NAME [ARG...]``: the option loop of an install script, as bash and dash run it.

Each call reads the next option of ARG (the positional parameters when
none are given), starting at ``$OPTIND``: NAME gets the option's letter,
``OPTARG`` its argument (the rest of the word, or the next word), and the
status is 0. The options end at the first word that is not one (a word not
starting with ``-``, a ``-`` alone) or after ``--``; then NAME is ``?``,
OPTIND indexes the first operand and the status is 1. A letter OPTSTRING
does not list makes NAME ``?``; one whose argument is missing makes NAME
``?`` too, or ``:`` when OPTSTRING starts with ``:`` (then OPTARG holds the
letter). Where bash and dash differ (OPTARG after a letter without an
argument: bash unsets it, dash empties it; OPTIND inside ``-ab``: bash
keeps it on that word, dash moves it on) each is followed, and under
``sh`` OPTARG there is unknown. Checked with bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .shell_nodes import decimal
from .shell_words import is_known

if TYPE_CHECKING:
    from .shell_interpreter import Shell
    from .shell_records import CommandContext


def getopts(shell: "Shell", argv: list[str], ctx: "CommandContext", env: dict[str, str],
            stdin: str | None) -> bool | None:
    if len(argv) < 3:
        shell.note(ctx, "fails", "getopts needs an option string and a name")
        shell.ended_with(2)  # bash and dash print their usage and return 2
        return False
    optstring, name = argv[1], argv[2]
    words = argv[3:] if len(argv) > 3 else list(shell.positional)
    optind = shell.lookup("OPTIND") or "1"
    number = decimal(optind)
    if not (is_known(optstring) and is_known(name)) or number is None:
        _unknown(shell, argv, name)
        return None
    # Where in a word like -abc the last call stopped: kept while OPTIND is what that call left it at.
    index, offset = (shell.getopts_at[1], shell.getopts_at[2]) if shell.getopts_at and \
        shell.getopts_at[0] == optind else (number - 1, 1)
    index = max(index, 0)  # OPTIND 0 (or less) is read as 1
    if index > len(words) and shell.program == "dash":
        index, offset = 0, 1  # dash starts again from the first word; bash ends past the last
    if index >= len(words):
        return _end(shell, name, len(words))
    word = words[index]
    if not is_known(word):
        _unknown(shell, argv, name)
        return None
    if offset == 1:
        if word == "--":
            return _end(shell, name, index + 1)
        if word[:1] != "-" or word == "-":
            return _end(shell, name, index)
    letter = word[offset]
    offset += 1
    silent = optstring[:1] == ":"
    # ':' is no option letter, except to dash when OPTSTRING starts with it: its search meets that ':' first.
    at = optstring.find(letter) if letter != ":" else 0 if silent and shell.program == "dash" else -1
    argument: str | None = None
    if at < 0:
        found, argument = "?", letter if silent else None  # an option OPTSTRING does not list
    elif optstring[at + 1:at + 2] == ":":
        if offset < len(word):
            found, argument, index, offset = letter, word[offset:], index + 1, 1
        elif index + 1 < len(words):
            found, argument, index, offset = letter, words[index + 1], index + 2, 1
        else:  # its argument is missing
            found, argument = (":", letter) if silent else ("?", None)
            index, offset = index + 1, 1
    else:
        found = letter
        argument = "" if shell.program == "dash" else None
        if shell.program == "sh":
            argument = shell.unknowns.mark("$OPTARG")  # bash unsets it, dash empties it
    if offset >= len(word) and offset > 1:
        index, offset = index + 1, 1  # that word is used up
    shell.assign(name, found)
    _set_optarg(shell, argument)
    # bash's OPTIND stays on a word while letters of it are left; dash's moves past it at once.
    shown = index + 1 if offset == 1 or shell.program == "bash" else index + 2
    shell.assign("OPTIND", str(shown))
    shell.getopts_at = (str(shown), index, offset)
    return True


def _end(shell: "Shell", name: str, index: int) -> bool:
    """No option left: NAME is '?', OPTIND indexes the first operand, and the loop ends."""
    shell.assign(name, "?")
    if shell.program == "bash":
        _set_optarg(shell, None)  # bash unsets OPTARG at the end; dash leaves it as it was
    shell.assign("OPTIND", str(max(index, 0) + 1))
    shell.getopts_at = None
    return False


def _set_optarg(shell: "Shell", value: str | None) -> None:
    if value is not None:
        shell.assign("OPTARG", value)
    elif "OPTARG" not in shell.readonly:
        shell.variables.pop("OPTARG", None)
        shell.unset.add("OPTARG")


def _unknown(shell: "Shell", argv: list[str], name: str) -> None:
    """An option string, OPTIND or word the reader cannot work out: what the loop sees is unknown."""
    marker = shell.unknowns.mark(f"$({' '.join(argv)})")
    if is_known(name):
        shell.assign(name, marker)
    shell.assign("OPTARG", marker)
    shell.getopts_at = None
