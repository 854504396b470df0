"""Each program's options are read as the program reads them: which take a value, and which only after ``=``.

A word read on the wrong side of an option moves a path between option
value and operand, and so where a file lands. The tables below are the
programs' own ``--help`` (GNU coreutils 9.1, plus the ``--update[=WHEN]``
and ``--debug`` of later releases; pip 23.2; GNU sed 4.9; GNU grep 3.8), written out
here apart from the reader's. An option a program has but the reader does
not follow (``cp --attributes-only`` copies no bytes) must come back
unknown, so that the command is unread rather than guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from patcher.shipping.tool_options import TABLES, getopt, read_options


@dataclass(frozen=True)
class Program:
    flags: str  # short options without a value
    valued: str  # short options that take one
    long: str  # long options without a value
    long_valued: str  # ... that take one (--name VALUE or --name=VALUE)
    long_optional: str = ""  # ... that take one only as --name=VALUE
    unread: str = ""  # options the program has that the reader leaves to a note


PROGRAMS = {
    "cp": Program("aRrdfHiLlnPpsTuvxbZ", "tS",
                  "archive recursive force interactive no-clobber no-dereference dereference link symbolic-link "
                  "verbose one-file-system no-target-directory remove-destination strip-trailing-slashes parents "
                  "debug copy-contents",
                  "target-directory suffix no-preserve sparse",
                  "preserve reflink backup update context", unread="--attributes-only"),
    "mv": Program("bfinTuvZ", "tS",
                  "force interactive no-clobber no-target-directory verbose strip-trailing-slashes debug context",
                  "target-directory suffix", "backup update"),
    "install": Program("bcCdDpsTvZ", "gmotS",
                       "compare directory preserve-timestamps strip verbose no-target-directory preserve-context "
                       "debug",
                       "group mode owner target-directory suffix strip-program", "backup context"),
    "ln": Program("bfiLnPrsTv", "tS",
                  "symbolic force no-dereference no-target-directory verbose relative interactive logical physical",
                  "target-directory suffix", "backup", unread="-d -F --directory"),
    "rsync": Program("avrlptgoDzhPqucWHAXSxnim", "",
                     "archive recursive verbose quiet progress partial links perms times group owner devices "
                     "specials compress human-readable checksum update delete whole-file hard-links acls xattrs "
                     "sparse one-file-system stats no-perms no-owner no-group no-times mkpath itemize-changes "
                     "inplace",
                     "chmod chown info out-format log-file", unread="--files-from --exclude-from --link-dest"),
    "rm": Program("rRfidvI", "", "recursive force dir verbose one-file-system no-preserve-root", "",
                  "interactive preserve-root"),
    "mkdir": Program("pvZ", "m", "parents verbose", "mode", "context"),
    "mktemp": Program("duqt", "p", "directory dry-run quiet", "suffix", "tmpdir"),
    "touch": Program("acfhm", "drt", "no-create no-dereference", "date reference time"),
    "sed": Program("nrEsuzi", "efl",
                   "quiet silent regexp-extended separate unbuffered null-data posix debug sandbox follow-symlinks",
                   "expression file line-length", "in-place"),
    "grep": Program("qsFEGivxwclnhH", "e",
                    "quiet silent no-messages fixed-strings extended-regexp basic-regexp ignore-case no-ignore-case "
                    "invert-match line-regexp word-regexp count files-with-matches line-number no-filename "
                    "with-filename",
                    "regexp",
                    unread="-P -f -A -B -C -r -R -z -o -m --perl-regexp --file --null-data --max-count --byte-offset "
                           "--line-buffered --label --only-matching --binary-files --text --directories --devices "
                           "--recursive --dereference-recursive --include --exclude --exclude-from --exclude-dir "
                           "--files-without-match --initial-tab --null --before-context --after-context --context "
                           "--group-separator --no-group-separator --color --colour"),
    "ls": Program("aAbBcCdDfFgGhHiklLmnNopqQrRsStuUvxXZ1", "ITw",
                  "all almost-all author escape ignore-backups directory dired file-type full-time "
                  "group-directories-first no-group human-readable si dereference-command-line "
                  "dereference-command-line-symlink-to-dir inode kibibytes dereference literal numeric-uid-gid "
                  "hide-control-chars show-control-chars quote-name recursive reverse size context zero",
                  "block-size format hide ignore indicator-style quoting-style sort tabsize time time-style width",
                  "color hyperlink classify"),
    "pip": Program("qvUIy", "rceitfC",
                   "upgrade force-reinstall no-deps user quiet verbose no-cache-dir pre yes ignore-installed "
                   "no-build-isolation break-system-packages no-index no-compile compile disable-pip-version-check "
                   "prefer-binary require-hashes isolated dry-run ignore-requires-python use-pep517 no-use-pep517 "
                   "check-build-dependencies no-warn-script-location no-warn-conflicts no-clean debug "
                   "require-virtualenv no-input no-color no-python-version-warning",
                   "requirement constraint editable index-url extra-index-url target prefix root find-links "
                   "trusted-host cache-dir root-user-action progress-bar only-binary no-binary upgrade-strategy "
                   "platform python-version implementation abi src timeout retries proxy config-settings "
                   "global-option report log keyring-provider exists-action cert client-cert use-feature "
                   "use-deprecated python"),
}


def _cases(kind: str) -> list[tuple[str, str]]:
    return [(name, option) for name, program in PROGRAMS.items() for option in getattr(program, kind).split()]


@pytest.mark.parametrize(("program", "letters"), [(name, p.flags) for name, p in PROGRAMS.items()])
def test_short_flags_take_no_value_alone_or_clustered(program: str, letters: str) -> None:
    for letter in letters:
        read = read_options(program, [f"-{letter}", "a", "b"])
        assert (read.flags, read.values, read.operands, read.unknown) == ({letter}, {}, ["a", "b"], []), letter
    read = read_options(program, [f"-{letters}", "a"])
    assert read.flags == set(letters) and read.operands == ["a"] and not read.unknown


@pytest.mark.parametrize(("program", "letter"), [(name, letter) for name, p in PROGRAMS.items() for letter in p.valued])
def test_short_options_with_a_value_take_the_next_word_or_the_rest_of_the_cluster(program: str, letter: str) -> None:
    read = read_options(program, [f"-{letter}", "v", "a"])
    assert (read.values, read.operands, read.unknown) == ({letter: "v"}, ["a"], [])
    read = read_options(program, [f"-{letter}v", "a"])
    assert (read.values, read.operands) == ({letter: "v"}, ["a"])


@pytest.mark.parametrize(("program", "option"), _cases("long"))
def test_long_flags_take_no_value(program: str, option: str) -> None:
    read = read_options(program, [f"--{option}", "a", "b"])
    assert (read.flags, read.values, read.operands, read.unknown) == ({option}, {}, ["a", "b"], [])


@pytest.mark.parametrize(("program", "option"), _cases("long_valued"))
def test_long_options_with_a_value_take_the_next_word_or_what_follows_the_equals_sign(program: str,
                                                                                      option: str) -> None:
    read = read_options(program, [f"--{option}", "v", "a"])
    assert (read.flags, read.values, read.operands, read.unknown) == (set(), {option: "v"}, ["a"], [])
    read = read_options(program, [f"--{option}=v=w", "a"])
    assert (read.values, read.operands) == ({option: "v=w"}, ["a"])


@pytest.mark.parametrize(("program", "option"), _cases("long_optional"))
def test_long_options_with_an_optional_value_take_one_only_after_the_equals_sign(program: str, option: str) -> None:
    # 'mkdir --context /w/new' makes /w/new: the word after such an option is an operand.
    read = read_options(program, [f"--{option}", "/w/new"])
    assert (read.flags, read.values, read.operands, read.unknown) == ({option}, {}, ["/w/new"], [])
    read = read_options(program, [f"--{option}=v", "/w/new"])
    assert (read.flags, read.values, read.operands) == (set(), {option: "v"}, ["/w/new"])


@pytest.mark.parametrize(("program", "option"), _cases("unread"))
def test_options_the_reader_does_not_follow_come_back_unknown(program: str, option: str) -> None:
    assert read_options(program, [option, "a", "b"]).unknown == [option]


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_the_reader_knows_no_option_the_program_does_not_have(program: str) -> None:
    expected, table = PROGRAMS[program], TABLES[program]
    long = set(expected.long.split()) | set(expected.long_optional.split())
    valued = set(expected.long_valued.split()) | set(expected.long_optional.split())
    assert (table.long, table.long_valued) == (long, valued)
    assert set(table.short) - set(table.short_valued) == set(expected.flags) and set(table.short_valued) == set(
        expected.valued)


def test_options_follow_operands_and_a_double_dash_ends_them() -> None:
    read = read_options("cp", ["a", "-r", "b", "--", "-v", "--target-directory=x"])
    assert (read.flags, read.operands) == ({"r"}, ["a", "b", "-v", "--target-directory=x"])
    assert read_options("cp", ["-", "a"]).operands == ["-", "a"]  # '-' alone is an operand (stdin)


def test_a_value_missing_at_the_end_of_the_line_is_unknown() -> None:
    assert read_options("cp", ["a", "-t"]).unknown == ["-t"]
    assert read_options("cp", ["a", "--target-directory"]).unknown == ["--target-directory"]
    assert read_options("cp", ["a", "--no-such-option"]).unknown == ["--no-such-option"]


# getopt_long takes a prefix that names one long option alone; rsync's popt and (as read here) pip take whole names.
ABBREVIATING = sorted(set(PROGRAMS) - {"rsync", "pip"})


def _names(program: str) -> set[str]:
    """Every long name the program has: the reader's, those it leaves unread, and --help and --version."""
    p = PROGRAMS[program]
    unread = {o[2:] for o in p.unread.split() if o.startswith("--")}
    return set(f"{p.long} {p.long_valued} {p.long_optional}".split()) | unread | {"help", "version"}


