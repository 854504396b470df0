"""Results of filters and str methods are weighed before they are built.

A hostile template can ask a filter or a str method for a result far larger
than its input ('x'.center(10**9), text|wordwrap(wrapstring=huge)); the
sandbox bounds that result from the arguments and refuses the call, naming
what would have been too large, before Python builds it. These tests pin
where each bound sits: a call at its bound renders what Jinja2 itself
renders, one character of budget less is refused; and a bound never turns a
legitimate call, or Python's own error for a broken call, into a budget
refusal.
"""

from __future__ import annotations

import dataclasses
import tracemalloc
from typing import Any

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from patcher.patchset.templates import PATCH_LIMITS, RenderLimits, TemplateFailure, make_environment, render


def _limits(value: int) -> RenderLimits:
    return RenderLimits(output=100_000, value=value, steps=1_000, seconds=10, int_bits=64)


def _outcome(source: str, values: dict[str, Any], value: int) -> str:
    """What the user sees: the rendered text, or the one-line refusal."""
    try:
        return render(make_environment(limits=_limits(value)), source=source, values=values)
    except TemplateFailure as failure:
        return f"refused: {failure}"


def _jinja(source: str, values: dict[str, Any]) -> str:
    """The reference: what Jinja2's own sandbox renders."""
    return ImmutableSandboxedEnvironment(keep_trailing_newline=True).from_string(source).render(**values)


def _too_large(what: str, value: int) -> str:
    return (f"refused: template error at line 1: {what} would be larger than the {value:,} characters a template "
            "value may hold")


