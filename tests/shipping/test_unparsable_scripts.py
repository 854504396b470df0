"""A script that does not parse is read up to its error: one note says where the parser stopped and why.

sh reads a script (a ``RUN`` line, a ``sh -c`` string, an ``eval``, a
here-document fed to sh) a line at a time and runs each complete command
as it reads it: the commands on the lines before the one its syntax error
is on run, and those on that line, or in a compound command still open
around it, do not (checked with bash 5.2 and dash 0.5.12). The reader runs
the same commands; its note names the line the parser stopped on, that
line as written, and what it expected there.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import plan_of, script_context


@pytest.mark.parametrize(("script", "line", "text", "why"), [
    ("cp x.py /a/\ncat <<\n", 2, "cat <<", "'<<' needs a delimiter"),
    ("cp x.py /a/\ncat << \t\n", 2, "cat <<", "'<<' needs a delimiter"),
    ("cp x.py /a/\ncat <<", 2, "cat <<", "'<<' needs a delimiter"),
    ("echo 'abc\n", 1, "echo 'abc", "a single quote is not closed"),
    ("echo \"abc\n", 2, "", "a double quote is not closed"),
    ("echo $'abc\n", 2, "", "a $'...' string is not closed"),
    ("echo $'abc\\", 1, "echo $'abc\\", "a $'...' string is not closed"),
    ("echo ${\n", 1, "echo ${", "bad substitution"),
    ("echo ${}\n", 1, "echo ${}", "bad substitution"),
    ("echo ${#A\n", 1, "echo ${#A", "bad substitution"),
    ("echo ${A[0}\n", 1, "echo ${A[0}", "bad substitution"),
    ("echo ${A!}\n", 1, "echo ${A!}", "bad substitution"),
    ("D=${:-/opt/vllm}\n", 1, "D=${:-/opt/vllm}", "bad substitution"),  # the name left out: no parameter to default
    ("cp x.py /a/\necho ${", 2, "echo ${", "bad substitution"),  # the script ends inside the '${'
    ("echo ${A:-x\n", 2, "", "a '${' is not closed"),
    ("echo `abc\n", 1, "echo `abc", "a backquote is not closed"),
    ("echo `abc\\`\n", 1, "echo `abc\\`", "a backquote is not closed"),
    ("echo $(abc\n", 1, "echo $(abc", "a '(' is not closed"),
    ("echo $(echo ')\n", 1, "echo $(echo ')", "a '(' is not closed"),
    ("echo $(echo \"\\\")\n", 1, "echo $(echo \"\\\")", "a '(' is not closed"),
    ("echo $((1+2)\n", 1, "echo $((1+2)", "a '(' is not closed"),
    ("if true; then\n  echo x\n", 3, "", "expected 'fi', found 'the end'"),
    ("if true\n  echo x\nfi\n", 3, "fi", "unexpected 'fi'"),
    ("if true; echo x; fi\n", 1, "if true; echo x; fi", "unexpected 'fi'"),
    ("if true; then :; elif false; :; fi\n", 1, "if true; then :; elif false; :; fi", "unexpected 'fi'"),
    ("while true; do echo; \n", 2, "", "expected 'done', found 'the end'"),
    ("while true; echo; done\n", 1, "while true; echo; done", "unexpected 'done'"),
    ("until false\ndone\n", 2, "done", "unexpected 'done'"),
    ("echo a )\n", 1, "echo a )", "unexpected ')'"),
    ("echo x; then\n", 1, "echo x; then", "unexpected 'then'"),
    ("echo x\nfi\n", 2, "fi", "unexpected 'fi'"),
    ("done\n", 1, "done", "unexpected 'done'"),
    ("esac\n", 1, "esac", "unexpected 'esac'"),
    ("( echo x\n", 1, "( echo x", "a '(' is not closed"),
    ("( echo x; }\n", 1, "( echo x; }", "unexpected '}'"),
    (";;\n", 1, ";;", "unexpected ';;'"),
    ("echo a ;;\n", 1, "echo a ;;", "unexpected ';;'"),
    ("echo >\n", 1, "echo >", "'>' needs a target"),
    ("echo 2>> ;\n", 1, "echo 2>> ;", "'>>' needs a target"),
    ("for 1 in a; do :; done\n", 1, "for 1 in a; do :; done", "'for' needs a variable name"),
    ("for \"x\" in a; do :; done\n", 1, "for \"x\" in a; do :; done", "'for' needs a variable name"),
    ("for\n", 1, "for", "'for' needs a variable name"),
    ("for x in a b c\n echo\n", 2, "echo", "expected 'do', found 'echo'"),
    ("for x in a; do echo; od\n", 2, "", "expected 'done', found 'the end'"),
    ("case\n", 1, "case", "'case' needs a word"),
    ("case x\n a) ;;\nesac\n", 2, "a) ;;", "expected 'in', found 'a'"),
    ("case x in\n a) echo ;;\n", 3, "", "a case pattern is missing"),
    ("case x in\n ) echo ;;\nesac\n", 2, ") echo ;;", "a case pattern is missing"),
    ("case x in\n a echo ;;\nesac\n", 2, "a echo ;;", "a case pattern needs ')'"),
    ("case x in\n a) echo x )\nesac\n", 2, "a) echo x )", "unexpected ')'"),
    ("case x in\n a) echo x\n b) y;;\nesac\n", 3, "b) y;;", "unexpected ')'"),
    ("function f ( x\n", 1, "function f ( x", "expected ')' after '('"),
    ("{ echo x; \n", 2, "", "expected '}', found 'the end'"),
    ("|| echo\n", 1, "|| echo", "expected a command, found '||'"),
    ("echo a |\n", 2, "", "expected a command, found 'the end'"),
    ("echo a | ;\n", 1, "echo a | ;", "expected a command, found ';'"),
    ("&& b\n", 1, "&& b", "expected a command, found '&&'"),
    ("echo a && \n", 2, "", "expected a command, found 'the end'"),
    ("then\n", 1, "then", "unexpected 'then'"),
    # A compound command with nothing in one of its lists (bash: "syntax error near unexpected token", dash:
    # "Syntax error: ... unexpected"), however it is spelled.
    ("cp x.py /a/\nif then fi\n", 2, "if then fi", "unexpected 'then': nothing to run before it"),
    ("cp x.py /a/\nif true; then fi\n", 2, "if true; then fi", "unexpected 'fi': nothing to run before it"),
    ("cp x.py /a/\nif true; then :; else\nfi\n", 3, "fi", "unexpected 'fi': nothing to run before it"),
    ("if true; then :; elif then :; fi\n", 1, "if true; then :; elif then :; fi",
     "unexpected 'then': nothing to run before it"),
    ("cp x.py /a/\nwhile false; do done\n", 2, "while false; do done", "unexpected 'done': nothing to run before it"),
    ("until do :; done\n", 1, "until do :; done", "unexpected 'do': nothing to run before it"),
    ("for x in a; do\ndone\n", 2, "done", "unexpected 'done': nothing to run before it"),
    ("cp x.py /a/\n{ }\n", 2, "{ }", "unexpected '}': nothing to run before it"),
    ("( )\n", 1, "( )", "unexpected ')': nothing to run before it"),
    ("install() {\n}\n", 2, "}", "unexpected '}': nothing to run before it"),
    # '!' starts a pipeline only.
    ("echo a | ! cat\n", 1, "echo a | ! cat", "unexpected '!'"),
    # A $(...) is parsed with its command (bash 5.2, dash 0.5.12), wherever it stands in the word.
    ("cp x.py /a/\nD=$(if true)\n", 2, "D=$(if true)", "expected 'then', found 'the end'"),
    ("cp x.py /a/\nD=\"${E:-$(if then fi)}\"\n", 2, "D=\"${E:-$(if then fi)}\"",
     "unexpected 'then': nothing to run before it"),
    ("D=$(echo $(fi))\n", 1, "D=$(echo $(fi))", "unexpected 'fi'"),
    ("in\n", 1, "in", "unexpected 'in'"),
    # The last branch of a case left without its ';;' and the 'esac' forgotten: dash stops at the end of the file
    # "expecting ';;'".
    ("case \"$(uname -m)\" in\n  x86_64) cp x.py /a/x86_64/ ;;\n  aarch64) cp x.py /a/aarch64/\n", 4, "",
     "expected ';;' or 'esac'"),
    # A function whose closing brace was forgotten swallows the call after it: dash stops at the end "expecting '}'".
    ("install_ops() {\n  cp x.py /a/\n\ninstall_ops\n", 5, "", "expected '}', found 'the end'"),
])
def test_a_script_that_does_not_parse_is_one_note_at_the_line_the_parser_stopped(script: str, line: int, text: str,
                                                                                   why: str) -> None:
    plan = plan_of(script_context(script))
    assert [(n.kind, n.file, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", "s/i.sh", line, text, f"cannot be parsed as shell ({why}): s/i.sh is not read from here on")]
    # Only a copy on a line of its own before the error's line ran.
    assert any(path.startswith("/a/") for path in plan.image) is script.startswith("cp x.py /a/\n")


def test_a_bash_array_never_closed_is_a_syntax_error_at_the_line_it_opens() -> None:
    # The ')' of the wheel list was forgotten: bash reads every line after it as more elements, meets the end of the
    # file still "looking for matching ')'" (naming line 2, where it opened) and runs none of the script.
    script = ("#!/bin/bash\nWHEELS=(\n  vllm-0.6.3-cp310-linux_x86_64.whl\n  torch-2.4.0-cp310-linux_x86_64.whl\n"
              "cp x.py /a/\n")
    plan = plan_of(script_context(script, run="cd /w/s && bash i.sh"))
    assert [(n.kind, n.file, n.line, n.reason) for n in plan.notes] == [
        ("stop", "s/i.sh", 2, "cannot be parsed as shell (unexpected 'end of file' in an array): s/i.sh is not read "
                              "from here on")]
    assert not any(path.startswith("/a/") for path in plan.image)


def test_a_run_line_that_does_not_parse_stops_that_run_only() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY x.py /src/\nRUN cp /src/x.py /a/ && \\\n    if true; then echo\n"
                                  "RUN cp /src/x.py /b/\n", "x.py": ""})
    assert [(n.kind, n.file, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", "Dockerfile", 3, "RUN cp /src/x.py /a/ && if true; then echo",
         "cannot be parsed as shell (expected 'fi', found 'the end', line 4): the rest of this RUN "
         "(Dockerfile line 3) is not read")]
    assert "/a/x.py" not in plan.image and plan.image["/b/x.py"].source == "x.py"


def test_a_here_document_fed_to_sh_that_does_not_parse_runs_up_to_its_error_and_stops_that_run_only() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY x.py /src/\nRUN sh <<EOF\ncp /src/x.py /a/\nif true; then echo\n"
                                  "EOF\nRUN cp /src/x.py /b/\n", "x.py": ""})
    assert [(n.kind, n.file, n.line, n.reason) for n in plan.notes] == [
        ("stop", "Dockerfile", 3, "cannot be parsed as shell (expected 'fi', found 'the end', line 6): the rest of "
                                  "this RUN (Dockerfile line 3) is not read")]
    # sh ran the here-document's first line before it met the 'if' left open.
    assert plan.image["/a/x.py"].source == "x.py" and plan.image["/b/x.py"].source == "x.py"


@pytest.mark.parametrize(("script", "placed"), [
    ("cp x.py /a/\nfi\ncp x.py /b/\n", ["/a/x.py"]),
    ("cp x.py /a/\ncp x.py /b/; fi\n", ["/a/x.py"]),  # the error's own line does not run
    ("cp x.py /a/\nif true; then\n  cp x.py /b/\nfi; fi\n", ["/a/x.py"]),  # nor the compound it closes
    ("cp x.py /a/\nif true; then\n  cp x.py /b/\n  echo \"open\nfi\n", ["/a/x.py"]),  # a quote left open
    ("cp x.py /a/\neval 'cp x.py /b/\nfi'\ncp x.py /c/\n", ["/a/x.py", "/b/x.py"]),  # eval's text too
])
@pytest.mark.parametrize("run", ["cd /w/s && bash i.sh", "cd /w/s && dash i.sh"])
def test_the_commands_before_a_syntax_error_run(script: str, placed: list[str], run: str) -> None:
    plan = plan_of(script_context(script.replace("/a/", "/w/a/").replace("/b/", "/w/b/").replace("/c/", "/w/c/"),
                                  run=f"mkdir /w/a /w/b /w/c && {run}"))
    assert sorted(p[2:] for p in plan.image if p.startswith(("/w/a/", "/w/b/", "/w/c/"))) == placed
    assert [n.kind for n in plan.notes] == ["stop"]


def test_an_eval_of_text_that_does_not_parse_stops_the_script_there() -> None:
    plan = plan_of(script_context("cp x.py /a/\neval 'if true'\ncp x.py /b/\n"))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", 2, "eval 'if true'",
         "cannot be parsed as shell (expected 'then', found 'the end', line 2): the rest of s/i.sh is not read")]
    assert "/a/x.py" in plan.image and "/b/x.py" not in plan.image


def test_an_eval_of_text_nested_too_deeply_stops_the_script_there() -> None:
    deep = "( " * 3000 + "cp x.py /b/" + " )" * 3000
    plan = plan_of(script_context(f"cp x.py /a/\neval '{deep}'\ncp x.py /c/\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 2, "nests too deeply to be read: the rest of s/i.sh is not read")]
    assert "/a/x.py" in plan.image and "/b/x.py" not in plan.image and "/c/x.py" not in plan.image


def test_a_sh_c_string_that_does_not_parse_fails_where_it_runs() -> None:
    plan = plan_of(script_context("sh -c 'cp x.py /a/; (' \ncp x.py /b/\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 1, "cannot be parsed as shell (a '(' is not closed, line 1): the rest of s/i.sh is not read")]
    assert "/a/x.py" not in plan.image and "/b/x.py" in plan.image


@pytest.mark.parametrize("run", ["cd /w/s && bash i.sh", "cd /w/s && dash i.sh"])
def test_a_command_substitution_that_does_not_parse_stops_the_script_at_its_command(run: str) -> None:
    plan = plan_of(script_context("cp x.py /a/\nD=$(if true)\ncp x.py \"$D/x.py\"\ncp x.py /b/\n", run=run))
    assert [(n.kind, n.line) for n in plan.notes] == [("stop", 2)]
    assert "/a/x.py" in plan.image and "/b/x.py" not in plan.image


@pytest.mark.parametrize("script", ["D=`if then fi`\n", "cat <<EOF\n$(if then fi)\nEOF\n"])
def test_backquotes_and_here_documents_are_parsed_with_the_command_by_dash_and_when_they_run_by_bash(
        script: str) -> None:
    # dash refuses the command; bash runs it, the substitution failing in its own subshell.
    context = script_context(f"cp x.py /a/\n{script}cp x.py /b/\n", run="cd /w/s && dash i.sh")
    assert "/b/x.py" not in plan_of(context).image
    context = script_context(f"cp x.py /a/\n{script}cp x.py /b/\n", run="cd /w/s && bash i.sh")
    assert "/b/x.py" in plan_of(context).image


def test_a_command_substitution_nested_past_what_is_checked_at_once_is_an_unknown_value() -> None:
    # sh parses every level with the command; the reader checks 16 and reads a deeper error when it runs.
    deep = "$(echo " * 20 + "$(if true)" + ")" * 20
    plan = plan_of(script_context(f"D={deep}\ncp x.py \"$D/x.py\"\ncp x.py /b/\n"))
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]
    assert "/b/x.py" in plan.image


@pytest.mark.parametrize(("script", "status"), [("!", "1"), ("! ;", "1"), ("! !", "0"), ("! ! true", "0"),
                                                ("! ! false", "1")])
def test_bash_runs_a_bang_alone_or_doubled_where_dash_refuses_it(script: str, status: str) -> None:
    body = f"{script}\ncp x.py /b/$?.py\n"
    assert f"/b/{status}.py" in plan_of(script_context(body, run="cd /w/s && bash i.sh")).image
    dash = plan_of(script_context(body, run="cd /w/s && dash i.sh"))
    assert [n.kind for n in dash.notes] == ["stop"] and not any(p.startswith("/b/") for p in dash.image)


def test_a_here_document_left_open_inside_a_compound_command_is_a_syntax_error() -> None:
    # The body runs to the end of the script, so the 'if' never meets its 'fi' (bash and dash both stop).
    plan = plan_of(script_context("cp x.py /a/\nif true; then cat <<EOF\nabc\nfi\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 5, "cannot be parsed as shell (expected 'fi', found 'the end'): s/i.sh is not read from here on")]
    assert "/a/x.py" in plan.image


@pytest.mark.parametrize(("script", "token"), [
    ("cp x.py /a/\nFILES=(x.py ; y.py)\n", ";"),
    ("cp x.py /a/\nFILES=(x.py | y.py)\n", "|"),
])
def test_an_operator_inside_a_bash_array_is_a_syntax_error_that_names_it(script: str, token: str) -> None:
    # bash 5.2: "syntax error near unexpected token `;'", and the line is not run.
    plan = plan_of(script_context(script, run="cd /w/s && bash i.sh"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 2, f"cannot be parsed as shell (unexpected '{token}' in an array): s/i.sh is not read from here on")]
    assert any(path.startswith("/a/") for path in plan.image)


def test_an_indirect_expansion_with_a_character_after_its_name_is_a_bad_substitution_on_its_line() -> None:
    # bash 5.2 says "${!x.}: bad substitution" for line 2 (and, unlike the reader, goes on to line 3).
    plan = plan_of(script_context("cp x.py /a/\necho ${!x.}\n", run="cd /w/s && bash i.sh"))
    assert [(n.kind, n.line, n.text, n.reason) for n in plan.notes] == [
        ("stop", 2, "echo ${!x.}", "cannot be parsed as shell (bad substitution): s/i.sh is not read from here on")]


@pytest.mark.parametrize("run", ["cd /w/s && bash i.sh", "cd /w/s && dash i.sh"])
def test_a_here_document_left_open_inside_a_command_substitution_stops_the_script_at_its_command(run: str) -> None:
    # The ')' is part of the body, so the '$(' never closes: bash 5.2 ("unexpected EOF while looking for
    # matching `)'") and dash 0.5.12 ("end of file unexpected (expecting ")")") run line 1 and nothing after.
    plan = plan_of(script_context("cp x.py /a/\nD=$(cat <<EOF\nhi\n)\ncp x.py /b/\n", run=run))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 2, "cannot be parsed as shell (here-document 'EOF' is not closed): s/i.sh is not read from here on")]
    assert "/a/x.py" in plan.image and "/b/x.py" not in plan.image
