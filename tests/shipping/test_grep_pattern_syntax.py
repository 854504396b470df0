"""Which lines ``grep PATTERN`` selects, pattern by pattern, where the reader reads the pattern as GNU grep does.

``grep -e PATTERN list.txt | while IFS= read -r f; do cp x.py "/dest/=$f"; done``
installs one file for each line grep prints, so what lands under /dest shows
the lines the reader took grep to select. It reads the patterns GNU grep and
Python's ``re`` read alike: text, ``.``, ``*`` after something it repeats (a
BRE's leading ``*`` is itself), ``^`` first and ``$`` last, ``\\`` before one
of ``.[]*^$\\/``, bracket expressions of single characters (``]`` first, or
right after ``^``, is a member), and, in a BRE, ``+?|(){}`` as themselves.
Every other pattern (back-references, intervals, alternation, ranges,
classes, ``\\<``/``\\w``-style escapes, anchors in the middle, a star with
nothing to repeat in an ERE, ``a**``) is refused, and grep's output is left
to the image. Each row of SELECTED was run through GNU grep 3.8 (``grep -e``
and ``grep -E -e``) under bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

RUNS = ["bash i.sh", "dash i.sh"]


def _installed(pattern: str, extended: bool, lines: list[str], run: str = "bash i.sh") -> tuple[list[str], list[str]]:
    """The lines whose copies the build made, and the kinds of the notes, when grep picks from ``lines``."""
    script = (f"grep {'-E ' if extended else ''}-e '{pattern}' list.txt"
              " | while IFS= read -r f; do cp x.py \"/dest/=$f\"; done\n")
    plan = run_script(script, run, files={"s/list.txt": "".join(line + "\n" for line in lines)})
    return [path.removeprefix("/dest/=") for path in in_dest(plan)], [n.kind for n in plan.notes]


# (pattern, ERE, the lines of the list, the lines GNU grep 3.8 selects)
SELECTED = [
    ("a.b", False, ["ab", "a.b", "axb"], ["a.b", "axb"]),
    ("^a", False, ["a", "ba", "^a"], ["a"]),
    ("b$", True, ["ab", "ba", "b$"], ["ab"]),
    ("^$", False, ["", "a", "$"], [""]),
    ("*a", False, ["a", "*a", "**a"], ["*a", "**a"]),  # a BRE's leading star is itself
    ("**", False, ["", "a", "*", "**"], ["", "a", "*", "**"]),  # ...and the next one repeats it: any line
    ("^*", False, ["*", "a*", "a"], ["*"]),  # a star right after the leading '^' is itself too
    ("a+*b", False, ["ab", "a+b", "a++b", "a+*b", "b"], ["ab", "a+b", "a++b"]),  # in a BRE '+' is text to repeat
    ("(x)*y", False, ["(x)y", "(x)))y", "(xy", "x)y"], ["(x)y", "(x)))y", "(xy"]),
    ("a\\.", False, ["a", "a.", "ab", "xa.y"], ["a.", "xa.y"]),  # an escape as the pattern's last atom
    ("a\\.*b", False, ["ab", "a.b", "a..b", "a*b", "acb"], ["ab", "a.b", "a..b"]),  # the star repeats the dot
    ("\\$a", False, ["$a", "a", "\\$a"], ["$a", "\\$a"]),
    ("a\\\\b", False, ["a\\b", "ab", "a\\\\b"], ["a\\b"]),
    ("\\[a\\]", True, ["[a]", "a", "[a"], ["[a]"]),
    ("aXb", True, ["aXb", "axb", "ab"], ["aXb"]),
    ("[ab]", False, ["a", "b", "X", "XX", "c", ""], ["a", "b"]),
    ("[ab]c", False, ["ac", "bc", "c", "abc", "xc"], ["ac", "bc", "abc"]),
    ("x[ab]*y", False, ["xy", "xay", "xaby", "xa*y", "xcy"], ["xy", "xay", "xaby"]),  # the star repeats the bracket
    ("[.*]", False, [".", "*", "a"], [".", "*"]),  # '.' and '*' in brackets are themselves
    ("[a]b]", False, ["ab]", "ab", "b]", "a]", "]"], ["ab]"]),  # the first ']' closes it
    ("[]]", False, ["]", "a", "[]"], ["]", "[]"]),  # a ']' first is a member
    ("[]a]b", False, ["]b", "ab", "b", "]a"], ["]b", "ab"]),
    ("x][^b]", False, ["x]a", "x]b", "x]", "]a"], ["x]a"]),  # a ']' outside brackets is itself
    ("[^a]", False, ["a", "aa", "ab", ""], ["ab"]),
    ("[^]]", False, ["]", "]]", "a", "]a"], ["a", "]a"]),  # ...and so is one right after '^'
    ("[^]a]", False, ["]", "a", "b", "]a", ""], ["b"]),
    ("[^]a]b]", False, ["bb]", "ab]", "]b]", "b]", "cb]", "b"], ["bb]", "cb]"]),
]


@pytest.mark.parametrize(("pattern", "extended", "lines", "selected"), SELECTED)
@pytest.mark.parametrize("run", RUNS)
def test_the_reader_installs_the_lines_gnu_grep_selects(pattern: str, extended: bool, lines: list[str],
                                                       selected: list[str], run: str) -> None:
    assert _installed(pattern, extended, lines, run) == (sorted(selected), [])


# (pattern, ERE): where Python's re would read the pattern otherwise than grep, or its meaning depends on the locale
REFUSED = [
    ("\\(a\\)\\1", False), ("a\\{2\\}", False), ("a\\|b", False), ("a\\+", False), ("a\\?", False),  # GNU's BRE
    ("(a)", True), ("a{2}", True), ("a|b", True), ("a+", True), ("a?", True),  # ERE operators
    ("*a", True), ("^*a", True), ("a**", False), ("a**", True),  # a star with nothing to repeat, or twice over
    ("\\<a", False), ("a\\>", False), ("\\ba", False), ("\\w", False), ("\\s", False), ("a\\X", False),  # escapes
    ("a\\", False),  # a backslash with nothing after it
    ("[a-c]", False), ("[[:alpha:]]", False), ("[[.a.]]", False), ("[a\\]", False),  # grep's '\' in brackets is text
    ("[ab", False), ("[", False), ("[]", False), ("[^]", False),  # no bracket closes
    ("a^b", False), ("a$b", False), ("a$\\|b", False), ("a|^b", True), ("a$|b", True),  # anchors in the middle
]


@pytest.mark.parametrize(("pattern", "extended"), REFUSED)
def test_a_pattern_grep_and_python_read_apart_leaves_the_output_to_the_image(pattern: str, extended: bool) -> None:
    assert _installed(pattern, extended, ["a", "aa", "b", "ab", "abc", "[a]", "*a", "a\\"]) == ([], ["unread"])
