"""Where the render budget draws its lines: operators, '~', str.format, loop filters, and the templates folder's reader.

Each case sits on one side of a line the budget draws (a text at the cap,
a width of twenty digits, a result the operator makes larger than its
operands); what a template still renders is what Jinja2's own sandbox
renders.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from patcher.patchset.folder import PatchFolder
from patcher.patchset.templates import PATCH_LIMITS, RenderLimits, TemplateFailure, make_environment, render
from tests.patchset.conftest import render_template

SMALL = RenderLimits(output=10_000, value=1000, steps=1000, seconds=10, int_bits=64)


def _refusal(source: str, values: dict[str, Any] | None = None, limits: RenderLimits = PATCH_LIMITS) -> str:
    with pytest.raises(TemplateFailure) as failed:
        render_template(source, values, limits)
    return str(failed.value)


def _jinja(source: str, values: dict[str, Any] | None = None) -> str:
    return ImmutableSandboxedEnvironment().from_string(source).render(values or {})


def _larger(what: str, cap: int) -> str:
    return f"template error at line 1: {what} would be larger than the {cap:,} characters a template value may hold"


# Operators ------------------------------------------------------------------------

# Each operator's result, when the template is within its budget, is Python's (and Jinja2's).
WITHIN = {
    # 'ab' * 300 is estimated from the text's length, 600 characters: within a cap of 1,000, on either side.
    "a short text repeated": ("{{ text * n }}|{{ n * text }}", {"text": "ab", "n": 300}, SMALL),
    # Two floats weigh 48 together, more than a cap of 40: only '+' adds its operands' weights.
    "two floats subtracted": ("{{ a - b }} {{ a * b }} {{ a / b }}", {"a": 2.5, "b": 0.5}, RenderLimits(
        output=1000, value=40, steps=100, seconds=10, int_bits=64)),
    # A power of zero or one has no bits to estimate from its base.
    "a power of zero or one": ("{{ 0 ** 2 }} {{ zero ** n }} {{ 1 ** n }} {{ (-1) ** n }}", {"zero": 0, "n": 5},
                               PATCH_LIMITS),
}


@pytest.mark.parametrize("name", sorted(WITHIN))
def test_an_operator_within_the_budget_renders_as_jinja_renders_it(name: str) -> None:
    source, values, limits = WITHIN[name]
    assert render_template(source, values, limits) == _jinja(source, values)


def test_an_operator_whose_result_outgrows_its_operands_is_refused_naming_it() -> None:
    # 1 / 3 weighs 24 (a float), its operands 2 each: the result, weighed
    # after, is refused under a cap of 20, naming the operator.
    limits = RenderLimits(output=1000, value=20, steps=100, seconds=10, int_bits=64)
    assert _refusal("{{ a / b }}", {"a": 1, "b": 3}, limits) == _larger("'/'", 20)
    # Two 64-bit integers fit a cap of 64 bits; their sum does not.
    assert _refusal("{{ a + a }}", {"a": 2**63}, SMALL) == (
        "template error at line 1: '+' would be an integer of more than 64 bits")
    assert render_template("{{ a + b }}", {"a": 2**63, "b": 2**63 - 1}, SMALL) == str(2**64 - 1)


def test_joining_with_tilde_is_refused_before_the_joined_text_is_made() -> None:
    text = "x" * 600
    assert render_template("{{ a ~ b }}", {"a": text, "b": "y" * 390}, SMALL) == text + "y" * 390
    assert _refusal("{{ a ~ b }}", {"a": text, "b": text}, SMALL) == _larger("the joined text", 1000)


def test_a_call_whose_result_outgrows_its_arguments_is_refused_naming_the_result() -> None:
    # Two texts of 600 characters fit a cap of 1,000 each, as arguments; the
    # dict made of both does not, and is refused as the call returns it.
    text = "x" * 600
    assert _refusal("{{ dict(a=t, b=t) }}", {"t": text}, SMALL) == _larger("what the call returns", 1000)
    assert _refusal("{% set d = dict(a=t, b=t) %}", {"t": text}, SMALL) == _larger("what the call returns", 1000)
    assert render_template("{{ dict(a=t)|length }}", {"t": text}, SMALL) == "1"


# str.format -----------------------------------------------------------------------


def test_format_counts_every_field_it_writes_against_the_cap() -> None:
    text = "x" * 400
    # Three fields of 400 characters: 1,200 written, refused as the third is.
    assert _refusal("{{ '{}{}{}'.format(t, t, t) }}", {"t": text}, SMALL) == _larger("the formatted text", 1000)
    # A width given as a field is written too: 3 characters, then 997, exactly the cap.
    values = {"t": "x" * 997, "w": 100}
    assert render_template("{{ '{:{}}'.format(t, w) }}", values, SMALL) == "x" * 997


# A number in a field's spec is at most what the field writes; one of 20 digits or more counts as 10 ** 20.
WIDTHS = [
    ("{:5}", PATCH_LIMITS, "x    "),
    ("{:99999999999999999999}", PATCH_LIMITS, _larger("a formatted field", PATCH_LIMITS.value)),
    ("{:10000000000000000000}", RenderLimits(output=1000, value=5 * 10**19, steps=100, seconds=10, int_bits=64),
     _larger("a formatted field", 5 * 10**19)),
    ("{:00000000000000000001}", RenderLimits(output=1000, value=2 * 10**20, steps=100, seconds=10, int_bits=64),
     "x"),
]


@pytest.mark.parametrize(("spec", "limits", "expected"), WIDTHS)
def test_a_format_width_is_bounded_by_its_digits(spec: str, limits: RenderLimits, expected: str) -> None:
    source = "{{ '" + spec + "'.format(v) }}"
    if expected.startswith("template error"):
        assert _refusal(source, {"v": "x"}, limits) == expected
    else:
        assert render_template(source, {"v": "x"}, limits) == expected == _jinja(source, {"v": "x"})


FORMATS = [
    "{{ '{name} = {size}'.format(name='max_len', size=8192) }}",
    "{{ '{0} = {size}'.format('max_len', size=8192) }}",
    "{{ ('<b>{0[name]}</b>'|safe).format(sizes) }}",
    "{{ ('<b>{0.name}</b>'|safe).format(ns) }}",
]


@pytest.mark.parametrize("source", FORMATS)
def test_format_fills_named_fields_and_looks_items_up_as_jinja_does(source: str) -> None:
    values = {"sizes": {"name": "<a & b>"}, "ns": jinja2.utils.Namespace(name="<a>")}
    assert render_template(source, values) == _jinja(source, values)


def test_format_map_refuses_other_than_one_mapping() -> None:
    values = {"sizes": {"a": 1}}
    assert render_template("{{ '{a}'.format_map(sizes) }}", values) == "1"
    for source in ("{{ '{a}'.format_map(sizes, sizes) }}", "{{ '{a}'.format_map() }}",
                   "{{ '{a}'.format_map(sizes, b=2) }}"):
        with pytest.raises(TypeError, match=r"^format_map\(\) takes "):
            _jinja(source, values)
        assert _refusal(source, values).startswith("template error at line 1: TypeError: format_map() takes "), source


def test_a_format_method_shows_itself_as_jinja_shows_it() -> None:
    source = "{{ ''.format }} {{ ''.format_map }}"

    def address_free(text: str) -> str:
        return re.sub(r"0x[0-9a-f]+", "0x", text)

    assert address_free(render_template(source)) == address_free(_jinja(source))
    assert render_template(source).startswith("<function str.format at ")


# tojson and rendering outside render() ----------------------------------------------


def test_tojson_of_a_value_json_cannot_write_fails_as_in_jinja() -> None:
    with pytest.raises(TypeError) as plain:
        _jinja("{{ namespace(a=1)|tojson }}")
    assert _refusal("{{ namespace(a=1)|tojson }}") == f"template error at line 1: TypeError: {plain.value}"


def test_a_template_rendered_without_render_fails_saying_so() -> None:
    # The value is the first thing written: the budget is looked for before it is weighed or written.
    template = make_environment().from_string("{{ limit }} tokens")
    with pytest.raises(RuntimeError, match=r"^a template is evaluated outside patcher\.patchset\.templates\.render$"):
        template.render(limit=8192)


# Loop filters ---------------------------------------------------------------------


def test_a_loop_filter_skips_the_items_it_rejects() -> None:
    source = "{% for x in items if x > 1 %}{{ x }},{% else %}none{% endfor %}"
    for items in ([1, 2, 3], [0, 1]):
        assert render_template(source, {"items": items}) == _jinja(source, {"items": items})
    assert render_template(source, {"items": [1, 2, 3]}) == "2,3,"


def test_a_loop_filter_that_raises_names_the_loops_line() -> None:
    source = "a = 1\nb = {{ 2 }}\n{% for x in items if 1 // x %}{{ x }}{% endfor %}\n"
    assert _refusal(source, {"items": [1, 0]}) == (
        "template error at line 3: ZeroDivisionError: integer division or modulo by zero")


# The templates folder ---------------------------------------------------------------


def test_a_patch_template_that_is_not_utf8_is_refused_naming_its_file(tmp_path: Path) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "guard.py.j2").write_bytes(b"limit = '\xff'\n")
    env = make_environment(PatchFolder.open(tmp_path, tmp_path / "templates"))
    with pytest.raises(TemplateFailure) as failed:
        render(env, name="guard.py.j2", values={})
    assert str(failed.value) == f"{tmp_path / 'templates' / 'guard.py.j2'}: not UTF-8 text"


def test_a_patch_template_is_read_once_per_environment(tmp_path: Path) -> None:
    # One load renders every step with one environment: a template used
    # twice is read once, as it was at first use.
    templates = tmp_path / "templates"
    templates.mkdir()
    (templates / "guard.py.j2").write_text("limit = {{ limit }}\n")
    env = make_environment(PatchFolder.open(tmp_path, templates))
    assert render(env, name="guard.py.j2", values={"limit": 1}) == "limit = 1\n"
    (templates / "guard.py.j2").write_text("changed = {{ limit }}\n")
    assert render(env, name="guard.py.j2", values={"limit": 2}) == "limit = 2\n"
