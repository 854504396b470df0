"""An unquoted expansion is split into fields where IFS says, and ``"$*"`` joins by IFS's first character.

IFS white space (space, tab, newline) separates as a run and makes no
empty field; each other IFS character ends the field before it, even an
empty one (``a,,b`` is three fields, ``a,`` one, ``,a`` two). An empty IFS
splits nothing; an unset one is space, tab and newline. ``$@`` and ``$*``
unquoted give each argument its own field before splitting; ``"$*"`` joins
them with IFS's first character (none when IFS is empty). Each row was run
under bash 5.2 and dash 0.5.12, which agree.
"""

from __future__ import annotations

import pytest

from patcher.shipping import shell_words
from tests.shipping.conftest import in_dest, notes, run_script

BOTH = ["bash i.sh", "dash i.sh"]


def fields(setup: str, words: str, run: str) -> list[str]:
    """The fields ``for f in WORDS`` gets after ``setup``, each as [f], in order."""
    script = (f"{setup}\nn=0\nfor f in {words}; do n=$((n+1)); mkdir -p \"/dest/$n\"\n"
              "  cp x.py \"/dest/$n/[$f]\"; done\n")
    found = sorted(in_dest(run_script(script, run)), key=lambda path: int(path.split("/")[2]))
    return [path.split("/", 3)[3] for path in found]


@pytest.mark.parametrize(("setup", "words", "expected"), [
    ("IFS=,; L=a,,b", "$L", ["[a]", "[]", "[b]"]),
    ("IFS=,; L=,a", "$L", ["[]", "[a]"]),
    ("IFS=,; L=a,", "$L", ["[a]"]),
    ("IFS=,; L=,,", "$L", ["[]", "[]"]),
    ("IFS=,; L=a,,", "$L", ["[a]", "[]"]),
    ("IFS=,; L=a,", "${L}x", ["[a]", "[x]"]),
    ("IFS=,; L=,a", "x${L}", ["[x]", "[a]"]),
    ("IFS=' ,'; L=' a , b ,, c '", "$L", ["[a]", "[b]", "[]", "[c]"]),
    ("IFS=' ,'; L='a  b'", "$L", ["[a]", "[b]"]),
    ("IFS=' ,'; L=' , a'", "$L", ["[]", "[a]"]),
    ("IFS=; L='a b'", "$L", ["[a b]"]),
    ("unset IFS; L=' a  b '", "$L", ["[a]", "[b]"]),
    ("L=' a  b '", "x${L}y", ["[x]", "[a]", "[b]", "[y]"]),
    ("IFS=:; L='x.py:y z'", "$L", ["[x.py]", "[y z]"]),
    ("set -- p q; IFS=,", "$@", ["[p]", "[q]"]),
    ("set -- 'p q' r; IFS=,", "$*", ["[p q]", "[r]"]),
])
@pytest.mark.parametrize("run", BOTH)
def test_an_unquoted_expansion_splits_where_ifs_says(setup: str, words: str, expected: list[str], run: str) -> None:
    assert fields(setup, words, run) == expected


@pytest.mark.parametrize(("setup", "expected"), [
    ("IFS=:", "/dest/p:q.py"), ("IFS=", "/dest/pq.py"), ("unset IFS", "/dest/p q.py"), ("IFS=-,", "/dest/p-q.py"),
])
@pytest.mark.parametrize("run", BOTH)
def test_quoted_star_joins_the_arguments_by_the_first_ifs_character(setup: str, expected: str, run: str) -> None:
    assert in_dest(run_script(f"set -- p q\n{setup}\ncp x.py \"/dest/$*.py\"\n", run)) == [expected]


def test_a_list_split_at_commas_copies_each_file() -> None:
    plan = run_script("FILES=x.py,sub/y.py\nIFS=,\nfor f in $FILES; do cp \"$f\" /dest/; done\n")
    assert in_dest(plan) == ["/dest/x.py", "/dest/y.py"] and plan.notes == ()


@pytest.mark.parametrize("run", BOTH)
def test_ifs_starts_as_space_tab_and_newline_whatever_the_environment(run: str) -> None:
    # bash and dash set IFS at startup and take none from the environment: a saved $IFS is known, and restores.
    script = ("OLDIFS=$IFS; IFS=,; V=a,b; for i in $V; do cp x.py /dest/$i.py; done; IFS=$OLDIFS\n"
              "W='c d'; for i in $W; do cp x.py /dest/$i.py; done\n")
    plan = run_script(script, run)
    assert in_dest(plan) == ["/dest/a.py", "/dest/b.py", "/dest/c.py", "/dest/d.py"] and plan.notes == ()


def test_a_value_split_by_an_ifs_the_reader_cannot_know_is_named_so_in_the_note() -> None:
    plan = run_script("IFS=$(cat /etc/separators)\nv='a b'\ncp x.py /dest/$v\n")
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 3, "cp /dest/a value split by an IFS the reader cannot work out: a path that depends on a value "
                      "the reader cannot work out")]


@pytest.mark.parametrize("run", BOTH)
def test_each_of_several_non_white_ifs_characters_separates_fields(run: str) -> None:
    # bash 5.2 and dash 0.5.12: with IFS=';,' both ';' and ',' end a field: a;b,c is a, b and c.
    plan = run_script('v="a;b,c"\nIFS=";,"\nfor n in $v; do cp x.py /dest/$n.py; done\n', run)
    assert in_dest(plan) == ["/dest/a.py", "/dest/b.py", "/dest/c.py"] and plan.notes == ()


# Splitting with more IFS values than the reader keeps patterns for still splits each one right (checked
# under bash 5.2.15 and dash 0.5.12).
def test_splitting_with_more_ifs_values_than_the_reader_keeps_patterns_for() -> None:
    plan = run_script('v=x:y\nout=\nfor ((i = 0; i < 70; i++)); do IFS=":$i"; set -- $v; out="$out$#"; done\n'
                      'unset IFS\ncp x.py "/dest/$out-$2"\n')
    assert in_dest(plan) == [f"/dest/{'2' * 70}-y"]
    assert notes(plan) == []
    assert len(shell_words._separators) <= 64  # a hostile script's IFS values cannot fill the memory
