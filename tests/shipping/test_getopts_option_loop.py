"""``getopts``: an install script's option loop sees the options it was run with, as bash and dash read them.

Every expected value below is what bash 5.2 and dash 0.5.12 printed for
the same loop. Each pass records ``[NAME:OPTARG:OPTIND]`` (OPTARG ``U``
when unset), then the values the loop ended with.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, plan_of, run_script

LOOP = ('OPTIND=1; OPTARG=pre; out=""; while getopts "{spec}" o {words}; do out="$out[$o:${{OPTARG-U}}:$OPTIND]"; '
        'done; cp x.py "/dest/$out end=$o:${{OPTARG-U}}:$OPTIND"\n')


def seen(spec: str, words: str, run: str) -> str:
    (path,) = in_dest(run_script(LOOP.format(spec=spec, words=words), run))
    return path[len("/dest/"):]


@pytest.mark.parametrize(("spec", "words", "bash", "dash"), [
    ("ab:", "-a -b x y", "[a:U:2][b:x:4] end=?:U:4", "[a::2][b:x:4] end=?:x:4"),
    ("ab:", "-ab x y", "[a:U:1][b:x:3] end=?:U:3", "[a::2][b:x:3] end=?:x:3"),  # OPTIND inside a group
    ("ab:", "-abx y", "[a:U:1][b:x:2] end=?:U:2", "[a::2][b:x:2] end=?:x:2"),
    ("ab:", "-a -- -b x", "[a:U:2] end=?:U:3", "[a::2] end=?::3"),  # -- ends the options and is used up
    ("ab:", "-c -a", "[?:U:2][a:U:3] end=?:U:3", "[?:U:2][a::3] end=?::3"),  # a letter not listed
    (":ab:", "-c -a", "[?:c:2][a:U:3] end=?:U:3", "[?:c:2][a::3] end=?::3"),  # silent: OPTARG names it
    (":ab:", "-a -b", "[a:U:2][::b:3] end=?:U:3", "[a::2][::b:3] end=?:b:3"),  # silent: a missing argument
    ("ab:", "-a -b", "[a:U:2][?:U:3] end=?:U:3", "[a::2][?:U:3] end=?:U:3"),
    ("ab:", "- -a", " end=?:U:1", " end=?:pre:1"),  # '-' alone is an operand
    ("ab:", "x -a", " end=?:U:1", " end=?:pre:1"),  # the first operand ends the options
    ("a:b", "-a -b", "[a:-b:3] end=?:U:3", "[a:-b:3] end=?:-b:3"),  # an argument may look like an option
    ("ab:", "-b=1", "[b:=1:2] end=?:U:2", "[b:=1:2] end=?:=1:2"),
    ("vp:", "-vp opt -v rest", "[v:U:1][p:opt:3][v:U:4] end=?:U:4", "[v::2][p:opt:3][v::4] end=?::4"),
    ("aa:", "-a x", "[a:U:2] end=?:U:2", "[a::2] end=?::2"),  # a letter listed twice: its first place counts
    ("a:", "-:", "[?:U:2] end=?:U:2", "[?:U:2] end=?:U:2"),  # ':' is no option letter, though OPTSTRING holds it
    ("a:", "-a -: x", "[a:-::3] end=?:U:3", "[a:-::3] end=?:-::3"),
    # A silent OPTSTRING starts with ':', and dash's search for the letter ':' meets it first: an option to dash.
    (":a", "-:", "[?:::2] end=?:U:2", "[:::2] end=?::2"),
    (":a:", "-: x", "[?:::2] end=?:U:2", "[:::2] end=?::2"),  # to dash, ':' then takes no argument
    ("::", "-: x", "[?:::2] end=?:U:2", "[::x:3] end=?:x:3"),  # unless a second ':' follows it
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_each_pass_of_the_loop_sees_what_the_shell_sees(spec: str, words: str, bash: str, dash: str,
                                                        shell: str) -> None:
    assert seen(spec, words, f"{shell} i.sh") == (bash if shell == "bash" else dash)


def test_an_install_script_run_with_options_copies_where_they_say() -> None:
    script = ('PREFIX=/usr/local\nwhile getopts "vp:" opt; do\n  case "$opt" in\n    p) PREFIX="$OPTARG" ;;\n'
              '    v) set -x ;;\n    *) echo "usage: $0 [-v] [-p PREFIX]" >&2; exit 2 ;;\n  esac\ndone\n'
              'shift $((OPTIND - 1))\nmkdir -p "$PREFIX/vllm"\ncp "$(dirname "$0")/x.py" "$PREFIX/vllm/$1"\n')
    plan = plan_of({"Dockerfile": "FROM base\nCOPY s /w/s\nRUN /w/s/i.sh -v -p /opt/site paged_attn.py\n",
                    "s/i.sh": "#!/bin/sh\n" + script, "s/x.py": ""})
    assert plan.image["/opt/site/vllm/paged_attn.py"].source == "s/x.py" and plan.notes == ()


@pytest.mark.parametrize(("shell", "placed"), [("bash", ["/dest/a.py"]), ("dash", ["/dest/a.py", "/dest/b.py"])])
def test_a_function_loop_starts_again_under_dash_only(shell: str, placed: list[str]) -> None:
    # dash keeps getopts' place with a function's arguments; bash's OPTIND is global (without 'local OPTIND').
    script = "f() { while getopts d: o; do D=$OPTARG; done; cp x.py $D; }\nf -d /dest/a.py\nf -d /dest/b.py\n"
    assert in_dest(run_script(script, f"{shell} i.sh")) == placed


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_local_optind_starts_each_call_afresh(shell: str) -> None:
    script = "f() { local OPTIND; while getopts d: o; do D=$OPTARG; done; cp x.py $D; }\nf -d /dest/a.py\nf -d /dest/b.py\n"
    assert in_dest(run_script(script, f"{shell} i.sh")) == ["/dest/a.py", "/dest/b.py"]


@pytest.mark.parametrize(("shell", "placed"), [("bash", ["/dest/1?3.py", "/dest/ab-3.py"]),
                                               ("dash", ["/dest/0a2.py", "/dest/ab-3.py"])])
def test_optind_out_of_range_is_read_as_each_shell_reads_it(shell: str, placed: list[str]) -> None:
    # OPTIND 0 is 1 to both; past the last word bash ends there and dash starts again from the first.
    script = ("set -- -a -b; OPTIND=0; out=; while getopts ab o; do out=$out$o; done; cp x.py /dest/$out-$OPTIND.py\n"
              "OPTIND=9; getopts ab o; cp x.py /dest/$?$o$OPTIND.py\n")
    assert in_dest(run_script(script, f"{shell} i.sh")) == placed


@pytest.mark.parametrize("optind", ["-1", "next"])
def test_optind_that_is_no_number_leaves_the_pass_unknown_under_sh(optind: str) -> None:
    # bash reads OPTIND as arithmetic (-1 is 1, a name is that variable's value); dash stops the script with
    # 'Illegal number': under the base image's sh the option read is unknown, and so is the copy built from it.
    plan = run_script(f"set -- -a\nOPTIND={optind}\ngetopts a o\ncp x.py \"/dest/$o.py\"\n", "sh i.sh")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_an_option_word_the_reader_cannot_work_out_leaves_the_loop_unknown() -> None:
    plan = run_script("while getopts p: o \"$UNSET_IN_BUILD\"; do cp x.py \"/dest/$OPTARG\"; done\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] != []


def test_bash_leaves_optarg_unset_and_so_empty_when_the_loop_ends() -> None:
    # bash 5.2 and dash 0.5.12 both print "[]" for $OPTARG after this loop (bash unsets it, dash empties it).
    for shell in ("bash", "dash"):
        plan = run_script('while getopts a o -a; do :; done\ncp x.py "/dest/[$OPTARG].py"\n', f"{shell} i.sh")
        assert in_dest(plan) == ["/dest/[].py"] and plan.notes == ()


def test_optarg_after_an_option_without_argument_is_unknown_under_sh() -> None:
    # bash unsets OPTARG there and dash empties it ('${OPTARG-U}' prints U, then nothing): the base image's sh decides.
    plan = run_script('getopts a o -a\ncp x.py "/dest/[$OPTARG].py"\n', "sh i.sh")
    assert in_dest(plan) == []
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("unread", "cp /dest/[$OPTARG].py: a path that depends on a value the reader cannot work out")]


def test_an_option_loop_the_reader_cannot_work_out_is_named_by_its_getopts_command() -> None:
    plan = run_script("while getopts p: o \"$UNSET_IN_BUILD\"; do cp x.py \"/dest/$OPTARG\"; done\n")
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("unread", "cp /dest/$(getopts p: o $UNSET_IN_BUILD): a path that depends on a value the reader cannot "
                   "work out")]


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_loop_starts_at_the_word_optind_names(shell: str) -> None:
    # bash 5.2 and dash 0.5.12 both print "bc-4": OPTIND=2 skips the first word.
    script = "set -- -a -b -c x; OPTIND=2; out=; while getopts abc o; do out=$out$o; done; cp x.py /dest/$out-$OPTIND.py\n"
    assert in_dest(run_script(script, f"{shell} i.sh")) == ["/dest/bc-4.py"]


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_getopts_without_an_option_string_and_a_name_fails_and_is_noted(shell: str) -> None:
    # bash and dash print a usage message and getopts fails (status 2): the else branch runs, the script goes on.
    script = ("if getopts a; then cp x.py /dest/t.py; else cp x.py /dest/f.py; fi\n"
              'getopts || cp x.py "/dest/g$?.py"\n')
    plan = run_script(script, f"{shell} i.sh")
    assert in_dest(plan) == ["/dest/f.py", "/dest/g2.py"]
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("fails", 1, "getopts a", "getopts needs an option string and a name"),
        ("fails", 2, "getopts", "getopts needs an option string and a name")]


def test_a_readonly_optarg_keeps_its_value_after_an_option_without_argument_under_bash() -> None:
    # bash 5.2 says "OPTARG: readonly variable" and goes on: o=a, OPTARG still 'keep', OPTIND 2, status 0.
    script = 'readonly OPTARG=keep; getopts a o -a; cp x.py "/dest/$?-$o-${OPTARG-U}-$OPTIND.py"\n'
    assert in_dest(run_script(script, "bash i.sh")) == ["/dest/0-a-keep-2.py"]


@pytest.mark.parametrize(("getopts", "what"), [('"$UNSET_IN_BUILD" o -a', "$o"), ('a "$UNSET_IN_BUILD" -a', "$OPTARG")])
def test_an_option_string_or_name_the_reader_cannot_work_out_leaves_the_pass_unknown(getopts: str, what: str) -> None:
    plan = run_script(f'getopts {getopts}\ncp x.py "/dest/{what}.py"\n')
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_a_pass_with_an_option_string_the_reader_cannot_work_out_still_sets_the_name() -> None:
    # Whatever the option string, bash and dash set NAME (a letter, '?' or ':'): "${o+set}" prints "set".
    plan = run_script('unset o; getopts "$UNSET_IN_BUILD" o -a\ncp x.py "/dest/${o+set}.py"\n')
    assert in_dest(plan) == ["/dest/set.py"] and plan.notes == ()
