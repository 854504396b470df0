"""A Dockerfile splits into instructions as BuildKit splits it.

Parser directives only at the very top (``# escape=`` changes the
continuation character; any other line, blank or comment, ends them);
comment and blank lines inside a continued instruction dropped, the
instruction numbered by its first line; CRLF, CR and a byte-order mark;
``--flag[=value]`` options before the arguments; here-documents after RUN,
COPY and ADD; a RUN keeps its physical lines so its commands are numbered
by their own line. What ``docker build`` refuses is refused with the line.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from patcher.shipping.docker_syntax import KEYWORDS, DockerLexer, Heredoc, Instruction, read_instructions


def split(text: str) -> list[tuple[str, tuple[tuple[str, str | None], ...], str, int]]:
    return [(i.keyword, i.flags, i.arguments, i.line) for i in read_instructions(text)]


@pytest.mark.parametrize(("text", "instructions"), [
    ("FROM base\nCOPY a b\n", [("FROM", (), "base", 1), ("COPY", (), "a b", 2)]),
    ("from base\ncopy a b\n  Run   x    y  \n", [("FROM", (), "base", 1), ("COPY", (), "a b", 2), ("RUN", (), "x    y", 3)]),
    ("\ufeffFROM base\r\nRUN a \\\r\n b\r\n", [("FROM", (), "base", 1), ("RUN", (), "a  b", 2)]),
    ("FROM base\rRUN a\r", [("FROM", (), "base", 1), ("RUN", (), "a", 2)]),
    ("# comment\n\nFROM base\n  # indented comment\nRUN a\n", [("FROM", (), "base", 3), ("RUN", (), "a", 5)]),
    ("FROM base\nRUN a \\\n  # a comment inside\n\n  b \\\n  c\nCOPY x y\n",
     [("FROM", (), "base", 1), ("RUN", (), "a   b   c", 2), ("COPY", (), "x y", 7)]),
    ("FROM base\nRUN a \\   \n  b\n", [("FROM", (), "base", 1), ("RUN", (), "a   b", 2)]),
    ("FROM base\nRUN echo \\", [("FROM", (), "base", 1), ("RUN", (), "echo \\", 2)]),
    ("FROM base\nRUN # not a comment \\\n x\n", [("FROM", (), "base", 1), ("RUN", (), "# not a comment  x", 2)]),
    # Directives: only at the top; escape=` makes ` the continuation character.
    ("\ufeff# syntax=docker/dockerfile:1\n# escape=`\nFROM base\nRUN echo a `\n  b\n",
     [("FROM", (), "base", 3), ("RUN", (), "echo a   b", 4)]),
    ("#ESCAPE = `\nFROM base\nRUN a `\n b\n", [("FROM", (), "base", 2), ("RUN", (), "a  b", 3)]),
    ("# escape=\\\nFROM base\nRUN a \\\n b\n", [("FROM", (), "base", 2), ("RUN", (), "a  b", 3)]),
    ("# escape=`\nFROM base\nRUN a \\\nCOPY x y\n", [("FROM", (), "base", 2), ("RUN", (), "a \\", 3), ("COPY", (), "x y", 4)]),
    ("\n# escape=`\nFROM base\nRUN a \\\n b\n", [("FROM", (), "base", 3), ("RUN", (), "a  b", 4)]),
    ("# a comment\n# escape=`\nFROM base\nRUN a \\\n b\n", [("FROM", (), "base", 3), ("RUN", (), "a  b", 4)]),
    # A comment shaped like a directive whose name BuildKit does not know ends the directives too.
    ("# maintainer=vendor\n# escape=`\nFROM base\nRUN a \\\n b\n", [("FROM", (), "base", 3), ("RUN", (), "a  b", 4)]),
    # Flags: --name or --name=value, each followed by a blank; the rest are arguments.
    ("FROM base\nCOPY --from=x --chown=1:1 --link a b\n",
     [("FROM", (), "base", 1), ("COPY", (("from", "x"), ("chown", "1:1"), ("link", None)), "a b", 2)]),
    ("FROM base\nCOPY --from= --chmod=755 --chmod=644 a b\n",
     [("FROM", (), "base", 1), ("COPY", (("from", ""), ("chmod", "755"), ("chmod", "644")), "a b", 2)]),
    ("FROM base\nCOPY --from=x/y:1 --exclude=*.pyc a b\n",
     [("FROM", (), "base", 1), ("COPY", (("from", "x/y:1"), ("exclude", "*.pyc")), "a b", 2)]),
    ("FROM base\nCOPY --FROM=x a b\nCOPY --from=x\"y\" a b\nCOPY a --from=x b\n",
     [("FROM", (), "base", 1), ("COPY", (), "--FROM=x a b", 2), ("COPY", (("from", 'x"y"'),), "a b", 3),
      ("COPY", (), "a --from=x b", 4)]),
    ("FROM base\nRUN --mount=type=bind,target=/m --network=none  cp a b\n",
     [("FROM", (), "base", 1), ("RUN", (("mount", "type=bind,target=/m"), ("network", "none")), "cp a b", 2)]),
    ("FROM base\nRUN --x-y9=1 a\nRUN --9=1 a\nRUN --=1 a\n", [("FROM", (), "base", 1), ("RUN", (("x-y9", "1"),), "a", 2),
                                                            ("RUN", (), "--9=1 a", 3), ("RUN", (), "--=1 a", 4)]),
    ("FROM base\nRUN --flag\nRUN --flag=a=b c\n",
     [("FROM", (), "base", 1), ("RUN", (("flag", None),), "", 2), ("RUN", (("flag", "a=b"),), "c", 3)]),
])
def test_a_dockerfile_splits_into_instructions(text: str, instructions: list[object]) -> None:
    assert split(text) == instructions


def test_every_instruction_docker_knows_is_read() -> None:
    lines = ["FROM base", "LABEL a=b", "EXPOSE 80", 'CMD ["x"]', "ENTRYPOINT x", "VOLUME /v", "USER root",
             "ONBUILD RUN x", "STOPSIGNAL 9", "HEALTHCHECK NONE", "MAINTAINER me", 'SHELL ["/bin/bash", "-c"]',
             "WORKDIR /w", "ARG A", "ENV B=c", "ADD a b", "COPY a b", "RUN x"]
    assert [i.keyword for i in read_instructions("\n".join(lines))] == [line.split()[0] for line in lines]
    assert {line.split()[0] for line in lines} == KEYWORDS


@pytest.mark.parametrize(("text", "line", "what"), [
    ("FROM base\nFETCH a b\n", 2, "unknown instruction 'FETCH'"),
    ("FROM base\nfetch a b\n", 2, "unknown instruction 'fetch'"),
    ("# escape=x\nFROM base\n", 1, "the escape directive must be \\ or `, not 'x'"),
    ("# syntax=x\n# escape=ab\nFROM base\n", 2, "the escape directive must be \\ or `, not 'ab'"),
    ("# a comment\n# escape=`\nFROM base\nRUN a `\n b\n", 5, "unknown instruction 'b'"),
    ("# escape=`\n# escape=`\nFROM base\n", 2, "only one escape parser directive can be used"),
    ("FROM base\nRUN <<EOF\nnever closed\n", 2, "the here-document EOF is not closed"),
    ("FROM base\nCOPY <<A <<B /d/\na\nA\nb\n", 2, "the here-document B is not closed"),
    ("FROM base\nRUN <<-EOF\n  EOF\n", 2, "the here-document EOF is not closed"),
])
def test_what_docker_build_refuses_is_refused_with_its_line(text: str, line: int, what: str) -> None:
    with pytest.raises(ShippingError) as raised:
        read_instructions(text, "sub/Dockerfile")
    assert str(raised.value) == (f"sub/Dockerfile: cannot be parsed: line {line}: {what} "
                                 "('docker build' refuses it too; fix that line)")


@pytest.mark.parametrize(("text", "arguments", "shell_text", "heredocs", "next_line"), [
    ("RUN <<EOF\nset -e\ncp a b\nEOF\nRUN echo after\n", "<<EOF", "<<EOF\nset -e\ncp a b\nEOF",
     (Heredoc("EOF", "set -e\ncp a b\n", False, False),), 6),
    ("RUN <<-EOF bash\n\tcp a b\n\t\tEOF\nRUN x\n", "<<-EOF bash", "<<-EOF bash\ncp a b\nEOF",
     (Heredoc("EOF", "cp a b\n", False, True),), 5),
    ("COPY <<A <<\"B\" /dir/\naaa\nA\nbbb\nB\nRUN x\n", '<<A <<"B" /dir/', "",
     (Heredoc("A", "aaa\n", False, False), Heredoc("B", "bbb\n", True, False)), 7),
    ("ADD <<'my.file' /d/\n x\nmy.file\nRUN x\n", "<<'my.file' /d/", "", (Heredoc("my.file", " x\n", True, False),), 5),
    ("RUN cat <<EOF > /x && echo\nbody\nEOF\nRUN x\n", "cat <<EOF > /x && echo", "cat <<EOF > /x && echo\nbody\nEOF",
     (Heredoc("EOF", "body\n", False, False),), 5),
    ("RUN <<EOF\nEOF\nRUN x\n", "<<EOF", "<<EOF\nEOF", (Heredoc("EOF", "", False, False),), 4),
    ("ENV A=<<EOF\nRUN x\n", "A=<<EOF", "", (), 3),  # only RUN, COPY and ADD take here-documents
])
def test_here_documents_follow_their_instruction(text: str, arguments: str, shell_text: str,
                                                 heredocs: tuple[Heredoc, ...], next_line: int) -> None:
    first, *rest = read_instructions("FROM base\n" + text)[1:]
    assert (first.arguments, first.shell_text, first.heredocs) == (arguments, shell_text, heredocs)
    assert [i.line for i in rest] == [next_line]


def test_a_run_keeps_its_physical_lines_for_the_shell() -> None:
    (_, run) = read_instructions("FROM base\nrun --mount=type=bind,target=/m  \\\n  cp /m/a /b \\\n  # comment\n\n"
                                 "  && echo\n")
    assert run.shell_text == "\\\n  cp /m/a /b \\\n\\\n\\\n  && echo"
    assert run.arguments == "cp /m/a /b   && echo"
    (_, run) = read_instructions("# escape=`\nFROM base\nRUN echo a `\n  b\n")
    assert run.shell_text == "echo a \\\n  b"


@pytest.mark.parametrize(("text", "shown"), [
    ("COPY --from=x --link a  b", "COPY --from=x --link a b"),
    ("RUN a \\\n   b", "RUN a b"),
    ("RUN " + "x" * 200, "RUN " + "x" * 113 + "..."),
    ("RUN " + "x" * 116, "RUN " + "x" * 116),
    ("RUN " + "x" * 117, "RUN " + "x" * 113 + "..."),
])
def test_an_instruction_is_shown_on_one_line_and_clipped(text: str, shown: str) -> None:
    (_, instruction) = read_instructions("FROM base\n" + text + "\n")
    assert instruction.text == shown and len(shown) <= 120


@pytest.mark.parametrize(("arguments", "argv"), [
    ('["a", "b"]', ["a", "b"]), ('  ["a"]  ', ["a"]), ("[]", []), ('["a", 1]', None), ("[not json", None),
    ('{"a": 1}', None), ("a b", None), ('"a"', None), ('["a", ["b"]]', None),
])
def test_the_json_form_is_an_array_of_strings(arguments: str, argv: list[str] | None) -> None:
    assert Instruction("RUN", (), arguments, 1, "").exec_form() == argv


def test_the_last_value_of_a_flag_counts() -> None:
    instruction = Instruction("COPY", (("from", "a"), ("link", None), ("from", "b")), "x y", 1, "")
    assert (instruction.flag("from"), instruction.flag("link"), instruction.flag("chown")) == ("b", None, None)


@pytest.mark.parametrize(("text", "word"), [
    ("a'b c'\"$V\"\\$V", "ab cv$V"),  # single quotes keep $V, double quotes substitute, a backslash escapes
    ("${V}/x.py", "v/x.py"),
    ("$V$U.py", "v.py"),  # an ARG never set is empty
    ("", ""),
])
def test_buildkit_processes_a_word_character_by_character(text: str, word: str) -> None:
    # What BuildKit's ProcessWord gives (ENV A=<word>, then RUN echo "$A" prints it in docker build).
    assert DockerLexer(lambda name: {"V": "v"}.get(name), lambda name: "").word(text) == word


@pytest.mark.parametrize("line", ["USER ${", "WORKDIR ${", "COPY main.py ${DEST", "ENV A=${B:x}", "ARG A=${"])
def test_a_word_buildkit_cannot_substitute_is_refused_with_its_line(line: str) -> None:
    from tests.shipping.conftest import plan_of

    with pytest.raises(ShippingError) as raised:
        plan_of({"Dockerfile": f"FROM base\n{line}\n", "main.py": ""})
    message = str(raised.value)
    assert message.startswith(f"Dockerfile: cannot be parsed: line 2: {line.split()[0]} ") and message.endswith(
        "('docker build' refuses it too; fix that line)")
