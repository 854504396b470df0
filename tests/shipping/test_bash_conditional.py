"""bash's ``[[ ... ]]``: a compound command of tests, not a program run with ``&&`` cutting it in two.

Inside it ``&&``, ``||``, ``!`` and parentheses combine tests, words are
neither split nor globbed, the right side of ``==``, ``=`` and ``!=`` is a
pattern (its quoted parts match as written), and ``-eq`` and the other
integer tests read arithmetic (``010`` is 8), and ``=~`` matches an
extended regular expression and fills ``BASH_REMATCH``. What only the
image decides (an unknown value, ``<``, file times, a regular expression
Python could read otherwise than glibc) is unknown, and combines as such:
an unknown test ``&&`` a false one is false. Each row's answer is what bash
5.2 gave.
"""

from __future__ import annotations

import signal
from types import FrameType

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "placed"), [
    ("A=abc.py\n[[ $A == *.py ]] && cp x.py /dest/m.py\n", ["/dest/m.py"]),
    ("A=abc.py\n[[ $A == \"*.py\" ]] || cp x.py /dest/q.py\n", ["/dest/q.py"]),  # quoted: matched as written
    ("A=abc.py\nif [[ $A = a* ]]; then cp x.py /dest/a.py; fi\n", ["/dest/a.py"]),
    ("A=abc.py\n[[ $A != *.txt ]] && cp x.py /dest/n.py\n", ["/dest/n.py"]),
    ("A='a b'\n[[ $A == a* ]] && cp x.py /dest/6.py\n", ["/dest/6.py"]),  # not split
    ("A='xy'\n[[ $A == \"x\"* ]] && cp x.py /dest/7.py\n", ["/dest/7.py"]),
    ("A='x*'\n[[ $A == \"x*\" ]] && cp x.py /dest/8.py\n", ["/dest/8.py"]),
    ("P=py\n[[ x.py == *.$P ]] && cp x.py /dest/14.py\n", ["/dest/14.py"]),
    ("[[ x.py == *.[p]y ]] && cp x.py /dest/15.py\n", ["/dest/15.py"]),
    ("[[ x.py == ?.py ]] && cp x.py /dest/16.py\n", ["/dest/16.py"]),
    ("x='*'\n[[ -n $x ]] && cp x.py /dest/24.py\n", ["/dest/24.py"]),  # not globbed
])
def test_the_right_side_of_a_comparison_is_a_pattern(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize(("script", "placed"), [
    ("[[ -f x.py && -d sub ]] && cp x.py /dest/and.py\n", ["/dest/and.py"]),
    ("[[ -f nothere || -d sub ]] && cp x.py /dest/or.py\n", ["/dest/or.py"]),
    ("[[ ! -f nothere ]] && cp x.py /dest/not.py\n", ["/dest/not.py"]),
    ("[[ -d sub &&\n   -f x.py ]] && cp x.py /dest/5.py\n", ["/dest/5.py"]),  # a newline after &&
    ("[[ ( -d sub || -d nope ) && -f x.py ]] && cp x.py /dest/13.py\n", ["/dest/13.py"]),
    ("[[ ! ( -f x.py ) ]] || cp x.py /dest/25.py\n", ["/dest/25.py"]),
    ("[[ x.py == x.py && ( -d sub || -d nope ) ]] && cp x.py /dest/cx.py\n", ["/dest/cx.py"]),
    ("f=x.py\n[[ $f = *.py && -f $f ]] && cp $f /dest/22.py\n", ["/dest/22.py"]),
    ("E=\n[[ -z $E ]] && cp x.py /dest/3.py\n", ["/dest/3.py"]),
    ("[[ a ]] && cp x.py /dest/26.py\n", ["/dest/26.py"]),
    ("[[ '' ]] || cp x.py /dest/27.py\n", ["/dest/27.py"]),
    ("V=010\n[[ $V -eq 8 ]] && cp x.py /dest/10.py\n", ["/dest/10.py"]),  # arithmetic: a leading 0 is octal
    ("V=3\n[[ V+1 -eq 4 ]] && cp x.py /dest/11.py\n", ["/dest/11.py"]),
    ("[[ 1 -lt 2 && 3 -gt 2 ]] && cp x.py /dest/23.py\n", ["/dest/23.py"]),
    ("[[ -a x.py ]] && cp x.py /dest/28.py\n", ["/dest/28.py"]),  # -a: the file exists
    ("[[ -a nothere ]] && cp x.py /dest/29.py\n", []),
    ("[[ -a x.py ]] || cp x.py /dest/30.py\n", []),
    ("set -e\n[[ a == b ]]\ncp x.py /dest/18.py\n", []),  # a false [[ ]] ends a set -e script
    ("set -e\n[[ a == b ]] || true\ncp x.py /dest/19.py\n", ["/dest/19.py"]),
])
def test_tests_combine_inside_the_brackets(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and [n for n in plan.notes if n.kind != "fails"] == []


@pytest.mark.parametrize("test", ["$UNKNOWN_V", "$UNKNOWN_V == a", "x =~ [[:foo:]]", "$UNKNOWN_V =~ ^x$", "a < b", "x.py -nt sub/y.py",
                                  "-s x.py"])
def test_what_the_image_decides_is_unknown(test: str) -> None:
    # Unknown: the reader follows the copy whichever way the list goes, and a false test beside it with && (a
    # true one with ||) still decides; a true one with && (a false one with ||), or '!', leaves it unknown.
    assert in_dest(run_script(f"[[ {test} ]] && cp x.py /dest/u.py\n")) == ["/dest/u.py"]
    assert in_dest(run_script(f"[[ {test} ]] || cp x.py /dest/u.py\n")) == ["/dest/u.py"]
    assert in_dest(run_script(f"[[ {test} && -f nothere ]] && cp x.py /dest/u.py\n")) == []
    assert in_dest(run_script(f"[[ {test} || -f x.py ]] || cp x.py /dest/u.py\n")) == []
    assert in_dest(run_script(f"[[ {test} && -f x.py ]] || cp x.py /dest/u.py\n")) == ["/dest/u.py"]
    assert in_dest(run_script(f"[[ {test} || -f nothere ]] && cp x.py /dest/u.py\n")) == ["/dest/u.py"]
    assert in_dest(run_script(f"[[ ! ( {test} ) ]] || cp x.py /dest/u.py\n")) == ["/dest/u.py"]


def test_dash_has_no_brackets_and_sh_may_not() -> None:
    # dash: '[[' is a command it does not find (127), and '&&' ends it there.
    plan = run_script("[[ -f x.py && -d sub ]] && cp x.py /dest/s.py\n", "dash i.sh")
    assert in_dest(plan) == [] and [(n.kind, n.line) for n in plan.notes if n.file == "s/i.sh"] == [("fails", 1)]
    plan = run_script("[[ -f x.py && -d sub ]] && cp x.py /dest/s.py\n", "sh i.sh")
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 1)]


