"""Words expand as sh expands them: parameters, arithmetic, field splitting, quote removal, then globs.

``Scope`` below is the smallest shell ``expand`` can run in (the protocol
``shell_words.Scope``): variables from a dict, positional parameters, and a
command substitution that prints a fixed text. A value only the base image
could give is a marker; ``Unknowns.show`` spells it back as written.
"""

from __future__ import annotations

import re

import pytest

from patcher.shipping.shell_nodes import Simple, Sub
from patcher.shipping.shell_syntax import parse_script
from patcher.shipping.shell_words import Unbound, Unknowns, Word, expand, expand_one, is_known, pattern_regex
from tests.shipping.conftest import image_of, in_dest, plan_of, run_script, script_context


class Scope:
    def __init__(self, variables: dict[str, str] | None = None, arguments: list[str] | None = None,
                 output: str | None = "out\n\n") -> None:
        self.unknowns = Unknowns()
        self.variables = dict(variables or {})
        self.args = list(arguments or [])
        self.output = output

    def lookup(self, name: str) -> str | None:
        return self.variables.get(name)

    def missing(self, name: str) -> str:
        return self.unknowns.mark(f"${name}")

    def assign(self, name: str, value: str) -> None:
        self.variables[name] = value

    def arguments(self) -> list[str]:
        return self.args

    def substitute(self, sub: Sub) -> str:
        return self.unknowns.mark(f"$({sub.text})") if self.output is None else self.output.rstrip("\n")

    def bash_only(self, spelled: str) -> None:
        """Expanded as bash does."""

    bash_arithmetic = True


def words_of(text: str) -> tuple[Word, ...]:
    (item,) = parse_script(f"x {text}").items
    node = item.first.commands[0].node
    assert isinstance(node, Simple)
    return node.words[1:]


def fields(text: str, scope: Scope) -> list[tuple[str, str | None]]:
    """Each field of the words in ``text``: its text (markers spelled out) and its glob regex, if any."""
    return [(scope.unknowns.show(f.text), f.glob.pattern if f.glob else None)
            for w in words_of(text) for f in expand(w, scope)]


def one(text: str, scope: Scope) -> str:
    (w,) = words_of(text)
    return scope.unknowns.show(expand_one(w, scope))


SPACED = Scope({"A": "a b", "S": "  lead  trail  ", "E": "", "P": "*.py", "T": "a\tb\nc"}, ["1", "two words", ""])


@pytest.mark.parametrize(("text", "expected"), [
    ('"$A"', ["a b"]),
    ("$A", ["a", "b"]),
    ("$S", ["lead", "trail"]),
    ("x$S", ["x", "lead", "trail"]),
    ("$S.py", ["lead", "trail", ".py"]),
    ("$T", ["a", "b", "c"]),
    ("$E", []),
    ("$E$E", []),
    ('"$E"', [""]),
    ("''", [""]),
    ("x$E", ["x"]),
    ("$NONE_SET", ["$NONE_SET"]),
    ('"$@"', ["1", "two words", ""]),
    ('"x$@y"', ["x1", "two words", "y"]),
    ("$@", ["1", "two", "words"]),
    ("$*", ["1", "two", "words"]),
    ('"$*"', ["1 two words "]),
    ("$(cmd)", ["out"]),
    ('"$(cmd)"', ["out"]),
    ("a'b c'd", ["ab cd"]),
])
def test_fields_split_where_unquoted_expansions_hold_blanks(text: str, expected: list[str]) -> None:
    assert [f for f, _ in fields(text, SPACED)] == expected


def test_quoted_at_with_no_arguments_gives_no_field() -> None:
    assert fields('"$@" "$*"', Scope()) == [("", None)]


@pytest.mark.parametrize(("text", "regex"), [
    ("*.py", r"[^/]*\.py"),
    ("a?c", r"a[^/]c"),
    ("[ab].py", r"[ab]\.py"),
    ("[!ab]x", r"[^ab]x"),
    ("[^ab]x", r"[^ab]x"),
    ("[]a]x", r"[]a]x"),
    ("$B", r"[a\\]x"),
    ("[ab", None),  # a '[' with no ']' after it is a letter: no pattern (the word stays as written)
    ("[", None),
    ('"$D"/*.py', r"a\ b/[^/]*\.py"),
    ("$P", r"[^/]*\.py"),
    ("x/$P", r"x/[^/]*\.py"),
])
def test_unquoted_glob_characters_make_a_pattern(text: str, regex: str | None) -> None:
    scope = Scope({"D": "a b", "P": "*.py", "B": "[a\\]x"})
    ((_, found),) = fields(text, scope)
    assert found == regex