def _shortest_prefixes(program: str) -> list[tuple[str, str, str]]:
    names = _names(program)
    cases = []
    for option in sorted(f"{PROGRAMS[program].long} {PROGRAMS[program].long_valued}".split()):
        prefix = next((option[:n] for n in range(1, len(option))
                       if [name for name in names if name.startswith(option[:n])] == [option]), None)
        if prefix is not None:
            cases.append((program, option, prefix))
    return cases


@pytest.mark.parametrize(("program", "option", "prefix"),
                         [case for program in ABBREVIATING for case in _shortest_prefixes(program)])
def test_a_prefix_that_names_one_long_option_alone_stands_for_it(program: str, option: str, prefix: str) -> None:
    assert read_options(program, [f"--{prefix}", "v", "a"]) == read_options(program, [f"--{option}", "v", "a"])


@pytest.mark.parametrize(("program", "prefix"), [
    ("cp", "--no"), ("cp", "--re"), ("cp", "--a"), ("cp", "--attr"), ("ln", "--d"), ("mv", "--s"),
    ("touch", "--no"), ("sed", "--s"), ("mkdir", "--v"), ("cp", "--h"),
])
def test_a_prefix_of_several_long_options_or_of_one_not_followed_is_unknown(program: str, prefix: str) -> None:
    # cp 9.1: "option '--no' is ambiguous; possibilities: '--no-clobber' '--no-dereference' ..."; '--attr' is
    # --attributes-only, '--h' --help, ln's '--d' --directory: options the reader does not follow.
    read = read_options(program, [prefix, "a", "b"])
    assert read.unknown == [prefix] and read.operands == ["a", "b"]


@pytest.mark.parametrize(("program", "prefix"), [("rsync", "--recur"), ("pip", "--no-cache")])
def test_rsync_and_pip_options_are_read_by_their_whole_names(program: str, prefix: str) -> None:
    assert read_options(program, [prefix, "a"]).unknown == [prefix]


def test_each_value_of_a_repeated_option_is_kept_in_order() -> None:
    # grep -e A -e B searches for both: the last value alone would drop A.
    read = read_options("grep", ["-qe", "A", "--regexp=B", "-e", "C", "FILE"])
    assert (read.every, read.values, read.operands) == ({"e": ["A", "C"], "regexp": ["B"]},
                                                        {"e": "C", "regexp": "B"}, ["FILE"])


def test_without_permuting_the_first_operand_ends_the_options() -> None:
    # A getopt string starting with '+' (env, timeout, nice...): 'env cp -r a b' gives -r to cp.
    o = getopt(["-i", "cp", "-r", "a", "--", "b"], "i", "", frozenset(), frozenset(), permute=False)
    assert (o.flags, o.operands) == (frozenset({"i"}), ["cp", "-r", "a", "--", "b"])
