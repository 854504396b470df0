"""``sudo``, ``env``, ``nice``...: every option of the wrapper is skipped, and what follows them runs.

``sudo -E -H cp ...`` takes both flags for sudo's own; ``env -i -- cp ...``
ends env's options at ``--``. The command after them is what copies the
file, as sudo 1.9 and GNU env run it.
"""

from __future__ import annotations

import pytest

from patcher.shipping.tool_options import OptionTable
from patcher.shipping.wrapper_programs import _wrapper, _Wrapper
from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize("line", ["sudo -E -H cp x.py /dest/x.py", "sudo -E -u root -H cp x.py /dest/x.py",
                                  "env -i -- cp x.py /dest/x.py", "nohup -- cp x.py /dest/x.py"])
def test_the_command_after_a_wrappers_options_runs(line: str) -> None:
    plan = run_script(line + "\n")
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


@pytest.mark.parametrize("line", ["stdbuf -i 0 cp x.py /dest/x.py", "stdbuf -o L -e 0 cp x.py /dest/x.py",
                                  "nice -n 5 cp x.py /dest/x.py", "timeout -s KILL -k 5 10 cp x.py /dest/x.py"])
def test_a_wrapper_option_that_takes_a_value_skips_that_value_too(line: str) -> None:
    # GNU stdbuf -i MODE, -o MODE, -e MODE; nice -n N; timeout -s SIGNAL -k DURATION DURATION (coreutils 9.1).
    plan = run_script(line + "\n")
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


@pytest.mark.parametrize(("line", "placed"), [
    # GNU coreutils 9.1 and util-linux 2.38, each line run under bash and dash.
    ("env -C sub cp y.py /dest/", "/dest/y.py"),  # env's own folder for the command
    ("env --chdir=sub cp y.py /dest/", "/dest/y.py"),
    ("env -C sub -- cp y.py /dest/e.py", "/dest/e.py"),
    ("env -S 'cp x.py /dest/s.py'", "/dest/s.py"),  # the string split into the command's words
    ("env --split-string='cp x.py /dest/s.py'", "/dest/s.py"),
    ("env -i V=a=b sh -c 'cp x.py \"/dest/$V.py\"'", "/dest/a=b.py"),  # the value runs from the first '='
    ("env -i PATH=/usr/bin:/bin cp x.py /dest/", "/dest/x.py"),
    ("nice -5 cp x.py /dest/", "/dest/x.py"),  # the adjustment written before POSIX's -n
    ("nice --adjustment=5 cp x.py /dest/", "/dest/x.py"),
    ("timeout --foreground 5 cp x.py /dest/", "/dest/x.py"),
    ("timeout --sig=KILL 5s cp x.py /dest/", "/dest/x.py"),  # a long option by a prefix that names it alone
    ("setsid -f cp x.py /dest/", "/dest/x.py"),
    ("ionice -c3 cp x.py /dest/", "/dest/x.py"),
    ("taskset -c 0 cp x.py /dest/", "/dest/x.py"),  # the mask is taskset's
    ("flock /tmp/lock cp x.py /dest/", "/dest/x.py"),  # the lock file is flock's
    ("flock -n /tmp/lock -c 'cp x.py /dest/'", "/dest/x.py"),  # the command string runs in sh
    ("flock /tmp/lock --command 'cp x.py /dest/'", "/dest/x.py"),
])
def test_the_command_a_wrapper_runs_is_read_where_the_wrapper_runs_it(line: str, placed: str) -> None:
    for run in ("bash i.sh", "dash i.sh"):
        plan = run_script(line + "\n", run)
        assert in_dest(plan) == [placed] and plan.notes == ()


def test_a_wrapper_changes_nothing_of_the_shell_that_runs_it() -> None:
    # env -C runs cp in sub; the script's own folder stays /w/s.
    plan = run_script("env -C sub cp y.py /dest/\ncp x.py /dest/\n")
    assert in_dest(plan) == ["/dest/x.py", "/dest/y.py"]


