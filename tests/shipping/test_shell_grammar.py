"""Scripts parse into the shell's grammar: words keep their quoting, each command its own line.

``show`` below prints the tree ``parse_script`` builds in a compact form
(the tree's own dataclasses, nothing of the parser): a command is
``LINE:words``, an unquoted literal is written bare, a quoted one in single
quotes, ``${NAME OP WORD}`` for a parameter, ``$(TEXT)@LINE`` for a command
substitution, ``$((TEXT))`` for arithmetic, and each expansion that is
quoted (so neither split nor globbed) between double quotes. Each example is
what POSIX sh (and bash, for the bash forms) reads in that script.
"""

from __future__ import annotations

import pytest

from patcher.shipping.shell_nodes import (Arith, Case, Command, For, FunctionDef, Group, If, Lit, Loop, Param,
                                          Redirect, Sequence, Simple, Sub, Word)
from patcher.shipping.shell_lexer import Lexer
from patcher.shipping.shell_syntax import parse_script
from tests.shipping.conftest import image_of, in_dest, notes_of, plan_of, run_script, script_context


def word(parts: Word) -> str:
    out = []
    for part in parts:
        if isinstance(part, Lit):
            out.append(f"'{part.text}'" if part.quoted else part.text)
            continue
        if isinstance(part, Param):
            arg = "" if part.arg is None else word(part.arg)
            if part.op.startswith("/"):  # ${NAME/PATTERN/STRING}: the pattern and the string apart
                arg = f"<{arg}>/<{word(part.replacement)}>"
            text = f"${{#{part.name}}}" if part.op == "len" else f"${{{part.name}{part.op}{arg}}}"
        elif isinstance(part, Sub):
            text = f"$({part.text})@{part.line}"
        else:
            assert isinstance(part, Arith)
            text = f"$(({part.text}))"
        out.append(f'"{text}"' if part.quoted else text)
    return "".join(out)


def redirect(item: Redirect) -> str:
    text = ("" if item.fd is None else str(item.fd)) + item.op + word(item.target)
    if item.body is not None:
        text += ("[quoted]" if item.body_quoted else "") + repr(item.body)
    return text


def sequence(items: Sequence) -> str:
    shown = []
    for and_or in items.items:
        pipes = [and_or.first, *(p for _, p in and_or.rest)]
        texts = [("! " if p.negated else "") + " | ".join(command(c) for c in p.commands) for p in pipes]
        text = texts[0] + "".join(f" {op} {t}" for (op, _), t in zip(and_or.rest, texts[1:]))
        shown.append(text + (" &" if and_or.background else ""))
    return "; ".join(shown)


def command(item: Command) -> str:
    node = item.node
    if isinstance(node, Simple):
        body = " ".join([*(f"{name}={word(value)}" for name, value in node.assignments),
                         *(word(w) for w in node.words), *(redirect(r) for r in node.redirects)])
    elif isinstance(node, If):
        body = " ".join(("if" if index == 0 else "elif") + f" {sequence(test)} then {sequence(then)}"
                        for index, (test, then) in enumerate(node.branches))
        body += (f" else {sequence(node.orelse)}" if node.orelse is not None else "") + " fi"
    elif isinstance(node, For):
        words = "" if node.words is None else " in " + " ".join(word(w) for w in node.words)
        body = f"for {node.name}{words} do {sequence(node.body)} done"
    elif isinstance(node, Loop):
        body = ("until" if node.until else "while") + f" {sequence(node.condition)} do {sequence(node.body)} done"
    elif isinstance(node, Case):
        body = f"case {word(node.subject)} in " + " ".join(
            "|".join(word(p) for p in patterns) + f") {sequence(then)} {ending}"
            for patterns, then, ending in node.items) + " esac"
    elif isinstance(node, Group):
        body = f"( {sequence(node.body)} )" if node.subshell else f"{{ {sequence(node.body)} }}"
    else:
        assert isinstance(node, FunctionDef)
        body = f"{node.name}() {command(node.body)}"
    return f"{node.line}:{body}" + "".join(" " + redirect(r) for r in item.redirects)


def show(script: str) -> str:
    return sequence(parse_script(script))


def test_a_script_of_blank_lines_has_no_commands() -> None:
    # An install script (or RUN text) that is only line breaks: each is a newline token, read once, and nothing runs.
    assert [token.kind for token in Lexer("\n\n").run()] == ["newline", "newline", "eof"]
    assert parse_script("\n\n").items == ()


