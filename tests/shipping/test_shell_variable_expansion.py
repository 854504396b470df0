"""How the install-script reader expands shell variables (``$VAR``, ``${VAR}`` and the ``${VAR:-default}`` forms),
and places the files a script copies under a default that names another variable."""

from __future__ import annotations

import pytest

from patcher.shipping.install_script import MAX_VALUE, expand_variables, logical_lines, read_install_script


@pytest.mark.parametrize("word, variables, expected", [
    ("$A/${B}", {"A": "a", "B": "b"}, "a/b"),
    ("${A:-x}|${A-x}", {"A": ""}, "x|"),
    ("${A:-x}|${A-x}", {}, "x|x"),
    ("${A:+y}|${A+y}", {"A": ""}, "|y"),
    ("${A:?unset}", {"A": "v"}, "v"),
    ("$UNSET ${UNSET}", {}, "$UNSET ${UNSET}"),
])
def test_expand_variables_follows_the_shell(word: str, variables: dict[str, str], expected: str) -> None:
    assert expand_variables(word, dict(variables)) == expected


def test_expand_variables_keeps_a_word_within_the_longest_value_it_builds() -> None:
    # 'A=$A$A' lines double a value; the expansion that would take the word past MAX_VALUE stays as written.
    half = "a" * (MAX_VALUE // 2 + 1)
    unknown: set[str] = set()
    assert expand_variables("$A/${A}", {"A": half}, unknown) == half + "/${A}"
    assert expand_variables("${A}/$A", {"A": half}, unknown) == half + "/$A"
    assert unknown == {"A"}
    # Without a set to record it in (the pip-install check's calls), the expansion stays as written all the same.
    assert expand_variables("$A/${A}", {"A": half}) == half + "/${A}"


def test_expand_variables_assigns_and_records_unknown_names() -> None:
    variables = {"EMPTY": "", "KEPT": "k"}
    unknown: set[str] = set()
    assert expand_variables("${EMPTY:=a}${NEW=b}${KEPT=c}$MISSING", variables, unknown) == "abk$MISSING"
    assert variables == {"EMPTY": "a", "NEW": "b", "KEPT": "k"}
    assert unknown == {"MISSING"}


def test_an_install_script_places_files_under_a_default_that_names_another_variable() -> None:
    script = ("#!/bin/bash\r\n"
              "COREX=/usr/local/corex\r\n"
              ": \"${VLLM:=${COREX}/lib/python3/dist-packages/vllm}\"\r\n"
              "cp ./paged_attn.py \"$VLLM/attention/ops/paged_attn.py\" 2>/dev/null || true\r\n")
    read = read_install_script(script, "/workspace/qwen3_6_scripts")
    assert [(c.source, c.destination, c.line) for c in read.copies] == [
        ("/workspace/qwen3_6_scripts/paged_attn.py",
         "/usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py", 4)]
    assert read.unknown == ()


def test_a_bash_local_leaves_the_variable_as_the_caller_had_it_once_the_function_returns() -> None:
    # SITE comes from the base image's environment, which the reader cannot see. Under bash 'local SITE' makes it
    # the function's own and unset there (the default applies); after the function returns it is the image's again,
    # not empty.
    script = ("#!/bin/bash\n"
              "stage() {\n"
              "  local SITE\n"
              "  [ -n \"$1\" ] && SITE=$1\n"
              "  cp ops.py \"${SITE:-/opt/stage}/ops.py\"\n"
              "}\n"
              "stage\n"
              "cp ops.py \"$SITE/ops.py\"\n")
    read = read_install_script(script, "/w")
    # The second copy goes where only the image knows: it is not reported, and SITE is named as unknown.
    assert [c.destination for c in read.copies] == ["/opt/stage/ops.py"] and read.unknown == ("SITE",)


@pytest.mark.parametrize(("text", "lines"), [
    ("a \\\nb\nc\r\nd \\\r\ne\n", [(1, "a  b"), (3, "c"), (4, "d  e"), (6, "")]),
    ("", [(1, "")]),
    ("x\\\n\\\ny", [(1, "x  y")]),
    ("one\ntwo", [(1, "one"), (2, "two")]),
])
def test_logical_lines_join_continued_lines_under_the_number_of_their_first(text: str,
                                                                           lines: list[tuple[int, str]]) -> None:
    assert logical_lines(text) == lines


def test_a_script_read_on_its_own_uses_its_interpreter_line_environment_and_path() -> None:
    read = read_install_script("#!/bin/sh -e\ncp a.py \"$DEST/\"\ncp \"$OTHER/b.py\" /x/\ncp $0 /y/\n", "/work",
                               {"DEST": "/d"}, script="/work/inst.sh")
    assert [(c.source, c.destination, c.recursive, c.line, c.stops_on_error) for c in read.copies] == [
        ("/work/a.py", "/d/", False, 2, True), ("/work/inst.sh", "/y/", False, 4, True)]
    assert (read.stops_on_error, read.unknown) == (True, ("OTHER",))
    read = read_install_script("cp -r a /x\nset -e\n", "/")
    assert [(c.source, c.destination, c.recursive, c.stops_on_error) for c in read.copies] == [
        ("/a", "/x", True, False)]
    assert read.stops_on_error is False


@pytest.mark.parametrize(("script", "copies", "stops"), [
    # Run again under bash -e ('exec' ends the first run): the copy is the second run's, under its set -e.
    ('#!/bin/sh\n[ "$1" = again ] || exec bash -e "$0" again\ncp a.py /d/\n', [("/w/a.py", "/d/", 3)], True),
    # Run again as a child, then going on: each run's copies, by the order the runs start (the first run's first).
    ('set -e\n[ "$1" = again ] || sh "$0" again\ncp "b$1.py" /d/\n',
     [("/w/b.py", "/d/", 3), ("/w/bagain.py", "/d/", 3)], True),
    # Run again under bash unless it runs under bash: read once under bash, not until the nesting limit.
    ('#!/bin/bash\n[ -z "$BASH_VERSION" ] && exec bash "$0" "$@"\ncp a.py /d/\n', [("/w/a.py", "/d/", 3)], False),
    ('#!/bin/dash\n[ -z "$BASH_VERSION" ] && exec bash "$0" "$@"\ncp a.py /d/\n', [("/w/a.py", "/d/", 3)], False),
    # Under sh the base image decides: the run under bash, and the one that goes on under sh.
    ('[ -n "$BASH_VERSION" ] || exec bash "$0" "$@"\ncp a.py /d/\n', [("/w/a.py", "/d/", 2)] * 2, False),
])
def test_a_script_read_on_its_own_that_runs_itself_again_reports_the_copies_of_each_run(
        script: str, copies: list[tuple[str, str, int]], stops: bool) -> None:
    read = read_install_script(script, "/w", script="/w/i.sh")
    assert [(c.source, c.destination, c.line) for c in read.copies] == copies
    assert (read.stops_on_error, read.unknown) == (stops, ())


def test_a_home_between_colons_in_an_assignment_is_expanded_before_the_next_name() -> None:
    # In an assignment's value a '~' standing alone between ':'s is the home folder, also when a variable follows
    # it (dash and bash: ROOTS=~:$SITE is /root:/usr/lib/site).
    script = "#!/bin/sh\nSITE=/usr/lib/site\nROOTS=/opt:~:$SITE\ncp ./x.py \"/dest/$ROOTS/x.py\"\n"
    read = read_install_script(script, "/w", {"HOME": "/root"})
    assert [(c.source, c.destination) for c in read.copies] == [("/w/x.py", "/dest/opt:/root:/usr/lib/site/x.py")]


def test_a_default_in_a_command_word_keeps_a_tilde_after_a_colon() -> None:
    # Only an assignment expands a '~' after a ':'; a ${VAR:-word} default given to cp is a command word, and dash
    # and bash copy to the path as written.
    read = read_install_script("#!/bin/sh\ncp ./x.py ${OPS:-/opt/a:~/b.py}\n", "/w", {"HOME": "/root"})
    assert [(c.source, c.destination) for c in read.copies] == [("/w/x.py", "/opt/a:~/b.py")]


@pytest.mark.parametrize("assignment", ["OPS=${UNSET_OPS:-/opt/a:~/b}", "OPS=${SET_OPS:+/opt/a:~/b}"])
def test_a_default_in_an_assignment_expands_a_tilde_after_a_colon(assignment: str) -> None:
    # The default is part of the assignment's value: dash and bash give /opt/a:/root/b.
    read = read_install_script(f"#!/bin/sh\nSET_OPS=1\n{assignment}\ncp ./x.py \"$OPS.py\"\n", "/w", {"HOME": "/root"})
    assert [c.destination for c in read.copies] == ["/opt/a:/root/b.py"]
