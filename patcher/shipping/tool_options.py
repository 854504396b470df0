"""How each program the reader follows reads its command line: which options it knows, and which take a value.

Getting this wrong moves a word between option and operand: ``mkdir
--context /w/new`` makes ``/w/new`` (``--context`` takes a value only
after ``=``), ``pip install --log /tmp/pip.log vllm`` installs ``vllm``,
not a path. So the tables are the tools' own, from their ``--help``
(GNU coreutils 9.1, with the ``--update[=WHEN]`` and ``--debug`` of later
releases; pip 23.2; GNU sed 4.9; GNU grep 3.8), and tests/shipping/test_tool_options.py
holds them against an independent copy. An option the reader does not
list is reported as unknown, and the command that has one is unread.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Options:
    """A command line read by getopt's rules."""

    flags: frozenset[str]  # short letters and long names ("r", "recursive")
    values: dict[str, str]  # options that take a value: name -> value (last one wins)
    operands: list[str]
    unknown: list[str]
    every: dict[str, list[str]] = field(default_factory=dict)  # each value given, in order (grep -e A -e B)


@dataclass(frozen=True)
class OptionTable:
    """A program's options: letters and long names without a value, and those that take one.

    A long name in both ``long`` and ``long_valued`` takes an optional
    value (``--preserve[=LIST]``): only its ``=`` form gives one.
    """

    short: str
    short_valued: str
    long: frozenset[str]
    long_valued: frozenset[str]
    # The program's other long options (come back unknown): an abbreviation that could name one is not resolved.
    others: frozenset[str] = frozenset()
    abbreviations: bool = True  # whether a unique prefix of a long name stands for it


def _table(short: str, short_valued: str, long: str, long_valued: str, others: str = "help version",
           abbreviations: bool = True) -> OptionTable:
    return OptionTable(short, short_valued, frozenset(long.split()), frozenset(long_valued.split()),
                       frozenset(others.split()), abbreviations)


# Long options with an optional value are in both lists.
TABLES: dict[str, OptionTable] = {
    "cp": _table(
        "aRrdfHiLlnPpsTuvxbZ", "tS",
        "archive recursive force interactive no-clobber preserve no-dereference dereference link symbolic-link "
        "update verbose one-file-system no-target-directory remove-destination strip-trailing-slashes backup "
        "parents debug reflink copy-contents context",
        "target-directory suffix preserve no-preserve sparse reflink backup update context",
        "attributes-only keep-directory-symlink help version"),
    "mv": _table(
        "bfinTuvZ", "tS",
        "force interactive no-clobber no-target-directory update verbose strip-trailing-slashes backup debug context",
        "target-directory suffix backup update"),
    "install": _table(
        "bcCdDpsTvZ", "gmotS",
        "compare directory preserve-timestamps strip verbose no-target-directory backup preserve-context debug "
        "context",
        "group mode owner target-directory suffix backup strip-program context"),
    "ln": _table(
        "bfiLnPrsTv", "tS",
        "symbolic force no-dereference no-target-directory verbose relative interactive logical physical backup",
        "target-directory suffix backup", "directory help version"),
    "rsync": _table(
        "avrlptgoDzhPqucWHAXSxnim", "",
        "archive recursive verbose quiet progress partial links perms times group owner devices specials compress "
        "human-readable checksum update delete whole-file hard-links acls xattrs sparse one-file-system stats "
        "no-perms no-owner no-group no-times mkpath itemize-changes inplace",
        "chmod chown info out-format log-file", abbreviations=False),
    "rm": _table(
        "rRfidvI", "",
        "recursive force dir verbose interactive one-file-system no-preserve-root preserve-root",
        "interactive preserve-root"),
    "mkdir": _table("pvZ", "m", "parents verbose context", "mode context"),
    "mktemp": _table("duqt", "p", "directory dry-run quiet tmpdir", "suffix tmpdir"),
    "touch": _table("acfhm", "drt", "no-create no-dereference", "date reference time"),
    "sed": _table(
        "nrEsuzi", "efl",
        "quiet silent regexp-extended separate unbuffered null-data posix debug in-place sandbox follow-symlinks",
        "expression file in-place line-length"),
    # grep: the options whose meaning the reader follows; any other (-P, -f, -A, -r, -z...) is unknown.
    "grep": _table(
        "qsFEGivxwclnhH", "e",
        "quiet silent no-messages fixed-strings extended-regexp basic-regexp ignore-case no-ignore-case "
        "invert-match line-regexp word-regexp count files-with-matches line-number no-filename with-filename",
        "regexp",
        "perl-regexp file null-data max-count byte-offset line-buffered label only-matching binary-files text "
        "directories devices recursive dereference-recursive include exclude exclude-from exclude-dir "
        "files-without-match initial-tab null before-context after-context context group-separator "
        "no-group-separator color colour help version"),
    # head, tail, cut and tr as text_filters reads them (GNU coreutils 9.1's --help); the rest is unknown there.
    "head": _table("qvz", "cn", "quiet silent verbose zero-terminated", "bytes lines"),
    "tail": _table(
        "fFqvz", "cns", "follow retry quiet silent verbose zero-terminated",
        "bytes lines follow max-unchanged-stats pid sleep-interval"),
    "cut": _table(
        "nsz", "bcdf", "complement only-delimited zero-terminated",
        "bytes characters delimiter fields output-delimiter"),
    "tr": _table("cCdst", "", "complement delete squeeze-repeats truncate-set1", ""),
    # The path printers (output_builtins): what they print is a path the reader works out.
    "basename": _table("az", "s", "multiple zero", "suffix"),
    "dirname": _table("z", "", "zero", ""),
    "realpath": _table(
        "emLPqsz", "", "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks zero",
        "relative-to relative-base"),
    "readlink": _table(
        "femnqsvz", "", "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent verbose "
        "zero", ""),
    # pip install / uninstall (optparse: a long option's value follows it or its '=').
    # ls's own --help (coreutils 9.1): read only for the paths it is given (its status).
    "ls": _table(
        "aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", "ITw",
        "all almost-all author escape ignore-backups directory dired classify file-type full-time "
        "group-directories-first no-group human-readable si dereference-command-line "
        "dereference-command-line-symlink-to-dir inode kibibytes dereference literal numeric-uid-gid "
        "hide-control-chars show-control-chars quote-name recursive reverse size context zero color hyperlink",
        "block-size format hide ignore indicator-style quoting-style sort tabsize time time-style width color "
        "hyperlink classify"),
    "pip": _table(
        "qvUIy", "rceitfC",
        "upgrade force-reinstall no-deps user quiet verbose no-cache-dir pre yes ignore-installed "
        "no-build-isolation break-system-packages no-index no-compile compile disable-pip-version-check "
        "prefer-binary require-hashes isolated dry-run ignore-requires-python use-pep517 no-use-pep517 "
        "check-build-dependencies no-warn-script-location no-warn-conflicts no-clean debug require-virtualenv "
        "no-input no-color no-python-version-warning",
        "requirement constraint editable index-url extra-index-url target prefix root find-links trusted-host "
        "cache-dir root-user-action progress-bar only-binary no-binary upgrade-strategy platform python-version "
        "implementation abi src timeout retries proxy config-settings global-option report log keyring-provider "
        "exists-action cert client-cert use-feature use-deprecated python", abbreviations=False),
}