def test_a_here_document_ends_at_a_delimiter_on_the_last_line_without_a_line_break() -> None:
    # A vendor script (or RUN text) whose closing EOF is its last line with no line break after it: sh and bash
    # end the body there. The body is one long line, as ``base64 -w0`` of a wheel writes it.
    payload = "UEsDBBQAAAAIAA" * 20_000
    tokens = Lexer(f"base64 -d > /opt/vendor.whl <<EOF\n{payload}\nEOF").run()
    assert [token.kind for token in tokens] == ["word", "word", "op", "word", "op", "heredoc", "newline", "eof"]
    assert tokens[5].redirect_body == [payload]


@pytest.mark.parametrize(("script", "tree"), [
    # Quoting: each part keeps whether it was quoted; a backslash quotes the character after it.
    ("echo a'b c'\"d $E\"\\f", "1:echo a'b c''d '\"${E}\"'f'"),
    ("echo $'a\\nb\\tc\\\\d\\'e\\\"f\\q\\a\\r\\e'", "1:echo 'a\nb\tc\\d'e\"f\\q\a\r\x1b'"),
    ("echo \"$'a'\" '$b' $ \"$\"", "1:echo '$'''a'' '$b' $ '$'"),
    ("echo ''\"\" x''", "1:echo '''' x''"),
    # Command substitution: backquotes unescape \\ \$ \` only; $( ) finds its own ')' past quotes and nesting.
    ("D=`dirname \\`pwd\\``\necho `echo \\$HOME \\\\ \\x`", "1:D=$(dirname `pwd`)@1; 2:echo $(echo $HOME \\ \\x)@2"),
    ("echo $(echo \")\") $(echo ')') $(echo \\)) $(a $(b)) $( (c) )",
     "1:echo $(echo \")\")@1 $(echo ')')@1 $(echo \\))@1 $(a $(b))@1 $( (c) )@1"),
    ("echo $(echo \"a\\\"b)\") $(( (1 + 2) * 3 ))", "1:echo $(echo \"a\\\"b)\")@1 $(( (1 + 2) * 3 ))"),
    ("echo \"$(pwd)\" \"`pwd`\" \"$((1 + 2))\" \"${A:-\"q\"}\"", "1:echo \"$(pwd)@1\" \"$(pwd)@1\" \"$((1 + 2))\" \"${A:-'q'}\""),
    # Parameters: every operator, special parameters, and a '$' that starts none.
    ("echo ${A} ${#} ${#A} ${10} ${@} ${A:-b} ${A:=b} ${A:+b} ${A:?b} ${A-b} ${A=b} ${A+b} ${A?b}",
     "1:echo ${A} ${#} ${#A} ${10} ${@} ${A:-b} ${A:=b} ${A:+b} ${A:?b} ${A-b} ${A=b} ${A+b} ${A?b}"),
    ("echo ${A#b} ${A##b} ${A%b} ${A%%b} ${A/b/c} ${A//b/c} ${A:1:2} ${BASH_SOURCE[0]} ${#@}",
     "1:echo ${A#b} ${A##b} ${A%b} ${A%%b} ${A/<b>/<c>} ${A//<b>/<c>} ${A:1:2} ${BASH_SOURCE[0]} ${#@}"),
    # bash's substitution splits at the first unquoted '/' (an escaped or quoted one is the pattern's); an
    # anchor follows a single '/'; the case changes take an optional pattern.
    ("echo ${A//\\//_} ${A/'/'/x/y} ${A/#p/q} ${A/%s} ${A/b} ${A^^} ${A^} ${A,,} ${A,} ${A^^[a]}",
     "1:echo ${A//<'/'>/<_>} ${A/<'/'>/<x/y>} ${A/#<p>/<q>} ${A/%<s>/<>} ${A/<b>/<>} ${A^^} ${A^} ${A,,} ${A,} ${A^^[a]}"),
    # Inside double quotes a pattern's own characters are still a pattern; a default's are quoted.
    ("echo \"${A#*/}\" \"${A:-*}\"", "1:echo \"${A#*/}\" \"${A:-'*'}\""),
    # A subscript ends at its own ']', not at a later one on the line.
    ("[ \"${BASH_SOURCE[0]}\" = \"$0\" ] && main \"$@\"", "1:[ \"${BASH_SOURCE[0]}\" = \"${0}\" ] && 1:main \"${@}\""),
    # ...nor at an earlier one: a test's ']' before it on the line is not the subscript's.
    ("[ -n \"$DEBUG\" ] && echo \"${BASH_SOURCE[0]}\"", "1:[ -n \"${DEBUG}\" ] && 1:echo \"${BASH_SOURCE[0]}\""),
    ("echo $A$B ${A}x $$ $? $# $1x $12 $- $! $0 $@ \"$*\" $_x", "1:echo ${A}${B} ${A}x ${$} ${?} ${#} ${1}x ${1}2 ${-} ${!} ${0} ${@} \"${*}\" ${_x}"),
    # Here-documents: the body starts on the next line; a quoted delimiter (any quoting) turns expansion off.
    ("cat << EOF\nbody $A\nEOF\necho after", "1:cat <<EOF'body $A\\n'; 4:echo after"),
    ("cat <<-EOF\n\tindented\n\t\tEOF\necho after", "1:cat <<-EOF'indented\\n'; 4:echo after"),
    ("cat <<-EOF\n  EOF\n\tEOF\necho after", "1:cat <<-EOF'  EOF\\n'; 4:echo after"),
    # Without the '-' a body keeps its tabs, and a tab-indented delimiter is a body line, not the end.
    ("cat <<EOF\n\tkept\n\tEOF\nEOF\necho after", "1:cat <<EOF'\\tkept\\n\\tEOF\\n'; 5:echo after"),
    ("cat <<\"EOF\"\n$A\nEOF", "1:cat <<'EOF'[quoted]'$A\\n'"),
    ("cat <<\\EOF\n$A\nEOF", "1:cat <<'E'OF[quoted]'$A\\n'"),
    ("cat <<'E F'\n$A\nE F", "1:cat <<'E F'[quoted]'$A\\n'"),
    ("cat <<\tEOF\nb\n EOF\nEOF", "1:cat <<EOF'b\\n EOF\\n'"),
    ("cat <<A <<B\none\nA\ntwo\nB\necho x", "1:cat <<A'one\\n' <<B'two\\n'; 6:echo x"),
    ("cat <<EOF\nEOF\necho x", "1:cat <<EOF''; 3:echo x"),
    ("cat <<EOF; echo same\nbody\nEOF\necho next", "1:cat <<EOF'body\\n'; 1:echo same; 4:echo next"),
    # Redirections: a number right before < or > is a file descriptor; any other word is an argument.
    ("echo 2>x a2>y 2 >z 3<>v >>w <in >|u &>n &>>m 2>&1 <<<str <&0",
     "1:echo a2 2 2>x >y >z 3<>v >>w <in >|u &>n &>>m 2>&1 <<<str <&0"),
    # A redirection may come first, before the command word, numbered or not.
    ("2>/dev/null rm -rf /tmp/build\n>/tmp/log echo done", "1:rm -rf /tmp/build 2>/dev/null; 2:echo done >/tmp/log"),
    ("{ a\n} > out 2>&1", "1:{ 1:a } >out 2>&1"),
    ("while read x; do echo $x; done < file", "1:while 1:read x do 1:echo ${x} done <file"),
    # Lists, pipelines, background jobs; an operator at the end of a line continues the list.
    ("a &\nb; c & d", "1:a &; 2:b; 2:c &; 2:d"),
    ("a ||\n  b &&\n  c |\n  d |& e", "1:a || 2:b && 3:c | 4:d | 4:e"),
    ("! a | b; !c", "! 1:a | 1:b; 1:!c"),
    # Assignments: only NAME= (or NAME+=) before the command word; anything else is a word.
    ("A=1\nB=\"x y\" C=$(pwd) cmd arg D=2\n'E'=3 e\nF+=f\n1A=2 g\nA=b=c", 
     "1:A=1; 2:B='x y' C=$(pwd)@2 cmd arg D=2; 3:'E'=3 e; 4:F+=f; 5:1A=2 g; 6:A=b=c"),
    ("A=$B\"c\"$(d)", "1:A=${B}'c'$(d)@1"),
    # Compound commands.
    ("if a\nthen b\nelif c; then d\nelse e\nfi", "1:if 1:a then 2:b elif 3:c then 3:d else 4:e fi"),
    ("if a; then b; fi > /dev/null 2>&1", "1:if 1:a then 1:b fi >/dev/null 2>&1"),
    ("for x\ndo\n  echo $x\ndone", "1:for x do 3:echo ${x} done"),
    ("for x in a \"b c\"\ndo echo $x; done", "1:for x in a 'b c' do 2:echo ${x} done"),
    ("for x in; do echo $x; done", "1:for x in  do 1:echo ${x} done"),
    ("for x do echo $x; done", "1:for x do 1:echo ${x} done"),
    ("for x\nin a; do :; done", "1:for x in a do 2:: done"),
    ("while a; do b; done; until c\ndo d; done", "1:while 1:a do 1:b done; 1:until 1:c do 2:d done"),
    ("case $x in (a) one;; b|c) two;;\n*) three\nesac", "1:case ${x} in a) 1:one ;; b|c) 1:two ;; *) 2:three ;; esac"),
    ("case $x\nin\n  a) ;;\n  b) x ;&\n  c) y\nesac", "1:case ${x} in a)  ;; b) 4:x ;& c) 5:y ;; esac"),
    ("case x in esac", "1:case x in  esac"),
    ("{ a; b; } && ( c ) || ! d | e &", "1:{ 1:a; 1:b } && 1:( 1:c ) || ! 1:d | 1:e &"),
    ("f () { a; }\nfunction g() { b; }\nfunction h { c; }\nk() ( d ) > log\nm()\n{\n  e\n}",
     "1:f() 1:{ 1:a }; 2:g() 2:{ 2:b }; 3:h() 3:{ 3:c }; 4:k() 4:( 4:d ) >log; 5:m() 6:{ 7:e }"),
    # [[ ]]: && || ( ) < > inside are operands of the test, up to the closing ]].
    ("[[ -d /x && $a == b || ( c ) ]] && echo y", "1:[[ -d /x '&&' ${a} == b '||' '(' c ')' ]] && 1:echo y"),
    ("[[ a < b ]] > out || [[ c ]]", "1:[[ a '<' b ]] >out || 1:[[ c ]]"),
    ("echo [[ a && b", "1:echo [[ a && 1:b"),
    # Comments and continuation lines.
    ("echo a # comment\n# whole line\necho b\\\nc d#e", "1:echo a; 3:echo bc d#e"),
    ("echo a\\\n  b\r\necho c\r\n", "1:echo a b; 3:echo c"),
    ("cp a \\\r\n  b\r\necho c\r\n", "1:cp a b; 3:echo c"),  # CRLF line endings: a continued line still continues
    # An escape that ends a double-quoted string inside $(...): the quote closes right after it, then the ')'.
    ('echo $(echo "a\\$") b', '1:echo $(echo "a\\$")@1 b'),
    ('echo "$(echo "a\\\\")" b', '1:echo "$(echo "a\\\\")@1" b'),
])
def test_a_script_parses_into_the_shells_grammar(script: str, tree: str) -> None:
    assert show(script) == tree


