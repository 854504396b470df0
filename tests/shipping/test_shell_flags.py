"""``sh -ec``, ``bash -xc``, ``sh -e -c``, ``set -e`` and friends: combined and separate flags read as sh reads them.

``-c`` takes the first operand as the command string wherever it sits in a
flag cluster; ``-e`` (or ``-o errexit``) makes a failed command end the
shell, and with it the build; ``set +e`` turns that off again. A script run
as ``bash FILE`` ignores its ``#!`` line; run as ``./FILE`` it obeys it.
``sh -s [--] ARGS <<EOF`` reads its script from the here-document and
hands it ARGS as ``$1``...; after ``--`` even words that look like flags
are arguments. ``set -f`` (``-o noglob``, or ``sh -f``) turns pathname
expansion off: ``*.py`` is then a name, not a pattern.
"""

from __future__ import annotations

import pytest

from patcher.shipping.shell_interpreter import shebang
from tests.shipping.conftest import plan_of, script_context

COPY = "cp /w/s/x.py /dest/x.py"


def run_line(run: str) -> dict[str, str]:
    return {"Dockerfile": f"FROM base\nRUN mkdir /w\nCOPY s /w/s\nRUN {run}\n", "s/x.py": "",
            "s/i.sh": f"{COPY}\necho done\n"}


def copy_of(plan):  # type: ignore[no-untyped-def]
    (found,) = [i for i in plan.installed if i.image_path == "/dest/x.py"]
    return found


@pytest.mark.parametrize(("run", "stops"), [
    (f'sh -c "{COPY}; echo done"', False),
    (f'sh -ec "{COPY}; echo done"', True),
    (f'sh -ce "{COPY}; echo done"', True),
    (f'sh -e -c "{COPY}; echo done"', True),
    (f'bash -xc "{COPY}; echo done"', False),
    (f'bash -xec "{COPY}; echo done"', True),
    (f'bash -o errexit -c "{COPY}; echo done"', True),
    (f'bash -euxo pipefail -c "{COPY}; echo done"', True),
    (f'sh -xo errexit -c "{COPY}; echo done"', True),  # the cluster's 'o' names the option after it
    (f'/bin/bash --norc -e -c "{COPY}; echo done"', True),
    (f'["/bin/sh", "-e", "-c", "{COPY}; echo done"]', True),
    (f'["bash", "-c", "{COPY}; echo done"]', False),
    (f'sh -c "set -e; {COPY}; echo done"', True),
    (f'sh -c "set -eu; {COPY}; echo done"', True),
    (f'sh -c "set -o errexit; {COPY}; echo done"', True),
    (f'sh -ec "set +e; {COPY}; echo done"', False),
    (f'sh -c "{COPY}; set -e; echo done"', False),
    (f'sh -c "{COPY}"', True),  # the last command: its failure is the RUN's
    (f'sh -c "{COPY} && echo done"', True),  # a failed && list fails the RUN too
    (f'sh -c "exec {COPY}; echo done"', True),  # exec never returns: its failure is the RUN's
    (f'sh -c "(exec {COPY}); echo done"', False),  # ...but in a subshell, only the subshell's
    (f"(cd /w/s && {COPY})", True),  # a subshell that ends the RUN: its last command's failure is the RUN's
    (f'sh -c "({COPY})"', True),
    # After a test only the base image decides, the copy still ends the RUN, or does not.
    (f"[ -d /opt/u ] && {COPY}", True), (f"[ -d /opt/u ] && {COPY}; echo done", False),
])
def test_a_command_string_copies_and_set_e_decides_whether_a_failure_stops_the_build(run: str, stops: bool) -> None:
    found = copy_of(plan_of(run_line(run)))
    assert found.script == "Dockerfile" and found.stops_on_error is stops