@pytest.mark.parametrize("text", ['"*.py"', "'a?c'", "\\*.py", '"$P"', "plain.py", "a\\[b]"])
def test_quoted_glob_characters_are_plain_text(text: str) -> None:
    ((_, found),) = fields(text, Scope({"P": "*.py"}))
    assert found is None


@pytest.mark.parametrize(("text", "expected"), [
    ("${A:-d}", "a b"), ("${E:-d}", "d"), ("${N:-d}", "d"),
    ("${A-d}", "a b"), ("${E-d}", ""), ("${N-d}", "d"),
    ("${A:+d}", "d"), ("${E:+d}", ""), ("${N:+d}", ""),
    ("${A+d}", "d"), ("${E+d}", "d"), ("${N+d}", ""),
    ("${A:?m}", "a b"), ("${N?m}", "${N?...}"), ("${E?m}", ""),
    ("${N:-$A}", "a b"), ("${N:-\"$A\"x}", "a bx"), ("${A:+${B:-in}}", "in"),
    ("${#A}", "3"), ("${#E}", "0"), ("${#N}", "${#N}"), ("${#U}", "${#U}"),
    ("${F#*/}", "b/c.tar.gz"), ("${F##*/}", "c.tar.gz"), ("${F%.*}", "a/b/c.tar"), ("${F%%.*}", "a/b/c"),
    ("${F#x}", "a/b/c.tar.gz"), ("${F%x}", "a/b/c.tar.gz"), ("${F#a/b/c.tar.gz}", ""), ("${F%%*}", ""),
    ("${F#}", "a/b/c.tar.gz"), ("${F##}", "a/b/c.tar.gz"), ("${F%}", "a/b/c.tar.gz"),
    ("${F/b/B}", "a/B/c.tar.gz"), ("${G/o/0}", "f0o"), ("${G//o/0}", "f00"), ("${G//o}", "f"), ("${G/x/y}", "foo"),
    ("${F:2}", "b/c.tar.gz"), ("${F:2:3}", "b/c"), ("${F:0:1}", "a"), ("${F:x}", "${F:...}"),
    ("${N#x}", ""), ("${N/a/b}", ""), ("${U#*/}", "${U#...}"), ("${U%%x}", "${U%%...}"),
    ("$N", "$N"), ("${N}", "$N"),
])
def test_parameter_operators_follow_the_shell(text: str, expected: str) -> None:
    scope = Scope({"A": "a b", "E": "", "F": "a/b/c.tar.gz", "G": "foo"})
    scope.variables["U"] = "/x" + scope.unknowns.mark("$ROOT") + "/y"
    assert one(text, scope) == expected


def test_a_question_mark_expansion_of_an_empty_value_is_an_error() -> None:
    with pytest.raises(Unbound, match="E"):
        one("${E:?m}", Scope({"E": ""}))


def test_a_question_mark_expansion_says_the_value_is_empty() -> None:
    # bash: "E: parameter null or not set"; the reader says which of the two it is.
    with pytest.raises(Unbound) as raised:
        one("${E:?}", Scope({"E": ""}))
    assert raised.value.reason == "$E is empty, so ${E:?} ends the shell here"


def test_a_length_at_the_start_of_a_here_document_expands_to_the_values_length() -> None:
    # bash 5.2 and dash 0.5.12 both read "3" from the body "${#X}": only the length, nothing of the braces after it.
    for run in ("bash i.sh", "dash i.sh"):
        plan = run_script("X=abc\nread N <<EOF\n${#X}\nEOF\ncp x.py /dest/$N.py\n", run)
        assert in_dest(plan) == ["/dest/3.py"] and plan.notes == ()