@pytest.mark.parametrize("script", [
    "echo 'a\nb'\necho c",  # a quoted line break
    "echo \"a\nb\"\necho c",
    "echo \"a\\\nb\"\necho c",  # a continued line inside double quotes
    "echo a\\\nb\necho c",  # ...and inside a word
    "X=$(echo a\necho b)\necho c",
    "X=`echo a\necho b`\necho c",
    "echo ${A:-'x\ny'}\necho c",
    "echo $'a\nb'\necho c",
    "echo $((1 +\n 2))\necho c",
    "echo \"$((1 +\n 2))\"\necho c",
    "cat <<EOF\na\nEOF\necho c",
])
def test_a_command_after_a_multi_line_word_is_numbered_by_its_own_line(script: str) -> None:
    assert show(script).rsplit("; ", 1)[1] == f"{script.count(chr(10)) + 1}:echo c"


def test_a_command_substitution_keeps_the_line_it_starts_on() -> None:
    (echo,) = parse_script("\n\necho \"$(\n pwd)\" `\nls`\n").items
    node = echo.first.commands[0].node
    assert isinstance(node, Simple)
    assert [(p.line, p.text) for w in node.words[1:] for p in w if isinstance(p, Sub)] == [(3, "\n pwd"), (4, "\nls")]