@pytest.mark.parametrize(("script", "run", "stops"), [
    ("set -e\n", "cd /w/s && ./i.sh", True),
    ("set -eu\n", "cd /w/s && ./i.sh", True),
    ("set -o errexit\n", "cd /w/s && ./i.sh", True),
    ("set -euo pipefail\n", "cd /w/s && ./i.sh", True),
    ("set -eo\n", "cd /w/s && ./i.sh", True),
    ("set -xo errexit\n", "cd /w/s && ./i.sh", True),  # the cluster's 'o' names the option that follows  # -o last names no option: set lists them, and -e holds
    ("set -o\n", "cd /w/s && ./i.sh", False),
    # bash: "set: -O: invalid option" (status 2), and -e holds
    ("#!/bin/bash\nset -e\nset -O errexit || true\n", "cd /w/s && ./i.sh", True),
    ("set -o errexit +x\n", "cd /w/s && ./i.sh", True),  # -o names the word after it, not the last one
    ("set -x -e\n", "cd /w/s && ./i.sh", True),
    ("set -e\nset +e\n", "cd /w/s && ./i.sh", False),
    ("set -e\nset +o errexit\n", "cd /w/s && ./i.sh", False),
    ("#!/bin/sh -e\n", "cd /w/s && ./i.sh", True),
    ("#!/usr/bin/env -S bash -e\n", "cd /w/s && ./i.sh", True),
    ("#!/bin/bash -e\n", "cd /w/s && bash i.sh", False),  # bash FILE reads the #! line as a comment
    ("", "cd /w/s && bash -e i.sh", True),
    ("", "cd /w/s && sh -xe ./i.sh", True),
    ("", "bash -e /w/s/i.sh", True),
    ("", "cd /w/s && ./i.sh", False),
])
def test_set_e_forms_in_a_script(script: str, run: str, stops: bool) -> None:
    body = script + "cp ./x.py /dest/x.py\necho done\n"
    if run.startswith("bash -e /w/s"):
        body = script + "cd /w/s\ncp ./x.py /dest/x.py\necho done\n"
    plan = plan_of(script_context(body, run=run))
    found = copy_of(plan)
    assert (found.script, found.stops_on_error) == ("s/i.sh", stops)
    (read,) = plan.scripts
    assert read.body.stops_on_error is stops


@pytest.mark.parametrize("set_line", ["set -x -euo pipefail", "set +x -eo pipefail"])
def test_set_with_an_o_cluster_after_other_flags_keeps_the_scripts_arguments(set_line: str) -> None:
    # bash takes the word after the cluster's 'o' as the option's name: the arguments the script was given stay.
    plan = plan_of(script_context(f"#!/bin/bash\n{set_line}\ncp ./x.py \"/opt/$1-$#.py\"\n",
                                  run="cd /w/s && ./i.sh app"))
    (found,) = [i for i in plan.installed if i.image_path.startswith("/opt/")]
    assert (found.image_path, found.stops_on_error) == ("/opt/app-1.py", True)
    assert plan.notes == ()


def test_set_e_after_the_copy_does_not_stop_it() -> None:
    found = copy_of(plan_of(script_context("cp ./x.py /dest/x.py\nset -e\necho done\n")))
    assert found.stops_on_error is False


def test_a_known_failure_under_set_e_ends_the_script() -> None:
    # cp of a folder without -r fails; under set -e nothing after it runs.
    plan = plan_of(script_context("set -e\ncp sub /dest/sub\ncp ./x.py /dest/x.py\n"))
    assert "/dest/x.py" not in plan.image
    assert [(n.line, n.kind) for n in plan.notes] == [(2, "fails"), (4, "fails")]
    # Without set -e the script goes on.
    assert "/dest/x.py" in plan_of(script_context("cp sub /dest/sub\ncp ./x.py /dest/x.py\necho done\n")).image


@pytest.mark.parametrize(("run", "hides"), [
    ("cd /w/s && ./i.sh || true", ("|| true",)),
    ("cd /w/s && ./i.sh; echo done", ("the RUN at Dockerfile line 4 goes on after it fails",)),
    ("cd /w/s && ./i.sh 2>/dev/null", ("2>/dev/null",)),  # the message goes nowhere; the failure still counts
    ("cd /w/s && ./i.sh | tee /tmp/log", ("| ...",)),
])
def test_a_run_line_that_ignores_the_script_failing_hides_its_copies(run: str, hides: tuple[str, ...]) -> None:
    found = copy_of(plan_of(script_context("set -e\ncp ./x.py /dest/x.py\n", run=run)))
    assert found.stops_on_error is True  # the script itself stops...
    assert found.hides_failure == hides  # ...but the RUN line may not


@pytest.mark.parametrize(("run", "hides"), [
    (f'sh -ec "{COPY}; echo done" || true', ("|| true",)),
    (f'sh -ec "{COPY}; echo done"; echo after', ("the RUN at Dockerfile line 4 goes on after it fails",)),
])
def test_a_run_line_that_ignores_a_command_string_failing_hides_its_copies(run: str, hides: tuple[str, ...]) -> None:
    # 'sh -ec "false; echo done" || true' exits 0 in bash and dash: the string's set -e stops the string only.
    found = copy_of(plan_of(run_line(run)))
    assert found.hides_failure == hides


def test_a_script_called_by_a_script_without_set_e_is_ignored_when_it_fails() -> None:
    plan = plan_of(script_context("./inner.sh\necho done\n", files={"s/inner.sh": "set -e\ncp ./x.py /dest/x.py\n"}))
    found = copy_of(plan)
    assert (found.script, found.stops_on_error) == ("s/inner.sh", True)
    assert found.hides_failure == ("s/i.sh goes on after it fails",)