def read_options(program: str, args: list[str]) -> Options:
    """``args`` as ``program`` reads them (its table in TABLES).

    getopt_long (GNU coreutils, sed) takes any prefix that names one long
    option alone (``cp --recur``): the tables of those programs hold every
    long option of their ``--help``, so a prefix is resolved only where it is
    not ambiguous. rsync (popt) is read by whole names, and so is pip: its
    optparse takes prefixes too, but of options the table does not all hold.
    """
    table = TABLES[program]
    return getopt(args, table.short, table.short_valued, table.long, table.long_valued,
                  others=table.others if table.abbreviations else None)


def getopt(args: list[str], short: str, short_valued: str, long: frozenset[str] | set[str],
           long_valued: frozenset[str] | set[str], others: frozenset[str] | None = None,
           permute: bool = True) -> Options:
    """Split ``args`` into options and operands, GNU-style (options may follow operands; with ``permute`` False,
    as a getopt string starting with ``+`` reads them, the first operand ends the options: ``env cp -r a b``).

    A long option named in both ``long`` and ``long_valued`` takes an
    optional argument (``--preserve[=LIST]``, ``--backup[=CONTROL]``): only
    its ``=`` form gives one, as getopt_long reads it. Given the program's
    ``others`` long options, a prefix of one long name alone stands for it
    (``--recur``); one of several (``--no``) is unknown, as getopt_long
    refuses it as ambiguous.
    """
    flags: set[str] = set()
    values: dict[str, str] = {}
    every: dict[str, list[str]] = {}
    operands: list[str] = []
    unknown: list[str] = []
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            operands.extend(args[index:])
            break
        if arg.startswith("--"):
            name, equals, value = arg[2:].partition("=")
            if others is not None and name and name not in long and name not in long_valued:
                named = {option for option in (*long, *long_valued, *others) if option.startswith(name)}
                name = named.pop() if len(named) == 1 else name
            if name in long and not equals:
                flags.add(name)
            elif name in long_valued:
                if not equals:
                    if index >= len(args):
                        unknown.append(arg)
                        break
                    value = args[index]
                    index += 1
                values[name] = value
                every.setdefault(name, []).append(value)
            else:
                unknown.append(arg)
        elif arg.startswith("-") and arg != "-":
            letters = arg[1:]
            for position, letter in enumerate(letters):
                if letter in short_valued:
                    value = letters[position + 1:]
                    if not value:
                        if index >= len(args):
                            unknown.append(arg)
                            break
                        value = args[index]
                        index += 1
                    values[letter] = value
                    every.setdefault(letter, []).append(value)
                    break
                if letter in short:
                    flags.add(letter)
                else:
                    unknown.append(f"-{letter}")
        elif not permute:
            operands.extend(args[index - 1:])
            break
        else:
            operands.append(arg)
    return Options(frozenset(flags), values, operands, unknown, every)
