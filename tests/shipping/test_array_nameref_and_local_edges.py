"""Edges of bash's arrays, namerefs and ``local``, read as bash 5.2 (and dash 0.5.12 for ``local``) run them.

A read-only name cannot take an array from ``read -a`` or ``mapfile``: the
command fails and the script reads on. ``arr+=()`` on an empty array leaves
it empty. A nameref loop (``declare -n a=b; declare -n b=a``) gives bash a
warning and an empty value: the reader does not know it, and says so, but
reads on. A second ``local`` of one name inside a function keeps the value
the caller's name gets back. ``${arr[@]:N}`` of an array whose elements the
reader does not know is unknown. Each expected result was checked by running
the script under bash 5.2.15 (and dash 0.5.12).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script

UNWORKED = "a path that depends on a value the reader cannot work out"


def notes(plan) -> list[tuple[str, int, str, str]]:  # type: ignore[no-untyped-def]
    return [(n.kind, n.line, n.text, n.reason) for n in plan.notes]


@pytest.mark.parametrize(("command", "reason"), [
    ('read -a arr <<< "a b"', "arr is read-only: read fails"),
    ('mapfile arr <<< "a b"', "arr is read-only: the command fails"),
])
def test_a_read_only_name_takes_no_array_and_the_command_fails(command: str, reason: str) -> None:
    plan = run_script(f"readonly arr\n{command} || cp x.py /dest/failed\ncp x.py /dest/after\n")
    assert in_dest(plan) == ["/dest/after", "/dest/failed"]
    assert notes(plan) == [("fails", 2, command, reason)]


def test_appending_nothing_to_an_empty_array_leaves_it_empty() -> None:
    plan = run_script('arr=()\narr+=()\ncp x.py "/dest/n${#arr[@]}"\narr+=(a)\ncp x.py "/dest/${arr[0]}"\n')
    assert in_dest(plan) == ["/dest/a", "/dest/n0"]
    assert notes(plan) == []


def test_a_nameref_loop_gives_a_value_the_reader_does_not_know_and_it_reads_on() -> None:
    # bash: "warning: a: circular name reference"; $a is empty (/dest/[]), and the script reads on.
    plan = run_script('declare -n a=b\ndeclare -n b=a\ncp x.py "/dest/[$a]"\ncp x.py /dest/after\n')
    assert in_dest(plan) == ["/dest/after"]
    assert notes(plan) == [("unread", 3, 'cp x.py "/dest/[$a]"', f"cp /dest/[$a]: {UNWORKED}")]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_second_local_of_a_name_keeps_the_callers_value_for_the_return(run: str) -> None:
    plan = run_script('f() { local v=in; local v=again; cp x.py "/dest/$v"; }\nv=out\nf\ncp x.py "/dest/$v"\n',
                      run=run)
    assert in_dest(plan) == ["/dest/again", "/dest/out"]
    assert notes(plan) == []


def test_a_slice_of_an_array_the_reader_does_not_know_is_unknown() -> None:
    # bash: arr=(x86_64 b), so ${arr[@]:1} is b (/dest/b).
    plan = run_script('arr=($(uname -m) b)\ncp x.py "/dest/${arr[@]:1}"\n')
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 2, 'cp x.py "/dest/${arr[@]:1}"', f"cp /dest/${{arr[@]:...}}: {UNWORKED}")]


def test_a_nameref_chain_of_eleven_hops_is_not_followed_to_its_end() -> None:
    # bash gives an empty value past 8 hops (/dest/[]); the reader, past its 10, does not know the value.
    chain = "".join(f"declare -n v{i}=v{i + 1}\n" for i in range(11))
    plan = run_script(f"v11=end\n{chain}cp x.py \"/dest/[$v0]\"\n")
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 13, 'cp x.py "/dest/[$v0]"', f"cp /dest/[$v0]: {UNWORKED}")]


def test_an_element_assignment_with_an_assignment_in_its_subscript() -> None:
    plan = run_script('i=2\narr[x=$i]=v\ncp x.py "/dest/${arr[2]}-$x"\n')
    assert all(n.kind != "program" for n in plan.notes)


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