@pytest.mark.parametrize(("command", "placed"), [
    ("sh -n ./i2.sh", []),  # -n reads without running
    ("sh -c 'cp x.py /opt/$0-$1.py' zero one", ["/opt/zero-one.py"]),  # the words after the string: $0, $1...
    ("sh -c 'cp x.py /opt/$0.py'", ["/opt/sh.py"]),
    ("bash -c 'cp x.py /opt/$0.py' -", ["/opt/-.py"]),
    ("bash --login -c 'cp x.py /opt/b.py'", ["/opt/b.py"]),
    # Long options anywhere before the script are passed over (the form CI runners use to call bash).
    ("bash --noprofile --norc -eo pipefail -c 'false; cp x.py /opt/b2.py'", []),
    ("bash --noprofile --norc -c 'cp x.py /opt/b3.py'", ["/opt/b3.py"]),
    ("bash -lc 'cp x.py /opt/l.py'", ["/opt/l.py"]),
    ("bash -o pipefail -c 'cp x.py /opt/c.py'", ["/opt/c.py"]),
    ("bash -O extglob -c 'cp x.py /opt/d.py'", ["/opt/d.py"]),
    ("bash +O nullglob -c 'cp x.py /opt/d2.py'", ["/opt/d2.py"]),  # +O turns a shopt off: it takes a name too
    ("sh -c -e 'false; cp x.py /opt/m.py'", []),
    ("sh -- i2.sh a", ["/opt/after.py", "/opt/i2-i2.sh-a.py"]),
    ("sh -e i2.sh a", ["/opt/i2-i2.sh-a.py"]),
    ("sh -ex -- ./i2.sh b", ["/opt/i2-./i2.sh-b.py"]),
    ("sh -xv i2.sh", ["/opt/after.py", "/opt/i2-i2.sh-.py"]),
    ("sh -u i2.sh", []),  # -u: its first line expands $1, which is not set: the script ends there
    ("sh -o errexit i2.sh", ["/opt/i2-i2.sh-.py"]),
    ("sh +e -c 'false; cp x.py /opt/e.py'", ["/opt/e.py"]),
    ("sh -eo errexit -c 'cp x.py /opt/f.py; false; cp x.py /opt/g.py'", ["/opt/f.py"]),
    ("sh -e +o errexit -c 'cp x.py /opt/f.py; false; cp x.py /opt/g.py'", ["/opt/f.py", "/opt/g.py"]),
    ("sh -e -o nounset -c 'false; cp x.py /opt/f.py'", []),
    ("sh -e +e -c 'false; cp x.py /opt/h.py'", ["/opt/h.py"]),
    ("sh -e <<EOF\nfalse\ncp x.py /opt/k.py\nEOF", []),
    # -o last: it names no option (bash lists them), and -e still holds for the script read from standard input.
    ("bash -eo <<EOF\nfalse\ncp x.py /opt/r.py\nEOF", []),
    ("bash -o <<EOF\nfalse\ncp x.py /opt/s.py\nEOF", ["/opt/s.py"]),
    ("sh <<EOF\nfalse\ncp x.py /opt/k.py\nEOF", ["/opt/k.py"]),
    # The string is the shell's whole program: its EXIT trap runs when it ends (bash 5.2, dash 0.5.12).
    ("sh -c 'trap \"cp x.py /opt/t.py\" EXIT; true'", ["/opt/t.py"]),
    # -s: the here-document is the script and the operands are its arguments, even those after -- that look
    # like flags (a vendor installer taking --prefix=DIR).
    ("sh -s -- --prefix=/opt/v <<'EOF'\ncp x.py \"${1#--prefix=}-$#.py\"\nEOF", ["/opt/v-1.py"]),
    ("bash -s -- -v /opt/w <<'EOF'\ncp x.py \"$2$1.py\"\nEOF", ["/opt/w-v.py"]),
    ("sh -s /opt/u x <<'EOF'\ncp x.py \"$1-$2-$0.py\"\nEOF", ["/opt/u-x-sh.py"]),
    ("sh -es /opt/u <<'EOF'\nfalse\ncp x.py \"$1.py\"\nEOF", []),
    ("dash -c 'cp x.py /opt/n.py'", ["/opt/n.py"]),
    ("busybox-sh -c 'cp x.py /opt/o.py'", ["/opt/o.py"]),
    ("/bin/sh -c 'cp x.py /opt/p.py'", ["/opt/p.py"]),
    ("ksh -c 'cp x.py /opt/q.py'", ["/opt/q.py"]),
])
def test_a_shell_run_with_flags_reads_its_string_script_or_input_as_sh_does(command: str, placed: list[str]) -> None:
    plan = plan_of(script_context(f"{command}\n", files={"s/i2.sh": "cp x.py /opt/i2-$0-$1.py\nfalse\n"
                                                                    "cp x.py /opt/after.py\n"}))
    assert sorted(path for path in plan.image if path.startswith("/opt/")) == placed