def test_a_command_is_shown_on_one_line_and_clipped() -> None:
    (first, second) = parse_script("cp  a \\\n   b\\\n   c\necho " + "x" * 200 + "\n").items
    assert first.first.commands[0].text == "cp a b c"
    assert second.first.commands[0].text == "echo " + "x" * 112 + "..."
    assert len(second.first.commands[0].text) == 120


def test_a_command_of_the_clip_length_is_shown_whole() -> None:
    command = "cp ops/paged_attn.py /usr/local/lib/python3.10/dist-packages/vllm/attention/ops/"
    command += "x" * (120 - len(command))  # exactly as long as a shown command may be
    (item,) = parse_script(command + "\n").items
    assert item.first.commands[0].text == command


def test_a_function_definition_is_shown_to_the_end_of_its_body() -> None:
    (item,) = parse_script('install_ops() {\n  cp ops.py "$1/"\n}\n').items
    assert item.first.commands[0].text == 'install_ops() { cp ops.py "$1/" }'


def test_a_function_definition_is_shown_from_its_own_name() -> None:
    (_, item) = parse_script('set -e\ninstall_ops() {\n  cp ops.py "$1/"\n}\n').items
    assert item.first.commands[0].text == 'install_ops() { cp ops.py "$1/" }'


def test_a_brace_group_is_shown_to_its_closing_brace() -> None:
    (_, item) = parse_script("set -e\n{ cd /opt/src && make install; } > build.log 2>&1\n").items
    assert item.first.commands[0].text == "{ cd /opt/src && make install; }"


