"""Builtins and the small path tools print and change what sh and coreutils would, so ``$(...)`` hears it.

``printed(COMMAND)`` runs ``D=$(COMMAND)`` in an install script and reads
``D`` back from the path a copy lands at; None means the reader took the
output for unknown (a program it does not run, a value only the image
has), which it must never guess.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, plan_of, run_script, script_context


def printed(command: str, setup: str = "", files: dict[str, str] | None = None) -> str | None:
    # What it printed may hold '/' or newlines: the folder it names is made first, so that the copy can land.
    plan = plan_of(script_context(f"{setup}\nmkdir /o\nD=$({command})\nmkdir -p \"/o/<$D>\"\n"
                                  f"cp x.py \"/o/<$D>/x.py\"\n", files=files))
    found = [path[4:-6] for path in plan.image if path.startswith("/o/<") and path.endswith(">/x.py")]
    assert len(found) <= 1
    return found[0] if found else None


@pytest.mark.parametrize(("command", "output"), [
    ("pwd", "/w/s"),
    ("cd sub; pwd", "/w/s/sub"),
    ("cd sub; cd -", "/w/s"),  # cd - prints where it goes
    ("cd -P sub; cd -L ..; pwd", "/w/s"),
    ("cd /w; pwd", "/w"),
    ("dirs", "/w/s"),
    ("pushd sub >/dev/null; pushd deep > /dev/null; dirs", "/w/s/sub/deep /w/s/sub /w/s"),
    ("pushd -n sub > /dev/null; dirs", "/w/s/sub /w/s"),
    ("pushd sub > /dev/null; dirs -c; dirs", "/w/s/sub"),  # dirs -c clears the stack and prints nothing
    ("pushd sub > /dev/null; dirs -c", ""),
    ("pushd sub > /dev/null; popd > /dev/null; pwd", "/w/s"),
    ("pushd sub", None), ("pushd sub > /dev/null; popd", None),  # they print the stack as the image's shell shows it
    ("pushd sub > /dev/null; pushd", None),  # swapping the top two prints the stack too
    ("popd", ""),  # fails: nothing on standard output
    ("echo a  b", "a b"), ("echo -n a", "a"), ("echo -x a", "-x a"), ("echo", ""), ("echo -n", ""),
    ("printf '%s-%s' a b", "a-b"), ("printf 'a\\nb'", "a\nb"), ("printf", ""), ("printf '%s\\n' /a", "/a"),
    ("printf '%s'", ""), ("printf -", "-"), ("printf '%s %d' a 1", "a 1"), ("printf a%", None), ("printf '%s' a b", "ab"),
    # printf as POSIX: only the format is one (%s in an argument is data), reused while arguments remain.
    ("printf '\\t'", "\t"), ("printf 'a\\\\b\\rc'", "a\\b\rc"), ("printf '\\101\\102'", "AB"),
    ("printf '\\033[1m%s'", "\x1b[1m"), ("printf '%s|' a %s b", "a|%s|b|"), ("printf '%s\\n' 'a%sb'", "a%sb"),
    ("printf '%s=%s;' A 1 B", "A=1;B=;"), ("printf 'a\\n' x y", "a"), ("printf -- '%s' a", "a"),
    ("printf '%b' 'vllm\\n'", "vllm"),  # the letter before the backslash is data, not part of the escape
    ("printf '%b' 'a\\t\\101\\0102'", "a\tAB"), ("printf '%b' 'x\\cyz'", "x"), ("printf '%d%%' 5", "5%"),
    ("printf '%d-%i-%u' 012 0x1f \"'A\"", "10-31-65"), ("printf '%03d|%-3s|%3s|%.2s' 7 a b xyz", "007|a  |  b|xy"),
    ("printf '%x%X%o' 255 255 8", "ffFF10"), ("printf '%x|%o|%X|%u|%04x' 0 0 0 0 0", "0|0|0|0|0000"), ("printf '%c' yes", "y"), ("printf '%d'", "0"),
    ("printf '%05d|%+d|%i' -42 -7 -0x10", "-0042|-7|-16"),
    ("printf '%.0d|%.1d' 5 0", "5|0"), ("printf '%.0d' 0", None),  # C prints no digit for that zero
    ("printf '%x' -1", None),  # printed as an unsigned 64-bit number: the reader does not print it
    ("printf '\\x41'", None), ("printf '%d' abc", None), ("printf '%q' a", None), ("printf '%*d' 3 4", None),
    ("printf '%b' \"$U\"", None), ("printf '%5s' \"$U\"", None), ("printf \"$U\"", None), ("printf '\\0'", None),
    ("printf -v V '%s' a; echo $V", None), ("V=/opt/old; printf -v V '%s' /opt/new; echo $V", None),
    ("bash -c 'printf -v V %s /opt/new && echo $V'", "/opt/new"),  # bash's printf -v succeeds: && goes on
    ("dirname /a/b/c.py", "/a/b"), ("dirname a", "."), ("dirname /a", "/"), ("dirname a/", "."), ("dirname //", "/"),
    ("dirname /a//", "/"), ("dirname a/b/", "a"), ("dirname ''", "."), ("dirname /a/b /c/d", "/a\n/c"),
    ("dirname", ""),
    ("basename /a/b/c.py .py", "c"), ("basename /a/b/", "b"), ("basename c.py c.py", "c.py"), ("basename /", "/"),
    ("basename a.py", "a.py"), ("basename -a x", "x"), ("basename", ""),
    ("basename /tmp/vendor-build.XXXXXX", "vendor-build.XXXXXX"),  # a mktemp template keeps its X's
    ("realpath sub", "/w/s/sub"), ("realpath -s sub/../x.py", "/w/s/x.py"), ("readlink -f sub", "/w/s/sub"),
    ("readlink -m /a/../b", "/b"), ("readlink -e x.py", "/w/s/x.py"), ("readlink sub", ""), ("realpath $U", None),
    ("readlink -f \"$VENDOR_HOME/..\"", None),  # where .. leads depends on the unknown folder
    ("true", ""), ("A=1; echo $A", "1"),
    # bash's += appends to the value (to nothing when unset, even under set -u); to a value only the base image
    # could set (PATH, or any name the build never set), it gives an unknown value, as B=$B... does.
    ("A=/opt; A+=/vllm; echo $A", "/opt/vllm"), ("unset B; B+=x; echo $B", "x"), ("B+=x; echo $B", None),
    ("export PATH+=:/opt/bin; echo $PATH", None), ("unset B; set -u; B+=x; echo $B", "x"),
    ("unset B; export B+=x; echo $B", "x"), ("env -i bash -c 'B+=x; echo $B'", "x"),
    # $(...) strips the trailing newlines only: blanks, and newlines before other text, stay.
    ("printf 'a \\n\\n'", "a "), ("printf ' a  \\n'", " a  "), ("printf 'a\\n \\n'", "a\n "),
    ("command -v cp", None), ("type cp", None), ("uname -m", None), ("cat /etc/os-release", None),
    ("python3 --version", None), ("python3 -h", None),  # the image's Python prints them
    ("sudo -u root echo hi", "hi"), ("sudo -- echo hi", "hi"), ("sudo", None), ("nohup echo hi", "hi"),
    # sudo refuses -D/--chdir unless sudoers grants runcwd: whether the command runs at all is the image's.
    ("sudo -D /tmp echo hi", None), ("sudo --chdir=/tmp echo hi", None),
    ("timeout 10 echo hi", "hi"), ("timeout -s KILL 10 echo hi", "hi"), ("nice -n 5 echo hi", "hi"),
    ("stdbuf -o L echo hi", "hi"), ("time echo hi", "hi"), ("exec echo hi", "hi"), ("command echo hi", "hi"),
    ("builtin echo hi", "hi"), ("env", None), ("env -u A echo hi", "hi"), ("env A=b sh -c 'echo $A'", "b"),
    ("echo $HOME", "/root"), ("HOME=/h; cd; pwd", "/h"), ("cd; pwd", "/root"), ("echo $PWD", "/w/s"),
    ("cd sub; echo $OLDPWD", "/w/s"), ("echo $0", "./i.sh"), ("echo ${BASH_SOURCE[0]}", "./i.sh"),
    ("echo $#", "0"), ("echo $?", "0"), ("false; echo $?", "1"), ("[ -d /opt/u ]; echo $?", None), ("echo $-", ""), ("set -e; echo $-", "e"), ("echo $$", None),
    ("echo $!", None), ("echo $9", ""), ("echo $BASH_VERSION", None), ("dash -c 'echo x$BASH_VERSION'", "x"),
    ("bash -c 'echo $BASH_VERSION'", None), ("bash -c '[ -n \"$BASH_VERSION\" ] && echo bash'", "bash"),
    ("bash -c '[ -z $BASH_VERSION ] || echo bash'", "bash"), ("bash -c '[ \"${BASH_VERSION:-}\" ] && echo bash'", "bash"),
    ("bash -c 'unset BASH_VERSION; echo x$BASH_VERSION'", "x"), ("bash -c 'sh -c \"echo \\$BASH_VERSION\"'", None), ("echo $@", ""), ("set -- a b; echo $#", "2"), ("echo $RANDOM", None),
    ("set -- a 'b c'; echo $2", "b c"), ("set -- a b; shift; echo $1$#", "b1"), ("set -- a b c; shift 2; echo $1", "c"),
    ("set -- a b; shift && echo $1", "b"),  # shift succeeds while there is an argument to drop
    # An assignment given to export/local/... is expanded as one: '~' after its '=' or a ':' is HOME.
    ("export PYTHONPATH=/opt/lib:~/lib; echo $PYTHONPATH", "/opt/lib:/root/lib"),
    ("f() { local P=/opt/bin:~/bin; echo $P; }; f", "/opt/bin:/root/bin"),
    # Any other command splits and globs such a word like the rest: only the utilities above read assignments.
    ("printf '%s|' EXTRA_ARGS=$(echo --tp 2)", "EXTRA_ARGS=--tp|2|"),
    ("export A=/a; echo $A", "/a"), ("readonly R=/r; echo $R", "/r"), ("f() { local L=l; declare D=d; typeset T=t; echo $L$D$T; }; f", "ldt"),
    ("A=/a; unset A; echo x$A", "x"), ("A=/a; unset -v A; echo x$A", "x"), ("A=/a; unset -- A; echo x$A", "x"), ("export B; echo $B", None),
    ("read A; echo $A", None), ("read -r A B; echo $B", None),
    # Three words compare strings, whatever they look like: '-f' here is an operand, not a test of a file.
    ("[ -f = -f ] && echo same", "same"), ("test -d != -d || echo differ", "differ"),
    # Only '[' drops a last ']': to 'test' (bash 5.2, dash 0.5.12, coreutils) it is an operand like any other.
    ("test a = ]; echo $?", "1"), ("test x != ]; echo $?", "0"),
    # What an interpreter prints about itself is the image's: never known.
    ("python3 --help", None), ("python3 -V", None),
    # A child shell's output, a pipeline's last part, a function, a group and eval are all heard.
    ("sh -c 'echo hi'", "hi"), ("A=b sh -c 'echo $A'", "b"), ("sh <<EOF\necho hi\nEOF", "hi"),
    ("f() { echo hi; }; f", "hi"), ("{ echo hi; }", "hi"), ("eval 'echo hi'", "hi"), ("echo a; echo b", "a\nb"),
    ("echo /opt | tr a b", "/opt"), ("echo /opt | sed s/a/b/", None), ("echo hi | cat", "hi"), ("cat x.py | echo hi", "hi"), ("echo hi > /dev/null", ""),
    ("echo hi 2>/dev/null", "hi"), ("bash -c 'echo $NOT_SET_HERE'", None), (". ./missing.sh", ""),
])
def test_what_a_command_prints_is_heard_by_a_command_substitution(command: str, output: str | None) -> None:
    assert printed(command) == output


@pytest.mark.parametrize(("command", "output"), [
    # bash: leading words of -n, -e and -E letters are options; backslashes are kept unless -e reads them.
    ("bash -c 'echo -e a; echo b'", "a\nb"), ("bash -c 'echo -E a; echo -en b; echo c'", "a\nbc"),
    ("bash -c 'echo -ne a b'", "a b"), ("bash -c 'echo -n -e a'", "a"), ("bash -c \"echo 'a\\tb'\"", "a\\tb"),
    ("bash -c \"echo -e 'a\\tb'\"", None),  # bash's own escapes are not worked out
    # dash: only a first -n is an option, and backslash escapes are always read (\c ends all output).
    ("dash -c 'echo -e a'", "-e a"), ("dash -c 'echo -n -n a'", "-n a"), ("dash -c \"echo 'a\\tb\\101'\"", "a\tbA"),
    ("dash -c \"echo 'a\\cb'; echo c\"", "ac"),
    # sh: the base image's shell decides, so only what both print alike is known.
    ("echo -n a; echo b", "ab"), ("echo -e a", None), ("echo -E a", None), ("echo -n -e a", None),
    ("echo 'a\\tb'", None),
])
def test_echo_prints_what_the_shell_running_it_prints(command: str, output: str | None) -> None:
    assert printed(command) == output


@pytest.mark.parametrize(("command", "output"), [
    ("prefix() { echo /opt/fn; }; prefix=/opt/var; unset -f prefix; echo $prefix", "/opt/var"),
    ("prefix() { echo /opt/fn; }; prefix=/opt/var; unset -v prefix; prefix", "/opt/fn"),
    ("prefix() { echo /opt/fn; }; prefix=/opt/var; unset prefix; prefix", "/opt/fn"),  # the variable only
    # With no such variable, bash unsets the function (prefix is then a program) and dash keeps it.
    ("bash -c 'prefix() { echo /opt/fn; }; unset prefix; prefix'", None),
    ("dash -c 'prefix() { echo /opt/fn; }; unset prefix; prefix'", "/opt/fn"),
    # After '--' each word is a name, even one that looks like an option (bash: the variable goes, not the function).
    ("bash -c 'prefix() { echo /opt/fn; }; prefix=/opt/var; unset -- -f prefix; prefix'", "/opt/fn"),
])
def test_unset_removes_a_function_or_a_variable_as_its_option_says(command: str, output: str | None) -> None:
    assert printed(command) == output


@pytest.mark.parametrize(("command", "output"), [
    ("VERSION=dev; [ -f VERSION ] && read -r VERSION < VERSION; echo $VERSION", "2.4.1"),
    ("read -r VERSION < VERSION; echo ${VERSION:-dev}", "2.4.1"),
    # A file of the base image's: what it holds is unknown, not the value VERSION held before nor a default.
    ("VERSION=dev; read -r VERSION < /etc/VERSION; echo $VERSION", None),
    ("read -r VERSION < /etc/VERSION; echo ${VERSION:-dev}", None),
])
def test_a_variable_read_from_a_file_holds_what_only_the_file_says(command: str, output: str | None) -> None:
    # read sets each name it is given (never its options) to the line it reads: of a file the build placed, its
    # first line.
    assert printed(command, files={"s/VERSION": "2.4.1\n"}) == output


def test_sudo_with_a_working_folder_is_not_followed() -> None:
    # Without runcwd in sudoers, sudo refuses -D (nothing is copied); with it, cp reads x.py in /opt, not here.
    plan = plan_of(script_context("sudo -D /opt cp x.py /opt/y.py\n"))
    assert "/opt/y.py" not in plan.image
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("program", 1, "runs sudo -D, which the reader does not follow: it could change any file")]


def test_a_script_run_inside_a_command_substitution_is_heard() -> None:
    files = {"s/where.sh": "#!/bin/sh\ncd \"$(dirname \"$0\")\"\npwd\n"}
    assert printed("./where.sh", files=files) == "/w/s"
    assert printed("sh where.sh; echo done", files=files) == "/w/s\ndone"


def test_exported_variables_reach_child_shells_and_others_do_not() -> None:
    plan = plan_of(script_context("export A=/a\nB=/b\nexport C\nC=/c\nsh -c 'cp x.py $A.py; cp x.py $C.py'\n"
                                  "sh -c 'cp x.py $B.py'\n"))
    assert {"/a.py", "/c.py"} <= set(plan.image) and "/b.py" not in plan.image
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 6, "cp $B.py: a path that depends on a value the reader cannot work out")]


def test_a_sourced_file_sees_the_scripts_arguments_unless_given_its_own() -> None:
    script = '. ./env.sh\ncp x.py "$PREFIX/"\n. ./env.sh /opt/site\ncp x.py "$PREFIX/"\ncp x.py "$1.py"\n'
    env = 'PREFIX=${1:-/usr/local}\nmkdir -p "$PREFIX"\n'
    # bash's '.' gives the file its own arguments; dash ignores them (test_read_mapfile_trap_and_dot_forms.py).
    plan = plan_of(script_context(script, run="cd /w/s && bash i.sh /opt/vendor", files={"s/env.sh": env}))
    assert {path: p.source for path, p in plan.image.items() if not path.startswith("/w/")} == {
        "/opt/vendor/x.py": "s/x.py", "/opt/site/x.py": "s/x.py", "/opt/vendor.py": "s/x.py"}


def test_an_unset_function_is_a_program_again() -> None:
    plan = plan_of(script_context("f() { cp x.py /f.py; }\nunset -f f\nf\n"))
    assert "/f.py" not in plan.image
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("program", 3, "runs f, which the reader does not follow: it could change any file")]


@pytest.mark.parametrize(("script", "line", "kind", "reason"), [
    ("cd -\n", 1, "fails", "cd - before any cd: OLDPWD is not set"),
    ("pushd\n", 1, "fails", "pushd: no other directory"),
    ("pushd +1\n", 1, "unread", "rotates the directory stack, which the reader does not follow"),
    ("pushd -2\n", 1, "unread", "rotates the directory stack, which the reader does not follow"),
    ("popd +1\n", 1, "unread", "removes an entry inside the directory stack, which the reader does not follow"),
    ("popd -0\n", 1, "unread", "removes an entry inside the directory stack, which the reader does not follow"),
    ("popd\n", 1, "fails", "popd: the directory stack is empty, so the directory does not change"),
    ("pushd sub >/dev/null\ndirs -c\npopd\n", 3, "fails",
     "popd: the directory stack is empty, so the directory does not change"),
])
def test_a_directory_stack_command_that_fails_or_is_not_followed_says_so(script: str, line: int, kind: str,
                                                                         reason: str) -> None:
    plan = plan_of(script_context(script + "cp /w/s/x.py /after.py\n", run="cd /w/s && bash i.sh"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [(kind, line, reason)]
    assert plan.image["/after.py"].source == "s/x.py"


def test_pushd_without_a_folder_swaps_and_sets_oldpwd() -> None:
    assert printed("pushd sub > /dev/null; pushd > /dev/null; echo $PWD $OLDPWD") == "/w/s /w/s/sub"


def test_tee_writes_files_and_an_append_to_a_placed_file_is_a_caveat() -> None:
    plan = plan_of(script_context("echo a | tee /t.txt\ncp x.py /t.txt\necho b | tee -a /t.txt\n"
                                  "cp x.py /u.txt\necho b | tee --append /u.txt\ncp x.py /v.txt\necho c | tee /v.txt\n"
                                  "echo d | tee -a /new.txt\n"))
    assert {path: p.source for path, p in plan.image.items() if not path.startswith("/w/")} == {
        "/t.txt": "s/x.py", "/u.txt": "s/x.py"}
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 3, "appends to /t.txt, which the build placed there", ("/t.txt",)),
        ("unread", 5, "appends to /u.txt, which the build placed there", ("/u.txt",))]


def test_getopts_ends_the_option_loop_at_once() -> None:
    plan = plan_of(script_context("while getopts ab o; do cp x.py /never.py; done\ncp x.py /after.py\n"))
    assert "/never.py" not in plan.image and "/after.py" in plan.image and plan.notes == ()


@pytest.mark.parametrize("command", ["printf 'a\\0b'", "printf '%b' 'a\\0b'"])
def test_a_nul_byte_printed_into_a_command_substitution_is_not_guessed(command: str) -> None:
    # bash and dash drop it from $(...) (bash with a warning): the reader leaves the value unknown, named as written.
    plan = plan_of(script_context(f"D=$({command})\ncp x.py \"/opt/$D.py\"\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 2, f"cp /opt/$({command}).py: a path that depends on a value the reader cannot work out")]


@pytest.mark.parametrize("command", ['realpath "$VENDOR_HOME"', 'readlink -f "$VENDOR_HOME"'])
def test_the_real_path_of_a_folder_only_the_image_knows_is_shown_by_its_name(command: str) -> None:
    # What the folder resolves to is the image's; a copy under it is unread and named as the script names it.
    plan = plan_of(script_context(f"D=$({command})\ncp x.py \"$D/lib/x.py\"\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 2, "cp $VENDOR_HOME/lib/x.py: a path that depends on a value the reader cannot work out")]


@pytest.mark.parametrize(("shebang", "placed", "note"), [
    # bash: "shift count out of range", status 1, and $1 is still 'cuda'.
    ("#!/bin/bash\n", ["/opt/cuda.py", "/opt/failed.py"],
     ("fails", 3, "shift 2 with 1 arguments left: bash fails the command and the arguments stay")),
    # dash: "can't shift that many" ends the shell (status 2, so the RUN fails): nothing after it runs.
    ("#!/bin/dash\n", [], ("fails", 3, "shift 2 with 1 arguments left: dash ends the shell here")),
    # Under sh either may happen: the line is unread, and what follows is read with its status unknown.
    ("", ["/opt/cuda.py", "/opt/failed.py"],
     ("unread", 2, "shift 2 with 1 arguments left: the base image's sh decides (dash ends the shell, bash fails "
                   "the command)")),
])
def test_shift_past_the_last_argument_is_what_the_shell_makes_of_it(shebang: str, placed: list[str],
                                                                    note: tuple[str, int, str]) -> None:
    script = f"{shebang}set -- cuda\nshift 2 || cp x.py /opt/failed.py\ncp x.py \"/opt/$1.py\"\n"
    plan = plan_of(script_context(script))
    assert sorted(p for p in plan.image if p.startswith("/opt/")) == placed
    assert [(n.kind, n.line, n.reason) for n in plan.notes if n.file == "s/i.sh"] == [note]


@pytest.mark.parametrize(("shebang", "placed"), [
    ("#!/bin/bash\n", ["/opt/cuda.py", "/opt/failed.py"]),  # bash: "numeric argument required", status 1
    ("#!/bin/dash\n", []),  # dash: "Illegal number: x" ends the shell
])
def test_shift_by_a_word_that_is_not_a_number_is_what_the_shell_makes_of_it(shebang: str, placed: list[str]) -> None:
    plan = plan_of(script_context(f"{shebang}set -- cuda\nshift x || cp x.py /opt/failed.py\ncp x.py \"/opt/$1.py\"\n"))
    assert sorted(p for p in plan.image if p.startswith("/opt/")) == placed
    assert [n.kind for n in plan.notes if n.file == "s/i.sh"] == ["fails"]


def test_set_with_words_that_are_not_options_sets_the_arguments() -> None:
    # 'set ab cd' without '--': bash and dash take any word not starting with - or + for the first argument.
    assert printed("set ab cd; echo $1-$2-$#") == "ab-cd-2"


@pytest.mark.parametrize("leave", ["break 3", "continue 3"])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_break_or_continue_with_a_count_leaves_that_many_loops(leave: str, shell: str) -> None:
    # Three loops deep (a while inside two fors), 'break 3' ends all three and 'continue 3' runs the outer
    # loop's next turn: neither reaches the lines after the inner two loops.
    script = (f"for a in 1 2; do\nfor b in 1; do\nwhile :; do\n{leave}\ndone\ncp x.py /made/inner.py\ndone\n"
              "cp x.py /made/middle.py\ndone\ncp x.py /made/after.py\n")
    plan = plan_of(script_context(f"mkdir /made\n{script}", run=f"cd /w/s && {shell} i.sh"))
    assert sorted(path for path in plan.image if path.startswith("/made/")) == ["/made/after.py"]
    assert plan.notes == ()


@pytest.mark.parametrize(("run", "dest"), [
    ("bash i.sh", ["/dest/after2.py"]),  # bash 5.2: "set: nosuch: invalid option name", status 2, reads on
    ("dash i.sh", []),  # dash 0.5.12: "set: Illegal option -o nosuch": the script ends (status 2)
    ("bash --posix i.sh", []),  # a special builtin's error ends a POSIX shell
])
def test_set_o_with_a_name_the_shell_does_not_have_fails_as_the_shell_fails_it(run: str, dest: list[str]) -> None:
    assert in_dest(run_script("set -o nosuch\ncp x.py /dest/after$?.py\n", run)) == dest


def test_set_e_with_a_bad_option_name_after_it_ends_the_script_as_bash_does() -> None:
    # 'set -e -o nosuch': -e is on when set fails (status 2), so bash ends there.
    assert in_dest(run_script("set -e -o nosuch\ncp x.py /dest/after.py\n")) == []


@pytest.mark.parametrize(("run", "dest"), [
    ("bash i.sh", ["/dest/after2-a.py"]),  # bash 5.2: "set: -O: invalid option", status 2; -e and $1 stay as they were
    ("dash i.sh", []),  # dash 0.5.12: "set: Illegal option -O": the script ends (status 2)
    ("bash --posix i.sh", []),
])
def test_set_with_a_letter_the_shell_does_not_have_fails_as_the_shell_fails_it(run: str, dest: list[str]) -> None:
    plan = run_script("set -- a\nset -eO errexit\ncp x.py /dest/after$?-$1.py\nfalse\ncp x.py /dest/not_ended.py\n", run)
    assert [p for p in in_dest(plan) if p != "/dest/not_ended.py"] == dest
    assert ("/dest/not_ended.py" in in_dest(plan)) == (run == "bash i.sh")
