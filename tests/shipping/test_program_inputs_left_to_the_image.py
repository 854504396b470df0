"""Inputs of coreutils and findutils programs (and of IFS splitting) at the edges of what the reader follows.

``tr`` with an option it does not know, ``grep`` with a pattern the reader
cannot work out: their output is unknown, their status left to the image.
``expr 1 | match ...`` does not evaluate its right side. ``xargs -I`` whose
first line holds an unmatched quote runs nothing and fails. ``rm`` of
``LINK/`` to a folder without ``-r``, or with ``-r`` to a file, fails and
keeps the link. ``rm`` of one of two links that point at each other removes
that link only: ``cp`` then will not write through the other, dangling.
``find DIR -delete`` of a folder the build made with ``mkdir -p`` under a
base-image folder succeeds. Splitting with more IFS values than the reader
keeps patterns for still splits each one right. Each expected result was
checked by running the script under bash 5.2.15 and dash 0.5.12 with GNU
coreutils 9.1 and findutils 4.9.
"""

from __future__ import annotations

import pytest

from patcher.shipping import shell_words
from tests.shipping.conftest import in_dest, run_script

UNWORKED = "a path that depends on a value the reader cannot work out"
BOTH_WAYS = "the base image decides whether this holds: the reader follows the branch for 'yes', then the one for 'no'"
RUN_FAILS = "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted before it)"


def notes(plan) -> list[tuple[str, int, str, str]]:  # type: ignore[no-untyped-def]
    return [(n.kind, n.line, n.text, n.reason) for n in plan.notes]


def test_tr_with_an_option_it_does_not_know_prints_what_the_reader_cannot_say() -> None:
    # GNU tr: "invalid option -- 'x'", nothing on standard output (/dest/v).
    plan = run_script('V=$(tr -x a b <<< abc)\ncp x.py "/dest/v$V"\n')
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 2, 'cp x.py "/dest/v$V"', f"cp /dest/v$(tr -x a b <<< abc): {UNWORKED}")]


def test_grep_with_a_pattern_the_reader_cannot_work_out_is_left_to_the_image() -> None:
    # The real build: uname -m is x86_64, which a.txt does not hold: only /dest/no lands.
    plan = run_script('if grep -q "$(uname -m)" a.txt; then cp x.py /dest/yes; else cp x.py /dest/no; fi\n',
                      files={"s/a.txt": "a\n"})
    assert in_dest(plan) == ["/dest/no", "/dest/yes"]
    assert notes(plan) == [("assumed", 1, 'grep -q "$(uname -m)" a.txt', BOTH_WAYS)]


@pytest.mark.parametrize(("expression", "printed"), [("1 \\| match abc b", "1"), ("0 \\& match abc b", "0")])
def test_expr_does_not_evaluate_a_match_it_does_not_need(expression: str, printed: str) -> None:
    plan = run_script(f'V=$(expr {expression})\ncp x.py "/dest/v$V"\n')
    assert in_dest(plan) == [f"/dest/v{printed}"]
    assert notes(plan) == []


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_xargs_i_whose_first_line_holds_an_unmatched_quote_runs_nothing_and_fails(run: str) -> None:
    plan = run_script("xargs -I{} cp x.py /dest/{} <<EOF || cp x.py /dest/failed\nit's\nok\nEOF\n", run=run)
    assert in_dest(plan) == ["/dest/failed"]
    assert notes(plan) == [("fails", 1, "xargs -I{} cp x.py /dest/{} <<EOF",
                            "xargs finds an unmatched quote in its input (status 1) and runs nothing")]


@pytest.mark.parametrize("options", ["-I{} cp x.py /dest/{}", "-n1 cp x.py -t /dest"])
def test_xargs_runs_the_items_before_an_unmatched_quote(options: str) -> None:
    plan = run_script(f"cp x.py ok\nxargs {options} <<EOF\nok\nit's\nEOF\n")
    assert "/dest/ok" in in_dest(plan)


@pytest.mark.parametrize(("link", "command", "reason"), [
    ("sub", "rm l/", "/w/s/l is a folder and rm was not told -r, so it stays"),
    ("x.py", "rm -r l/", "l/ names a folder, and /w/s/l is a file, so rm fails"),
])
def test_rm_of_a_link_with_a_slash_that_fails_keeps_the_link(link: str, command: str, reason: str) -> None:
    source = "l/y.py" if link == "sub" else "l"
    plan = run_script(f"ln -s {link} l\n{command} || cp x.py /dest/failed\ncp {source} /dest/through-link\n")
    assert in_dest(plan) == ["/dest/failed", "/dest/through-link"]
    assert notes(plan) == [("fails", 2, command, reason)]


def test_removing_one_of_two_links_to_each_other_leaves_the_other_dangling() -> None:
    plan = run_script("ln -s /w/s/b /w/s/a\nln -s /w/s/a /w/s/b\nrm a\ncp x.py b\ncp a /dest/a.py\n")
    assert in_dest(plan) == []
    assert notes(plan) == [
        ("fails", 4, "cp x.py b", "/w/s/b is a link to /w/s/a, which does not exist, and cp does not write through "
                                  "it, so nothing is copied"),
        ("fails", 5, "cp a /dest/a.py", "/w/s/a does not exist at this point of the build, so nothing is copied"),
        ("fails", 4, "RUN cd /w/s && bash i.sh", RUN_FAILS)]


def test_find_delete_of_a_folder_made_under_a_base_image_folder_succeeds() -> None:
    plan = run_script("mkdir -p /tmp/zz_a\nfind /tmp/zz_a -delete && cp x.py /dest/ok\n")
    assert in_dest(plan) == ["/dest/ok"]
    assert notes(plan) == []


def test_find_delete_removes_the_folder_it_starts_from() -> None:
    plan = run_script("mkdir -p /tmp/zz_a\nfind /tmp/zz_a -delete\n"
                      "if [ -d /tmp/zz_a ]; then cp x.py /dest/still; else cp x.py /dest/gone; fi\n")
    assert "/dest/still" not in in_dest(plan)


def test_splitting_with_more_ifs_values_than_the_reader_keeps_patterns_for() -> None:
    plan = run_script('v=x:y\nout=\nfor ((i = 0; i < 70; i++)); do IFS=":$i"; set -- $v; out="$out$#"; done\n'
                      'unset IFS\ncp x.py "/dest/$out-$2"\n')
    assert in_dest(plan) == [f"/dest/{'2' * 70}-y"]
    assert notes(plan) == []
    assert len(shell_words._separators) <= 64  # a hostile script's IFS values cannot fill the memory