# Each expected value is what bash 5.2.15 printed for the same expansion.
@pytest.mark.parametrize(("text", "expected"), [
    ("${Z//\\//_}", "sub_y.py"), ("${Z//'/'/_}", "sub_y.py"), ("${Z/sub\\//}", "y.py"), ("${Z//y/z}", "sub/z.pz"),
    ("${X//}", "abc"), ("${X///y}", "abc"), ("${X/#/P}", "Pabc"), ("${X/%/S}", "abcS"), ("${X//b*/Z}", "aZ"),
    ("${X//[ac]/_}", "_b_"), ('${X/"*"/Q}', "abc"), ('${S/"*"/Q}', "aQc"), ("${S//\\*/Q}", "aQc"),
    ("${Z/y/\\&}", "sub/&.py"), ("${E//a*/x}", "x"), ("${E//?/x}", "xxx"), ("${E/#a/x}", "xaa"),
    ("${E/%a/x}", "aax"), ("${P// /_}", "x_y"), ("${Q/#/P}", "P"), ("${N/#/P}", ""),
    ("${Z^^}", "SUB/Y.PY"), ("${Z^}", "Sub/y.py"), ("${Z,,}", "sub/y.py"), ("${C,}", "aBC"), ("${C,,}", "abc"),
    ('${S%"*"c}', "a"), ('${S%"*c"}', "a"), ("${S#a\\*}", "c"),
    # Inside double quotes the pattern is still one; only its own quotes make it literal.
    ('"${Z##*/}"', "y.py"), ('"${Z/*/x}"', "x"), ('"${Z/"*"/x}"', "sub/y.py"), ('"${Z%%/*}"', "sub"),
    # bash 5.2 puts the match where an unquoted '&' stands, 5.1 does not: the image's bash decides.
    ("${Z/y/&&}", "${Z/...}"),
    # A case change limited by a pattern, or of a letter past ASCII (the locale decides), is not followed.
    ("${Z^^[a-m]}", "${Z^^...}"), ("${U^^}", "${U^^...}"),
])
def test_bash_pattern_substitution_and_case_changes_follow_bash(text: str, expected: str) -> None:
    scope = Scope({"Z": "sub/y.py", "X": "abc", "E": "aaa", "S": "a*c", "Q": "", "P": "x y", "C": "ABC",
                   "U": "stra\u00dfe"})
    assert one(text, scope) == expected


def test_a_pattern_matches_across_a_newline_in_the_value() -> None:
    # '*' matches any character, a newline too (dash and bash: the last '/' and all before it go).
    assert one("${V##*/}", Scope({"V": "a\nb/c"})) == "c"
    assert one("${V%/*}", Scope({"V": "a/b\nc"})) == "a"


# Inside double quotes a backslash escapes only $ ` " \ and a newline; before any other character it stays.
@pytest.mark.parametrize(("text", "expected"), [
    ('"a\\"b"', 'a"b'), ('"\\$HOME"', "$HOME"), ('"a\\b"', "a\\b"), ('"x\\`y"', "x`y"), ('"a\\\\b"', "a\\b"),
])
def test_a_backslash_in_double_quotes_escapes_what_sh_says(text: str, expected: str) -> None:
    assert one(text, Scope({"HOME": "/root"})) == expected


def test_a_pattern_that_could_take_too_long_to_match_gives_an_unknown_value() -> None:
    # Each '*' multiplies the work by the value's length: this one would not end.
    scope = Scope({"L": "a" * 60_000})
    assert one("${L//*a*a*a*b/}", scope) == "${L//...}"
    assert one("${L%%*a*a*b}", scope) == "${L%%...}"
    assert one("${L//a/}", scope) == ""  # a pattern without '*' is matched in one pass


def test_assigning_defaults_set_the_variable() -> None:
    scope = Scope({"E": "", "K": "k"})
    assert one("${E:=a}${N=b}${K:=c}${M:-d}${E2=}", scope) == "abkd"
    assert scope.variables == {"E": "a", "K": "k", "N": "b", "E2": ""}


