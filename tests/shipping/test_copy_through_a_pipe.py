"""``cat FILE | tee DEST`` copies FILE to DEST, as ``cp FILE DEST`` would (with ``sudo tee`` too).

A common way to write a file as another user, or to log it as it goes.
Anything else in the pipe (several files, ``cat -n``, ``tee -a`` onto a file
that is there, a filter between them, a file the build did not place) gives
DEST other bytes, which is not a copy of a context file.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import image_of, plan_of, script_context

X, Y = "s/x.py", "s/sub/y.py"


def placed(script: str) -> dict[str, str]:
    image = image_of(script_context(f"mkdir -p /made\n{script}\n"))
    return {path: source for path, source in image.items() if path.startswith("/made/")}


@pytest.mark.parametrize(("script", "expected"), [
    ("cat x.py | tee /made/paged_attn.py > /dev/null", {"/made/paged_attn.py": X}),
    ("cat sub/y.py | sudo tee /made/paged_attn.py >/dev/null", {"/made/paged_attn.py": Y}),
    ("F=x.py\ncat $F | tee /made/paged_attn.py", {"/made/paged_attn.py": X}),
    ("cat x.py | tee -- /made/paged_attn.py", {"/made/paged_attn.py": X}),
    ("cat x.py | tee /made/a.py /made/b.py", {"/made/a.py": X, "/made/b.py": X}),
    ("cat x.py | tee /dev/stderr /made/paged_attn.py", {"/made/paged_attn.py": X}),
    ("mkdir /made/n\ncat x.py | tee -a /made/n/p.py", {"/made/n/p.py": X}),  # an append onto nothing yet
    ("cat x.py | tee -a /made/paged_attn.py", {}),  # 'mkdir -p /made': the base image may have the file
    # Not a copy: other bytes reach DEST.
    ("cat x.py sub/y.py | tee /made/paged_attn.py", {}),
    ("cat -n x.py | tee /made/paged_attn.py", {}),
    ("cat x.py | sed s/a/b/ | tee /made/paged_attn.py", {}),
    ("cp sub/y.py /made/paged_attn.py\ncat x.py | tee -a /made/paged_attn.py", {"/made/paged_attn.py": Y}),
    ("cat *.py | tee /made/paged_attn.py", {}),
    ("echo x.py | tee /made/paged_attn.py", {}),
])
def test_cat_piped_into_tee_copies_one_file(script: str, expected: dict[str, str]) -> None:
    assert placed(script) == expected


def test_cat_of_a_file_the_build_did_not_place_gives_other_bytes() -> None:
    assert placed("cat /etc/os-release | tee /made/release.txt") == {}


def test_reading_the_cat_word_again_changes_nothing_outside_the_pipe() -> None:
    # ${F:=x.py} assigns in the pipe's subshell only; under set -u, a $1 that is not set ends that subshell only
    # (bash and dash: tee and the lines after it still run).
    image = image_of(script_context("mkdir -p /made\ncat ${F:=x.py} | tee /made/t.py\nF=${F:-unset}\n"
                                    "cp x.py \"/made/$F.py\"\n"))
    assert {path for path in image if path.startswith("/made/")} == {"/made/unset.py"}
    plan = plan_of(script_context("mkdir -p /made\nset -u\ncat $1 | tee /made/t.py\ncp x.py /made/after.py\n"))
    assert {path for path in plan.image if path.startswith("/made/")} == {"/made/after.py"}
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 3)]


@pytest.mark.parametrize("script", ["cat sub | tee /made/paged_attn.py > /dev/null",
                                    "rm x.py\ncat x.py | tee /made/paged_attn.py > /dev/null"])
def test_cat_of_a_folder_or_a_removed_file_fails_and_tee_still_writes_an_empty_file(script: str) -> None:
    # cat fails ('Is a directory', 'No such file'), tee gets nothing and succeeds: the pipe succeeds, as in bash
    # and dash, and DEST holds no context file.
    assert placed(f"{script} && cp sub/y.py /made/after.py") == {"/made/after.py": Y}