# (template, values, smallest value budget it renders with, refusal one below it)
AT_THE_BOUND = [
    # str methods that pad: the width is the result's length.
    ("{{ 'ab'.rjust(20) }}", {}, 23, 19, "'rjust'"),
    ("{{ 'ab'.zfill(20) }}", {}, 23, 19, "'zfill'"),
    # expandtabs: each tab may become tabsize spaces (8 when not given; True is 1; a negative size is 0).
    ("{{ tabs.expandtabs() }}", {"tabs": "\t\t"}, 19, 15, "'expandtabs'"),
    ("{{ tabs.expandtabs(True) }}", {"tabs": "\t" * 10}, 13, 12, "the text a method is called on"),
    ("{{ tabs.expandtabs(-1) }}", {"tabs": "\t" * 10}, 13, 12, "the text a method is called on"),
    ("{{ data.expandtabs(4) }}", {"data": b"abc\t"}, 8, 7, "'expandtabs'"),
    # replace: each occurrence (at most count of them) grows by len(new) - len(old); '' occurs between characters.
    ("{{ 'aaaaaaaa'.replace('a', 'bbbbbbbb', 1) }}", {}, 18, 14, "'replace'"),
    ("{{ 'aaaaaaab'.replace('b', 'bbbbbbbb') }}", {}, 18, 14, "'replace'"),
    ("{{ 'abc'.replace('', '-----') }}", {}, 26, 22, "'replace'"),
    ("{{ 'aaaa'.replace('a', 'bb') }}", {}, 11, 7, "'replace'"),
    ("{{ 'aaaa'.replace('a', 'bbbb', 0) }}", {}, 7, 6, "an argument"),
    ("{{ text.replace('a', '') }}", {"text": "a" * 10}, 13, 12, "the text a method is called on"),
    # Markup's own replace escapes new: each '<<' it puts in is '&lt;&lt;', 8 characters.
    ("{{ ('aaaa'|safe).replace('a', '<<') }}", {}, 35, 31, "'replace'"),
    # a method that cannot grow its text is not weighed as replace, whatever its arguments.
    ("{{ 'utf-8utf-8'.encode('utf-8', 'strict-strict-strict') }}", {}, 23, 22, "an argument"),
    # join: the items, and the separator between each two of them.
    ("{{ sep.join(['a', 'b', 'c']) }}", {"sep": "-" * 20}, 46, 42, "'join'"),
    ("{{ sep.join([item]) }}", {"sep": "-" * 10, "item": "x" * 10}, 17, 16, "this literal"),
    # translate: each character may become the longest replacement (at least one character).
    ("{{ 'abcdef'.translate({}) }}", {}, 9, 8, "the text a method is called on"),
    ("{{ text.translate({97: 'b'}) }}", {"text": "a" * 20}, 23, 22, "the text a method is called on"),
    ("{{ 'abc'.translate({97: 98}) }}", {}, 14, 13, "an argument"),
    # '*' repeats the text, or the list's repr.
    ("{{ 'ab' * 3 }}", {}, 9, 8, "'*'"),
    ("{{ [1, 2, 3] * 2 }}", {}, 28, 27, "'*'"),
    # '%' and |format: the text, the largest value per spec, and each width and precision (a '*' one: the largest int).
    ("{{ '%(a)s%(a)s%(a)s%(a)s' % {'a': 'xyz'} }}", {}, 32, 31, "'%'"),
    ("{{ '%(a)s%(a)s%(a)s%(a)s'|format(a='xyz') }}", {}, 32, 31, "what 'format' returns"),
    ("{{ '%%%%%%%%' % () }}", {}, 11, 10, "'%'"),
    ("{{ 'xxxxxxxxxx%*s' % (5, 'ab') }}", {}, 20, 19, "'%'"),
    ("{{ 'xxxxxxxxxx%5s' % 'ab' }}", {}, 20, 19, "'%'"),
    # filters
    ("{{ 'ab'|center(width=50) }}", {}, 53, 52, "what 'center' returns"),
    ("{{ text|indent }}", {"text": "a\nb\nc"}, 17, 16, "what 'indent' returns"),
    ("{{ 'abc'|wordwrap }}", {}, 11, 10, "what 'wordwrap' returns"),
    ("{{ 'abc'|wordwrap(79, True, '-----') }}", {}, 23, 22, "what 'wordwrap' returns"),
    ("{% for row in [1, 2, 3]|batch(2, 'xxxxxxxx') %}{{ row|length }}{% endfor %}", {}, 44, 43,
     "what 'batch' returns"),
    ("{% for row in [1, 2, 3]|batch(2, fill_with='xxxxxxxx') %}{{ row|length }}{% endfor %}", {}, 44, 43,
     "what 'batch' returns"),
    ("{% for row in [1, 2, 3]|slice(2, 'xxxxxxxx') %}{{ row|length }}{% endfor %}", {}, 44, 43,
     "what 'slice' returns"),
    ("{% for row in items|batch(1) %}{{ row|length }}{% endfor %}", {"items": list(range(10))}, 53, 52,
     "what 'batch' returns"),
    ("{% for row in [1, 2]|batch(True) %}{{ row|length }}{% endfor %}", {}, 10, 9, "an argument of 'batch'"),
    ("{{ 'aaaa'|replace(old='a', new='bb') }}", {}, 11, 10, "what 'replace' returns"),
    # tojson: six characters per character ('<' -> '\u003c'), and with an indent a line per item, as deep as it sits.
    ("{{ {'a': [1, 2]}|tojson }}", {}, 120, 119, "what 'tojson' returns"),
    ("{{ {'a': [1, 2]}|tojson(True) }}", {}, 131, 130, "what 'tojson' returns"),
    ("{{ {'a': [1, 2]}|tojson(0) }}", {}, 125, 124, "what 'tojson' returns"),
    ("{{ {'a': [1, 2]}|tojson(2) }}", {}, 137, 136, "what 'tojson' returns"),
    ("{{ [[1, 2, 3], 1]|tojson(2) }}", {}, 157, 156, "what 'tojson' returns"),
]


@pytest.mark.parametrize(("source", "values", "renders_at", "refused_at", "what"), AT_THE_BOUND)
def test_a_grown_result_renders_at_its_bound_and_is_refused_below_it(
        source: str, values: dict[str, Any], renders_at: int, refused_at: int, what: str) -> None:
    assert _outcome(source, values, renders_at) == _jinja(source, values)
    assert _outcome(source, values, refused_at) == _too_large(what, refused_at)


