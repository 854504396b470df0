"""Parameters are typed values, not text spliced into code.

A ``str`` parameter is written as a Python string literal, unless it
declares ``kind = "identifier"`` or ``kind = "expression"`` (then its value
is checked as one, with libcst, and written as code); a float refuses nan
and infinities unless it declares ``allow-nonfinite = true``; ``min`` and
``max`` bound an int or float and the length of a str; ``--set`` of a value
of the wrong type, or past a bound, is exit 2.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import pytest

from patcher.errors import PatchSetError
from patcher.patchset import load_patch_set
from tests.fixtures_vendor import VENDOR_ZIP


def _patch_set(tmp_path: Path, params: str, code: str = "x = {{ p }}") -> Path:
    """Write a set of one patch with ``params`` (TOML) whose one step writes ``code``."""
    folder = tmp_path / "typed" / "patches"
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / "templates").mkdir(exist_ok=True)
    (folder / "edit.toml").write_text(textwrap.dedent('''\
        id = "edit"
        description = "An edit"
        origin = "test"
        last-update = "2026-12-01"
        target = "x.py"
        scope = "f"
        ''') + textwrap.dedent(params) + "\n[[steps]]\nop = \"replace\"\npattern = \"x = 1\"\n"
        + f"code = '''{code}'''\n")
    (folder / "series").write_text("edit.toml\n")
    return folder


def _code(tmp_path: Path, params: str, code: str = "x = {{ p }}", overrides: tuple[str, ...] = ()) -> str:
    """The code the patch's step writes."""
    (patch,) = load_patch_set(_patch_set(tmp_path, params, code), overrides=list(overrides)).patches
    return str(patch.steps[0].code)


def _refused(tmp_path: Path, params: str, overrides: tuple[str, ...] = (), code: str = "x = {{ p }}") -> str:
    folder = _patch_set(tmp_path, params, code)
    with pytest.raises(PatchSetError) as refused:
        load_patch_set(folder, overrides=list(overrides))
    return str(refused.value).replace(str(folder / "edit.toml"), "edit.toml")


STR = '[params.p]\ntype = "str"\ndefault = "fast path"\n'


# str: a literal by default ----------------------------------------------------------

@pytest.mark.parametrize("value", [
    "x; import os",
    "x')\nimport os\nprint('",
    'a"b\'c\\\\d',
    "tab\there # not a comment",
    "\u00e9t\u00e9 \U0001f600",
    "",
])
def test_a_str_parameter_is_written_as_a_python_string_literal(tmp_path: Path, value: str) -> None:
    code = _code(tmp_path, STR, overrides=(f"edit.p={value}",))
    tree = ast.parse(code)
    (statement,) = tree.body  # one statement: nothing was injected
    assert isinstance(statement, ast.Assign)
    assert ast.literal_eval(statement.value) == value


def test_the_default_of_a_str_parameter_is_a_literal_too(tmp_path: Path) -> None:
    assert _code(tmp_path, STR, code="label = {{ p }}  # {{ p }}").strip() == "label = 'fast path'  # 'fast path'"


def test_a_template_compares_and_measures_a_str_parameter_as_its_value(tmp_path: Path) -> None:
    code = "{% if p == 'fast path' and p|length == 9 %}x = {{ p|upper }}{% endif %}"
    assert _code(tmp_path, STR, code=code).strip() == "x = 'FAST PATH'"


# str: identifier and expression kinds ---------------------------------------------------

IDENT = '[params.p]\ntype = "str"\nkind = "identifier"\ndefault = "fast_path"\n'
EXPR = '[params.p]\ntype = "str"\nkind = "expression"\ndefault = "a + b"\n'


def test_an_identifier_parameter_is_written_as_a_name(tmp_path: Path) -> None:
    assert _code(tmp_path, IDENT, code="x = {{ p }}()").strip() == "x = fast_path()"
    assert _code(tmp_path, IDENT, code="x = {{ p }}()", overrides=("edit.p=match",)).strip() == "x = match()"


