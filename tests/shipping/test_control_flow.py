"""if, case, loops, functions, subshells, exit and set -e run as sh runs them, where the build's own values decide.

A test whose answer the reader knows (``true``, ``false``, ``[ $i = 2 ]``
with known values, a folder the build made) takes one way; one only the
base image can answer takes both, and says so. A loop turns as often as
its known condition says; ``break N``/``continue N`` leave N loops; ``exit``
in a subshell ends only the subshell; under ``set -e`` a command known to
fail ends the script, except where sh exempts it (a condition, the left of
``&&``/``||``, ``!``, a pipe's left side). Inside a pipe's left side, which
runs in a subshell, set -e still holds unless the whole pipe is exempt.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, plan_of, run_script, script_context

ASSUMED_IF = "the base image decides whether this holds: the reader follows the branch for 'yes', then the one for 'no'"
RUN_FAILS = ("fails", 4, "RUN cd /w/s && ./i.sh",
             "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted before it)")


def outcome(script: str) -> tuple[list[str], list[tuple[str, int, str, str]]]:
    """The image paths the script filled outside its own folder, and every note (kind, line, text, reason)."""
    plan = plan_of(script_context(script))
    return (sorted(path for path in plan.image if not path.startswith("/w/s/")),
            [(n.kind, n.line, n.text, n.reason) for n in plan.notes])


@pytest.mark.parametrize(("script", "placed"), [
    ("if false; then cp x.py /a.py; elif true; then cp x.py /b.py; else cp x.py /c.py; fi", ["/b.py"]),
    ("if false; then cp x.py /a.py; elif false; then cp x.py /b.py; else cp x.py /c.py; fi", ["/c.py"]),
    ("if false; then cp x.py /a.py; elif false; then cp x.py /b.py; elif true; then cp x.py /c.py; "
     "elif true; then cp x.py /d.py; else cp x.py /e.py; fi", ["/c.py"]),
    ("if true; then cp x.py /a.py; else cp x.py /c.py; fi", ["/a.py"]),
    ("if false; then cp x.py /a.py; fi; cp x.py /after.py", ["/after.py"]),
    ("if ! false; then cp x.py /a.py; fi", ["/a.py"]),
    ("if false || true; then cp x.py /a.py; fi; if true && false; then cp x.py /b.py; fi", ["/a.py"]),
    ("if false; true; then cp x.py /a.py; fi; if true; false; then cp x.py /b.py; fi", ["/a.py"]),
    ("while false; do cp x.py /a.py; done; until true; do cp x.py /b.py; done; cp x.py /c.py", ["/c.py"]),
    ("until false; do cp x.py /a.py; break; done; cp x.py /c.py", ["/a.py", "/c.py"]),
    ("while true; do cp x.py /a.py; break; cp x.py /never.py; done", ["/a.py"]),
    ("i=0; while [ $i != 3 ]; do cp x.py /w$i.py; i=$((i+1)); done", ["/w0.py", "/w1.py", "/w2.py"]),
    ("i=0; until [ $i = 2 ]; do i=$((i+1)); cp x.py /u$i.py; done", ["/u1.py", "/u2.py"]),
    ("for i in 1 2 3; do for j in a b; do cp x.py /o-$i$j.py; [ $j = a ] && continue 2; done; done",
     ["/o-1a.py", "/o-2a.py", "/o-3a.py"]),
    ("for i in 1 2 3; do for j in a b; do cp x.py /o-$i$j.py; break 2; done; done; cp x.py /after.py",
     ["/after.py", "/o-1a.py"]),
    ("for i in 1 2; do for j in a b; do break 1; done; cp x.py /o$i.py; done", ["/o1.py", "/o2.py"]),
    ("for i in 1 2 3; do for j in a; do continue; cp x.py /n.py; done; cp x.py /o$i.py; done",
     ["/o1.py", "/o2.py", "/o3.py"]),
    ("for i in 1 2; do if [ $i = 2 ]; then break; fi; cp x.py /o$i.py; done", ["/o1.py"]),
    ("for i in 1 2; do while true; do break 2; done; cp x.py /o$i.py; done; cp x.py /after.py", ["/after.py"]),
    ("while true; do for i in 1; do continue 2; done; done", []),  # the reader follows it to its turn limit
    ("f() { cp x.py /f1.py; return; cp x.py /f2.py; }; f; cp x.py /after.py", ["/after.py", "/f1.py"]),
    ("f() { cp x.py \"/$1.py\"; }; f one; f two; cp x.py /p$1.py", ["/one.py", "/p.py", "/two.py"]),
    ("(cp x.py /s1.py; exit 0; cp x.py /s2.py); cp x.py /after.py", ["/after.py", "/s1.py"]),
    ("(exit 1) || cp x.py /a.py; (exit 0) && cp x.py /b.py", ["/a.py", "/b.py"]),
    ("A=; (A=/in; cp x.py $A.py); cp x.py /out$A.py", ["/in.py", "/out.py"]),
    ("{ A=/in; cp x.py $A.py; }; cp x.py /out$A.py", ["/in.py", "/out/in.py"]),
    ("set -e; ! true; cp x.py /yes.py", ["/yes.py"]),
    ("set -e; false || true; cp x.py /yes.py", ["/yes.py"]),
    ("set -e; false && true; cp x.py /yes.py", ["/yes.py"]),
    ("set -e; if false; then :; fi; cp x.py /yes.py", ["/yes.py"]),
    ("set -e; while false; do :; done; cp x.py /yes.py", ["/yes.py"]),
    ("set -e; false | true; cp x.py /yes.py", ["/yes.py"]),
    ("set -e; (false); cp x.py /never.py", []),
    # Left of || (or in a condition) set -e is off for everything the command runs in this shell.
    ("set -e; f() { false; cp x.py /a.py; }; f || true; cp x.py /b.py", ["/a.py", "/b.py"]),
    ("set -e; { false; cp x.py /a.py; } || true; if { false; cp x.py /b.py; }; then :; fi", ["/a.py", "/b.py"]),
    ("set -e; (false; cp x.py /a.py) && true; while (false; cp x.py /b.py; false); do :; done", ["/a.py", "/b.py"]),
    ("set -e; { false; cp x.py /a.py; } || true; false; cp x.py /never.py", ["/a.py"]),
    ("exit 0; cp x.py /never.py", []),
    ("cp x.py /a.py; exit; cp x.py /never.py", ["/a.py"]),
    # A bare exit repeats the status of the last command; exit N is N modulo 256.
    ("(false; exit) || cp x.py /a.py; (true; exit) && cp x.py /b.py", ["/a.py", "/b.py"]),
    ("(exit 256) && cp x.py /a.py; (exit 00) && cp x.py /b.py; (exit 257) || cp x.py /c.py",
     ["/a.py", "/b.py", "/c.py"]),
    ("exit $CODE; cp x.py /never.py", []),
    ("true && cp x.py /a.py || cp x.py /b.py; false && cp x.py /c.py || cp x.py /d.py", ["/a.py", "/d.py"]),
    ("false || false || cp x.py /a.py; true || cp x.py /b.py && cp x.py /c.py", ["/a.py", "/c.py"]),
    ("B=']]'; if test \"$B\" = ']]'; then cp x.py /a.py; else cp x.py /b.py; fi", ["/a.py"]),  # ']]' is data to test
    # $? is the last command's status: 1 after a known failure, 0 after one taken to succeed (as '||' reads it).
    ("cp missing.py /m.py 2>/dev/null; rc=$?; if [ $rc = 0 ]; then cp x.py /a.py; else cp x.py /b.py; fi", ["/b.py"]),
    ("false; if [ $? -ne 0 ]; then cp x.py /a.py; fi; true; [ $? -eq 0 ] && cp x.py /b.py; true; [ $? -ne 0 ] && "
     "cp x.py /never.py", ["/a.py", "/b.py"]),
    ("pip install foo; if [ $? -ne 0 ]; then cp x.py /a.py; fi; pip install bar || cp x.py /b.py", []),
    ("false; echo $? >/dev/null; [ $? -gt 0 ] || cp x.py /a.py", ["/a.py"]),
    # test's integer comparisons; an operand that is not an integer leaves the test undecided.
    ("[ 2 -lt 10 ] && cp x.py /a.py; [ 2 -ge 10 ] || cp x.py /b.py; [ -3 -le ' 1' ] && cp x.py /c.py; "
     "[ 10 -lt 2 ] && cp x.py /n1.py; [ 2 -gt 2 ] && cp x.py /n2.py; [ 0 -eq 00 ] || cp x.py /n3.py",
     ["/a.py", "/b.py", "/c.py"]),
    ("[ 1x -eq 1 ] && cp x.py /a.py; [ 1 -eq 1000000000000000000000 ] && cp x.py /b.py", ["/a.py", "/b.py"]),
    ("[ -d /opt/u ] && cp x.py /a.py || cp x.py /b.py", ["/a.py", "/b.py"]),
    ("while [ -d /opt/u ]; do cp x.py /a.py; done; cp x.py /after.py", ["/a.py", "/after.py"]),
    ("case x in y) cp x.py /y.py;; *) cp x.py /star.py;; esac", ["/star.py"]),
    ("case x in y|x) cp x.py /yx.py;; *) cp x.py /star.py;; esac", ["/yx.py"]),
    ("case x in y) cp x.py /y.py;; esac; cp x.py /after.py", ["/after.py"]),
    ("for f; do cp x.py /p$f.py; done", []),
    ("set -- a b; shift; for f; do cp x.py /p$f.py; done", ["/pb.py"]),
    ("set -- a b c; shift 2; cp x.py /p$1.py; cp x.py /n$#.py", ["/n1.py", "/pc.py"]),
    ("set -x a b; cp x.py /$2.py; set -e -- c; cp x.py /$1$#.py", ["/b.py", "/c1.py"]),
    ("eval 'cp x.py /e.py'; C='cp x.py'; eval $C /f.py", ["/e.py", "/f.py"]),
    # set -e does not apply inside a command under '!': the function goes on past its failure.
    ("set -e; f() { false; cp x.py /in.py; }; ! f; cp x.py /after.py", ["/after.py", "/in.py"]),
])
def test_the_branch_the_builds_own_values_decide_is_taken(script: str, placed: list[str]) -> None:
    assert outcome(script)[0] == placed


@pytest.mark.parametrize("operand", ["$'\\x1c1'", "$'\\u00a01'", "$'\\r1'", "$'1\\n'", "$'\\v1'", "$'\\f1'"],
                         ids=["x1c", "no-break space", "cr", "newline after", "vt", "ff"])
def test_an_integer_with_other_space_than_blanks_around_it_leaves_the_test_undecided(operand: str) -> None:
    # None of bash 5.2, dash 0.5.12 and coreutils' test reads '\x1c1' or a no-break space then 1 as a number, and
    # they read the others differently ('[' of bash takes '\r1', not '1\n'; coreutils' takes neither); int()
    # refused '\x1c1' (a crash) and took the others as 1.
    placed, noted = outcome(f"[ {operand} -ne 1 ] && cp x.py /a.py\n")
    assert placed == ["/a.py"] and [n[0] for n in noted] == ["assumed"]


@pytest.mark.parametrize("script", [
    "set -e; false; cp x.py /never.py",
    "set -e; true && false; cp x.py /never.py",
    "set -e; true | false; cp x.py /never.py",
    "set -o errexit; false; cp x.py /never.py",
    "exit 3; cp x.py /never.py",
    "set -e; f() { false; }; f; cp x.py /never.py",
])
def test_a_known_failure_that_ends_the_script_fails_the_run(script: str) -> None:
    assert outcome(script) == ([], [RUN_FAILS])


def test_an_if_the_base_image_decides_reads_every_branch_and_notes_each_test() -> None:
    placed, notes = outcome("if [ -d /opt/u ]; then cp x.py /a.py\nelif [ -d /opt/v ]; then cp x.py /b.py\n"
                            "else cp x.py /c.py; fi\nif [ -d /opt/w ]; then :; fi\n"
                            "if [ -d /opt/x ]; then cp x.py /d.py; elif true; then cp x.py /e.py; fi\n")
    assert placed == ["/a.py", "/b.py", "/c.py", "/d.py", "/e.py"]
    assert notes == [("assumed", 1, "[ -d /opt/u ]", ASSUMED_IF), ("assumed", 2, "[ -d /opt/v ]", ASSUMED_IF),
                     ("assumed", 4, "[ -d /opt/w ]", ASSUMED_IF), ("assumed", 5, "[ -d /opt/x ]", ASSUMED_IF)]


@pytest.mark.parametrize(("script", "line", "text"), [
    ("[ -d /opt/u ] || exit 0\ncp x.py /after.py", 1, "exit 0"),
    ("f() {\n  [ -d /opt/u ] || return\n  cp x.py /after.py\n}\nf", 2, "return"),
    ("for i in 1; do\n  [ -d /opt/u ] && break\n  cp x.py /after.py\ndone", 2, "break"),
    ("for i in 1; do\n  [ -d /opt/u ] && continue\n  cp x.py /after.py\ndone", 2, "continue"),
    ("if [ -d /opt/u ]; then\n  exit 1\nfi\ncp x.py /after.py", 2, "exit 1"),
    ("if [ -d /opt/u ]; then :; else\n  exit 1\nfi\ncp x.py /after.py", 2, "exit 1"),
    ("if [ -d /opt/u ]; then :; elif [ -d /opt/v ]; then\n  exit 1\nfi\ncp x.py /after.py", 2, "exit 1"),
    ("case $ARCH in\n  arm*) exit 1 ;;\nesac\ncp x.py /after.py", 2, "exit 1"),
])
def test_a_jump_only_the_base_image_decides_is_noted_and_not_taken(script: str, line: int, text: str) -> None:
    placed, notes = outcome(script)
    word = text.split()[0]
    assert placed == ["/after.py"]
    assert notes[-1] == ("assumed", line, text,
                         f"the base image decides whether this {word} runs; the reader reads on as if it does not")
    assert all(n[0] == "assumed" for n in notes)


def test_a_list_the_base_image_decides_is_noted_though_an_earlier_line_noted_a_program_it_does_not_follow() -> None:
    # The program's note is about line 1; whether line 2's test holds is still the base image's to decide.
    placed, notes = outcome("frobnicate --now\n[ -d /opt/u ] && cp x.py /a.py\n")
    assert placed == ["/a.py"]
    assert notes == [
        ("program", 1, "frobnicate --now",
         "runs frobnicate, which the reader does not follow: it could change any file"),
        ("assumed", 2, "[ -d /opt/u ]", "the base image decides whether this succeeds: the reader runs each command "
                                         "after it in the list, as if each ran")]


def test_a_case_on_an_unknown_value_notes_it_once_and_reads_each_body() -> None:
    placed, notes = outcome("case $U in\n  y) ;;\n  z) cp x.py /z.py ;;\n  *) cp x.py /star.py ;;\nesac\n")
    assert placed == ["/star.py", "/z.py"]
    assert notes == [("assumed", 1, "case $U in y) ;; z) cp x.py /z.py ;; *) cp x.py /star.py ;; esac",
                      "the base image decides which branch runs: the reader reads every one")]


def test_a_case_pattern_with_an_unknown_part_reads_every_body() -> None:
    placed, notes = outcome("A=x\ncase $A in\n  $U) cp x.py /u.py ;;\n  x) cp x.py /x.py ;;\nesac\n")
    assert placed == ["/u.py", "/x.py"] and [n[0] for n in notes] == ["assumed"]


# What dash and bash both chose for each (checked by running them).
@pytest.mark.parametrize(("script", "placed"), [
    ("f() { return 1; }\nif f; then cp x.py /yes.py; else cp x.py /no.py; fi", ["/no.py"]),
    ("f() { return 0; }\nf && cp x.py /yes.py", ["/yes.py"]),
    ("f() { false; return; }\nf || cp x.py /last.py", ["/last.py"]),  # no N: the last command's status
    ("f() { return 256; }\nf && cp x.py /wrapped.py", ["/wrapped.py"]),  # N modulo 256
    ("set -e\nf() { return 3; }\nf\ncp x.py /after.py", []),  # set -e ends the script on the call
])
def test_a_function_returns_the_status_return_gives(script: str, placed: list[str]) -> None:
    assert outcome(script)[0] == placed


def test_a_sourced_file_returns_the_status_return_gives() -> None:
    plan = plan_of(script_context(". ./lib.sh || cp x.py /sourced.py\n",
                                  files={"s/lib.sh": "return 1\ncp x.py /never.py\n"}))
    assert sorted(path for path in plan.image if not path.startswith("/w/s/")) == ["/sourced.py"]



# (script, what bash 5.2 places and whether its RUN fails, the same for dash 0.5.12), each checked by running them:
# outside a function or sourced file bash fails 'return' (status 2) and reads on; dash ends the script, or the
# subshell, with the status, as 'exit' would.
@pytest.mark.parametrize(("script", "bash", "dash"), [
    ("return 3\ncp x.py /dest/after.py", (["/dest/after.py"], False), ([], True)),
    ("return 3 || cp x.py /dest/failed.py", (["/dest/failed.py"], False), ([], True)),
    ("return 3", ([], True), ([], True)),
    ("(return 4) || cp x.py /dest/sub.py\ncp x.py /dest/after.py", (["/dest/after.py", "/dest/sub.py"], False),
     (["/dest/after.py", "/dest/sub.py"], False)),
    ("(return 0) && cp x.py /dest/ok.py", ([], True), (["/dest/ok.py"], False)),
    ("f() { (return 0) && cp x.py /dest/ok.py; }\nf", (["/dest/ok.py"], False), (["/dest/ok.py"], False)),
    ("set -e\nreturn 0\ncp x.py /dest/after.py", ([], True), ([], False)),
    ("x=$(return 5) || cp x.py /dest/cs.py", (["/dest/cs.py"], False), (["/dest/cs.py"], False)),
    # in a function, return in a subshell ($(...), a pipe's part, ( ... )) ends the subshell only
    ("f() { x=$(return 5) || cp x.py /dest/cs.py; }\nf", (["/dest/cs.py"], False), (["/dest/cs.py"], False)),
    ("f() { return 3 | cat; cp x.py /dest/after.py; }\nf", (["/dest/after.py"], False),
     (["/dest/after.py"], False)),
    ("f() { ( g() { return 1; }; g || cp x.py /dest/g.py; return 0; cp x.py /dest/no.py ) && cp x.py /dest/sub.py; }"
     "\nf", (["/dest/g.py", "/dest/sub.py"], False), (["/dest/g.py", "/dest/sub.py"], False)),
])
def test_return_outside_a_function_fails_in_bash_and_ends_the_script_in_dash(
        script: str, bash: tuple[list[str], bool], dash: tuple[list[str], bool]) -> None:
    for run, (placed, run_fails) in (("bash i.sh", bash), ("dash i.sh", dash)):
        plan = run_script(script + "\n", run)
        assert (in_dest(plan), any(n.kind == "fails" and n.text.startswith("RUN ") for n in plan.notes)) == (
            placed, run_fails), run


def test_return_outside_a_function_is_a_failure_bash_names_and_an_assumption_under_sh() -> None:
    assert [(n.kind, n.line, n.reason) for n in run_script("return\ncp x.py /dest/a.py\n").notes] == [
        ("fails", 1, "return outside a function or sourced file: bash fails it (status 2) and reads on")]
    plan = run_script("return\ncp x.py /dest/a.py\n", "sh i.sh")
    assert in_dest(plan) == ["/dest/a.py"] and [(n.kind, n.line) for n in plan.notes] == [("assumed", 1)]


# Each checked with bash 5.2 and dash 0.5.12: a list run with '&' is a subshell whose status is 0 to the shell.
@pytest.mark.parametrize(("script", "placed"), [
    ("set -e\nfalse &\ncp x.py /dest/g", ["/dest/g"]),  # set -e does not end the shell on it
    ("set -e\n(false; cp x.py /dest/no) &\nwait\ncp x.py /dest/g", ["/dest/g"]),  # but holds inside it
    ("cd /dest &\nwait\ncp x.py g", []),  # its cd stays in it: g lands in /w/s
    ("cp x.py /dest/bg & wait", ["/dest/bg"]),  # its files land
    ("cp nope /dest/ &", []),  # its failure is not the script's: the RUN succeeds
    ("true && cp x.py /dest/a || cp x.py /dest/b &\nwait", ["/dest/a"]),  # '&' takes the whole and-or list
    ("false && cp x.py /dest/a || cp x.py /dest/b &\nwait", ["/dest/b"]),
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_background_list_runs_in_a_subshell_whose_status_is_zero(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script + "\n", run)
    assert in_dest(plan) == placed
    assert not any(n.text.startswith("RUN ") for n in plan.notes)
    assert [(n.kind, n.reason) for n in plan.notes if n.kind == "assumed"] == [
        ("assumed", "runs in the background: the reader takes what it does to be done before the commands after it")]


@pytest.mark.parametrize(("script", "placed"), [
    ("A='a*c'\ncase \"$A\" in\n  \"*\") cp x.py /literal.py ;;\n  *) cp x.py /any.py ;;\nesac\n", ["/any.py"]),
    ("A='*'\ncase \"$A\" in\n  \"*\") cp x.py /literal.py ;;\nesac\n", ["/literal.py"]),
    ("A=abc\ncase $A in\n  \"a*\") cp x.py /no.py ;;\n  \"a\"*) cp x.py /prefix.py ;;\nesac\n", ["/prefix.py"]),
    ("A=abc\ncase $A in\n  a\\*) cp x.py /no.py ;;\n  [!x]?c) cp x.py /class.py ;;\nesac\n", ["/class.py"]),
    ("P='a*'\ncase abc in\n  $P) cp x.py /expanded.py ;;\nesac\n", ["/expanded.py"]),  # an unquoted value's '*'
    ("P='a*'\ncase abc in\n  \"$P\") cp x.py /no.py ;;\n  *) cp x.py /star.py ;;\nesac\n", ["/star.py"]),
])
def test_a_case_patterns_quoted_characters_match_as_written(script: str, placed: list[str]) -> None:
    assert outcome(script) == (placed, [])


def test_a_loop_the_base_image_decides_is_read_once() -> None:
    placed, notes = outcome("i=0\nwhile [ -d /opt/u ]; do\n  i=$((i+1)); cp x.py /w$i.py\ndone\ncp x.py /after$i.py\n")
    assert placed == ["/after1.py", "/w1.py"] and notes == []


def test_an_endless_loop_is_read_to_its_limit() -> None:
    placed, notes = outcome("i=0\nuntil false; do\n  i=$((i+1))\ndone\ncp x.py /after.py\n")
    assert placed == [] and notes == [
        ("stop", 2, "until false; do i=$((i+1)) done", "a loop turns more than 1,000 times; the reader stops here")]


def test_a_loop_that_places_more_files_than_the_reader_follows_stops_at_the_next_command(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The limit is 200,000 steps (a file placed is one); a smaller one keeps the test quick, the mechanism is the same.
    from patcher.shipping import shell_interpreter
    monkeypatch.setattr(shell_interpreter, "MAX_STEPS", 300)
    placed, notes = outcome("mkdir /c\ni=0\nwhile [ $i -lt 500 ]; do\n  cp -r sub /c/$i\n  i=$((i+1))\ndone\n"
                            "cp x.py /after.py\n")
    assert "/after.py" not in placed and "/c/0/y.py" in placed
    # Each command is checked before it runs: the first one after the cp that passed the limit is where it stops.
    assert notes == [("stop", 5, "i=$((i+1))", shell_interpreter.STEPS_PAST)]


def test_a_copy_where_set_e_is_ignored_would_not_stop_the_script() -> None:
    plan = plan_of(script_context("set -e\nf() { cp x.py /a.py; }\nf || true\nif f; then :; fi\ncp x.py /b.py\n"))
    assert {i.image_path: i.stops_on_error for i in plan.installed} == {"/a.py": False, "/b.py": True}


def test_a_build_of_exactly_as_many_commands_as_the_reader_follows_is_read_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The limit is 100,000 commands; a smaller one keeps the test quick, the counting is the same.
    from patcher.shipping import shell_interpreter
    context = {"Dockerfile": "FROM base\nCOPY x.py /src/\n"
                             "RUN cp /src/x.py /a.py && cp /src/x.py /b.py && cp /src/x.py /c.py\n", "x.py": ""}
    monkeypatch.setattr(shell_interpreter, "MAX_COMMANDS", 3)
    plan = plan_of(context)
    assert sorted(plan.image) == ["/a.py", "/b.py", "/c.py", "/src/x.py"] and plan.notes == ()
    monkeypatch.setattr(shell_interpreter, "MAX_COMMANDS", 2)
    plan = plan_of(context)
    assert "/c.py" not in plan.image and [(n.kind, n.line, n.text) for n in plan.notes] == [
        ("stop", 3, "cp /src/x.py /c.py")]


@pytest.mark.parametrize(("loop", "failed"), [
    # A loop's status is that of the last command it ran: 0 when its body never ran...
    ("PATCHES=\nfor p in $PATCHES; do cp $p /opt/; done", False),
    ("while false; do cp x.py /a.py; done", False),
    # ...break and continue succeed, whatever ran before them...
    ("for v in 1 2; do false; break; done", False),
    ("for v in 1 2; do if [ $v = 2 ]; then break; fi; false; done", False),
    ("for v in 1 2; do if [ $v = 2 ]; then continue; fi; false; done", False),
    ("while true; do false; break; done", False),
    ("i=0\nwhile [ $i -lt 2 ]; do i=$((i+1)); [ $i = 2 ] && continue; false; done", False),
    # ...and otherwise the body's last command, on its last turn (not the condition that ended the loop).
    ("for v in 1 2; do [ $v = 1 ]; done", True),
    ("i=0\nwhile [ $i -lt 2 ]; do i=$((i+1)); false; done", True),
    ("i=0\nuntil [ $i -ge 2 ]; do i=$((i+1)); false; done", True),
    ("i=0\nwhile [ $i -lt 2 ]; do i=$((i+1)); done", False),
])
def test_a_loop_ends_with_the_status_of_the_last_command_it_ran(loop: str, failed: bool) -> None:
    """As sh and bash: ``LOOP || fallback`` runs the fallback only when that command failed."""
    placed, notes = outcome(f"{loop} || cp x.py /fallback.py\n")
    assert placed == (["/fallback.py"] if failed else []) and notes == []


@pytest.mark.parametrize(("variant", "branch"), [("rocm", "/opt/rocm.py"), ("cuda", "/opt/x.py")])
def test_the_last_command_of_a_run_fails_the_build_in_whichever_branch_of_an_if_it_stands(
        variant: str, branch: str) -> None:
    # Without set -e a failed cp in the middle of a RUN is passed over, but the RUN's status is its last command's:
    # the cp of the branch taken, 'then' or 'else'.
    plan = plan_of({"Dockerfile": f"FROM base\nARG VARIANT={variant}\nCOPY x.py /src/\n"
                                  "RUN cp /src/x.py /opt/first.py; if [ \"$VARIANT\" = rocm ]; "
                                  "then cp /src/x.py /opt/rocm.py; else cp /src/x.py /opt/x.py; fi\n", "x.py": ""})
    assert {i.image_path: i.stops_on_error for i in plan.installed} == {"/opt/first.py": False, branch: True}


@pytest.mark.parametrize(("line", "hides"), [
    # The first exit ends the script: what a hurried author put after it never runs, so it decides nothing.
    ("cp x.py /opt/x.py || { echo 'copy failed' >&2; exit 1; rm -rf /tmp/build; }", ()),
    ("cp x.py /opt/x.py || { echo 'optional, skipped'; exit 0; false; }", ("|| ...",)),
])
def test_the_first_exit_of_a_fallback_group_decides_whether_it_hides_the_failure(
        line: str, hides: tuple[str, ...]) -> None:
    (copy,) = plan_of(script_context(line + "\n")).installed
    assert copy.hides_failure == hides


def test_an_exit_inside_a_part_of_a_pipe_ends_that_part_only() -> None:
    # Each part of a pipe runs in a subshell: '|| exit 1' there ends the group, and the script reads on.
    placed, _ = outcome("{\n  cp x.py /in.py || exit 1\n  cp missing.py /m.py || exit 1\n  cp x.py /never.py\n"
                        "} 2>&1 | tee /tmp/install.log\ncp x.py /after.py\n")
    assert placed == ["/after.py", "/in.py"]


@pytest.mark.parametrize(("script", "expected"), [
    # bash and dash: set -e ends the group on the pipe's left, not the script.
    ("set -e\n{ false; cp x.py /in.py; } | cat\ncp x.py /after.py\n", ["/after.py"]),
    # An exempt pipe (|| after it, or !) exempts what runs inside its parts too.
    ("set -e\n{ false; cp x.py /in.py; } | cat || true\ncp x.py /after.py\n", ["/after.py", "/in.py"]),
    ("set -e\n! { false; cp x.py /in.py; } | cat\ncp x.py /after.py\n", ["/after.py", "/in.py"]),
])
def test_set_e_holds_inside_a_pipes_left_side_unless_the_pipe_is_exempt(script: str, expected: list[str]) -> None:
    placed, _ = outcome(script)
    assert placed == expected


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_break_reaches_only_the_loops_around_it_in_its_own_function(run: str) -> None:
    # bash 5.2 and dash 0.5.12: 'break 9' in two loops leaves both and the script goes on; a break in a function
    # called from a loop, or outside any loop, leaves nothing.
    script = ("f() { break; }\nfor i in 1 2; do cp x.py /dest/l$i.py; f; done\ncp x.py /dest/after.py\nbreak\n"
              "cp x.py /dest/top.py\nfor i in 1; do for j in 1; do break 9; done; cp x.py /dest/inner.py; done\n"
              "cp x.py /dest/end.py\n")
    assert in_dest(run_script(script, run)) == ["/dest/after.py", "/dest/end.py", "/dest/l1.py", "/dest/l2.py",
                                                "/dest/top.py"]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize(("script", "placed"), [
    # bash 5.2 and dash 0.5.12: a loop's condition is inside that loop. 'while break' leaves the while only, and
    # the loop around it turns on; 'until break 2' leaves both; a loop alone succeeds after it.
    ("for i in 1 2; do while break; do :; done; cp x.py /dest/a$i.py; done\n", ["/dest/a1.py", "/dest/a2.py"]),
    ("for i in 1 2; do until break 2; do :; done; cp x.py /dest/a$i.py; done\ncp x.py /dest/out.py\n",
     ["/dest/out.py"]),
    ("while break; do cp x.py /dest/body.py; done\ncp x.py /dest/after$?.py\n", ["/dest/after0.py"]),
    # 'continue' in the condition checks it again: the body never runs, and i counts to 4.
    ("i=0\nwhile i=$((i+1)); [ $i -gt 3 ] && break; continue; do cp x.py /dest/body.py; done\ncp x.py /dest/i$i.py\n",
     ["/dest/i4.py"]),
])
def test_break_and_continue_in_a_loop_condition_reach_that_loop(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == placed and plan.notes == ()


# bash 5.2 and dash 0.5.12: after 'set -- x.py', ( ... ), $(...) and each part of a pipe see $1 as x.py and copy it.
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize("copy", ['(cp "$1" /dest/a.py)', 'echo $(cp "$1" /dest/a.py)', 'cp "$1" /dest/a.py | cat'])
def test_a_subshell_keeps_the_positional_parameters_of_its_parent(copy: str, run: str) -> None:
    plan = run_script(f"set -- x.py\n{copy}\n", run)
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()


def test_a_subshell_runs_under_the_same_shell_as_its_script() -> None:
    # bash's declare -n works inside ( ... ) of a bash script: bash prints /dest/a.py for the path.
    plan = run_script('(X=/dest; declare -n r=X; cp x.py "$r/a.py")\n', "bash i.sh")
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize("condition", ["if true && false; then :; fi", "while true && false; do :; done",
                                       "if false || false; then :; fi", "until true && false || true; do :; done"])
def test_set_e_ignores_a_failure_anywhere_in_the_and_or_list_of_a_condition(condition: str, run: str) -> None:
    # bash 5.2 and dash 0.5.12 both go on past the condition's failing command.
    plan = run_script(f"set -e\n{condition}\ncp x.py /dest/after.py\n", run)
    assert in_dest(plan) == ["/dest/after.py"] and plan.notes == ()


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize("compound", [
    'for d in /dest/a /dest/b; do [ -d "$d" ] && V=$d; done',  # the vendor's loop over candidate roots
    "{ [ a = b ] && echo; }", "{ { [ a = b ] && echo; }; }", "if true; then [ a = b ] && echo; fi",
    "case x in x) [ a = b ] && echo;; esac", "for i in 1; do if true; then [ a = b ] && echo; fi; done",
    "for i in 1; do { [ a = b ] && echo; }; done > /dest/log",
])
def test_a_compound_failing_by_its_bodys_exempt_command_does_not_end_a_set_e_script(compound: str,
                                                                                     run: str) -> None:
    # bash 5.2 and dash 0.5.12: the body's last command failed where set -e is ignored (left of '&&'), so the
    # compound's status 1 ends nothing, and its ERR trap does not run.
    plan = run_script(f"set -e\ntrap 'cp x.py /dest/err.py' ERR\n{compound}\ncp x.py /dest/after.py\n"
                      if run == "bash i.sh" else f"set -e\n{compound}\ncp x.py /dest/after.py\n", run)
    assert "/dest/after.py" in in_dest(plan) and "/dest/err.py" not in in_dest(plan)
    assert not [note for note in plan.notes if note.kind == "fails"]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize("script", [
    "f() { [ a = b ] && echo; }\nf\n",  # a function's status is its call's
    "( [ a = b ] && echo )\n",  # a subshell's status is a command's
    "{ echo; } > /dest/no/log\n",  # the redirection fails, not the body
    "for i in 1; do false || [ a = b ]; done\n",  # the last command of the list is not exempt
    "{ [ a = b ] && echo; }\n(( 0 ))\n",
])
def test_a_failure_set_e_applies_to_ends_the_script_after_a_compound(script: str, run: str) -> None:
    if run == "dash i.sh" and "((" in script:
        script = script.replace("(( 0 ))", "false")  # dash reads '((' as two subshells
    plan = run_script(f"set -e\n{script}cp x.py /dest/after.py\n", run)
    assert in_dest(plan) == []