def test_a_width_of_twenty_digits_or_more_counts_as_ten_to_the_twentieth() -> None:
    # The precision below is 5, written with 20 digits: the bound takes it as 10**20 characters.
    source = "{{ '%.00000000000000000005s' % 'abcdefg' }}"
    bound = 10**20 + len("%.00000000000000000005s") + len("abcdefg")
    assert _outcome(source, {}, bound) == "abcde"
    assert _outcome(source, {}, bound - 1) == _too_large("'%'", bound - 1)
    assert _outcome(source, {}, 1_000) == _too_large("'%'", 1_000)


LEGITIMATE = [
    ("{{ '100%%' % () }}", "100%"),
    ("{{ '100%%'|format }}", "100%"),
    ("{{ '-'.join(['ab']) }}", "ab"),
    ("{{ 'abc'.translate({97: 98}) }}", "bbc"),
    # Jinja's replace filter turns old and new into text.
    ("{{ 'aaa'|replace('a', 1) }}", "111"),
    ("{{ 'a1a1'|replace(1, 'xx') }}", "axxaxx"),
]


@pytest.mark.parametrize(("source", "rendered"), LEGITIMATE)
def test_a_small_call_renders_what_jinja_renders(source: str, rendered: str) -> None:
    assert _jinja(source, {}) == rendered
    assert _outcome(source, {}, 1_000) == rendered


def test_bytes_joined_with_bytearrays_render() -> None:
    values = {"sep": b"-", "parts": [bytearray(b"ab"), bytearray(b"cd")]}
    source = "{{ sep.join(parts) }}"
    assert _outcome(source, values, 1_000) == _jinja(source, values) == "b'ab-cd'"


# (template, value budget, Python's or Jinja's own error): the bound must not speak first.
BROKEN_CALLS = [
    ("{{ '%*s' % () }}", 1_000, "TypeError: not enough arguments for format string"),
    ("{{ '%*s%*s%*s%*s' % {} }}", 15, "TypeError: * wants int"),
    ("{{ 5|join }}", 1_000, "TypeError: 'int' object is not iterable"),
    ("{{ 'aaaa'.count({'a': 'xxxxxxxx'}) }}", 25, "TypeError: must be str, not dict"),
    ("{{ [1, 2, 3]|batch }}", 14, "TypeError: do_batch() missing 1 required positional argument: 'linecount'"),
    ("{{ 'aaaa'|replace('a') }}", 8, "TypeError: do_replace() missing 1 required positional argument: 'new'"),
]


@pytest.mark.parametrize(("source", "value", "error"), BROKEN_CALLS)
def test_a_broken_call_is_refused_with_its_own_error_not_the_budget(source: str, value: int, error: str) -> None:
    assert _outcome(source, {}, value) == f"refused: template error at line 1: {error}"


def test_replace_with_a_count_by_name_is_bounded_by_that_count() -> None:
    # str.replace takes count by name from Python 3.13 on; before, Python refuses the call itself.
    source = "{{ 'aaaa'.replace('a', 'bbbbbbbb', count=1) }}"
    assert _outcome(source, {}, 14) in (
        "bbbbbbbbaaa", "refused: template error at line 1: TypeError: str.replace() takes no keyword arguments")


@pytest.mark.parametrize("source", [
    "{{ ('a' * 4000)|safe|replace('a', 'b' * 4000) }}",  # Markup: Jinja's filter replaces in str() of it
    "{{ ('a' * 4000)|replace('a', 10 ** 1000) }}",  # new is no string: the filter replaces with its str()
    "{{ ('a' * 4000)|safe|string|replace('a', 'b' * 4000) }}",
    "{{ (('a' * 4000)|safe).replace('a', 'b' * 4000) }}",  # Markup's own method
])
def test_replace_is_weighed_before_it_builds_a_result_whatever_the_types(source: str) -> None:
    # Each result would be 4 to 16 million characters (4 to 16 MB): it is refused from its estimate, never built.
    limits = dataclasses.replace(PATCH_LIMITS, value=5000)
    tracemalloc.start()
    try:
        with pytest.raises(TemplateFailure, match="would be larger than the 5,000 characters"):
            render(make_environment(limits=limits), source=source, values={})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2_000_000