@pytest.mark.parametrize(("value", "why"), [
    ("x; import os", "an identifier is ASCII letters, digits and '_', not starting with a digit"),
    ("1x", "an identifier is ASCII letters, digits and '_', not starting with a digit"),
    ("na\u00efve", "an identifier is ASCII letters, digits and '_', not starting with a digit"),
    ("class", "'class' is a keyword"),
    ("True", "'True' is a keyword"),
    ("", "an identifier is ASCII letters, digits and '_', not starting with a digit"),
    ("a\nb", "it must be one line of printable characters"),
])
def test_an_identifier_parameter_refuses_anything_else(tmp_path: Path, value: str, why: str) -> None:
    shown = value.replace("\n", " ")  # one error, one line
    assert _refused(tmp_path, IDENT, (f"edit.p={value}",)) == (
        f"--set edit.p={shown}: {value!r} is not a Python identifier: {why}")


def test_an_expression_parameter_is_one_operand_wherever_it_goes(tmp_path: Path) -> None:
    assert _code(tmp_path, EXPR, code="x = {{ p }} * 2").strip() == "x = (a + b) * 2"
    # A plain name and a dotted attribute are atoms too: written bare, never wrapped.
    for value in ("limit", "config.max_len", "f(a, b=1)", "a.b[0]", "(a + b)", "[1, 2]", "'s'", "12", "f'{n}-{m}'",
                  "..."):
        assert _code(tmp_path / value.replace("/", "_"), EXPR, code="x = {{ p }} * 2",
                     overrides=(f"edit.p={value}",)).strip() == f"x = {value} * 2"
    assert _code(tmp_path / "t", EXPR, code="x = {{ p }}", overrides=("edit.p=1, 2",)).strip() == "x = (1, 2)"


def test_an_expression_parameter_that_is_a_set_or_dict_display_is_written_bare(tmp_path: Path) -> None:
    # Braces make one operand already: a set, a dict and their comprehensions need no parentheses.
    for name, value in (("set", "{1, 2}"), ("dict", "{'a': 1}"), ("setcomp", "{n for n in ns}"),
                        ("dictcomp", "{n: 1 for n in ns}")):
        assert _code(tmp_path / name, EXPR, code="x = {{ p }} | y",
                     overrides=(f"edit.p={value}",)).strip() == f"x = {value} | y"


@pytest.mark.parametrize(("value", "why"), [
    ("a  # and the rest of the line", "it holds a comment, which would swallow the rest of the line"),
    ("a; import os", "it does not parse"),
    ("import os", "it does not parse"),
    ("(a\n+ b)", "it must be one line of printable characters"),
    ("a +", "it does not parse"),
])
def test_an_expression_parameter_refuses_anything_but_one_expression(tmp_path: Path, value: str, why: str) -> None:
    message = _refused(tmp_path, EXPR, (f"edit.p={value}",))
    shown = value.replace("\n", " ")  # one error, one line
    assert message.startswith(f"--set edit.p={shown}: {value!r} is not a Python expression: {why}")


def test_why_an_expression_does_not_parse_is_cut_at_120_characters(tmp_path: Path) -> None:
    # libcst lists every token it expected after "a;": its words, on one line, stop at 120 characters.
    message = _refused(tmp_path, EXPR, ("edit.p=a; import os",))
    prefix = "--set edit.p=a; import os: 'a; import os' is not a Python expression: it does not parse ("
    assert message.startswith(prefix) and message.endswith(")")
    why = message[len(prefix) : -1]
    assert why.startswith("Syntax Error @ 1:1.") and len(why) == 120


def test_a_bad_default_of_a_code_parameter_is_refused(tmp_path: Path) -> None:
    assert _refused(tmp_path, IDENT.replace('"fast_path"', '"fast path"')) == (
        "edit.toml: params.p.default: 'fast path' is not a Python identifier: an identifier is ASCII letters, "
        "digits and '_', not starting with a digit")


