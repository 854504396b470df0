"""What ``grep`` prints of a text the reader knows, where it reads the pattern as grep does.

``grep -v '^#' files.txt | while read f; do cp "$f" DEST; done`` installs
what a list in the context names: the reader knows the list, so it knows
the lines grep selects. The patterns it reads are those on which GNU grep
and Python's ``re`` agree: text, ``.``, ``*`` after something to repeat,
``^`` first and ``$`` last only, ``\\.``-style escapes and bracket
expressions of single characters; anything else (ranges, classes, ERE's
``+?|(){}``), or an option that prints counts, names, numbers or context,
leaves what it prints to the image. Each row was run through GNU grep 3.8.
"""

from __future__ import annotations

import re

import pytest

from patcher.shipping.printing_programs import _regex
from tests.shipping.conftest import in_dest, run_script

LIST = {"s/list.txt": "# files to install\nx.py\n\nsub/y.py\n# sub/z.py\n"}


@pytest.mark.parametrize(("script", "placed"), [
    ("grep -v '^#' list.txt | while read f; do [ -n \"$f\" ] && cp \"$f\" /dest/; done\n",
     ["/dest/x.py", "/dest/y.py"]),
    ("for f in $(grep -v -e '^#' -e '^$' list.txt); do cp $f /dest/; done\n", ["/dest/x.py", "/dest/y.py"]),
    ("for f in $(grep '\\.py$' list.txt | grep -v '#'); do cp $f /dest/; done\n", ["/dest/x.py", "/dest/y.py"]),
    ("for f in $(grep -x 'x.py' list.txt); do cp $f /dest/; done\n", ["/dest/x.py"]),
    ("for f in $(grep '^sub/.*py' list.txt); do cp $f /dest/; done\n", ["/dest/y.py"]),
    ("for f in $(grep -E '^[xy]' list.txt); do cp $f /dest/; done\n", ["/dest/x.py"]),
    ("for f in $(grep -i '^X\\.PY$' list.txt); do cp $f /dest/; done\n", ["/dest/x.py"]),
    ("for f in $(grep -h -F '.py' list.txt | grep -Fv '#'); do cp $f /dest/; done\n", ["/dest/x.py", "/dest/y.py"]),
    # -h (--no-filename): the lines of several files, one file after the other, without their names
    ("for f in $(grep -h '\\.py$' list.txt list.txt | grep -v '#'); do cp $f /dest/; done\n",
     ["/dest/x.py", "/dest/y.py"]),
    ("for f in $(grep --no-filename -v '#' list.txt list.txt); do cp $f /dest/; done\n", ["/dest/x.py", "/dest/y.py"]),
    ("for f in $(grep -e '' list.txt | grep -v '#'); do cp $f /dest/; done\n", ["/dest/x.py", "/dest/y.py"]),
    # -q (--quiet, --silent) prints nothing; nor does grep without a pattern (a usage error, on stderr)
    ("for f in $(grep -q py list.txt); do cp $f /dest/; done\n", []),
    ("for f in $(grep --quiet py list.txt); do cp $f /dest/; done\n", []),
    ("for f in $(grep --silent py list.txt); do cp $f /dest/; done\n", []),
    ("for f in $(grep -v); do cp $f /dest/; done\n", []),
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_the_lines_grep_selects_from_a_known_list_are_installed(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run, files=LIST)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize("line", [
    "grep -c py list.txt", "grep -n py list.txt", "grep -o py list.txt", "grep -l py list.txt",
    "grep py list.txt list.txt",  # each line after its file's name
    "grep -H py list.txt", "grep --with-filename py list.txt", "grep -c py list.txt list.txt",
    "grep '[a-z]y' list.txt", "grep '\\w' list.txt", "grep -E 'x+' list.txt", "grep 'x$\\|y' list.txt",
    "grep -w 'x.py' list.txt",
])
def test_what_grep_prints_that_the_reader_does_not_work_out_is_unknown(line: str) -> None:
    plan = run_script(f"for f in $({line}); do cp x.py \"/dest/$f\"; done\n", files=LIST)
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


# (pattern, ERE, the lines of LINES that GNU grep 3.8 selects)
LINES = ["", "a", "ab", "abb", "a.b", "a*b", "$a", "a$", "^a", "#x", "[a]", "a]b", "\\a", "a/b", "b", "a+b", "(a)",
         "*", "**"]


@pytest.mark.parametrize(("pattern", "extended", "selected"), [
    ("a.b", False, ["abb", "a.b", "a*b", "a]b", "a/b", "a+b"]),
    ("a\\.b", False, ["a.b"]),
    ("^a", False, ["a", "ab", "abb", "a.b", "a*b", "a$", "a]b", "a/b", "a+b"]),
    ("b$", True, ["ab", "abb", "a.b", "a*b", "a]b", "a/b", "b", "a+b"]),
    ("^$", False, [""]),
    ("*", False, ["a*b", "*", "**"]),  # a BRE's leading star is itself
    ("^*", False, ["*", "**"]),  # ...and so is one right after the leading '^'
    ("ab*", False, ["a", "ab", "abb", "a.b", "a*b", "$a", "a$", "^a", "[a]", "a]b", "\\a", "a/b", "a+b", "(a)"]),
    ("a+b", False, ["a+b"]),  # '+' is itself in a BRE
    ("[^a]", False, ["ab", "abb", "a.b", "a*b", "$a", "a$", "^a", "#x", "[a]", "a]b", "\\a", "a/b", "b", "a+b", "(a)",
                     "*", "**"]),
    ("[]a]b", False, ["ab", "abb", "a]b"]),
    ("\\$a", False, ["$a"]),
    ("\\\\a", False, ["\\a"]),
])
def test_a_pattern_the_reader_reads_selects_what_gnu_grep_selects(pattern: str, extended: bool,
                                                                   selected: list[str]) -> None:
    regex = _regex(pattern, extended)
    assert regex is not None
    assert [line for line in LINES if re.search(regex, line)] == selected


@pytest.mark.parametrize(("pattern", "extended"), [
    ("a**", False), ("ab**", False), ("*a", True), ("a+", True), ("a|b", True), ("(a)", True), ("a{2}", True), ("[a-z]", False),
    ("[[:alpha:]]", False), ("\\w", False), ("\\(a\\)", False), ("a\\|b", False), ("a$b", False), ("a^b", False),
    ("[ab", False), ("\\", False),
])
def test_a_pattern_whose_meaning_depends_on_the_dialect_is_not_read(pattern: str, extended: bool) -> None:
    assert _regex(pattern, extended) is None


def test_a_search_that_could_backtrack_long_is_left_to_the_image() -> None:
    # GNU grep matches in linear time; Python's re would take (line length) ** 3 steps on '.*.*x'.
    files = {"s/list.txt": "a" * 100_000 + "\n"}
    plan = run_script("grep -q '.*.*x' list.txt || cp x.py /dest/none.py\n", files=files)
    assert in_dest(plan) == ["/dest/none.py"] and [n.kind for n in plan.notes] == ["assumed"]