def test_a_bash_array_element_is_assigned_under_its_whole_name() -> None:
    # PREFIX[0]=...: the name is PREFIX, whatever letters it ends with; ${PREFIX[0]} reads the element back.
    (item,) = parse_script("PREFIX[0]=/dest\n", bash=True).items
    node = item.first.commands[0].node
    assert isinstance(node, Simple) and [name for name, _ in node.assignments] == ["PREFIX[0]"]
    plan = run_script('PREFIX[0]=/dest\nPREFIX[1]+=/x.py\ncp x.py "${PREFIX[0]}${PREFIX[1]}"\n')
    assert in_dest(plan) == ["/dest/x.py"]


def test_a_script_starts_at_the_line_it_is_given() -> None:
    (item,) = parse_script("\r\n\ufeffecho a\n", first_line=7).items  # a RUN line numbers its commands from its own
    assert item.first.commands[0].line == 7 + 1


def test_blanks_alone_make_no_token() -> None:
    # A text of blanks (a RUN line's, a $( ) of nothing): bash and dash run nothing, and the lexer reads no word.
    assert [token.kind for token in Lexer(" \t").run()] == ["eof"]
    assert parse_script("\t \r").items == ()
    # bash and dash: $( ) is an empty substitution, so the copy lands at /dest/a.py.
    plan = run_script("V=$( )\ncp x.py /dest/a$V.py\n")
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()


def test_a_bash_arithmetic_command_keeps_its_line() -> None:
    (_, item) = parse_script("true\n(( N > 1 )) && echo y\n", bash=True).items
    assert (item.first.commands[0].line, item.first.commands[0].text) == (2, "(( N > 1 ))")
    # Its note (N is only the image's) is dated on that line.
    plan = run_script("true\n(( N > 1 )) && cp x.py /dest/a.py\n")
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("assumed", 2, "(( N > 1 ))")]


def test_a_command_after_a_multi_line_bash_arithmetic_command_is_numbered_by_its_own_line() -> None:
    # bash's $LINENO on the line after '(( 1 +' and ' 2 ))' is 3; the reader dates that command, and its note, there.
    (_, item) = parse_script("(( 1 +\n 2 ))\necho c\n", bash=True).items
    assert item.first.commands[0].line == 3
    plan = run_script("(( N >\n 1 ))\n(( M > 1 )) && cp x.py /dest/a.py\n")
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("assumed", 3, "(( M > 1 ))")]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_line_of_the_delimiter_and_trailing_blanks_does_not_end_a_here_document(run: str) -> None:
    # bash and dash end the body only at a line that is the delimiter alone: 'EOF ' is a body line, so the cp
    # after it is text cat reads, not a command, and the script goes on after the bare 'EOF'.
    plan = run_script("cat <<EOF >/dev/null\nEOF \t\ncp x.py /dest/a.py\nEOF\ncp x.py /dest/b.py\n", run)
    assert in_dest(plan) == ["/dest/b.py"] and plan.notes == ()


def test_an_unclosed_ansi_c_string_ending_in_a_control_escape_is_reported_on_its_own_line() -> None:
    # bash: "line 2: unexpected EOF while looking for matching `''"; the '\c' takes the line break after it as
    # the character it makes a control character of, so the string is still on line 2 when the script ends.
    plan = run_script("true\necho $'\\c\n")
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("stop", 2, "echo $'\\c")]