@pytest.mark.parametrize(("text", "expected"), [
    ("$((1 + 2 * 3))", "7"), ("$(( (1 + 2) * 3 ))", "9"), ("$((7 / 2))", "3"), ("$((-7 / 2))", "-3"),
    ("$((7 % 3))", "1"), ("$((-7 % 3))", "-1"), ("$((7 % -3))", "1"), ("$((-(4 - 6)))", "2"), ("$((+5))", "5"),
    ("$((N + 1))", "42"), ("$(($N + 1))", "42"), ("$((${N} * 2))", "82"), ("$((SPACED + 1))", "6"),
    ("$((9223372036854775807 / 1))", "9223372036854775807"),
    ("$((T + 1))", "$((T + 1))"), ("$((U + 1))", "$((U + 1))"), ("$((1 / 0))", "$((1 / 0))"),
    ("$((2 ** 3))", "$((2 ** 3))"), ("$((1 < 2))", "1"), ("$((N >= 42))", "0"), ("$((1 < 2 && N == 41))", "1"),
    ("$((0 || 0))", "0"), ("$((1 < 2 < 3))", "$((1 < 2 < 3))"), ("$((1 & 3))", "$((1 & 3))"), ("$((!1))", "$((!1))"),
    ("$((E + 1))", "1"),  # an empty variable is 0 ("$((7 // 2))", "$((7 // 2))"),
    ("$((1.5))", "$((1.5))"), ("$((18446744073709551616))", "$((18446744073709551616))"),
    ("$((4294967296 * 4294967296))", "$((4294967296 * 4294967296))"), ("$((x y))", "$((x y))"),
    ("$((0x${N}))", "65"),  # parameters expand first: 0x41 is hexadecimal
    ("$((0x10 + 1))", "17"), ("$((0X1f))", "31"), ("$((010))", "8"), ("$((OCT + 1))", "9"), ("$((0))", "0"),
    ("$((08))", "$((08))"), ("$((0x))", "$((0x))"),  # not numbers: sh fails
])
def test_arithmetic_over_integers_and_known_variables(text: str, expected: str) -> None:
    scope = Scope({"N": "41", "SPACED": " 5 ", "T": "text", "OCT": "010", "E": ""})
    assert one(text, scope) == expected


def test_a_command_substitution_loses_its_trailing_newlines_and_an_unknown_one_stays_unknown() -> None:
    assert one("$(cmd)/x", Scope(output="/opt\n\n")) == "/opt/x"
    scope = Scope(output=None)
    text = expand_one(words_of("$(python3 -c 'print(1)')/x")[0], scope)
    assert not is_known(text) and scope.unknowns.show(text) == "$(python3 -c 'print(1)')/x"


def test_an_unknown_value_is_one_marker_spelled_back_as_written() -> None:
    unknowns = Unknowns()
    first, second = unknowns.mark("$A"), unknowns.mark("${B}")
    text = f"/x{first}/y{second}{first}"
    assert not is_known(text) and is_known("/x/y") and is_known("")
    assert unknowns.show(text) == "/x$A/y${B}$A"
    assert re.fullmatch("\x00\\d+\x01", first) and first != second


HALF = "x" * 40_000  # two of it are past the 65,536 characters the reader keeps of a word


def past_limit(size: str) -> str:
    return f"(a word of {size} characters, past the 65,536 the reader keeps)"


@pytest.mark.parametrize(("text", "expanded"), [
    ("$A$A", [(past_limit("80,000"), None)]),
    ("$A/$A", [(past_limit("80,001"), None)]),
    ('"$A"-$A', [(past_limit("80,001"), None)]),
    ('"$A" $A$A', [(HALF, None), (past_limit("80,000"), None)]),  # each word is held to the limit on its own
])
def test_a_word_past_the_readers_limit_is_an_unknown_value_that_says_its_size(
        text: str, expanded: list[tuple[str, None]]) -> None:
    assert fields(text, Scope({"A": HALF})) == expanded
    if " " not in text:  # an assignment, a case word, a redirection target: the same
        assert one(text, Scope({"A": HALF})) == expanded[0][0]


def test_a_variable_doubled_past_the_readers_limit_makes_the_paths_it_names_unread() -> None:
    plan = plan_of(script_context("A=xxxxxxxx\n" + "A=$A$A\n" * 14 + 'cp x.py "/opt/$A/x.py"\n'))
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 16, "cp /opt/(a word of 131,072 characters, past the 65,536 the reader keeps)/x.py: a path that "
                       "depends on a value the reader cannot work out", ("/opt",))]


@pytest.mark.parametrize(("pattern", "value", "matches"), [
    ("*.py", "a.py", True), ("*.py", "a/b.py", True), ("a?", "ab", True), ("a?", "abc", False),
    ("[ab]*", "b", True), ("[!ab]*", "b", False), ("x86_64", "x86_64", True), ("x86*", "aarch64", False),
    ("[Xx]11", "x11", True),  # only a leading '!' or '^' negates a bracket: 'X' is one of its letters
])
def test_case_patterns_match_the_whole_value(pattern: str, value: str, matches: bool) -> None:
    (word,) = words_of(pattern)
    regex = pattern_regex(word, Scope(), len(value))
    assert regex is not None and (regex.fullmatch(value) is not None) is matches


# -- the same, through a script ------------------------------------------------

