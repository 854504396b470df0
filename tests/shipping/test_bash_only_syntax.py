"""bash's own syntax under dash: what dash 0.5.12 makes of ``&>``, ``|&``, ``<<<``, ``;&``, ``function``, ``$'...'``.

dash reads ``cmd &> FILE`` as ``cmd &`` (in the background, its status 0)
then ``> FILE`` (an empty command that empties FILE); ``|&``, ``<<<`` and
``;&`` are syntax errors where they stand (the lines before them run);
``function`` is a command name like any other, so ``function f { ...; }``
is a syntax error at its ``}``; ``$'a\\n'`` is a ``$`` and then ``'a\\n'``.
The base image's ``sh`` (a RUN line's shell) may be either: it is read as
bash reads it, and a ``&>``, ``&>>`` or ``<<<`` there is noted as the
image's to decide. Each row was run under bash 5.2 and dash 0.5.12.
"""

from __future__ import annotations

import pytest

from patcher.shipping.shell_syntax import parse_script
from tests.shipping.conftest import in_dest, plan_of, run_script


@pytest.mark.parametrize(("script", "bash", "dash"), [
    # dash: cp in the background (its failure is no failure), then an empty command redirected.
    ("cp none.py /dest/a.py &> /dev/null || cp x.py /dest/failed.py\n", ["/dest/failed.py"], []),
    ("cp none.py /dest/a.py &>> /dev/null || cp x.py /dest/failed.py\n", ["/dest/failed.py"], []),
    ("cp x.py /dest/a.py\ncat <<< hi\ncp x.py /dest/b.py\n", ["/dest/a.py", "/dest/b.py"], ["/dest/a.py"]),
    ("cp x.py /dest/a.py\necho hi |& cat\ncp x.py /dest/b.py\n", ["/dest/a.py", "/dest/b.py"], ["/dest/a.py"]),
    ("cp x.py /dest/a.py\ncase a in a) cp x.py /dest/c.py;& b) cp x.py /dest/d.py;; esac\ncp x.py /dest/b.py\n",
     ["/dest/a.py", "/dest/b.py", "/dest/c.py", "/dest/d.py"], ["/dest/a.py"]),
    ("function f { cp x.py /dest/f.py; }\nf\ncp x.py /dest/b.py\n", ["/dest/b.py", "/dest/f.py"], []),
    # On lines of their own, dash runs 'function f {' (not found) and the body, then stops at the '}'.
    ("function f {\n  cp x.py /dest/f.py\n}\ncp x.py /dest/b.py\n", ["/dest/b.py"], ["/dest/f.py"]),
    ("cp x.py /dest/$'q\\x41'.py\n", ["/dest/qA.py"], ["/dest/$q\\x41.py"]),
    ('cp x.py /dest/$"loc".py\n', ["/dest/loc.py"], ["/dest/$loc.py"]),
    # A here-document's $(...) is read when it runs, by the shell running it: dash's is a '$' and then 'q'.
    ("cat >/dev/null <<EOF\n$(cp x.py /dest/$'q'.py)\nEOF\n", ["/dest/q.py"], ["/dest/$q.py"]),
])
@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_bash_syntax_is_read_as_each_shell_reads_it(script: str, bash: list[str], dash: list[str], shell: str) -> None:
    assert in_dest(run_script(script, f"{shell} i.sh")) == (bash if shell == "bash" else dash)


@pytest.mark.parametrize(("text", "decoded"), [
    # What bash 5.2 printed for each (printf '%s|' $'...' | od -c).
    ("a\\x41\\x4g", "aA\x04g"), ("\\101\\0101", "A\b1"), ("\\u00e9\\U0001F600", "\u00e9\U0001F600"),
    ("\\cA\\ca", "\x01\x01"), ("\\q\\?", "\\q?"), ("a\\0b", "a"), ("\\x", "\\x"), ("\\e[\\E", "\x1b[\x1b"),
    ("\\v\\f\\b", "\v\f\b"), ("\\1234", "S4"), ("\\c", "\\c"), ("\\u", "\\u"), ("\\n\\t\\r\\a", "\n\t\r\a"),
    ("\\\\\\'\\\"", "\\'\""),
])
def test_bash_decodes_ansi_c_quotes_as_bash_does(text: str, decoded: str) -> None:
    command = parse_script(f"echo $'{text}'\n", bash=True).items[0].first.commands[0].node
    assert "".join(part.text for part in command.words[1]) == decoded  # type: ignore[union-attr]


def test_a_byte_past_ascii_in_ansi_c_quotes_is_kept_as_that_byte() -> None:
    command = parse_script("echo $'\\xff\\377'\n", bash=True).items[0].first.commands[0].node
    text = "".join(part.text for part in command.words[1])  # type: ignore[union-attr]
    assert text.encode("utf-8", "surrogateescape") == b"\xff\xff"


@pytest.mark.parametrize(("line", "said"), [
    ("cp /src/x.py /made/a.py &> /dev/null", "bash sends both outputs to the file, dash runs the command in the "
                                             "background (its failure unseen) and empties the file"),
    ("cp /src/x.py /made/a.py &>> /tmp/log", "bash appends both outputs to the file, dash runs the command in the "
                                             "background (its failure unseen) and opens the file to append nothing"),
    ("cat <<< /src/x.py > /made/list", "bash feeds the word to the command, dash refuses the script (a syntax error)"),
])
def test_a_run_line_in_sh_with_a_redirection_dash_lacks_says_the_image_decides(line: str, said: str) -> None:
    # RUN's shell is /bin/sh: dash on Debian and Ubuntu, bash on RHEL-likes.
    plan = plan_of({"Dockerfile": f"FROM base\nRUN mkdir /made\nCOPY x.py /src/\nRUN {line}\nRUN bash -c '{line}'\n",
                    "x.py": ""})
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("assumed", 4, f"the base image's sh decides: {said}; the reader reads it as bash does")]


@pytest.mark.parametrize("code", ["\\U00110000", "\\UFFFFFFFF"])
def test_an_ansi_c_code_point_past_unicode_does_not_stop_the_reading(code: str) -> None:
    # bash 5.2 still prints bytes for it (F4 90 80 80 for \U00110000) and the script goes on.
    plan = run_script(f"x=$'{code}'\ncp x.py /dest/after.py\n")
    assert in_dest(plan) == ["/dest/after.py"] and plan.notes == ()


def test_an_ansi_c_octal_escape_ends_at_the_first_character_that_is_no_octal_digit() -> None:
    # bash 5.2: A=$'\1X' is two characters, \001 and X.
    plan = run_script("A=$'\\1X'\ncp x.py \"/dest/${#A}.py\"\n")
    assert in_dest(plan) == ["/dest/2.py"] and plan.notes == ()


def test_a_declaration_that_appends_to_an_array_names_the_array_without_its_plus() -> None:
    # bash 5.2: 'local -a A+=(b)' makes a local A (empty) and appends to it: inside, A is (b); the caller's A
    # stays (a).
    plan = run_script('A=(a)\nf() { local -a A+=(b); cp x.py "/dest/in-${A[*]}.py"; }\nf\n'
                      'cp x.py "/dest/out-${A[*]}.py"\n')
    assert in_dest(plan) == ["/dest/in-b.py", "/dest/out-a.py"] and plan.notes == ()