# -- what the grammar means to the reader --------------------------------------

def test_a_double_bracket_test_ends_at_its_closing_brackets() -> None:
    # [[ -d "$VLLM" ]] && cp ...: the copy is a command of its own, run when the test holds.
    image = image_of(script_context("VLLM=/made/vllm\nmkdir -p $VLLM\n[[ -d \"$VLLM\" ]] && cp x.py \"$VLLM/\"\n"
                                    "[[ -f ./x.py ]] || cp x.py /never/\n[[ ! -f ./x.py ]] || cp x.py /made/y.py\n"))
    assert {path: source for path, source in image.items() if path.startswith("/made/")} == {
        "/made/vllm/x.py": "s/x.py", "/made/y.py": "s/x.py"}


def test_a_case_item_ending_with_semicolon_ampersand_falls_through() -> None:
    plan = plan_of(script_context("A=b\ncase $A in\n  a) cp x.py /a/ ;;\n  b) cp x.py /b/ ;&\n  c) cp x.py /c/ ;&\n"
                                  "  d) cp x.py /d/ ;;\n  e) cp x.py /e/ ;;\nesac\n"))
    assert sorted(path for path in plan.image if not path.startswith("/w/")) == ["/b/x.py", "/c/x.py", "/d/x.py"]
    assert plan.notes == ()


def test_a_bash_case_item_ending_with_double_semicolon_ampersand_tries_the_next_patterns() -> None:
    # bash's ';;&': the items after are tested as if none had matched; ';&' after one runs the next body as is.
    script = ("case ab in\n  a*) cp x.py /dest/1.py ;;&\n  b*) cp x.py /dest/2.py ;;&\n  *b) cp x.py /dest/3.py ;&\n"
              "  q) cp x.py /dest/4.py ;;\n  *) cp x.py /dest/5.py ;;\nesac\n")
    plan = run_script(script, "bash i.sh")
    assert in_dest(plan) == ["/dest/1.py", "/dest/3.py", "/dest/4.py"] and plan.notes == ()


def test_double_semicolon_ampersand_is_a_syntax_error_outside_bash() -> None:
    plan = run_script("case a in a) cp x.py /dest/a.py;;& *) cp x.py /dest/s.py;; esac\n", "dash i.sh")
    assert in_dest(plan) == [] and [(n.kind, n.line) for n in plan.notes] == [("stop", 1)]


def test_a_case_whose_last_item_falls_through_ends_with_it() -> None:
    plan = plan_of(script_context("set -e\ncase x in\n  x) cp x.py /a/ ;&\nesac\ncp x.py /after/\n"))
    assert {"/a/x.py", "/after/x.py"} <= set(plan.image) and plan.notes == ()


def test_a_heredoc_fed_to_sh_is_run_as_a_script() -> None:
    plan = plan_of(script_context("D=/made\nsh <<EOF\nmkdir -p $D\ncp x.py $D/\nEOF\nsh <<'EOF'\ncp x.py $D/q.py\nEOF\n"))
    assert plan.image["/made/x.py"].source == "s/x.py"
    # Quoted, the body reaches sh as written: in the child shell $D is not exported, so only the base image's ENV
    # could set it.
    assert notes_of(plan, "unread") == [("s/i.sh", 7, "cp x.py $D/q.py")] and "/made/q.py" not in plan.image


def test_a_heredoc_fed_to_a_shell_behind_sudo_env_or_exec_is_run_as_a_script() -> None:
    plan = plan_of(script_context("sudo -E bash <<'EOF'\ncp x.py /opt/a.py\nEOF\n"
                                  "env PIP_NO_CACHE_DIR=1 sh <<'EOF'\ncp x.py /opt/b.py\nEOF\n"
                                  "exec bash <<'EOF'\ncp x.py /opt/c.py\nEOF\n"))
    assert sorted(path for path in plan.image if path.startswith("/opt/")) == ["/opt/a.py", "/opt/b.py", "/opt/c.py"]
    assert plan.notes == ()


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_an_escaped_backslash_at_the_start_of_a_backquote_is_one_backslash(run: str) -> None:
    # In `...` a \\ is one backslash: `\\echo a` runs \echo a, which is echo a (bash 5.2 and dash 0.5.12 print a).
    plan = run_script("x=`\\\\echo a`\ncp x.py /dest/$x.py\n", run)
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()