@pytest.mark.parametrize(("spec", "said"), [
    ('[params.p]\ntype = "int"\nkind = "identifier"\ndefault = 1\n',
     "'params.p.kind' is for str parameters: one of literal, identifier, expression (this one is int)"),
    ('[params.p]\ntype = "str"\nkind = "code"\ndefault = "x"\n',
     "'params.p.kind' is for str parameters: one of literal, identifier, expression"),
])
def test_kind_is_for_str_parameters_only(tmp_path: Path, spec: str, said: str) -> None:
    assert _refused(tmp_path, spec) == f"edit.toml: {said}"


# float: finite unless declared ---------------------------------------------------------------

FLOAT = '[params.p]\ntype = "float"\ndefault = 0.5\n'


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "+Infinity"[:4], "1e999"])
def test_a_float_parameter_refuses_nan_and_infinities(tmp_path: Path, value: str) -> None:
    message = _refused(tmp_path, FLOAT, (f"edit.p={value}",))
    assert message.startswith(f"--set edit.p={value}: ")
    assert "is not a finite number" in message or "too large for a float" in message


@pytest.mark.parametrize("default", ["nan", "inf", "-inf"])
def test_a_nonfinite_default_is_refused(tmp_path: Path, default: str) -> None:
    assert _refused(tmp_path, FLOAT.replace("0.5", default)) == (
        f"edit.toml: params.p.default: {float(default)!r} is not a finite number (give a number, or declare "
        "'allow-nonfinite = true' for 'p')")


def test_a_float_that_allows_nonfinite_values_writes_them_as_python(tmp_path: Path) -> None:
    spec = FLOAT + "allow-nonfinite = true\n"
    assert _code(tmp_path / "a", spec, overrides=("edit.p=nan",)).strip() == "x = float('nan')"
    assert _code(tmp_path / "b", spec, overrides=("edit.p=-inf",)).strip() == "x = float('-inf')"
    assert _code(tmp_path / "c", spec, overrides=("edit.p=0.1",)).strip() == "x = 0.1"
    bounded = spec + "max = 10\n"
    assert _refused(tmp_path / "d", bounded, ("edit.p=nan",)) == "--set edit.p=nan: nan is not within the bounds of 'p'"
    assert _refused(tmp_path / "e", bounded, ("edit.p=inf",)) == "--set edit.p=inf: inf is above the maximum 10"


# bounds for every type -----------------------------------------------------------------------


def test_min_and_max_bound_the_length_of_a_str(tmp_path: Path) -> None:
    spec = STR + "min = 1\nmax = 12\n"
    assert _code(tmp_path, spec, overrides=("edit.p=twelve chars",)).strip() == "x = 'twelve chars'"
    assert _refused(tmp_path / "a", spec, ("edit.p=thirteen char",)) == (
        "--set edit.p=thirteen char: 'thirteen char' is 13 characters long, above the maximum length 12")
    assert _refused(tmp_path / "b", spec, ("edit.p=",)) == (
        "--set edit.p=: '' is 0 characters long, below the minimum length 1")


