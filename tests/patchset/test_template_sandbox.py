"""Templates render in a sandbox, on a budget: no escape to Python, no runaway loop, every failure exit 2 with its line.

A patch folder is untrusted (CI renders a pull request's templates), so a
template can neither reach Python internals nor make patcher hang or fill
memory; whatever goes wrong while rendering is the template's fault, said in
one line naming the template and line (exit 2), never a traceback (exit 3).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from patcher.patchset import templates
from patcher.patchset.folder import PatchFolder
from patcher.patchset.templates import (PATCH_LIMITS, RenderLimits, TemplateFailure, Text, make_environment,
                                        python_literal, render, weight)
from tests import fixtures_hostile_patchset as hostile
from tests.fixtures_vendor import VENDOR_ZIP
from tests.patchset.conftest import render_template


# What stops a template that never ends: its steps, or its CPU seconds when a slow (or traced) interpreter gets there first.
RUNAWAY_STOPS = (f"({PATCH_LIMITS.steps:,} loop iterations|{PATCH_LIMITS.seconds:g} CPU seconds)")


def _refusal(source: str, values: dict[str, Any] | None = None, limits: RenderLimits = PATCH_LIMITS) -> str:
    with pytest.raises(TemplateFailure) as failed:
        render_template(source, values, limits)
    message = str(failed.value)
    assert "\n" not in message
    return message


# Escapes ----------------------------------------------------------------------

ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('touch MARKER') }}",
    "{{ joiner.__init__.__globals__.os.system('touch MARKER') }}",
    "{{ namespace.__init__.__globals__.os.system('touch MARKER') }}",
    "{{ (cycler|attr('__init__')).__globals__.os.system('touch MARKER') }}",
    "{{ cycler['__init__']['__globals__']['os'].system('touch MARKER') }}",
    "{% for c in ''.__class__.__mro__[1].__subclasses__() %}{% if c.__name__ == 'Popen' %}"
    "{{ c(['touch', 'MARKER']) }}{% endif %}{% endfor %}",
    "{{ '{0.__class__.__mro__[1].__subclasses__}'.format('') }}",
    # str.format kept for later (CVE-2024-56326) or reached through |attr (CVE-2025-27516):
    "{% set f = '{0.__init__.__globals__[os].system}'.format %}{{ f(cycler) }}",
    "{% set f = '{0.__init__.__globals__[os].system}'|attr('format') %}{{ f(cycler) }}",
    "{% set f = '{x.__init__.__globals__}'.format_map %}{{ f({'x': cycler}) }}",
    "{{ self.__init__.__globals__.__builtins__.__import__('os').system('touch MARKER') }}",
]


@pytest.mark.parametrize("payload", ESCAPES)
def test_a_template_cannot_reach_python_internals(tmp_path: Path, payload: str) -> None:
    marker = tmp_path / "MARKER"
    message = _refusal(payload.replace("MARKER", str(marker)))
    assert message.startswith("template error at line 1: not allowed in a template: access to attribute '__")
    assert not marker.exists()


def test_the_escape_payload_is_live_outside_the_sandbox(tmp_path: Path) -> None:
    # The control: plain Jinja2 runs it, so the tests above prove the sandbox.
    marker = tmp_path / "MARKER"
    jinja2.Environment().from_string(hostile.escape_payload(marker)).render()
    assert marker.exists()


def test_a_template_cannot_change_a_list_it_is_given() -> None:
    values = {"items": [1, 2]}
    assert "not allowed in a template" in _refusal("{{ items.append(3) }}", values)
    assert values == {"items": [1, 2]}


@pytest.mark.parametrize("command", ["apply", "diff", "test", "explain"])
def test_no_command_runs_the_escape_in_a_patch_template(cli: Any, tmp_path: Path, command: str) -> None:
    marker = tmp_path / "MARKER"
    patches = hostile.sandbox_escape(tmp_path, marker)
    args = {"apply": ("apply", VENDOR_ZIP, "-o", "ctx.tar.gz"), "diff": ("diff", VENDOR_ZIP),
            "test": ("test",), "explain": ("explain", "three-tier-decode")}[command]
    result = cli(*args, "--patches", patches)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {patches / 'three-tier-decode.toml'}: steps[1].template: template error at line "
                           f"{hostile.ESCAPE_LINE} of '{hostile.THRESHOLDS}': not allowed in a template: ")
    assert not marker.exists()
    assert not (cli.cwd / "ctx.tar.gz").exists()


def test_new_does_not_run_the_escape_in_the_sets_own_template(cli: Any, tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    patches = hostile.sandbox_escape_in_new_template(tmp_path, marker)
    series = (patches / "series").read_bytes()
    result = cli("new", "decode-fast-path", "--target", "vllm/attention/ops/paged_attn.py",
                 "--scope", "PagedAttention.forward_decode", "--patches", patches)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: template error at line {hostile.ESCAPE_LINE} of '{hostile.NEW_PATCH_TEMPLATE}': "
                           "not allowed in a template: ")
    assert not marker.exists()
    assert not (patches / "decode-fast-path.toml").exists()
    assert (patches / "series").read_bytes() == series


# Runaway templates --------------------------------------------------------------


def test_a_str_method_is_bounded_before_it_runs_and_only_if_it_can_grow() -> None:
    # 'ljust' can make a text as wide as its argument: refused from its
    # width, before tens of megabytes are made. 'upper', 'strip', 'split'
    # cannot grow their text, so nothing is estimated for them: they run as
    # Python runs them.
    message, peak = _refusal_and_peak("{{ name.ljust(width) }}", {"name": "max_len", "width": 20_000_000})
    assert message == ("template error at line 1: 'ljust' would be larger than the 1,048,576 characters a template "
                       "value may hold")
    assert peak < PATCH_LIMITS.value
    assert render_template("{{ name.upper() }} {{ name.strip('_') }} {{ name.split('_') }} {{ name.startswith('max') }}",
                           {"name": "_max_len"}) == "_MAX_LEN max_len ['', 'max', 'len'] False"


def test_expandtabs_is_refused_from_its_estimate_before_the_spaces_are_made() -> None:
    # Ten tabs of 99 columns are estimated at 10 + 10 * 99 = 1,000 characters,
    # within a cap of 1,000: expanded. Of 100 columns, 1,010: refused by the
    # estimate, which names 'expandtabs' (a text made first and weighed after
    # would be refused as "what the call returns"), by position or by name.
    limits = RenderLimits(output=10_000, value=1000, steps=100, seconds=10, int_bits=64)
    values = {"text": "\t" * 10}
    assert render_template("{{ text.expandtabs(99) }}", values, limits) == " " * 990
    refused = ("template error at line 1: 'expandtabs' would be larger than the 1,000 characters a template value "
               "may hold")
    assert _refusal("{{ text.expandtabs(100) }}", values, limits) == refused
    assert _refusal("{{ text.expandtabs(tabsize=100) }}", values, limits) == refused


class _OutOfMemory:
    """A value whose text cannot be built: what a value the budgets missed would meet on a real machine."""

    def __str__(self) -> str:
        raise MemoryError

    __repr__ = __str__


def test_a_template_that_runs_out_of_memory_is_one_line_saying_so() -> None:
    assert _refusal("{{ v }}", {"v": _OutOfMemory()}) == (
        "template error at line 1: it needs more memory than this machine gives it")


def test_a_named_template_that_runs_out_of_memory_is_named(tmp_path: Path) -> None:
    patches = hostile.runaway_template(tmp_path, "{{ v }}")
    env = make_environment(PatchFolder.open(patches, hostile.templates_of(patches)))
    with pytest.raises(TemplateFailure) as failed:
        render(env, name=hostile.THRESHOLDS, values={"v": _OutOfMemory()})
    assert str(failed.value) == (f"template error at line 1 of '{hostile.THRESHOLDS}': it needs more memory than this "
                                 "machine gives it")


def test_a_template_that_runs_out_of_memory_before_it_runs_is_named(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # Compiling a template (no line of it running yet) can exhaust memory too: the template's name says where.
    patches = hostile.runaway_template(tmp_path, "{{ v }}")
    env = make_environment(PatchFolder.open(patches, hostile.templates_of(patches)))

    def exhausted(name: str) -> Any:
        raise MemoryError

    monkeypatch.setattr(env, "get_template", exhausted)
    with pytest.raises(TemplateFailure) as failed:
        render(env, name=hostile.THRESHOLDS, values={})
    assert str(failed.value) == (f"template error in '{hostile.THRESHOLDS}': it needs more memory than this machine "
                                 "gives it")


# The two that recurse without end reach Python's own recursion limit first; every other one must be stopped by a
# budget or a size estimate, before the value is built (not by running out of memory).
RECURSING = {"a macro that calls itself", "a recursive loop"}


@pytest.mark.parametrize("name", sorted(hostile.RUNAWAY_TEMPLATES))
def test_a_runaway_template_stops_at_its_budget(name: str) -> None:
    message = _refusal(hostile.RUNAWAY_TEMPLATES[name])
    assert message.startswith("template error at line 1: ")
    stops = ("deeper than Python allows",) if name in RECURSING else ("budget", "larger than", "more than")
    assert any(word in message for word in stops)


def test_a_runaway_template_is_exit_2_naming_the_template(cli: Any, tmp_path: Path) -> None:
    patches = hostile.runaway_template(tmp_path, hostile.RUNAWAY_TEMPLATES["nested range loops"])
    result = cli("apply", VENDOR_ZIP, "-o", "ctx.tar.gz", "--patches", patches)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    # Whichever budget runs out first (a slow or traced interpreter reaches the CPU seconds first) stops it.
    assert re.search(f"template error at line 1 of '{re.escape(hostile.THRESHOLDS)}': the template runs past its "
                     f"budget of {RUNAWAY_STOPS}", line), line
    assert not (cli.cwd / "ctx.tar.gz").exists()


def test_templates_that_include_each_other_four_times_thirty_deep_stop(tmp_path: Path) -> None:
    patches = hostile.exponential_includes(tmp_path)
    env = make_environment(PatchFolder.open(patches, hostile.templates_of(patches)))
    with pytest.raises(TemplateFailure, match=f"runs past its budget of {RUNAWAY_STOPS}"):
        render(env, name=hostile.THRESHOLDS, values={})


@pytest.mark.parametrize("tag", ["include", "import", "extends"])
def test_a_template_that_includes_itself_is_refused(tmp_path: Path, tag: str) -> None:
    patches = hostile.self_including_templates(tmp_path, tag)
    env = make_environment(PatchFolder.open(patches, hostile.templates_of(patches)))
    with pytest.raises(TemplateFailure) as failed:
        render(env, name=hostile.THRESHOLDS, values={})
    assert str(failed.value) == (f"template error at line 1 of '{hostile.THRESHOLDS}': it nests or recurses deeper "
                                 "than Python allows (a template that includes, imports or extends itself, or a macro "
                                 "that calls itself without end?)")


def test_a_template_nested_too_deep_to_compile_is_refused() -> None:
    assert _refusal("{% if 1 %}" * 500 + "{% endif %}" * 500).startswith("template error: it nests or recurses")
    assert _refusal("{{ " + "(" * 5000 + "1" + ")" * 5000 + " }}").startswith("template error: it nests or recurses")


def test_the_cpu_deadline_stops_a_slow_template(monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake clock that moves a second at each look: the deadline, not the
    # step count, must stop this loop.
    ticks = itertools.count()
    monkeypatch.setattr(templates, "_clock", lambda: float(next(ticks)))
    message = _refusal("{% for i in range(100) %}{{ i }}{% endfor %}")
    assert message == "template error at line 1: the template runs past its budget of 10 CPU seconds"


def test_a_template_that_ends_on_its_deadline_is_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # The clock reads 0 when the render starts and exactly the budget's 10 seconds at every look after: the
    # budget is used up, not exceeded.
    ticks = itertools.chain([0.0], itertools.repeat(10.0))
    monkeypatch.setattr(templates, "_clock", lambda: next(ticks))
    assert render_template("{% for i in range(3) %}{{ i }}{% endfor %}") == "012"


def test_each_render_gets_a_budget_of_its_own() -> None:
    env = make_environment(limits=RenderLimits(output=1000, value=1000, steps=50, seconds=10, int_bits=64))
    loop = "{% for i in range(40) %}x{% endfor %}"
    for _ in range(3):  # 3 x 40 steps: more than 50 in all, each render within its own
        assert render(env, source=loop, values={}) == "x" * 40
    with pytest.raises(TemplateFailure, match="budget of 50 loop iterations"):
        render(env, source="{% for i in range(60) %}x{% endfor %}", values={})


def test_a_template_block_counts_against_the_budget() -> None:
    # A block renders code without a loop or a call: each one rendered is a step.
    limits = RenderLimits(output=1000, value=1000, steps=2, seconds=10, int_bits=64)
    two = "{% block head %}a{% endblock %}{% block body %}b{% endblock %}"
    assert render_template(two, limits=limits) == "ab"
    message = _refusal(two + "{% block tail %}c{% endblock %}", limits=limits)
    assert message == ("template error at line 1: the template runs past its budget of 2 loop iterations, calls "
                       "and operations (a loop or recursion that does not end?)")


def test_a_macro_imported_from_another_template_renders_and_the_import_counts_one_step(tmp_path: Path) -> None:
    # '{% from ... import ... %}' runs the other template's code without a
    # call or a loop: it is a step of its own, as an include is.
    (tmp_path / "macros.j2").write_text("{% macro guard(limit) %}if max_len > {{ limit }}:\n    use_v1 = False\n"
                                        "{% endmacro %}")

    def rendered(source: str, steps: int) -> str:
        env = make_environment(tmp_path, limits=RenderLimits(output=1000, value=1000, steps=steps, seconds=10,
                                                             int_bits=64))
        return render(env, source=source, values={})

    imported = "{% from 'macros.j2' import guard %}"
    assert rendered(imported + "{{ guard(8192) }}", steps=2) == "if max_len > 8192:\n    use_v1 = False\n"
    assert rendered(imported + "x = 1", steps=1) == "x = 1"
    with pytest.raises(TemplateFailure) as failed:
        rendered(imported + "x = 1", steps=0)
    assert str(failed.value) == ("template error at line 1: the template runs past its budget of 0 loop iterations, "
                                 "calls and operations (a loop or recursion that does not end?)")


def test_output_budget_counts_literal_text_in_loops_and_captures() -> None:
    limits = RenderLimits(output=100, value=10_000, steps=1_000, seconds=10, int_bits=64)
    assert render_template("{% for i in range(10) %}0123456789{% endfor %}", limits=limits) == "0123456789" * 10
    assert "writes more than its budget of 100 characters" in _refusal(
        "{% for i in range(11) %}0123456789{% endfor %}", limits=limits)
    assert "writes more than its budget of 100 characters" in _refusal(
        "{% set x %}{% for i in range(11) %}0123456789{% endfor %}{% endset %}", limits=limits)


def test_integers_are_capped_in_bits() -> None:
    assert render_template("{{ 2 ** 4000 }}").startswith("1318")
    # Each refusal names the operator that would have made the integer.
    assert _refusal("{{ 2 ** 5000 }}") == "template error at line 1: '**' would be an integer of more than 4,096 bits"
    assert _refusal("{{ (2 ** 3000) * (2 ** 3000) }}") == (
        "template error at line 1: '*' would be an integer of more than 4,096 bits")


def _refusal_and_peak(source: str, values: dict[str, Any]) -> tuple[str, int]:
    """Refuse SOURCE as ``_refusal`` does; also return the peak of memory (bytes) allocated while rendering it."""
    tracing = tracemalloc.is_tracing()
    if tracing:
        tracemalloc.reset_peak()
    else:
        tracemalloc.start()
    try:
        message = _refusal(source, values)
        return message, tracemalloc.get_traced_memory()[1]
    finally:
        if not tracing:
            tracemalloc.stop()


# Each would make tens of megabytes; its arguments are small, by position or by name.
GROWING = {
    "batch's line count by name": ("{% for row in [1]|batch(linecount=4000000, fill_with=0) %}{% endfor %}", {},
                                   "what 'batch' returns"),
    "slice's count by name": ("{% for column in [1]|slice(slices=4000000, fill_with=0) %}{% endfor %}", {},
                              "what 'slice' returns"),
    "center's width": ("{{ text|center(width) }}", {"text": "x", "width": 30_000_000}, "what 'center' returns"),
    "replace's new text by name": ("{{ text|replace('x', new=text) }}", {"text": "x" * 7000}, "what 'replace' returns"),
    # Every word on a line of its own, each line break the long wrap string.
    "wordwrap with a long wrap string": ("{{ text|wordwrap(1, wrapstring='\\n' ~ ' ' * 999) }}",
                                         {"text": "a " * 20_000}, "what 'wordwrap' returns"),
    "tojson with an indent": ("{{ items|tojson(indent=100000) }}", {"items": list(range(300))}, "what 'tojson' returns"),
    "tojson with an indent by position": ("{{ items|tojson(100000) }}", {"items": list(range(300))},
                                          "what 'tojson' returns"),
    # An indent given as text is that text at the head of each line: its length is the step.
    "tojson with an indent string": ("{{ items|tojson(indent=pad) }}", {"items": list(range(20)), "pad": " " * 100_000},
                                     "what 'tojson' returns"),
    # '*' takes the width from the arguments: a tuple, each of its items a value.
    "a star width of '%'": ("{{ '%*d' % (width, 7) }}", {"width": 30_000_000}, "'%'"),
    "a star width of format": ("{{ '%*d'|format(width, 7) }}", {"width": 30_000_000}, "what 'format' returns"),
    # Named fields take their values from a mapping: each field may be the largest of them.
    "a mapping's values in '%'": ("{{ '%(a)s%(a)s' % {'a': text} }}", {"text": "x" * 600_000}, "'%'"),
    "a string times a number": ("{{ text * n }}", {"text": "x", "n": 30_000_000}, "'*'"),
    "a list times a number": ("{{ [0] * n }}", {"n": 5_000_000}, "'*'"),
    "str.replace's new text": ("{{ text.replace('x', text) }}", {"text": "x" * 7000}, "'replace'"),
    # Not a string: the filter replaces in its text, "[0, 1, 2, ...]", with 999 commas.
    "replace on a list's text": ("{{ items|replace(',', text) }}", {"items": list(range(1000)), "text": "x" * 7000},
                                 "what 'replace' returns"),
    "str.center's width": ("{{ text.center(width) }}", {"text": "x", "width": 30_000_000}, "'center'"),
    "str.expandtabs's tab size": ("{{ text.expandtabs(size) }}", {"text": "\t" * 1000, "size": 30_000}, "'expandtabs'"),
    # With no argument a tab is 8 columns wide, as in Python: 200,000 tabs make 1,600,000 spaces.
    "str.expandtabs's default tab size": ("{{ text.expandtabs() }}", {"text": "\t" * 200_000}, "'expandtabs'"),
    "str.translate's table": ("{{ text.translate({120: text}) }}", {"text": "x" * 7000}, "'translate'"),
    "int.to_bytes's length": ("{{ n.to_bytes(length, 'little') }}", {"n": 1, "length": 30_000_000}, "'to_bytes'"),
    # A thousand lines, each indented 2,000 columns: two million characters from a few thousand.
    "indent's width": ("{{ text|indent(width) }}", {"text": "x\n" * 1000, "width": 2000}, "what 'indent' returns"),
    # A thousand items joined by a separator of 2,000 characters: two million characters.
    "join's separator": ("{{ items|join(sep) }}", {"items": ["x"] * 1000, "sep": "-" * 2000}, "what 'join' returns"),
}


@pytest.mark.parametrize("name", sorted(GROWING))
def test_a_value_over_the_cap_is_refused_before_it_is_made(name: str) -> None:
    source, values, what = GROWING[name]
    message, peak = _refusal_and_peak(source, values)
    assert message == (f"template error at line 1: {what} would be larger than the 1,048,576 characters a template "
                       "value may hold")
    assert peak < PATCH_LIMITS.value  # the estimate refused it: the value was never made


def test_a_replace_limited_by_its_count_renders_when_the_result_fits() -> None:
    # Replacing every 'x' would pass the cap; replacing the first one only does not, by position or by name.
    values = {"text": "x" * 7000, "new": "y" * 7000}
    expected = "y" * 7000 + "x" * 6999
    assert render_template("{{ text|replace('x', new, 1) }}", values) == expected
    assert render_template("{{ text|replace('x', new, count=1) }}", values) == expected


def test_a_test_given_a_value_over_the_cap_is_refused_by_its_name() -> None:
    # A Jinja test ('is string') weighs what it is given, as a filter does, and says which test it was.
    assert _refusal("{% if text is string %}x = 1{% endif %}", {"text": "x" * 2_000_000}) == (
        "template error at line 1: an argument of 'string' would be larger than the 1,048,576 characters a template "
        "value may hold")


def test_a_tuple_literal_is_weighed_as_it_is_made() -> None:
    # Each text fits the cap; the pair of them does not.
    text = "x" * 600_000
    assert _refusal("{% set pair = (text, text) %}", {"text": text}) == (
        "template error at line 1: this literal would be larger than the 1,048,576 characters a template value may "
        "hold")


def test_an_object_between_two_texts_does_not_hide_their_weight() -> None:
    # A macro weighs as an object the template cannot expand; it adds to
    # the texts on either side of it, and the three of them pass the cap.
    text = "x" * 600_000
    source = "{% macro note() %}# V1 limit{% endmacro %}{% set row = (text, note, text) %}{{ row|length }}"
    assert _refusal(source, {"text": text}) == (
        "template error at line 1: this literal would be larger than the 1,048,576 characters a template value may "
        "hold")
    assert render_template(source, {"text": "x" * 6}) == "3"


def test_a_width_by_name_fails_as_python_says() -> None:
    # str.center, ljust, rjust and zfill take their width by position only:
    # Python refuses the call, however wide, rather than any budget.
    assert _refusal("{{ text.center(width=30000000) }}", {"text": "x"}) == (
        "template error at line 1: TypeError: str.center() takes no keyword arguments")
    assert _refusal("{{ text.zfill(width=5) }}", {"text": "7"}) == (
        "template error at line 1: TypeError: str.zfill() takes no keyword arguments")


def test_a_value_is_weighed_at_least_as_long_as_its_repr() -> None:
    # The weight stands in for the value's written length: it may count more, never less.
    # Lists of empty or short items are where the brackets and ", " count most.
    for value in ([""] * 1000, [[]] * 1000, [()] * 1000, list(range(1000)), ("vllm", "flash-attn"),
                  {"limit": [8192, 4096]}, {"cuda", "rocm"}):
        assert weight(value, PATCH_LIMITS.value) >= len(repr(value)), value


def test_tojson_of_a_deeply_nested_value_is_refused_before_it_is_indented() -> None:
    # Each line is indented once per level it is nested: 300 levels of 40
    # spaces make millions of characters from a value that weighs little.
    source = ("{% set ns = namespace(v=0) %}{% for i in range(depth) %}{% set ns.v = [ns.v] %}{% endfor %}"
              "{{ ns.v|tojson(indent=pad) }}")
    message, peak = _refusal_and_peak(source, {"depth": 300, "pad": " " * 40})
    assert message == ("template error at line 1: what 'tojson' returns would be larger than the 1,048,576 characters "
                       "a template value may hold")
    assert peak < PATCH_LIMITS.value
    assert render_template("{{ {'limit': [8192, [16]]}|tojson(indent=2) }}") == (
        '{\n  "limit": [\n    8192,\n    [\n      16\n    ]\n  ]\n}')


@pytest.mark.parametrize("value", [[8192], {"limit": [8192, [16, {}], {"block": []}]}, [[[["v1"]]]],
                                   {"k": {"k": {"k": "v"}}}, [], {}])
@pytest.mark.parametrize("step", [0, 1, 2, 4])
def test_tojson_counts_the_line_breaks_and_indents_an_indent_adds_exactly(value: Any, step: int) -> None:
    # One line break and its indent per item and per closing bracket: what
    # json.dumps(indent=step) writes before each line after the first.
    text = json.dumps(value, indent=step)
    added = sum(1 + len(line) - len(line.lstrip(" ")) for line in text.split("\n")[1:])
    assert templates._indented_size(value, step, PATCH_LIMITS.value) == added


def test_the_text_of_a_value_over_the_cap_is_refused_before_it_is_written() -> None:
    # A list holding one text a thousand times is small in memory, but its
    # text, written by {{ }}, would be two million characters.
    message, peak = _refusal_and_peak("{{ rows }}", {"rows": ["x" * 2000] * 1000})
    assert message == ("template error at line 1: the text of this value would be larger than the 1,048,576 "
                       "characters a template value may hold")
    assert peak < PATCH_LIMITS.value


def test_multiplying_numbers_is_arithmetic_not_repetition() -> None:
    # Only a text or a sequence times an integer repeats anything: a number
    # times a large number is computed, and a dict times a number fails as Python says.
    assert render_template("{{ mb * 1048576 }} {{ 0.5 * 4194304 }} {{ 3 * 4 }} {{ 2.5 * 3 }}", {"mb": 64}) == (
        "67108864 2097152.0 12 7.5")
    with pytest.raises(TypeError) as plain:
        {"limit": 8192} * 3  # type: ignore[operator]
    assert _refusal("{{ sizes * 3 }}", {"sizes": {"limit": 8192}}) == f"template error at line 1: TypeError: {plain.value}"


def test_two_texts_added_past_the_cap_are_refused_before_they_are_joined() -> None:
    # Each text fits the cap; together they would not.
    text = "x" * 1_000_000
    message, peak = _refusal_and_peak("{{ head + tail }}", {"head": text, "tail": text})
    assert message == ("template error at line 1: '+' would be larger than the 1,048,576 characters a template value "
                       "may hold")
    assert peak < PATCH_LIMITS.value  # the joined text, 2,000,000 characters, was never made


def test_an_operand_over_the_cap_is_refused_naming_the_operator() -> None:
    # Either side of an operator is weighed before it runs, whether or not
    # the operator could grow it; the refusal says which operator it was.
    values = {"text": "x" * 2_000_000}
    for source, operator in (("{{ text + 'x' }}", "+"), ("{{ 'x' + text }}", "+"), ("{{ text - 1 }}", "-"),
                             ("{{ 1 - text }}", "-")):
        assert _refusal(source, values) == (f"template error at line 1: '{operator}' would be larger than the "
                                            "1,048,576 characters a template value may hold"), source


def test_a_float_adds_its_weight_to_the_items_beside_it() -> None:
    # A float is written in at most 24 characters, counted on top of the
    # rest of the list: '[0.5, text]' weighs its brackets, two separators,
    # the float and the quoted text.
    assert weight([0.5, "abc"], PATCH_LIMITS.value) == 2 + 2 * 2 + 24 + len("abc") + 3
    limits = RenderLimits(output=10_000, value=1000, steps=100, seconds=10, int_bits=64)
    assert render_template("{% set row = [0.5, text] %}{{ row|length }}", {"text": "x" * 960}, limits) == "2"
    assert _refusal("{% set row = [0.5, text] %}{{ row|length }}", {"text": "x" * 990}, limits) == (
        "template error at line 1: this literal would be larger than the 1,000 characters a template value may hold")


def test_percent_with_a_mapping_fills_its_named_fields() -> None:
    assert render_template("{{ '%(name)s = %(size)d' % {'name': 'max_len', 'size': 8192} }}") == "max_len = 8192"
    assert render_template("{{ '%(block)05d' % sizes }}", {"sizes": {"block": 16}}) == "00016"


def test_a_field_of_str_format_is_weighed_before_it_is_written() -> None:
    # A cycler weighs little as an argument, but the field '{0.items}' is
    # every item it was given, written out: refused before it is.
    text = "x" * 600_000
    assert _refusal("{{ '{0.items}'.format(cycler(text, text)) }}", {"text": text}) == (
        "template error at line 1: a formatted field would be larger than the 1,048,576 characters a template value "
        "may hold")


# Failures at render time ---------------------------------------------------------


def test_a_template_raising_while_rendering_names_its_line() -> None:
    assert _refusal("x = 1\ny = {{ 1 // 0 }}\n") == (
        "template error at line 2: ZeroDivisionError: integer division or modulo by zero")
    assert _refusal("{{ 'a' + 1 }}").startswith("template error at line 1: TypeError: ")


def test_format_map_with_a_positional_field_fails_as_in_jinjas_sandbox() -> None:
    # format_map has only a mapping: '{0}' finds no positional argument, the same error Jinja2's own sandbox gives.
    source = "{{ '{0} and {}'.format_map(sizes) }}"
    values = {"sizes": {"0": 8192}}
    with pytest.raises(IndexError) as plain:
        ImmutableSandboxedEnvironment().from_string(source).render(values)
    assert _refusal(source, values) == f"template error at line 1: IndexError: {plain.value}"


def test_a_template_raising_while_rendering_is_exit_2(cli: Any, tmp_path: Path) -> None:
    patches = hostile.template_raising_at_render(tmp_path)
    result = cli("diff", VENDOR_ZIP, "--patches", patches)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: {patches / 'three-tier-decode.toml'}: steps[1].template: template error at line 3 of "
        f"'{hostile.THRESHOLDS}': ZeroDivisionError: integer division or modulo by zero (in 'template')"]


def test_an_included_template_names_itself_in_the_error(tmp_path: Path) -> None:
    patches = hostile.copy_patch_set(tmp_path)
    (hostile.templates_of(patches) / "inner.j2").write_text("a\nb\n{{ 1 // 0 }}\n")
    (hostile.templates_of(patches) / "outer.j2").write_text('x\n{% include "inner.j2" %}\n')
    env = make_environment(PatchFolder.open(patches, hostile.templates_of(patches)))
    with pytest.raises(TemplateFailure, match=r"^template error at line 3 of 'inner.j2': ZeroDivisionError"):
        render(env, name="outer.j2", values={})


def test_filters_that_make_output_depend_on_chance_are_gone() -> None:
    assert _refusal("{{ [1, 2]|random }}") == "template syntax error at line 1: No filter named 'random'."
    assert "'lipsum' is undefined" in _refusal("{{ lipsum() }}")


def test_the_html_only_filters_are_gone() -> None:
    assert _refusal("{{ 'see https://example.org'|urlize }}") == (
        "template syntax error at line 1: No filter named 'urlize'.")
    assert _refusal("{{ {'a': 1}|xmlattr }}") == "template syntax error at line 1: No filter named 'xmlattr'."


# What a template still does -------------------------------------------------------


def test_ordinary_templates_render_as_before() -> None:
    source = ("{% for part in parts %}{% if loop.last %}def {{ part }}(self):{% else %}class {{ part }}:{% endif %}\n"
              "{% endfor %}{{ '    ' * 2 }}{{ n * 2 }} {{ [1, 2]|join(', ') }} {{ '%d-%s'|format(3, 'x') }} "
              "{{ '{}!'.format(n) }} {{ (n ~ 'x')|upper }} {{ {'a': 1}|tojson }}\n")
    assert render_template(source, {"parts": ["PagedAttention", "forward_decode"], "n": 21}) == (
        "class PagedAttention:def forward_decode(self):        42 1, 2 3-x 21! 21X {\"a\": 1}\n")


def test_a_loop_unpacks_pairs() -> None:
    # '{% for a, b in ... %}' assigns to a tuple: a target, not a literal to weigh.
    assert render_template("{% for name, size in sizes|dictsort %}{{ name }} = {{ size }}\n{% endfor %}",
                           {"sizes": {"max_len": 8192, "block": 16}}) == "block = 16\nmax_len = 8192\n"
    assert render_template("{% set head, tail = (1, 2) %}{{ head + tail }}") == "3"


def test_floats_are_written_as_python() -> None:
    assert render_template("{{ a }} {{ b }} {{ c }} {{ d }} {{ e * 2 }}", {
        "a": 0.1, "b": float("nan"), "c": float("inf"), "d": float("-inf"), "e": 1e308}) == (
        "0.1 float('nan') float('inf') float('-inf') float('inf')")
    assert [python_literal(v) for v in (1.5, float("-inf"))] == ["1.5", "float('-inf')"]


def test_a_text_value_is_a_python_string_literal() -> None:
    value = Text("x'; import os\n")
    assert render_template("{{ v }}|{{ v|upper }}|{{ v|length }}|{{ v == \"x'; import os\\n\" }}|{{ v|tojson }}",
                           {"v": value}) == '"x\'; import os\\n"|"X\'; IMPORT OS\\N"|14|True|"x\\u0027; import os\\n"'
    assert "access to attribute '_value' of 'Text' object is unsafe" in _refusal("{{ v._value }}", {"v": value})


def test_a_text_leaves_comparing_with_anything_but_a_string_to_the_other_value() -> None:
    # Text answers for strings and texts only; any other value decides for
    # itself, and is shown the Text, never the raw string it holds.
    class Probe:
        def __init__(self) -> None:
            self.seen: list[Any] = []

        def __eq__(self, other: object) -> bool:
            self.seen.append(other)
            return NotImplemented

        __hash__ = None  # type: ignore[assignment]

    value = Text("8192")
    probe = Probe()
    assert (value == probe) is False
    assert len(probe.seen) == 1 and probe.seen[0] is value
    assert value.__eq__(8192) is NotImplemented
    assert value != 8192 and value != b"8192"
    assert value == "8192" and value == Text("8192") and value != "8191"


@pytest.mark.parametrize("value", ["fast path", "", " ", "0"])
def test_a_text_is_true_when_its_value_is_not_empty(value: str) -> None:
    # As the string itself is in Jinja2: only the empty text is false.
    source = "{% if v %}set{% else %}empty{% endif %} {{ 'yes' if v else 'no' }} {{ not v }}"
    assert render_template(source, {"v": Text(value)}) == ImmutableSandboxedEnvironment().from_string(source).render(v=value)
    assert bool(Text(value)) is bool(value)


def test_a_text_holds_only_the_strings_its_value_holds() -> None:
    value = Text("fast path")
    assert render_template("{{ 'fast' in v }} {{ 'slow' in v }} {{ 1 in v }} {{ 'fast' not in v }}", {"v": value}) == (
        "True False False False")
    assert "path" in value and "slow" not in value and "'" not in value and None not in value


def test_format_on_safe_text_escapes_its_arguments_as_jinjas_sandbox_does() -> None:
    source = "{{ ('<b>{}</b>'|safe).format(v) }} {{ ('<i>{x}</i>'|safe).format_map({'x': v}) }}"
    expected = "<b>&lt;a &amp; b&gt;</b> <i>&lt;a &amp; b&gt;</i>"
    assert ImmutableSandboxedEnvironment().from_string(source).render(v="<a & b>") == expected
    assert render_template(source, {"v": "<a & b>"}) == expected


def test_center_without_a_width_is_refused_from_its_default_width_before_it_runs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # center's width defaults to 80: under a smaller cap the estimate refuses
    # the call, and the filter never runs.
    ran: list[Any] = []

    def center(value: Any, width: int = 80) -> str:
        ran.append(value)
        return str(value).center(width)

    monkeypatch.setitem(jinja2.defaults.DEFAULT_FILTERS, "center", center)
    limits = dataclasses.replace(PATCH_LIMITS, value=40)
    assert _refusal("{{ text|center }}", {"text": "x"}, limits) == (
        "template error at line 1: what 'center' returns would be larger than the 40 characters a template "
        "value may hold")
    assert ran == []
    assert render_template("{{ text|center(9) }}", {"text": "x"}, limits) == "    x    "
    assert ran == ["x"]


def test_a_power_too_large_for_the_bit_cap_is_refused_before_it_is_computed() -> None:
    # 2 ** 20,000,000 would take megabytes (and far longer for a larger base):
    # the bit count is known from the operands, so it is never computed.
    message, peak = _refusal_and_peak("{{ base ** exponent }}", {"base": 2, "exponent": 20_000_000})
    assert message == "template error at line 1: '**' would be an integer of more than 4,096 bits"
    assert peak < PATCH_LIMITS.value
    assert render_template("{{ base ** 4095 == 2 ** 4095 }}", {"base": 2}) == "True"  # within the cap: computed


def test_a_value_longer_than_the_cap_weighs_more_than_the_cap_whatever_the_cap() -> None:
    # The walk stops once past the cap; at or under it, it must go on into
    # a dict's or a list's items, or a value longer than the cap would pass.
    for value in ({"a": 1, "b": 2}, {"max_len": {"v1": 8192}}, [["x"], ["y"]], ("vllm", {"block": 16})):
        for cap in range(len(repr(value))):
            assert weight(value, cap) > cap, (value, cap)
    limits = RenderLimits(output=1000, value=10, steps=1000, seconds=10, int_bits=64)
    assert _refusal("{% set sizes = {'a': 1, 'b': 2} %}{{ sizes }}", limits=limits) == (
        "template error at line 1: this literal would be larger than the 10 characters a template value may hold")


def test_a_lazy_sequence_passed_to_a_call_fits_where_the_list_it_makes_fits() -> None:
    # A filter's lazy result given to a call is made into a list item by
    # item, each item weighed with its ', ' as the list's weight counts it:
    # a result that makes a list within the cap is not refused.
    names = ["x"] * 10
    limits = RenderLimits(output=1000, value=weight(names, 1000), steps=1000, seconds=10, int_bits=64)
    assert render_template("{{ ''.join(names|map('upper')) }}", {"names": names}, limits) == "X" * 10
    # Items that grow past it are refused as the list is made.
    assert _refusal("{{ ''.join(names|map('center', 5)) }}", {"names": names}, limits) == (
        f"template error at line 1: this sequence would be larger than the {limits.value} characters a template value "
        "may hold")


def test_joining_many_pieces_without_a_separator_renders_when_the_result_fits() -> None:
    # With no separator, join adds nothing between the pieces: the
    # estimate is the pieces' weight, which is within the cap here.
    pieces = ["x"] * 10
    limits = RenderLimits(output=1000, value=weight(pieces, 1000), steps=1000, seconds=10, int_bits=64)
    assert render_template("{{ pieces|join }}", {"pieces": pieces}, limits) == "x" * 10
    assert render_template("{{ pieces|join(d='') }}", {"pieces": pieces}, limits) == "x" * 10


def test_indent_is_refused_from_its_estimate_before_it_is_built() -> None:
    # 'a\nb' is estimated at its 3 characters and one indent per line, the
    # first line counted too (indent may be asked to indent it): with a width
    # of 498, 3 + 2 * 498 = 999, within a cap of 1,000: indented. With 499,
    # 1,001: refused by the estimate, by position, by name or as a text,
    # though the text it would have made (502 characters) fits.
    limits = RenderLimits(output=10_000, value=1000, steps=100, seconds=10, int_bits=64)
    values = {"text": "a\nb", "pad": " " * 499}
    assert render_template("{{ text|indent(498) }}", values, limits) == "a\n" + " " * 498 + "b"
    refused = ("template error at line 1: what 'indent' returns would be larger than the 1,000 characters a template "
               "value may hold")
    assert _refusal("{{ text|indent(499) }}", values, limits) == refused
    assert _refusal("{{ text|indent(width=499) }}", values, limits) == refused
    assert _refusal("{{ text|indent(pad) }}", values, limits) == refused


def test_join_is_refused_from_its_estimate_before_the_pieces_are_joined() -> None:
    # Ten pieces weigh 62 (their list's repr, bounded); the estimate adds
    # the separator once per piece: with 93 characters, 62 + 10 * 93 = 992,
    # within a cap of 1,000: joined. With 94, 1,002: refused by the
    # estimate, by position or by name, though the joined text (856
    # characters) would fit.
    pieces = ["x"] * 10
    assert weight(pieces, 1000) == 62
    limits = RenderLimits(output=10_000, value=1000, steps=100, seconds=10, int_bits=64)
    values = {"pieces": pieces, "short": "-" * 93, "long": "-" * 94}
    assert render_template("{{ pieces|join(short) }}", values, limits) == ("-" * 93).join(pieces)
    refused = ("template error at line 1: what 'join' returns would be larger than the 1,000 characters a template "
               "value may hold")
    assert _refusal("{{ pieces|join(long) }}", values, limits) == refused
    assert _refusal("{{ pieces|join(d=long) }}", values, limits) == refused


def test_a_product_of_integers_is_refused_from_its_operands_bit_lengths_before_it_is_computed() -> None:
    # A product has at most as many bits as its two operands together:
    # 33 + 31 = 64 bits fits a cap of 64 and is computed; 33 + 32 = 65 is
    # refused before multiplying, though 2 ** 63 itself would be 64 bits.
    limits = RenderLimits(output=10_000, value=1000, steps=100, seconds=10, int_bits=64)
    values = {"a": 2**32, "b": 2**30, "c": 2**31}
    assert render_template("{{ a * b }}", values, limits) == str(2**62)
    refused = "template error at line 1: '*' would be an integer of more than 64 bits"
    assert _refusal("{{ a * c }}", values, limits) == refused
    assert _refusal("{{ c * a }}", values, limits) == refused
