"""Tests only the base image can decide: every branch is read, a jump is not taken, and each is noted as assumed.

A test on the build's own files (``[ -f ./x.py ]`` in a folder COPY made,
``[ "$A" = b ]`` with known values) is decided and takes one branch.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes_of, plan_of, run_script, script_context


def placed(plan) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {path: p.source for path, p in plan.image.items() if not path.startswith("/w/s/")}


def test_an_if_the_base_image_decides_reads_both_branches() -> None:
    plan = plan_of(script_context("if [ -d /usr/lib/vllm ]; then\n  cp x.py /yes/\nelse\n  cp x.py /no/\nfi\n"))
    assert placed(plan) == {"/yes/x.py": "s/x.py", "/no/x.py": "s/x.py"}
    assert notes_of(plan, "assumed") == [("s/i.sh", 1, "[ -d /usr/lib/vllm ]")]


def test_a_jump_only_one_outcome_takes_is_not_taken() -> None:
    plan = plan_of(script_context(
        "for root in /a /b; do\n  [ -d \"$root/vllm\" ] || continue\n  cp x.py \"$root/vllm/\"\ndone\n"
        "if [ -f /etc/skip-install ]; then\n  exit 0\nfi\ncp x.py /after/\n"))
    assert placed(plan) == {"/a/vllm/x.py": "s/x.py", "/b/vllm/x.py": "s/x.py", "/after/x.py": "s/x.py"}
    assert [(line, text) for _, line, text in notes_of(plan, "assumed")] == [
        (2, "continue"), (5, "[ -f /etc/skip-install ]"), (6, "exit 0")]


def test_a_test_on_the_builds_own_files_is_decided() -> None:
    plan = plan_of(script_context("if [ -f ./x.py ]; then cp x.py /yes/; else cp x.py /no/; fi\n"
                                  "[ -d ./missing ] && cp x.py /never/\n"
                                  "A=b\ncase \"$A\" in a) cp x.py /a/ ;; b|c) cp x.py /b/ ;; esac\n"
                                  "[ \"$A\" = b ] || exit 1\ncp x.py /last/\n"))
    assert placed(plan) == {"/yes/x.py": "s/x.py", "/b/x.py": "s/x.py", "/last/x.py": "s/x.py"}
    assert plan.notes == ()


def test_a_case_on_an_unknown_value_reads_every_branch() -> None:
    plan = plan_of(script_context("case \"$ARCH\" in\n  x86_64) cp x.py /x86/ ;;\n  *) cp x.py /other/ ;;\nesac\n"))
    assert placed(plan) == {"/x86/x.py": "s/x.py", "/other/x.py": "s/x.py"}
    assert [line for _, line, _ in notes_of(plan, "assumed")] == [1]


@pytest.mark.parametrize(("test", "holds"), [
    ('[ -n "$SET" ]', True), ('[ -n "$EMPTY" ]', False), ('[ -z "$SET" ]', False), ('[ -z "$EMPTY" ]', True),
    ('test -n "$SET"', True), ('test -z "$EMPTY"', True), ('[ ! -n "$SET" ]', False), ('[ ! -z "$EMPTY" ]', False),
    ("[ -n ]", True), ("[ -z ]", True),  # one operand: true when it is not empty, whatever it spells
    ('[ "$SET" ]', True), ('[ "$EMPTY" ]', False), ('[ "$SET" != b ]', True), ('[ "$SET" == a ]', True),
    ('[[ -n $SET ]]', True), ('[[ -z $SET ]]', False), ('[[ -z "$EMPTY" ]]', True), ('[[ ! -n $SET ]]', False),
    ("[[ -f ./x.py ]]", True), ("[[ -d ./x.py ]]", False), ("[[ -e ./missing ]]", False), ('[[ $SET = a ]]', True),
])
def test_a_test_on_known_values_is_decided_as_sh_decides_it(test: str, holds: bool) -> None:
    shebang = "#!/bin/bash\n" if test.startswith("[[") else ""  # [[ ]] is bash's
    plan = plan_of(script_context(f"{shebang}SET=a\nEMPTY=\nif {test}; then cp x.py /yes/; else cp x.py /no/; fi\n"))
    assert placed(plan) == ({"/yes/x.py": "s/x.py"} if holds else {"/no/x.py": "s/x.py"})
    assert plan.notes == ()


GUARD = '[ -z "$BASH_VERSION" ] && exec bash "$0" "$@"\n'


@pytest.mark.parametrize(("head", "run", "runs", "notes"), [
    ("#!/bin/bash\n", "cd /w/s && ./i.sh", 1, []),  # bash sets BASH_VERSION: the guard is decided
    ("#!/usr/bin/env bash\n", "cd /w/s && ./i.sh", 1, []),
    ("", "cd /w/s && bash i.sh", 1, []),
    ("", '["bash", "-c", "cd /w/s && ./i.sh"]', 1, []),  # no '#!': the calling shell (bash) runs it itself
    ("#!/bin/dash\n", "cd /w/s && ./i.sh", 1, []),  # dash leaves it unset: exec runs it again, once, under bash
    # /bin/sh is dash (Debian, Ubuntu) or bash (RHEL-likes): the base image decides; under bash it is read once.
    ("", "cd /w/s && ./i.sh", 2, [("assumed", 1)]),
    ("#!/bin/sh\n", "cd /w/s && ./i.sh", 2, [("assumed", 2)]),
    ("", "cd /w/s && sh i.sh", 2, [("assumed", 1)]),
])
def test_a_guard_that_reruns_the_script_under_bash_knows_bash_sets_bash_version(
        head: str, run: str, runs: int, notes: list[tuple[str, int]]) -> None:
    plan = plan_of(script_context(f"{head}{GUARD}cp x.py /d/x.py\n", run=run))
    assert [(n.kind, n.line) for n in plan.notes] == notes
    (script,) = plan.scripts
    assert [(c.source, c.destination) for c in script.body.copies] == [("/w/s/x.py", "/d/x.py")] * runs


@pytest.mark.parametrize(("script", "line"), [
    ("[ -d /opt/u ] && D=/opt/u || D=/dest\ncp x.py $D/\n", 1),
    ("D=/dest\n[ -d /opt/u ] && D=/opt/u\ncp x.py $D/\n", 2),
    ("T=\nfor d in /opt/a /opt/b; do [ -d $d ] && T=$d; done\n[ -n \"$T\" ] || T=/dest\ncp x.py $T/\n", 2),
    ("command -v python3 >/dev/null && PY=python3 || PY=python\n", 1),
    # Whether a Python program succeeds (an import the image may lack, an exit it may not reach) is the image's
    # to say; one that always ends with sys.exit(1) fails (tests/shipping/test_python_helper_copies.py).
    ("python3 -c 'import vllm' && cp x.py /dest/\n", 1),
    ("python3 -c 'import sys, vllm; sys.exit(0 if vllm.__version__ else 1)' || D=/dest\n", 1),
])
def test_a_list_run_on_a_test_only_the_image_decides_says_so_as_an_if_does(script: str, line: int) -> None:
    # The reader runs each command after the test, as if each ran: which value a variable ends with, and where a
    # copy goes, is the base image's to decide, and inspect lists the line under "Assumed".
    plan = plan_of(script_context(script))
    assert [(n.kind, n.line) for n in plan.notes] == [("assumed", line)]
    assert plan.notes[0].reason == ("the base image decides whether this succeeds: the reader runs each command "
                                    "after it in the list, as if each ran")


@pytest.mark.parametrize("script", [
    "[ -d /opt/u ] || true\ncp x.py /dest/\n",  # what follows changes nothing
    "[ -d /opt/u ] || echo no\ncp x.py /dest/\n",
    "[ -d /w/s ] && cp x.py /dest/\n",  # a folder the build made: decided
    "vendor_tool && cp x.py /dest/\n",  # the program's own note says why
])
def test_a_list_whose_outcome_changes_nothing_or_is_noted_already_adds_no_assumption(script: str) -> None:
    plan = plan_of(script_context(script))
    assert not [n for n in plan.notes if n.kind == "assumed"]


def test_an_if_on_a_python_program_reads_both_branches() -> None:
    # 'if python3 -c "import vllm"' is how a script asks whether the image has a package: the image answers.
    script = ("if python3 -c 'import vllm' 2>/dev/null; then cp x.py /opt/has.py; else cp x.py /opt/lacks.py; fi\n")
    plan = plan_of(script_context(script))
    assert {"/opt/has.py", "/opt/lacks.py"} <= set(plan.image)
    assert [(n.kind, n.line) for n in plan.notes] == [("assumed", 1)]


@pytest.mark.parametrize("lookup", ["command -v vllm-serve", "type vllm-serve", "type -t vllm-serve", "hash vllm-serve",
                                    "which vllm-serve", "command -V vllm-serve"])
def test_whether_the_image_has_a_program_is_its_own_to_say(lookup: str) -> None:
    """bash and dash: type, hash and command -v fail where no program of that name is on PATH (type: 1 in bash,
    127 in dash); which looks on PATH only. The reader cannot see the base image's PATH: both branches."""
    plan = plan_of(script_context(f"{lookup} >/dev/null 2>&1 && cp x.py /yes/ || cp x.py /no/\n"))
    assert placed(plan) == {"/yes/x.py": "s/x.py", "/no/x.py": "s/x.py"}
    assert [line for _, line, _ in notes_of(plan, "assumed")] == [1]


@pytest.mark.parametrize("lookup", ["command -v f", "command -v cd", "type f echo", "hash f", "hash -r", "hash"])
def test_a_function_or_builtin_is_always_found(lookup: str) -> None:
    """bash 5.2 and dash 0.5.12: a function the script defined and a builtin are found without PATH."""
    plan = plan_of(script_context(f"f() {{ :; }}\n{lookup} >/dev/null 2>&1 && cp x.py /yes/ || cp x.py /no/\n"))
    assert placed(plan) == {"/yes/x.py": "s/x.py"}
    assert notes_of(plan, "assumed") == []


def test_bashs_type_options_are_read_and_dashs_type_has_none() -> None:
    """bash's 'type -t echo' finds the builtin; dash's type looks for a command named '-t', which the reader
    leaves to the image (it is not there: dash fails with 127)."""
    script = "type -t echo >/dev/null 2>&1 && cp x.py /dest/yes.py\n"
    assert in_dest(run_script(script, "bash i.sh")) == ["/dest/yes.py"]
    assert run_script(script, "bash i.sh").notes == ()
    assert [n.kind for n in run_script(script, "dash i.sh").notes] == ["assumed"]