def test_a_script_copies_through_expanded_names() -> None:
    image = image_of(script_context(
        "F=./sub/y.py\nN=$((1 + 1))\nset -- one 'two three'\nmkdir -p /made\n"
        "cp \"$F\" \"/made/${F##*/}.$N\"\n"
        "cp ${F%/*}/deep/z.py \"/made/$2.py\"\n"
        "for f in *.py sub/*.py; do cp \"$f\" /made/globbed-${f##*/}; done\n"
        "for f in \"$@\"; do cp x.py \"/made/arg-$f.py\"; done\n"
        "for f in no*match.txt; do cp x.py \"/made/[$f]\"; done\n"))
    assert {path: source for path, source in image.items() if path.startswith("/made/")} == {
        "/made/y.py.2": "s/sub/y.py", "/made/two three.py": "s/sub/deep/z.py",
        "/made/globbed-x.py": "s/x.py", "/made/globbed-y.py": "s/sub/y.py",
        "/made/arg-one.py": "s/x.py", "/made/arg-two three.py": "s/x.py", "/made/[no*match.txt]": "s/x.py"}


@pytest.mark.parametrize(("command", "placed"), [
    ("cp *.py /o/", {"/o/x.py": "s/x.py"}),
    ("cp ./*.py /o/", {"/o/x.py": "s/x.py"}),  # matches are spelled with the folders written before the pattern
    ("cd sub\ncp ../*.py /o/", {"/o/x.py": "s/x.py"}),
    ("cp /w/s/*.py /o/", {"/o/x.py": "s/x.py"}),
    ("cp /w/*/x.py /o/", {"/o/x.py": "s/x.py"}),
    ("cp /w*/s/x.py /o/", {"/o/x.py": "s/x.py"}),  # a pattern in a folder of / itself
    ("cd /\nfor f in w*/s/x.py; do cp $f /o/; done", {"/o/x.py": "s/x.py"}),
    ("cp s?b/y.py /o/", {"/o/y.py": "s/sub/y.py"}),
    ("cp [xy].py /o/", {"/o/x.py": "s/x.py"}),
    ("cp -r s* /o/", {"/o/sub/deep/z.py": "s/sub/deep/z.py", "/o/sub/w.txt": "s/sub/w.txt", "/o/sub/y.py": "s/sub/y.py",
                      "/o/sub/.hot/q.py": "s/sub/.hot/q.py"}),  # cp -r copies a folder's hidden files
    ("cp .h* /o/", {"/o/.hidden.py": "s/.hidden.py"}),  # a leading dot in the pattern matches hidden files...
    ("cp -r ./.h*.py /o/", {"/o/.hidden.py": "s/.hidden.py"}),
    ("cp ?hidden.py /o/ || true", {}),  # ...a wildcard does not
    ("cp -r sub/?ot /o/ || true", {}),
    ("for f in sub/*; do cp -r $f /o/; done", {"/o/deep/z.py": "s/sub/deep/z.py", "/o/w.txt": "s/sub/w.txt",
                                                "/o/y.py": "s/sub/y.py"}),
    ("for f in /w/s/sub/*.py; do cp $f /o/; done", {"/o/y.py": "s/sub/y.py"}),
    ("for f in /w/s/*/*.py; do cp $f /o/; done", {"/o/y.py": "s/sub/y.py"}),
])
def test_a_glob_matches_what_the_build_placed_as_sh_would_spell_it(command: str, placed: dict[str, str]) -> None:
    plan = plan_of(script_context(f"mkdir /o\n{command}\n", files={"s/.hidden.py": "", "s/sub/w.txt": "",
                                                                    "s/sub/.hot/q.py": ""}))
    assert {path: p.source for path, p in plan.image.items() if path.startswith("/o/")} == placed
    assert not [n for n in plan.notes if n.kind != "fails"]


def test_a_glob_that_matches_nothing_stays_as_written() -> None:
    plan = plan_of(script_context("mkdir /o\ncp no*.py /o/\ncp \"*.py\" /o/\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes][:2] == [
        ("fails", 2, "/w/s/no*.py does not exist at this point of the build, so nothing is copied"),
        ("fails", 3, "/w/s/*.py does not exist at this point of the build, so nothing is copied")]


@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_a_star_after_a_slash_does_not_match_a_hidden_name_in_that_folder(run: str) -> None:
    # bash 5.2 and dash 0.5.12: */*.py gives sub/y.py, not sub/.h.py.
    plan = run_script("cp */*.py /dest/\n", run, files={"s/sub/.h.py": ""})
    assert in_dest(plan) == ["/dest/y.py"] and plan.notes == ()
