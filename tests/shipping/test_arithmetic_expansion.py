"""``$((...))`` and bash's ``${NAME:OFFSET:LENGTH}``: the numbers a script builds paths from.

``$((...))`` makes its assignments (``$((x += 2))``, in bash and dash);
bash's ``++``, ``--`` and comma are bash's only (dash reads ``++i`` as
``+(+i)`` and refuses the rest), so under dash or sh they are unknown. What
Python would read where sh does not (``2#101``, ``1_000``, ``0b101``) is
never handed to Python's parser. ``${NAME:OFFSET:LENGTH}`` takes arithmetic
in both places, a negative OFFSET from the end (past the start: nothing), a
negative LENGTH up to that far from the end; on ``$@`` (counted from ``$0``)
and arrays it slices their elements. The ``$`` parameters inside ``$((...))``
(``$#``, ``$1``, ``${10}``, ``$?``, ``$NAME``) are expanded in its text
before it is evaluated (``1$x`` with x empty is 1, ``${a}b`` is no number).
Each row was run under bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("script", "bash", "dash"), [
    ("x=5; : $(( x += 2 )); cp x.py /dest/$x.py\n", ["/dest/7.py"], ["/dest/7.py"]),
    ("x=5; cp x.py /dest/$(( x = 9 ))-$x.py\n", ["/dest/9-9.py"], ["/dest/9-9.py"]),
    ("i=0; cp x.py /dest/$(( i++ ))-$i.py\n", ["/dest/0-1.py"], []),
    ("x=3; y=$(( x *= 2, x + 1 )); cp x.py /dest/$x-$y.py\n", ["/dest/6-7.py"], []),
    ("my_1=4; cp x.py /dest/$(( my_1 + 2 )).py\n", ["/dest/6.py"], ["/dest/6.py"]),
    ("cp x.py /dest/$(( 10 % 3 ))$(( 9 != 9 )).py\n", ["/dest/10.py"], ["/dest/10.py"]),
    ("cp x.py /dest/$(( 1 && 0 ))$(( 0 || 1 ))$(( 2 && 3 ))$(( 0 || 0 )).py\n", ["/dest/0110.py"], ["/dest/0110.py"]),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_arithmetic_expansion_makes_its_assignments(script: str, bash: list[str], dash: list[str], shell: str) -> None:
    plan = run_script(script, f"{shell} i.sh")
    assert in_dest(plan) == (bash if shell == "bash" else dash)
    assert not plan.notes if in_dest(plan) else [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize("expression", ["2#101", "1_000", "0b101", "0o17", "1 # 2", "2 ** 3", "1 << 4", "6 & 3"])
def test_what_python_reads_otherwise_or_the_reader_does_not_follow_is_unknown(expression: str) -> None:
    plan = run_script(f"cp x.py /dest/$(( {expression} )).py\n", "bash i.sh")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_a_variable_holding_an_expression_rather_than_a_number_is_unknown() -> None:
    # bash evaluates x's text as an expression, (1+2)*2 = 6, not the 1+2*2 its text would give pasted in; the
    # reader follows variables that hold integers only.
    plan = run_script('x="1+2"; cp x.py /dest/$(( x * 2 )).py\ncp x.py /dest/after.py\n', "bash i.sh")
    assert in_dest(plan) == ["/dest/after.py"] and [(n.kind, n.line) for n in plan.notes] == [("unread", 1)]


@pytest.mark.parametrize("value", ["\\r1", "1\\r", "\\v1", "\\f1", "\\x1c1", "\\u00a01", "\\u00a0", "\\r"],
                         ids=["cr before", "cr after", "vt", "ff", "x1c", "no-break space", "no-break space alone",
                              "cr alone"])
def test_a_variable_with_other_blanks_than_bash_reads_around_its_number_is_unknown(value: str) -> None:
    # bash 5.2 fails both ("syntax error: operand expected"); the reader took each as 1 or 0 (Python's strip(),
    # and \s).
    plan = run_script(f"x=$'{value}'\ncp x.py /dest/$(( x + 1 )).py\n[[ $x -eq 1 ]] && cp x.py /dest/eq.py\n",
                      "bash i.sh")
    assert in_dest(plan) == ["/dest/eq.py"] and [n.kind for n in plan.notes] == ["unread", "assumed"]


@pytest.mark.parametrize("blank", ["\f", "\x1c", "\r", "\u00a0", "\u2003"],
                         ids=["ff", "x1c", "cr", "no-break space", "em space"])
def test_an_expression_with_other_blanks_than_bash_reads_is_unknown(blank: str) -> None:
    # bash 5.2: "syntax error: operand expected"; Python's parser skipped the blank, and the reader gave 2.
    plan = run_script(f"cp x.py /dest/$(({blank}1 + 1)).py\n", "bash i.sh")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize(("script", "placed"), [
    ("set -- a b c; cp x.py \"/dest/${@:2:1}.py\"\n", ["/dest/b.py"]),
    ("set -- a b c; for f in \"${@:2}\"; do cp x.py /dest/$f.py; done\n", ["/dest/b.py", "/dest/c.py"]),
    ("set -- a b c; for f in \"${@: -1}\"; do cp x.py /dest/l$f.py; done\n", ["/dest/lc.py"]),
    ("set -- a b c; cp x.py \"/dest/${*:2}.py\"\n", ["/dest/b c.py"]),
    ("set -- a b c; for f in \"${@:5}\"; do cp x.py /dest/n$f.py; done; cp x.py /dest/end.py\n", ["/dest/end.py"]),
    ("arr=(p q r s); for f in \"${arr[@]:1:2}\"; do cp x.py /dest/$f.py; done\n", ["/dest/q.py", "/dest/r.py"]),
    ("f=hello; cp x.py /dest/${f:1:-1}.py; cp x.py /dest/${f: -10}z.py; cp x.py /dest/${f:1+1}.py\n",
     ["/dest/ell.py", "/dest/llo.py", "/dest/z.py"]),
    ("f=hello; cp x.py /dest/${f::2}.py; cp x.py /dest/${f:2:0}q.py; cp x.py /dest/${f: -2:1}.py\n",
     ["/dest/he.py", "/dest/l.py", "/dest/q.py"]),
    ("f=hello; n=1; cp x.py /dest/${f:n:n+1}.py\n", ["/dest/el.py"]),
])
def test_bash_substrings_and_slices_are_what_bash_gives(script: str, placed: list[str]) -> None:
    plan = run_script(script, "bash i.sh")
    assert in_dest(plan) == placed and plan.notes == ()


def test_a_substring_bash_refuses_is_unknown() -> None:
    plan = run_script("f=hello; cp x.py /dest/${f:3:-3}.py\n", "bash i.sh")  # "substring expression < 0"
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize(("script", "placed"), [
    # bash: "0abc1: value too great for base"; dash ends the script: neither gives 1 (the reader read '0x1')
    ("a=abc; cp x.py /dest/$((0${a}1)).py\n", []),
    ("a=$(nproc); cp x.py /dest/$((0${a}1)).py\n", []),  # with a=2 it is octal 021, 17
    ("a=2; cp x.py /dest/$((0${a}1)).py\n", ["/dest/17.py"]),
])
def test_a_value_pasted_into_a_number_is_read_with_the_number(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


@pytest.mark.parametrize(("script", "placed"), [
    # bash 5.2 and dash 0.5.12 print p11-9-100-7-30-12-34-110 ($10 is ${1}0, 1$# is 110) and q2.
    ("set -- 3 4 5 6 7 8 9 10 11 12\n"
     "cp x.py /dest/p$((1 + $#))-$(( $# - 1 ))-$((${#} * 10))-$(($1 + ${2}))-$(($10))-$((${10} + 0))-$(($1$2))"
     "-$((1$#)).py\n", ["/dest/p11-9-100-7-30-12-34-110.py"]),
    ("set -- a b; cp x.py /dest/p$((1 + $#)).py\n", ["/dest/p3.py"]),
    ("false; cp x.py /dest/q$(($? + 1)).py\n", ["/dest/q2.py"]),
    ("set -- 3 4; cp x.py /dest/r$(($# > 1 && $1 == 3)).py\n", ["/dest/r1.py"]),  # both: 1
    ("set -- -3; cp x.py /dest/s$((2-$1))_$((-$1))_$((2*$1)).py\n", ["/dest/s5_3_-6.py"]),  # '2--3' is 5 in both
    ("set -- 010; cp x.py /dest/t$(($1 + 1)).py\n", ["/dest/t9.py"]),  # 010 pasted in is octal: 9
    ("set --; cp x.py /dest/u$(($1 + 1)).py\n", ["/dest/u1.py"]),  # ' + 1' is 1
])
@pytest.mark.parametrize("shell", ["bash i.sh", "dash i.sh", "sh i.sh"])
def test_special_parameters_expand_inside_arithmetic(script: str, placed: list[str], shell: str) -> None:
    plan = run_script(script, shell)
    assert in_dest(plan) == placed and not plan.notes


@pytest.mark.parametrize(("script", "placed"), [
    ("x=; cp x.py /dest/p$((1$x)).py\n", ["/dest/p1.py"]),  # both: 1 (the reader read '10')
    # bash "1b: value too great for base", dash "expecting EOF: 1b" (the reader read 12); x=' 3 ' gives '1 3 ',
    # an error in both (the reader read 13).
    ("a=1; b=2; cp x.py /dest/p$((${a}b)).py\n", []),
    ("x=' 3 '; cp x.py /dest/p$((1$x)).py\n", []),
])
@pytest.mark.parametrize("shell", ["bash i.sh", "dash i.sh"])
def test_a_value_is_pasted_into_the_arithmetic_text_before_it_is_evaluated(script: str, placed: list[str],
                                                                           shell: str) -> None:
    plan = run_script(script, shell)
    assert in_dest(plan) == placed
    assert not plan.notes if placed else [n.kind for n in plan.notes] == ["unread"]


def test_the_parameters_of_an_arithmetic_expansion_are_expanded_before_its_assignments() -> None:
    # bash 5.2: x=5; y=$((x = 1, $x)) gives y=5 ($x was 5 when the text was expanded); x is 1 after.
    plan = run_script("x=5; y=$((x = 1, $x)); cp x.py /dest/$x-$y.py\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/1-5.py"]


@pytest.mark.parametrize(("shell", "placed"), [("bash", ["/dest/p0.py", "/dest/q0.py"]), ("dash", [])])
def test_an_empty_arithmetic_expression_is_0_in_bash_and_refused_by_dash(shell: str, placed: list[str]) -> None:
    # bash 5.2: $(( )) and $(($x)) with x empty are 0; dash 0.5.12: "arithmetic expression: expecting primary"
    # (status 2), which the reader leaves unknown (it read the first as unknown in both, the second as 0).
    plan = run_script("x=; cp x.py /dest/p$(( )).py; cp x.py /dest/q$(($x)).py\n", f"{shell} i.sh")
    assert in_dest(plan) == placed


def test_a_minus_minus_beside_a_name_is_bash_decrement_not_two_minus_signs() -> None:
    # bash 5.2: $((x--3)), and $((x-$1)) with $1 = -3 (pasted in: 'x--3'), are x-- then 3, "syntax error in
    # expression"; dash 0.5.12 reads 5 - -3 = 8. The reader read 8 under bash.
    plan = run_script("set -- -3; x=5; cp x.py /dest/p$((x--3)).py; cp x.py /dest/q$((x-$1)).py\n", "bash i.sh")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread", "unread"]


@pytest.mark.parametrize(("expression", "run"), [
    # bash 5.2 gives x = 6, 3, 6, 10 and 25 (dash: an error, 3, 6): the reader does not work these out, so x is
    # unknown after them, never 5.
    *((expression, run) for expression in (": $((x++ + 1))", ": $(( (x = 3) + 1 ))", ": $((y = x += 1))")
      for run in ("bash i.sh", "sh i.sh")),
    ("((x <<= 1))", "bash i.sh"), ("let 'x = x ** 2'", "bash i.sh"),
])
def test_a_name_assigned_inside_an_expression_the_reader_does_not_work_out_is_unknown(expression: str,
                                                                                         run: str) -> None:
    plan = run_script(f'x=5\n{expression}\ncp x.py "/dest/$x.py"\n', run)
    assert in_dest(plan) == []
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]


def test_comparisons_assign_nothing() -> None:
    plan = run_script('x=5\n((x == 5 && x <= 5 && x >= 5 && x != 4)) && cp x.py "/dest/$x.py"\n')
    assert in_dest(plan) == ["/dest/5.py"]
