"""bash's namerefs: ``declare -n REF=NAME`` (``local -n`` in a function) makes REF another name for NAME.

Install helpers take the name of the variable to fill (``find_site() {
local -n out=$1; out=/usr/...; }``): reading or setting REF reads or sets
NAME, through a chain of namerefs too, and a ``local -n`` ends with its
function. Under sh, where dash has no ``-n``, the line is unread. Each
answer was checked with bash 5.2.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script


UNWORKED = "a path that depends on a value the reader cannot work out"


@pytest.mark.parametrize(("script", "placed"), [
    ("f() { local -n ref=$1; ref=/dest; }\nf D\ncp x.py $D/n.py\n", ["/dest/n.py"]),
    ("declare -n r=D\nD=/dest\ncp x.py $r/n.py\n", ["/dest/n.py"]),
    ("declare -n r=D\nr=/dest\ncp x.py $D/m.py\n", ["/dest/m.py"]),
    ("typeset -n r=D\nr=/dest\ncp x.py $D/t.py\n", ["/dest/t.py"]),
    ("f() { local -n ref=$1; ref=/dest; }\nf D\nref=/tmp\ncp x.py $D/o.py\n", ["/dest/o.py"]),  # gone after f
    ("declare -n r=A\ndeclare -n A=B\nB=/dest\ncp x.py $r/chain.py\n", ["/dest/chain.py"]),
])
def test_a_nameref_reads_and_sets_the_variable_it_names(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and plan.notes == ()


def test_a_nameref_under_sh_is_unread() -> None:
    plan = run_script("declare -n r=D\nD=/dest\ncp x.py $r/n.py\n", "sh i.sh")
    assert [(n.kind, n.line) for n in plan.notes][:1] == [("unread", 1)]


def test_a_nameref_to_a_name_the_reader_cannot_work_out_is_unread_and_its_value_unknown() -> None:
    # $VENDOR names the variable r stands for: what $r holds depends on it.
    plan = run_script("declare -n r=$VENDOR\ncp x.py $r/n.py\n")
    assert in_dest(plan) == [] and [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 1, "r is a nameref to $VENDOR, which the reader does not follow"),
        ("unread", 2, "cp $r/n.py: a path that depends on a value the reader cannot work out")]


# A nameref loop (declare -n a=b; declare -n b=a) gives bash a warning and an empty value: the reader does not
# know it, and says so, but reads on (checked under bash 5.2.15).
def test_a_nameref_loop_gives_a_value_the_reader_does_not_know_and_it_reads_on() -> None:
    # bash: "warning: a: circular name reference"; $a is empty (/dest/[]), and the script reads on.
    plan = run_script('declare -n a=b\ndeclare -n b=a\ncp x.py "/dest/[$a]"\ncp x.py /dest/after\n')
    assert in_dest(plan) == ["/dest/after"]
    assert notes(plan) == [("unread", 3, 'cp x.py "/dest/[$a]"', f"cp /dest/[$a]: {UNWORKED}")]


def test_a_nameref_chain_of_eleven_hops_is_not_followed_to_its_end() -> None:
    # bash gives an empty value past 8 hops (/dest/[]); the reader, past its 10, does not know the value.
    chain = "".join(f"declare -n v{i}=v{i + 1}\n" for i in range(11))
    plan = run_script(f"v11=end\n{chain}cp x.py \"/dest/[$v0]\"\n")
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 13, 'cp x.py "/dest/[$v0]"', f"cp /dest/[$v0]: {UNWORKED}")]


@pytest.mark.parametrize("hops", [9, 10])
def test_a_nameref_chain_past_eight_hops_is_empty_in_bash(hops: int) -> None:
    chain = "".join(f"declare -n v{i}=v{i + 1}\n" for i in range(hops))
    plan = run_script(f"v{hops}=end\n{chain}cp x.py \"/dest/[$v0]\"\n")
    assert "/dest/[end]" not in in_dest(plan)


def test_a_nameref_chain_of_eight_hops_is_followed_to_its_end() -> None:
    # bash 5.2 follows 8 hops: /dest/[end].
    chain = "".join(f"declare -n v{i}=v{i + 1}\n" for i in range(8))
    plan = run_script(f"v8=end\n{chain}cp x.py \"/dest/[$v0]\"\n")
    assert in_dest(plan) == ["/dest/[end]"]
