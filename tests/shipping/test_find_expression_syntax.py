"""How the reader parses a ``find`` expression, as GNU find 4.9 reads it.

``-a``/``-and`` and juxtaposition bind tighter than ``-o``/``-or``;
``!``/``-not`` negate the primary after them; global options such as
``-xdev`` and ``-true`` hold of every path, ``-false`` of none; ``-type``
takes a comma list of f, d and l; ``-name`` is case-sensitive and ``-path``
lets ``*`` and ``?`` match '/'. Without an action of its own (``-print``,
``-exec``, ``-delete``; ``-prune`` is none) find prints each match. A line
find refuses walks nothing and fails, with the reason noted; one the reader
cannot evaluate (the ``,`` operator, a ``-type`` it does not model) is
unread. Each script was run under bash 5.2 and dash 0.5.12 (GNU findutils
4.9) in a copy of the context, with the same outcome.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("line", "placed"), [
    # -o binds looser than the implied -a: the copy belongs to the second branch only.
    ("find . -name x.py -or -name y.py -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -name x.py -o -name y.py -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find sub -name y.py -a -type f -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find sub -name y.py -and -type f -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find sub -type f -a -name y.py -a -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -not -name '*.sh' -type f -exec cp {} /dest/ \\;", ["/dest/x.py", "/dest/y.py"]),
    ("find . ! -name '*.sh' -type f -exec cp {} /dest/ \\;", ["/dest/x.py", "/dest/y.py"]),
    # Options and tests that hold of every path.
    ("find . -true -name y.py -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -xdev -noleaf -name y.py -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -false -o -name y.py -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -false -exec cp {} /dest/ \\;", []),
    # -type takes a comma list of the kinds the reader knows.
    ("find . -type f,d -name 'y*' -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -type f,d,l -name 'y*' -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -type l -o -name y.py -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    # -name is case-sensitive; -path's '*' and '?' match '/'.
    ("find . -name X.PY -exec cp {} /dest/ \\;", []),
    ("find . -path '*y.py' -exec cp {} /dest/ \\;", ["/dest/y.py"]),
    ("find . -path './s?b?y.py' -exec cp {} /dest/ \\;", ["/dest/y.py"]),
])
def test_find_operators_and_primaries_select_what_real_find_selects(line: str, placed: list[str]) -> None:
    plan = run_script(line + "\n")
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize("line", [
    "[ \"$(find sub -name y.py -print)\" = sub/y.py ]",  # -print once, none implied beside it
    "[ \"$(find . -path ./sub -prune)\" = ./sub ]",  # -prune is no action: the match is printed
    "[ -z \"$(find sub -name y.py -exec true {} \\;)\" ]",  # -exec is an action: nothing printed
])
def test_find_prints_each_match_only_without_an_action_of_its_own(line: str) -> None:
    plan = run_script(f"{line} && cp x.py /dest/found.py\n")
    assert in_dest(plan) == ["/dest/found.py"] and plan.notes == ()


@pytest.mark.parametrize(("line", "reason"), [
    ("find sub -name", "a find expression that ends too soon (a test without its argument)"),
    # find: "invalid expression; I was expecting to find a ')' somewhere but did not see one."
    ("find sub \\( -name y.py", "a find expression that ends too soon (a test without its argument)"),
    ("find sub -exec cp {} /dest/", "find -exec without its ';' or '+'"),
    ("find sub -name '*.py' -exec cp {} /dest/ +", "find -exec without a command, or its '+' not right after '{}'"),
    # GNU find 4.9: "Unknown argument to -type: x", "Duplicate file type 'f' ...", "Must separate multiple
    # arguments to -type using: ','", "Last file type in list argument to -type is missing", "... at least one
    # letter", and -type D ("Solaris doors are not supported"): each status 1, nothing run.
    *((f"find sub -type {types} -exec cp {{}} /dest/ \\;", f"find -type {shown}: find refuses that list of file types")
      for types, shown in [("x", "x"), ("f,f", "f,f"), ("fd", "fd"), ("f,", "f,"), (",f", ",f"), ("''", ""),
                           ("D", "D"), ("f,,d", "f,,d")]),
    # GNU find 4.9 reads a depth as a C int: "Numerical result out of range", status 1, nothing run.
    *((f"find sub -{which}depth {depth} -exec cp {{}} /dest/ \\;",
       f"find -{which}depth {depth}: past what find takes ('Numerical result out of range')")
      for which in ("max", "min") for depth in ("2147483648", "9" * 20)),
])
def test_a_line_find_refuses_is_noted_with_why(line: str, reason: str) -> None:
    plan = run_script(f"{line} || cp x.py /dest/refused.py\n")
    assert in_dest(plan) == ["/dest/refused.py"]
    assert [(n.kind, n.reason) for n in plan.notes] == [("fails", f"find refuses the line: {reason}")]


@pytest.mark.parametrize("line", [
    "find sub -name y.py , -name x.py -exec cp {} /dest/ \\;",  # the ',' operator
    "find sub \\( -name y.py , -name x.py \\) -exec cp {} /dest/ \\;",
    "find sub -type p -exec cp {} /dest/ \\;",  # a FIFO: a kind the reader does not model
    "find sub -type f,s -exec cp {} /dest/ \\;",
])
def test_a_find_expression_the_reader_does_not_model_is_unread(line: str) -> None:
    plan = run_script(line + "\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_a_depth_at_the_largest_find_takes_is_read() -> None:
    plan = run_script("find sub -maxdepth 0002147483647 -name y.py -exec cp {} /dest/ \\;\n")
    assert in_dest(plan) == ["/dest/y.py"]


def test_a_depth_of_thousands_of_digits_is_refused_as_find_refuses_it() -> None:
    plan = run_script("find sub -maxdepth " + "9" * 5000 + " -exec cp {} /dest/ \\; || cp x.py /dest/refused.py\n")
    assert in_dest(plan) == ["/dest/refused.py"]
    assert [n.kind for n in plan.notes] == ["fails"]