@pytest.mark.parametrize(("spec", "said"), [
    ('[params.p]\ntype = "bool"\ndefault = true\nmax = 1\n', "'params.p.max': a bool parameter has no bounds"),
    ('[params.p]\ntype = "float"\ndefault = 1.0\nmax = nan\n', "'params.p.max' must be a finite number, not nan"),
    ('[params.p]\ntype = "int"\ndefault = 1\nmin = -inf\n', "'params.p.min' must be a finite number, not -inf"),
    ('[params.p]\ntype = "int"\ndefault = 1\nmax = "10"\n', "'params.p.max' must be a finite number, not '10'"),
    ('[params.p]\ntype = "int"\ndefault = 1\nmax = 1.5\n', "'params.p.max' bounds an int: a whole number, not 1.5"),
    ('[params.p]\ntype = "int"\ndefault = 5\nmin = 10\nmax = 1\n', "'params.p.min' (10) is above 'params.p.max' (1)"),
    ('[params.p]\ntype = "str"\ndefault = "a"\nmax = -1\n',
     "'params.p.max' bounds a str's length: a whole number >= 0, not -1"),
    ('[params.p]\ntype = "int"\ndefault = 1\nhelp = 3\n', "'params.p.help' must be a string"),
    ('[params.p-q]\ntype = "int"\ndefault = 1\n',
     "'params.p-q': a parameter name must be a plain name (letters, digits, '_')"),
])
def test_bad_bounds_are_refused(tmp_path: Path, spec: str, said: str) -> None:
    assert _refused(tmp_path, spec) == f"edit.toml: {said}"


# --set reads plain values of the declared type -----------------------------------------------

INT = '[params.p]\ntype = "int"\ndefault = 1\n'


@pytest.mark.parametrize("value", ["1_000", "\u0661\u0662", "0x10", "1e3", "2.0", "", "9" * 5000])
def test_set_refuses_an_int_spelled_otherwise_than_in_decimal(tmp_path: Path, value: str) -> None:
    assert _refused(tmp_path, INT, (f"edit.p={value}",)).startswith(f"--set edit.p={value[:40]}")


@pytest.mark.parametrize(("value", "number"), [("12", 12), ("-3", -3), (" 7 ", 7), ("+5", 5)])
def test_set_reads_a_decimal_int(tmp_path: Path, value: str, number: int) -> None:
    assert _code(tmp_path, INT, overrides=(f"edit.p={value}",)).strip() == f"x = {number}"


def test_set_reads_an_int_of_up_to_999_characters_and_refuses_a_longer_one(tmp_path: Path) -> None:
    # The length is checked before int() parses the text, whose cost grows
    # with the square of its length; the sign counts as a character.
    assert _code(tmp_path, INT, overrides=("edit.p=" + "9" * 999,)).strip() == "x = " + "9" * 999
    for value in ("9" * 1000, "-" + "9" * 999):
        said = f"--set edit.p={value}: expected int, got '{value[:76]}..."
        assert _refused(tmp_path / value[0], INT, (f"edit.p={value}",)) == said


def test_example_params_are_checked_against_their_parameter(tmp_path: Path) -> None:
    params = INT + "max = 10\n\n[[examples]]\nbefore = 'x = 1'\nparams = { p = 11 }\n"
    assert _refused(tmp_path, params) == "edit.toml: examples[1].params.p: 11 is above the maximum 10"
    wrong = INT + "\n[[examples]]\nbefore = 'x = 1'\nparams = { p = 'eleven' }\n"
    assert _refused(tmp_path / "b", wrong) == "edit.toml: examples[1].params.p: expected int, got 'eleven'"


# The bundled set, through the CLI -------------------------------------------------------------


@pytest.mark.parametrize(("setting", "said"), [
    ("three-tier-decode.large_threshold=49152", "49152 is above the maximum 32768"),
    ("three-tier-decode.small_max=32769", "32769 is above the maximum 32768"),
    ("three-tier-decode.small_max=8192.5", "expected int, got '8192.5'"),
    ("prefix-pregather.max_gather_tokens=nan", "expected int, got 'nan'"),
])
def test_set_past_a_bound_or_of_the_wrong_type_is_exit_2(cli: Any, setting: str, said: str) -> None:
    result = cli("apply", VENDOR_ZIP, "-o", "ctx.tar.gz", "--set", setting)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: --set {setting}: {said}"]
    assert not (cli.cwd / "ctx.tar.gz").exists()


def test_set_at_the_bound_applies(cli: Any) -> None:
    result = cli("apply", VENDOR_ZIP, "-o", "ctx.tar.gz", "--set", "three-tier-decode.small_max=32768")
    assert result.exit_code == 0, result.stderr