@pytest.mark.parametrize(("script", "placed"), [
    ("export V=/dest/set\nenv -u V sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),
    ("export V=/dest/set\nenv -i sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),
    ("env -i sh -c 'cp x.py \"${HOME:-/dest/nohome}.py\"'\n", "/dest/nohome.py"),  # Docker's HOME is gone too
    ("env -i V=/dest/given sh -c 'cp x.py \"$V.py\"'\n", "/dest/given.py"),
    ("export V=/dest/set\nunset V\nsh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),
    ("export V=/dest/v W=/dest/w\nenv -u V -u W sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),
    ("export V=/dest/set\nenv --unset=V sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),
    ("export V=/dest/set\nenv --ignore-environment sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),
    ("export V=/dest/set\nenv - sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n", "/dest/none.py"),  # '-' is -i
])
def test_what_a_wrapper_or_an_unset_takes_out_of_the_environment_is_not_set_in_the_command(script: str,
                                                                                             placed: str) -> None:
    plan = run_script(script)
    assert in_dest(plan) == [placed] and plan.notes == ()


@pytest.mark.parametrize(("line", "reason"), [
    ("env -0 cp x.py /dest/", "env cannot end its listing with NUL (-0) and run a command, so it runs nothing "
                              "(status 125)"),
    ("env -C /dest/none cp x.py /dest/", "env cannot change to /dest/none: no folder is there at this point of the "
                                         "build, so it runs nothing (status 125)"),
    ("timeout 5", "timeout is missing an operand, so it runs nothing (status 125)"),
    ("env --null cp x.py /dest/", "env cannot end its listing with NUL (-0) and run a command, so it runs nothing "
                                  "(status 125)"),
    # "env: must specify command with --chdir (-C)"
    ("env -C sub", "env must be given a command with --chdir (-C), so it runs nothing (status 125)"),
    ("env export A=1", "env runs programs, and export is a shell's own command, not a program: it is not found "
                       "(status 127)"),
    # No image has these as programs either ("env: ':': No such file or directory").
    ("env :", "env runs programs, and : is a shell's own command, not a program: it is not found (status 127)"),
    ("nice exec true", "nice runs programs, and exec is a shell's own command, not a program: it is not found "
                       "(status 127)"),
    ("env times", "env runs programs, and times is a shell's own command, not a program: it is not found "
                  "(status 127)"),
])
def test_a_line_the_wrapper_refuses_runs_nothing_and_says_why(line: str, reason: str) -> None:
    plan = run_script(f"{line} || cp x.py /dest/fallback.py\n")
    assert in_dest(plan) == ["/dest/fallback.py"]
    assert [(n.kind, n.reason) for n in plan.notes] == [("fails", reason)]


def test_a_wrapper_runs_the_program_not_the_scripts_function_of_that_name() -> None:
    # env execs 'f' from PATH ("env: 'f': No such file or directory" here): the function does not run.
    plan = run_script("f() { cp x.py /dest/f.py; }\nenv f\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


def test_a_builtin_only_some_images_have_as_a_program_is_the_images_to_decide() -> None:
    plan = run_script("nohup cd sub || cp x.py /dest/nocd.py\n")
    assert in_dest(plan) == ["/dest/nocd.py"]
    assert [n.kind for n in plan.notes][:1] == ["assumed"] and "nohup runs programs, and cd is one only in some " \
                                                               "images" in plan.notes[0].reason


@pytest.mark.parametrize("line", ["env -x cp x.py /dest/", "taskset -p 1", "env -S 'cp \"x.py\" /dest/'"])
def test_a_wrapper_form_the_reader_does_not_follow_is_a_program_it_does_not_follow(line: str) -> None:
    plan = run_script(line + "\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
@pytest.mark.parametrize(("line", "option"), [("command -x cp x.py /dest/a.py", "-x"),
                                              ("command -pq cp x.py /dest/a.py", "-pq"),
                                              ("command -/bin/cp x.py /dest/a.py", "-/bin/cp")])
def test_command_refuses_an_option_it_does_not_have_and_runs_nothing(line: str, option: str, run: str) -> None:
    # bash 5.2: "command: -x: invalid option"; dash 0.5.12: "command: Illegal option -x"; both status 2.
    plan = run_script(f"{line} || cp x.py /dest/failed.py\n", run)
    assert in_dest(plan) == ["/dest/failed.py"]
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("fails", f"command refuses the option {option} (status 2), so it runs nothing")]


@pytest.mark.parametrize("line", ["command -p cp x.py /dest/a.py", "command -- cp x.py /dest/a.py",
                                  "builtin cd /dest && cp /w/s/x.py a.py"])
def test_command_and_builtin_run_what_follows_their_options(line: str) -> None:
    plan = run_script(line + "\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()


def test_builtin_takes_no_option() -> None:
    plan = run_script("builtin -x cd sub || cp x.py /dest/failed.py\n", "bash i.sh")
    assert in_dest(plan) == ["/dest/failed.py"] and [n.kind for n in plan.notes] == ["fails"]


def test_env_without_options_passes_the_exported_variables_on() -> None:
    plan = run_script("export V=/dest/set\nenv sh -c 'cp x.py \"${V:-/dest/none}.py\"'\n")
    assert in_dest(plan) == ["/dest/set.py"] and plan.notes == ()


@pytest.mark.parametrize("script", ["env A=1", "exec 9>/tmp/lock\nflock 9", "exec 9>/tmp/lock\nflock -n 9"])
def test_a_wrapper_that_needs_no_command_succeeds_without_one(script: str) -> None:
    # env NAME=VALUE alone prints the environment; flock FD locks a descriptor the shell opened; both status 0.
    plan = run_script(f"{script} && cp x.py /dest/ok.py\n")
    assert in_dest(plan) == ["/dest/ok.py"] and plan.notes == ()


@pytest.mark.parametrize(("line", "reason"), [
    ("flock /tmp/lock -c", "flock -c is missing its command"),  # "flock: -c requires exactly one command argument"
    ("flock /tmp/lock", "flock is missing an operand"),  # "flock: bad file descriptor: '/tmp/lock'"
])
def test_flock_given_no_command_runs_nothing_and_says_why(line: str, reason: str) -> None:
    plan = run_script(f"{line} || cp x.py /dest/fallback.py\n")
    assert in_dest(plan) == ["/dest/fallback.py"]
    assert [n.kind for n in plan.notes] == ["fails"] and plan.notes[0].reason.startswith(reason + ", ")


def test_only_env_reads_a_lone_dash_as_its_option() -> None:
    # nohup runs a program named '-': "nohup: failed to run command '-'" (status 127).
    plan = run_script("nohup - cp x.py /dest/a.py || cp x.py /dest/fallback.py\n")
    assert in_dest(plan) == ["/dest/fallback.py"]


@pytest.mark.parametrize("line", ["taskset -p 1", "ionice -p 1 -c3"])
def test_a_wrapper_working_on_a_running_process_is_noted_with_its_whole_line(line: str) -> None:
    plan = run_script(line + "\n")
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("program", f"runs {line}, which works on running processes, which the reader does not follow: it could "
                    "change any file")]


def test_a_wrapper_table_is_built_from_its_option_words() -> None:
    # The tables are built when the module loads; this checks the builder itself.
    assert _wrapper("ab", "c", "all bee", "cee dee") == _Wrapper(
        OptionTable("ab", "c", frozenset({"all", "bee"}), frozenset({"cee", "dee"})), 0, frozenset())
    assert _wrapper("", "p", "", "pid", before=1, no_command="p pid") == _Wrapper(
        OptionTable("", "p", frozenset(), frozenset({"pid"})), 1, frozenset({"p", "pid"}))


# util-linux flock 2.38 reads -c only after its lock file and takes one command there; GNU env 9.1 sets '=x'.
@pytest.mark.parametrize(("script", "placed"), [
    ("flock /tmp/lock -c 'cp x.py /dest/a.py' extra || cp x.py /dest/fb.py\n", ["/dest/fb.py"]),
    ("flock /tmp/lock -c 'cp x.py /dest/a.py'\n", ["/dest/a.py"]),
    ("env =x cp x.py /dest/a.py\n", ["/dest/a.py"]),
])
def test_flock_and_env_read_their_command_where_the_tools_do(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


@pytest.mark.parametrize("flock", ["flock -c 'cp x.py /dest/a.py' /tmp/lock", "flock --command 'cp x.py /dest/a.py' l"])
def test_flock_given_its_command_before_the_lock_file_does_not_run_it(flock: str) -> None:
    # flock: "invalid option -- 'c'" (status 64): the copy never runs; the reader leaves the line unread
    plan = run_script(f"{flock}\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


@pytest.mark.parametrize(("line", "status"), [
    ("flock /tmp/lock -c", 64), ("flock /tmp/lock", 64), ("flock /tmp/lock -c 'true' extra", 64),  # EX_USAGE
    ("setsid", 1), ("taskset 1", 1),  # util-linux 2.38's other wrappers
    ("timeout 5", 125), ("nohup", 125), ("env -C /tmp", 125), ("stdbuf -o0", 125),  # coreutils' EXIT_CANCELED
])
def test_a_refused_line_gives_the_wrappers_own_status(line: str, status: int) -> None:
    plan = run_script(f"{line} || cp x.py /dest/status$?.py\n")
    assert in_dest(plan) == [f"/dest/status{status}.py"]