def test_test_alone_fails() -> None:
    plan = run_script("test && cp x.py /dest/t.py || cp x.py /dest/f.py\n", "dash i.sh")
    assert in_dest(plan) == ["/dest/f.py"]


@pytest.mark.parametrize("test", ["[[ -f == -f ]]", "[[ ]]", "[[ ! ]]", "[[ a b ]]", "[[ ( -f x.py ]]", "[[ ( ]]",
                                  "[[ -f x.py && ]]"])
def test_brackets_bash_cannot_parse_stop_the_script_there(test: str) -> None:
    # bash 5.2 refuses the line ('syntax error in conditional expression', 'conditional binary operator expected',
    # "unexpected token `]]', expected `)'"; nothing at all for '[[ ]]' and '[[ ! ]]') and reads no further; the
    # lines before it have run.
    plan = run_script(f"cp x.py /dest/a.py\n{test} && cp x.py /dest/same.py\ncp x.py /dest/b.py\n")
    assert in_dest(plan) == ["/dest/a.py"]
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 2, "cannot be parsed as shell (syntax error in conditional expression): s/i.sh is not read from "
                    "here on")]


@pytest.mark.parametrize(("script", "placed"), [
    ("[[ abc =~ ^a(b)c$ ]] && cp x.py /dest/m${BASH_REMATCH[1]}.py\n", ["/dest/mb.py"]),
    ("V=1.2.3; [[ $V =~ ^([0-9]+)\\.([0-9]+) ]] && cp x.py /dest/v${BASH_REMATCH[1]}_${BASH_REMATCH[2]}.py\n",
     ["/dest/v1_2.py"]),
    ("[[ abc =~ z ]] || cp x.py /dest/nomatch${#BASH_REMATCH[@]}.py\n", ["/dest/nomatch0.py"]),
    ("[[ 'a b' =~ (a b) ]] && cp x.py /dest/blank.py\n", ["/dest/blank.py"]),  # blanks inside parentheses
    ("[[ xab =~ a|b ]] && cp x.py /dest/alt.py\n", ["/dest/alt.py"]),
    ("r='^a.c$'; [[ abc =~ $r ]] && cp x.py /dest/var.py\n", ["/dest/var.py"]),  # a variable's value is a pattern
    ("[[ abc =~ \"a.c\" ]] || cp x.py /dest/literal.py\n", ["/dest/literal.py"]),  # quoted: matched as written
    ("V=12; [[ $V =~ ^[[:digit:]]+$ ]] && cp x.py /dest/digits.py\n", ["/dest/digits.py"]),
    ("[[ vllm-0.6.3 =~ ^vllm-([0-9.]+)$ ]] && cp x.py \"/dest/${BASH_REMATCH[1]}.py\"\n", ["/dest/0.6.3.py"]),
    ("[[ abc =~ ^(a)(x)?(b) ]] && cp x.py \"/dest/g[${BASH_REMATCH[2]}]${BASH_REMATCH[3]}.py\"\n", ["/dest/g[]b.py"]),
    ("v=a; [[ 'a~/x' =~ ^$v~/x$ ]] && cp x.py /dest/tilde.py\n", ["/dest/tilde.py"]),  # a '~' mid-word is no home
    ("[[ 1x2 =~ ^1\\.2$ ]] || cp x.py /dest/dot.py\n", ["/dest/dot.py"]),  # '\.' matches only a dot
    pytest.param(f"V={'a' * 4096}; [[ $V =~ ^a+$ ]] && cp x.py /dest/subject.py\n", ["/dest/subject.py"],
                 id="a-subject-of-4096-characters"),
    pytest.param(f"r={'a' * 1000}; [[ {'a' * 1000} =~ $r ]] && cp x.py /dest/pattern.py\n", ["/dest/pattern.py"],
                 id="a-pattern-of-1000-characters"),
])
def test_a_regular_expression_match_decides_and_fills_bash_rematch(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize("second", ["[[ abc =~ $PATTERN ]]", "[[ $UNKNOWN_V =~ b ]]", "[[ aa =~ (a+)+$ ]]",
                                    f"[[ {'a' * 4097} =~ a ]]"])
def test_a_regular_expression_the_reader_cannot_know_leaves_bash_rematch_unknown(second: str) -> None:
    # Each [[ =~ ]] sets BASH_REMATCH afresh in bash (after P=z: "[[ abc =~ $P ]]" leaves it empty, bash 5.2): the
    # second here has a pattern or a subject only the image decides, so what the first match left there ("b") is
    # gone and the copy's destination is unknown, not /dest/b.py.
    plan = run_script(f"[[ abc =~ b ]]\n{second}\ncp x.py /dest/${{BASH_REMATCH[0]}}.py\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]
    assert "${BASH_REMATCH[0]}" in plan.notes[0].reason


@pytest.mark.parametrize("regex", ["(a+)+$", "(a|aa)*$", "([a-z]+)*x"])
def test_a_regular_expression_that_could_backtrack_for_ever_is_left_to_the_image(regex: str) -> None:
    # The script is untrusted: a nested quantifier against a long subject would take Python's re exponential time.
    plan = run_script(f"V={'a' * 4000}b\n[[ $V =~ {regex} ]] && cp x.py /dest/u.py\n")
    assert in_dest(plan) == ["/dest/u.py"]  # unknown: the reader follows the copy


def test_an_unclosed_parenthesis_in_a_regular_expression_is_a_syntax_error() -> None:
    plan = run_script("cp x.py /dest/before.py\n[[ a =~ (a ]] && cp x.py /dest/u.py\n")
    assert in_dest(plan) == ["/dest/before.py"] and [(n.kind, n.line) for n in plan.notes] == [("stop", 2)]


def test_where_posix_and_python_could_end_an_alternative_elsewhere_only_the_status_is_known() -> None:
    # bash (POSIX, the longest of the leftmost matches) puts "ab" in BASH_REMATCH; Python's re would stop at "a".
    plan = run_script("[[ xab =~ a|ab ]] && cp x.py /dest/m.py\ncp x.py /dest/${BASH_REMATCH[0]}.py\n")
    assert in_dest(plan) == ["/dest/m.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]


def _status(test: str, setup: str) -> bool | None:
    """What the reader makes of ``[[ TEST ]]``'s status: True, False, or None when it follows both ways."""
    plan = run_script(f"{setup}\n[[ {test} ]] && cp x.py /dest/true.py\n[[ {test} ]] || cp x.py /dest/false.py\n")
    return {("/dest/true.py",): True, ("/dest/false.py",): False}.get(tuple(in_dest(plan)))


@pytest.mark.parametrize(("regex", "subject", "status"), [
    ("(b*(a)+\\.)", "ba.", True),  # '+' quantifies the group (a), which holds none
    # A quantified group that holds a quantifier or a '|': Python's re could backtrack for ever on a long subject.
    ("(a+)+$", "aa", None), ("(a+)*", "aa", None), ("(a*)+", "aa", None), ("(a+)?", "aa", None),
    ("(a+){2,}", "aa", None), ("(|x)+", "x", None), ("\\((a+)+", "(aa", None), ("(\\)a+)+", ")a", None),
    # An escaped parenthesis opens or closes no group; a quantifier before a group is not inside it.
    ("\\(a+\\)+", "(aa)", True), ("a*(b)+", "b", True), ("(ab)+c*", "abd", True),
    # Forms glibc reads otherwise than Python: \d, \S, a backslash inside brackets, a class the table lacks.
    ("\\d", "d", None), ("\\S", "x", None), ("[\\.]", "x\\y", None), ("[[:foo:]x]", "x", None),
    ("[[:alpha:]]+x", "abx", True), ("[[:alpha:]]x", "1x", False),
])
def test_which_regular_expressions_the_reader_decides(regex: str, subject: str, status: bool | None) -> None:
    # bash 5.2 matches each subject here (and says 2 for [[:foo:]]) but for the last; unknown (None): the image decides.
    assert _status("$V =~ $r", f"r='{regex}'; V='{subject}'") is status


def test_a_regular_expression_is_read_in_bounded_time() -> None:
    def too_long(signum: int, frame: FrameType | None) -> None:
        raise TimeoutError("reading [[ =~ ]] did not end")

    previous = signal.signal(signal.SIGALRM, too_long)
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        assert _status("$V =~ $r", "r='^(ab)+[a-z]*\\.(c|d)$'; V=ababx.d") is True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# bash 5.2: a '~' that starts the pattern of '=~' is $HOME (quoted, it is the character itself); inside the
# pattern it is a character.
@pytest.mark.parametrize(("script", "placed"), [
    ("HOME=/h\n[[ /h =~ ~ ]] && cp x.py /dest/home.py\n[[ '~' =~ ~ ]] || cp x.py /dest/tilde.py\n",
     ["/dest/home.py", "/dest/tilde.py"]),
    ("HOME=/root\n[[ /root/x =~ ~/x ]] && cp x.py /dest/h.py\n", ["/dest/h.py"]),
    ("[[ '~' =~ \"~\" ]] && cp x.py /dest/q.py\n", ["/dest/q.py"]),
])
def test_a_tilde_starting_a_regular_expression_is_the_home_folder(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


@pytest.mark.parametrize(("script", "placed"), [
    # dash 0.5.12: "[[: not found", status 127; '&&' at a line's end joins the next line, which does not run.
    ("[[ -f x.py &&\ncp x.py /dest/a.py\ncp x.py /dest/after$?.py\n", ["/dest/after127.py"]),
    ("[[ -f x.py ]] || cp x.py /dest/c$?.py\n", ["/dest/c127.py"]),
])
def test_under_dash_double_brackets_are_a_command_not_found_and_and_and_ends_it(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script, "dash i.sh")) == placed