def test_sh_c_without_its_string_fails() -> None:
    plan = plan_of(script_context("sh -c\ncp x.py /opt/a.py\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [("fails", 1, "sh -c needs a command string")]
    assert "/opt/a.py" in plan.image


@pytest.mark.parametrize(("text", "interpreter"), [
    ("#!/bin/sh -e\n", ("/bin/sh", ["-e"])),
    ("#! /bin/bash\n", ("/bin/bash", [])),
    ("#!/usr/bin/env -S bash -e\n", ("bash", ["-e"])),
    ("#!/usr/bin/env -u X bash -x\n", ("bash", ["-x"])),
    ("#!/usr/bin/env -i -S sh\n", ("sh", [])),
    ("\ufeff#!/bin/sh -e\r\nset +e\n", None),  # the kernel looks at the first two bytes: a byte-order mark hides it
    ("#!/usr/bin/env\n", None),
    ("#!/usr/bin/env -u\n", None),
    ("#!\n", None),
    ("echo\n#!/bin/sh\n", None),
    ("", None),
])
def test_the_interpreter_line_names_the_program_env_looked_through(text: str, interpreter: object) -> None:
    assert shebang(text) == interpreter


@pytest.mark.parametrize(("script", "run", "placed"), [
    ("cp *.py /dest/\n", "cd /w/s && sh i.sh", ["/dest/x.py"]),
    ("set -f\ncp *.py /dest/\n", "cd /w/s && sh i.sh", []),
    ("set -o noglob\ncp *.py /dest/\n", "cd /w/s && sh i.sh", []),
    ("set -uo noglob\ncp *.py /dest/\n", "cd /w/s && sh i.sh", []),
    ("set -euf\nset +f\ncp *.py /dest/\n", "cd /w/s && sh i.sh", ["/dest/x.py"]),
    ("set -f\n(cp *.py /dest/) || true\n", "cd /w/s && sh i.sh", []),  # a subshell keeps the option
    ("cp *.py /dest/\n", "cd /w/s && sh -f i.sh", []),
    ("cp *.py /dest/\n", "cd /w/s && bash -o noglob i.sh", []),
    ("case $- in *f*) cp x.py /dest/f.py ;; *) cp x.py /dest/g.py ;; esac\n", "cd /w/s && sh -ef i.sh",
     ["/dest/f.py"]),
])
def test_noglob_leaves_patterns_as_written(script: str, run: str, placed: list[str]) -> None:
    plan = plan_of({"Dockerfile": f"FROM base\nRUN mkdir -p /w /dest\nCOPY s /w/s\nRUN {run} || true\n",
                    "s/x.py": "", "s/i.sh": script})
    assert sorted(path for path in plan.image if path.startswith("/dest/")) == placed


@pytest.mark.parametrize("command", [
    "bash -O nosuch i2.sh", "bash +O nosuch i2.sh", "bash -o nosuch -c 'cp x.py /opt/ran.py'",
    "bash -euo nosuch -c 'cp x.py /opt/ran.py'", "dash -O extglob -c 'cp x.py /opt/ran.py'",
    "dash -o errtrace -c 'cp x.py /opt/ran.py'", "sh -o nosuch -c 'cp x.py /opt/ran.py'",
])
def test_a_shell_given_an_option_name_it_does_not_have_runs_nothing(command: str) -> None:
    # bash 5.2: "nosuch: invalid option name" / "invalid shell option name"; dash 0.5.12: "Illegal option";
    # status 2, before the script or string runs.
    plan = plan_of(script_context(f"{command} || cp x.py /opt/failed$?.py\n",
                                  files={"s/i2.sh": "cp x.py /opt/ran.py\n"}))
    assert {p for p in plan.image if p.startswith("/opt/")} == {"/opt/failed2.py"}
    assert [(n.kind, n.line) for n in plan.notes] == [("fails", 1)]


@pytest.mark.parametrize("command", ["bash -O extglob i2.sh", "bash -o posix i2.sh", "dash -o noclobber i2.sh",
                                     "bash +O nullglob -o pipefail i2.sh"])
def test_a_shell_given_option_names_it_has_runs_its_script(command: str) -> None:
    plan = plan_of(script_context(f"{command}\n", files={"s/i2.sh": "cp x.py /opt/ran.py\n"}))
    assert "/opt/ran.py" in plan.image and plan.notes == ()
