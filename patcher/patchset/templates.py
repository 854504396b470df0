"""The one Jinja2 environment, sandboxed and on a budget: patch templates first, then the tool's own templates.

A patch folder is untrusted (CI renders the templates of a pull request),
so every template renders in Jinja2's ``ImmutableSandboxedEnvironment``: no
Python internals (``cycler.__init__.__globals__`` is a ``SecurityError``),
no mutation of lists and dicts. The sandbox stops escapes, not runaway work,
so each render also runs on a budget (``RenderLimits``) that no template can
get around:

- output: every piece of text a template writes, in its output or in a
  captured block (``{% set x %}``, a macro, a call block, a filter block),
  goes through ``spend_output`` (the code generator wraps each one), so a
  huge output stops at the cap instead of filling memory;
- steps: every loop iteration (the generator puts a tick in each loop body
  and each loop filter, so loops that call nothing are counted too), call,
  filter, test and operator counts one step; nested ``range`` loops, loops
  over nested literal lists and recursive macros run out of steps;
- time: each step and each attribute lookup checks the CPU time the
  rendering thread has used. A deadline checked in the hooks works on any
  thread; SIGALRM would work only on the main thread and would fight other
  users of the signal, and a hook-free loop cannot exist (see above);
- size: no value a template makes may weigh more than the cap (its ``repr``
  length, shared parts counted each time, measured without recursion and
  stopping at the cap). Operators, calls and filters that can make much
  more than they are given (``'x' * n``, ``10 ** n``, ``center``, ``indent``,
  ``batch``, ``slice``, ``replace``, ``join``, ``wordwrap``, ``format``,
  ``%``, ``tojson(indent=...)``, ``str.format``, ``ljust``, ``expandtabs``,
  ``int.to_bytes``...) are estimated before they run; every result is
  weighed after; list, tuple and dict literals are weighed as they are
  made; and whatever is turned into text (output, ``~``, a filter's or a
  call's arguments) is weighed first, so a value built from shared parts
  (``[a, a]`` nested, a namespace) cannot expand into gigabytes.
  Integers are capped in bits;
- ``random`` and ``lipsum`` are gone (a patch's code must be a function of
  its parameters: the patch cache relies on it), and so are the HTML-only
  ``urlize`` and ``xmlattr``.

A template that breaks any of this, or raises while rendering (``{{ 1//0 }}``),
fails with ``TemplateFailure`` (exit 2) naming the template and line.
"""

from __future__ import annotations

import collections.abc as abc
import contextvars
import functools
import math
import re
import time
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.loaders import split_template_path
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedEscapeFormatter, SandboxedFormatter
from jinja2.utils import Namespace
from markupsafe import Markup

from ..errors import PatchSetError
from .folder import FileMissing, PatchFolder, decode, shown

# What could make inline text more than literal text: a Jinja delimiter
# ({{ }}, {% %}, {# #}) or a carriage return (Jinja normalises line endings).
_MAY_BE_JINJA = re.compile(r"\{[{%#]|\r")


class TemplateFailure(PatchSetError):
    """A template is missing, malformed, uses a variable nobody defined, or fails while rendering."""


class BudgetExceeded(SecurityError):
    """A template went past its render budget: too much output, work, time or too large a value."""


@dataclass(frozen=True)
class RenderLimits:
    """What one render may cost."""

    output: int  # characters written, captured blocks included
    value: int  # weight of any one value (its repr length)
    steps: int  # loop iterations, calls, filters, tests and operators
    seconds: float  # CPU seconds of the rendering thread
    int_bits: int  # size of any integer


# A patch template renders a few hundred characters in microseconds; these
# are far above that and far below what hurts a CI runner.
PATCH_LIMITS = RenderLimits(output=1 << 20, value=1 << 20, steps=1_000_000, seconds=10.0, int_bits=4096)
# The tool's own report templates (diff.md.j2 holds whole diffs) are trusted:
# only a bug could reach these.
REPORT_LIMITS = RenderLimits(output=1 << 30, value=1 << 30, steps=100_000_000, seconds=600.0, int_bits=1 << 16)

# The clock the deadline reads: CPU time of this thread, so that a loaded
# machine or a thread reading ahead does not eat a template's time.
_clock: Callable[[], float] = time.thread_time


class _Budget:
    """The running cost of one render."""

    def __init__(self, limits: RenderLimits) -> None:
        self.limits = limits
        self.steps = 0
        self.output = 0
        self.deadline = _clock() + limits.seconds

    def step(self) -> None:
        self.steps += 1
        if self.steps > self.limits.steps:
            raise BudgetExceeded(f"the template runs past its budget of {self.limits.steps:,} loop iterations, "
                                 "calls and operations (a loop or recursion that does not end?)")
        self.check_time()

    def check_time(self) -> None:
        if _clock() > self.deadline:
            raise BudgetExceeded(f"the template runs past its budget of {self.limits.seconds:g} CPU seconds")

    def write(self, size: int) -> None:
        self.output += size
        if self.output > self.limits.output:
            raise BudgetExceeded(f"the template writes more than its budget of {self.limits.output:,} characters")

    def fits(self, estimate: int, what: str) -> None:
        if estimate > self.limits.value:
            raise BudgetExceeded(f"{what} would be larger than the {self.limits.value:,} characters a template "
                                 "value may hold")

    def weigh(self, value: Any, what: str = "a value") -> None:
        self.fits(weight(value, self.limits.value), what)

    def int_fits(self, bits: int, what: str) -> None:
        if bits > self.limits.int_bits:
            raise BudgetExceeded(f"{what} would be an integer of more than {self.limits.int_bits:,} bits")


_BUDGET: contextvars.ContextVar[_Budget] = contextvars.ContextVar("patcher_render_budget")


def _budget() -> _Budget:
    try:
        return _BUDGET.get()
    except LookupError:
        # Only render() sets one. Jinja folds constants at compile time by
        # calling filters, and treats an exception as "not constant": the
        # work then happens at render time, on the budget.
        raise RuntimeError("a template is evaluated outside patcher.patchset.templates.render") from None


# --------------------------------------------------------------------------- values


class Text:
    """A ``str`` parameter as a template sees it: it writes itself as a Python string literal.

    ``{{ name }}`` gives ``'fast path'`` (``repr``: quotes and backslashes
    escaped, never more than one line), so a value cannot become code.
    It compares, hashes and measures (``|length``) as its value; filters
    see the literal (``{{ name|upper }}`` gives ``'FAST PATH'``), so no
    ordinary operation strips the quotes; ``|tojson`` gives the value as a
    JSON string. A parameter meant to be code declares ``kind``.
    """

    __slots__ = ("_value",)  # a leading underscore: the sandbox refuses to hand out the raw text

    def __init__(self, value: str) -> None:
        self._value = value

    def __str__(self) -> str:
        return repr(self._value)

    def __repr__(self) -> str:
        return repr(self._value)

    def __len__(self) -> int:
        return len(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Text):
            return self._value == other._value
        return self._value == other if isinstance(other, str) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._value)

    def __contains__(self, item: object) -> bool:
        return isinstance(item, str) and item in self._value


def python_literal(value: float) -> str:
    """Write a float as Python source: ``repr``, or ``float('nan')``/``float('inf')``/``float('-inf')``."""
    if math.isfinite(value):
        return repr(value)
    return f"float('{value}')"


def _finalize(value: Any) -> Any:
    # Every {{ }} passes here before str(): weigh it first, as str() of a
    # value built from shared parts could be far larger than the value.
    try:
        budget = _BUDGET.get()
    except LookupError:
        budget = None  # constant folding at compile time: a literal from the template text
    if budget is not None:
        budget.weigh(value, "the text of this value")
    if isinstance(value, float):
        return python_literal(value)  # 'nan' or 'inf' alone would be names, not numbers
    return value


def _json_default(value: Any) -> Any:
    if isinstance(value, Text):
        return value._value
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def weight(value: Any, limit: int) -> int:
    """Estimate the length of ``repr(value)``, shared parts counted each time; stop once past ``limit``.

    Walks without recursion, so a deep or self-containing value costs at
    most ``limit`` steps and cannot overflow the stack.
    """
    total = 0
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (str, bytes, bytearray)):
            total += len(item) + 3
        elif isinstance(item, Undefined) or item is None or isinstance(item, bool):
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() * 3 // 10 + 2
        elif isinstance(item, float):
            total += 24
        elif isinstance(item, Text):
            total += len(item._value) + 3
        elif isinstance(item, range):
            digits = max(len(str(item.start)), len(str(item.stop))) + 2
            total += len(item) * digits
        elif isinstance(item, Namespace):
            pending.append(item._Namespace__attrs)
        elif isinstance(item, abc.Mapping):
            total += 2 + 4 * len(item)
            if total <= limit:
                for key in item:
                    pending.append(key)
                    pending.append(item[key])
        elif isinstance(item, (list, tuple, set, frozenset, abc.KeysView, abc.ValuesView, abc.ItemsView)):
            total += 2 + 2 * len(item)
            if total <= limit:
                pending.extend(item)
        else:
            total += 16  # an object the template cannot expand: a macro, a cycler, a generator
        if total > limit:
            return total
    return total


def _materialise(value: Any, budget: _Budget) -> Any:
    """Turn a generator (a filter's lazy result) into a list, one step and one weight check per item.

    Only generators: a loop's ``loop`` object is an iterator too, and a
    macro given it must not find it consumed.
    """
    if not isinstance(value, types.GeneratorType):
        return value
    items = []
    total = 0
    for item in value:
        budget.step()
        total += weight(item, budget.limits.value) + 2
        budget.fits(total, "this sequence")
        items.append(item)
    return items


def _counted(iterator: Iterator[Any]) -> Iterator[Any]:
    # A filter's lazy result: each item it produces is a step.
    for item in iterator:
        _budget().step()
        yield item


# --------------------------------------------------------------------------- estimates

_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?[a-zA-Z%]")
_DIGITS = re.compile(r"[0-9]+")


def _number(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _text_size(value: Any, budget: _Budget) -> int:
    return len(value) if isinstance(value, (str, bytes)) else weight(value, budget.limits.value)


def _percent_estimate(text: str, args: Any, budget: _Budget) -> int:
    """Bound the length of ``text % args`` before computing it."""
    values = list(args.values()) if isinstance(args, abc.Mapping) else list(args) if isinstance(args, tuple) else [args]
    largest = max((_text_size(v, budget) for v in values), default=0)
    star = max((abs(_number(v)) for v in values), default=0)
    total = len(text)
    for found in _PERCENT_SPEC.finditer(text):
        width, precision = found.group(1), found.group(2)
        total += largest
        for number in (width, precision):
            if number == "*":
                total += star
            elif number:
                total += int(number) if len(number) < 20 else 10**20
    return total


def _str_method_estimate(method: str, text: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                         budget: _Budget) -> int | None:
    """Bound what a str or bytes method that can grow its input returns; None when it cannot grow it."""
    size = len(text)
    if method in ("center", "ljust", "rjust", "zfill"):
        # Their width is positional only: by name, Python refuses the call itself.
        return max(size, _number(args[0] if args else 0))
    if method == "expandtabs":
        tab = _number(args[0] if args else kwargs.get("tabsize", 8))
        return size + text.count("\t" if isinstance(text, str) else b"\t") * max(tab, 0)
    if method == "replace" and len(args) >= 2:
        return _replace_estimate(text, args[0], args[1], args[2] if len(args) > 2 else kwargs.get("count", -1))
    if method == "join" and args:
        items = args[0]
        return sum(_text_size(item, budget) for item in items) + size * max(len(items) - 1, 0)
    if method == "translate" and args and isinstance(args[0], abc.Mapping):
        longest = max((_text_size(v, budget) for v in args[0].values()), default=1)
        return size * max(longest, 1)
    return None


def _replace_estimate(text: Any, old: Any, new: Any, count: Any) -> int:
    if isinstance(text, Markup):
        # Markup.replace escapes its arguments, whatever their type: the text they become is what grows it.
        old, new = str(Markup.escape(old)), str(Markup.escape(new))
    if not isinstance(text, (str, bytes)) or not isinstance(old, (str, bytes)) or not isinstance(new, type(old)) \
            or isinstance(old, str) != isinstance(text, str):
        return len(text) if isinstance(text, (str, bytes)) else 0  # str.replace refuses other arguments
    times = text.count(old) if old else len(text) + 1  # type: ignore[arg-type]
    limit = _number(count)
    if isinstance(count, int) and limit >= 0:
        times = min(times, limit)
    return len(text) + times * max(len(new) - len(old), 0)


def _filter_estimate(name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any], budget: _Budget) -> int | None:
    """Bound the size of what a filter that can grow its input returns; None for the others."""

    def arg(position: int, key: str, default: Any) -> Any:
        return args[position] if len(args) > position else kwargs.get(key, default)

    value = args[0] if args else None
    if name == "center":
        return max(_text_size(value, budget), _number(arg(1, "width", 80)))
    if name == "indent":
        text = str(value)
        width = arg(1, "width", 4)
        step = len(width) if isinstance(width, str) else _number(width)
        return len(text) + (text.count("\n") + 1) * step
    if name == "wordwrap":
        text = str(value)
        wrap = arg(3, "wrapstring", None)
        return len(text) + (len(text) + 1) * (len(wrap) if isinstance(wrap, str) else 2)
    if name in ("batch", "slice"):
        count = _number(arg(1, "linecount" if name == "batch" else "slices", 0))
        fill = arg(2, "fill_with", None)
        return weight(value, budget.limits.value) + count * (weight(fill, budget.limits.value) + 4)
    if name == "replace":
        # Without autoescape Jinja's filter replaces in str(value) the str() of old and new, whatever they are
        # (a Markup value, a number, a list): each was weighed as an argument, so its text is bounded.
        return _replace_estimate(str(value), str(arg(1, "old", "")), str(arg(2, "new", "")), arg(3, "count", None))
    if name == "join":
        separator = arg(1, "d", "")
        items = value if isinstance(value, abc.Sized) else []
        return weight(value, budget.limits.value) + len(str(separator)) * len(items)
    if name == "format":
        return _percent_estimate(str(value), kwargs or tuple(args[1:]), budget)
    if name == "tojson":
        indent = arg(1, "indent", None)
        step = len(indent) if isinstance(indent, str) else _number(indent)
        if indent is True:
            step = 1  # json.dumps writes ' ' * indent: True is one space
        size = weight(value, budget.limits.value)
        # '<' -> '\u003c'; with an indent, each line is as deep as its item is nested.
        lines = 0 if indent is None else _indented_size(value, max(step, 0), budget.limits.value)
        return 6 * size + lines
    return None


def _indented_size(value: Any, step: int, limit: int) -> int:
    """Bound what ``json.dumps(value, indent=step)`` adds: a line break and its indent per item and closing bracket.

    An item nested ``depth`` deep is indented ``depth`` times, so a deep
    value adds far more than one indent per character. Walks without
    recursion and stops once past ``limit``.
    """
    total = 0
    pending = [(value, 0)]
    while pending and total <= limit:
        item, depth = pending.pop()
        if isinstance(item, abc.Mapping):
            children = list(item.values())
        elif isinstance(item, (list, tuple)):
            children = list(item)
        else:
            continue
        if children:
            total += len(children) * ((depth + 1) * step + 1) + depth * step + 1
            pending.extend((child, depth + 1) for child in children)
    return total


# --------------------------------------------------------------------------- environment


class _BudgetFormatter(SandboxedFormatter):
    """``str.format`` in the sandbox, refusing a huge field width and counting what it writes."""

    def __init__(self, env: jinja2.Environment, **kwargs: Any) -> None:
        super().__init__(env, **kwargs)
        self._written = 0

    def format_field(self, value: Any, format_spec: str) -> Any:
        budget = _budget()
        budget.step()
        budget.weigh(value, "a formatted field")
        # Any number in the spec (a width, a precision) is at most what the
        # field may write: conservative, and right whatever the spec's syntax.
        widths = [int(n) if len(n) < 20 else 10**20 for n in _DIGITS.findall(format_spec)]
        budget.fits(max(widths, default=0), "a formatted field")
        text = super().format_field(value, format_spec)
        self._written += len(text)
        budget.fits(self._written, "the formatted text")
        return text


class _BudgetEscapeFormatter(_BudgetFormatter, SandboxedEscapeFormatter):
    pass


class PatcherEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, with a budget hook on every operator, call, filter, loop and output."""

    intercepted_binops = frozenset(["+", "-", "*", "/", "//", "%", "**"])

    def __init__(self, *, loader: jinja2.BaseLoader, limits: RenderLimits) -> None:
        super().__init__(
            loader=loader,
            undefined=jinja2.StrictUndefined,  # a missing variable is an error, never ""
            keep_trailing_newline=True,
            autoescape=False,  # the output is Python and JSON, not HTML
            trim_blocks=True,
            lstrip_blocks=True,
            finalize=_finalize,
        )
        self.limits = limits
        self.code_generator_class = _BudgetCodeGenerator
        for name in ("lipsum",):
            self.globals.pop(name, None)
        for name in ("random", "urlize", "xmlattr"):
            self.filters.pop(name, None)
        self.filters = {name: _budgeted_filter(name, f) for name, f in self.filters.items()}
        self.tests = {name: _budgeted_filter(name, f) for name, f in self.tests.items()}  # type: ignore[arg-type]
        self.policies["json.dumps_kwargs"] = {"sort_keys": True, "default": _json_default}

    # Hooks the generated code and the sandbox call --------------------------

    def spend_output(self, text: str) -> str:
        """Count a piece of output (the generated code passes every piece through here)."""
        _budget().write(len(text))
        return text

    @property
    def budget_tick(self) -> bool:
        """Count one loop iteration; True, so that it can sit in a loop's ``if`` (read by the generated code)."""
        _budget().step()
        return True

    def checked(self, value: Any) -> Any:
        """Weigh a list, tuple or dict literal as it is made."""
        _budget().weigh(value, "this literal")
        return value

    def budget_concat(self, parts: tuple[Any, ...]) -> str:
        """Join the operands of ``~`` (Jinja's ``str_join``), weighed first."""
        budget = _budget()
        budget.step()
        budget.fits(sum(weight(p, budget.limits.value) for p in parts), "the joined text")
        return "".join(str(p) for p in parts)

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Run an operator after bounding its result (``'x' * n``, ``10 ** n``, ``s % args``)."""
        budget = _budget()
        budget.step()
        what = f"'{operator}'"
        budget.weigh(left, what)
        budget.weigh(right, what)
        ints = all(isinstance(v, int) for v in (left, right))
        if operator == "*":
            if ints:
                budget.int_fits(abs(left).bit_length() + abs(right).bit_length(), what)
            for sequence, times in ((left, right), (right, left)):
                if isinstance(sequence, (str, bytes, list, tuple)) and isinstance(times, int):
                    budget.fits(_text_size(sequence, budget) * max(times, 0), what)
        elif operator == "**" and ints and right > 0 and abs(left) > 1:
            budget.int_fits(math.ceil(math.log2(abs(left)) * right), what)
        elif operator == "%" and isinstance(left, (str, bytes)):
            budget.fits(_percent_estimate(str(left), right, budget), what)
        elif operator == "+" and not ints:
            budget.fits(weight(left, budget.limits.value) + weight(right, budget.limits.value), what)
        result = super().call_binop(context, operator, left, right)
        if isinstance(result, int):
            budget.int_fits(abs(result).bit_length(), what)
        budget.weigh(result, what)
        return result

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805
        """Call from a template: a step; arguments weighed; growth bounded before, the result weighed after."""
        budget = _budget()
        budget.step()
        args = tuple(_materialise(a, budget) for a in args)
        kwargs = {k: _materialise(v, budget) for k, v in kwargs.items()}
        for value in (*args, *kwargs.values()):
            budget.weigh(value, "an argument")
        owner = getattr(__obj, "__self__", None)
        method = getattr(__obj, "__name__", "")
        if isinstance(owner, (str, bytes, bytearray)):
            budget.weigh(owner, "the text a method is called on")
            estimate = _str_method_estimate(method, owner, args, kwargs, budget)
            if estimate is not None:
                budget.fits(estimate, f"'{method}'")
        elif isinstance(owner, int) and method == "to_bytes":
            budget.fits(_number(args[0] if args else kwargs.get("length", 1)), "'to_bytes'")
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(result, abc.Iterator) and not isinstance(result, (str, bytes)):
            return _counted(result)
        budget.weigh(result, "what the call returns")
        return result

    def getattr(self, obj: Any, attribute: str) -> Any:
        """Look an attribute up, on the clock."""
        _budget().check_time()
        return super().getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """Look an item up, on the clock."""
        _budget().check_time()
        return super().getitem(obj, argument)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Sandbox ``str.format`` and ``format_map`` with a formatter that counts what it writes."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        owner = value.__self__
        kind = type(owner)
        is_map = value.__name__ == "format_map"

        def run(*args: Any, **kwargs: Any) -> str:
            formatter = (_BudgetEscapeFormatter(self, escape=owner.escape) if isinstance(owner, Markup)
                         else _BudgetFormatter(self))
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one positional argument")
                return kind(formatter.vformat(owner, (), args[0]))
            return kind(formatter.vformat(owner, args, kwargs))

        return functools.update_wrapper(run, value)


def _budgeted_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a filter (or test): a step; iterators materialised and arguments weighed; growth bounded; result weighed."""
    # Filters marked pass_context/pass_eval_context/pass_environment get that
    # object first; functools.wraps keeps the mark (jinja_pass_arg).
    skip = 1 if hasattr(function, "jinja_pass_arg") else 0

    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.step()
        head, given = args[:skip], tuple(_materialise(a, budget) for a in args[skip:])
        kwargs = {k: _materialise(v, budget) for k, v in kwargs.items()}
        for value in (*given, *kwargs.values()):
            budget.weigh(value, f"an argument of '{name}'")
        estimate = _filter_estimate(name, given, kwargs, budget)
        if estimate is not None:
            budget.fits(estimate, f"what '{name}' returns")
        result = function(*head, *given, **kwargs)
        if isinstance(result, abc.Iterator) and not isinstance(result, (str, bytes)):
            return _counted(result)
        budget.weigh(result, f"what '{name}' returns")
        return result

    return run


class _BudgetCodeGenerator(CodeGenerator):
    """Jinja's code generator, with the budget's hooks written into the template's code."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        # A loop body that calls nothing would run free of every other hook:
        # count each iteration, and each item a loop filter ({% for x in y
        # if t %}) looks at. Jinja allows no custom node types, so the tick
        # is an environment attribute whose lookup counts (``budget_tick``).
        tick = nodes.EnvironmentAttribute("budget_tick", lineno=node.lineno)
        node.body = [nodes.ExprStmt(tick, lineno=node.lineno), *node.body]
        if node.test is not None:
            node.test = nodes.And(nodes.EnvironmentAttribute("budget_tick", lineno=node.lineno), node.test,
                                  lineno=node.lineno)
        super().visit_For(node, frame)

    # An include, import, extends or block renders another template's code
    # without a call or a loop: count it, or including a template four times
    # from each of thirty levels (4**30 renders) would run on unseen.
    def visit_Include(self, node: nodes.Include, frame: Frame) -> None:
        self.writeline("environment.budget_tick")
        super().visit_Include(node, frame)

    def visit_Import(self, node: nodes.Import, frame: Frame) -> None:
        self.writeline("environment.budget_tick")
        super().visit_Import(node, frame)

    def visit_FromImport(self, node: nodes.FromImport, frame: Frame) -> None:
        self.writeline("environment.budget_tick")
        super().visit_FromImport(node, frame)

    def visit_Extends(self, node: nodes.Extends, frame: Frame) -> None:
        self.writeline("environment.budget_tick")
        super().visit_Extends(node, frame)

    def visit_Block(self, node: nodes.Block, frame: Frame) -> None:
        self.writeline("environment.budget_tick")
        super().visit_Block(node, frame)

    def _output_const_repr(self, group: Any) -> str:
        return f"environment.spend_output({super()._output_const_repr(group)})"

    def _output_child_pre(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        self.write("environment.spend_output(")
        super()._output_child_pre(node, frame, finalize)

    def _output_child_post(self, node: nodes.Expr, frame: Frame, finalize: Any) -> None:
        super()._output_child_post(node, frame, finalize)
        self.write(")")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.budget_concat((")
        for part in node.nodes:
            self.visit(part, frame)
            self.write(", ")
        self.write("))")

    def visit_List(self, node: nodes.List, frame: Frame) -> None:
        self.write("environment.checked(")
        super().visit_List(node, frame)
        self.write(")")

    def visit_Dict(self, node: nodes.Dict, frame: Frame) -> None:
        self.write("environment.checked(")
        super().visit_Dict(node, frame)
        self.write(")")

    def visit_Tuple(self, node: nodes.Tuple, frame: Frame) -> None:
        if node.ctx != "load":  # an assignment target: {% for a, b in ... %}
            super().visit_Tuple(node, frame)
            return
        self.write("environment.checked(")
        super().visit_Tuple(node, frame)
        self.write(")")


# --------------------------------------------------------------------------- loaders


class _FolderLoader(jinja2.BaseLoader):
    """Templates of an untrusted patch set: read through the closed-world reader (``folder.py``)."""

    def __init__(self, folder: PatchFolder) -> None:
        self.folder = folder

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        pieces = split_template_path(template)  # refuses '..'
        try:
            data, path = self.folder.template(pieces)
        except FileMissing:
            raise jinja2.TemplateNotFound(template) from None
        # The file name Jinja puts in tracebacks is the template's name, so
        # that an error names it as the patch does.
        return decode(data, path), template, lambda: True


class _ToolLoader(jinja2.FileSystemLoader):
    """The tool's own templates (trusted), named in tracebacks by their template name."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, _, uptodate = super().get_source(environment, template)
        return source, template, uptodate


def make_environment(*folders: Path | PatchFolder, limits: RenderLimits | None = None) -> PatcherEnvironment:
    """Build the environment: sandboxed, strict about undefined names, faithful to newlines.

    Templates are looked up in ``folders`` in order. A ``PatchFolder`` is an
    untrusted patch set, read as a closed world; a ``Path`` is a folder of
    the tool's own templates. ``limits`` defaults to ``PATCH_LIMITS`` when
    any folder is a patch set, else ``REPORT_LIMITS``.
    """
    loaders: list[jinja2.BaseLoader] = []
    for folder in folders:
        if isinstance(folder, PatchFolder):
            loaders.append(_FolderLoader(folder))
        elif folder.is_dir():
            loaders.append(_ToolLoader(str(folder)))
    if limits is None:
        limits = PATCH_LIMITS if any(isinstance(f, PatchFolder) for f in folders) else REPORT_LIMITS
    return PatcherEnvironment(loader=jinja2.ChoiceLoader(loaders), limits=limits)


# --------------------------------------------------------------------------- rendering


def render(env: PatcherEnvironment, *, name: str | None = None, source: str | None = None,
           values: Mapping[str, Any]) -> str:
    """Render a template file (``name``) or inline text (``source``) with ``values``, on the environment's budget."""
    if name is None and source is not None and not _MAY_BE_JINJA.search(source):
        # No delimiter, so nothing to render: Jinja would return the text
        # unchanged (newlines kept, see make_environment) after compiling it
        # to Python, which costs more than every other step of loading a patch.
        return source
    token = _BUDGET.set(_Budget(env.limits))
    try:
        template = env.get_template(name) if name is not None else env.from_string(source or "")
        return "".join(template.generate(**values))
    except jinja2.TemplateNotFound as error:
        raise TemplateFailure(f"no template '{shown(str(error.name))}' in the templates folder") from None
    except jinja2.UndefinedError as error:
        raise TemplateFailure(f"template uses an undefined variable: {shown(str(error.message), 200)}") from None
    except jinja2.TemplateSyntaxError as error:
        inside = f" of '{shown(error.name)}'" if error.name and error.name != name else ""
        raise TemplateFailure(f"template syntax error at line {error.lineno}{inside}: {shown(error.message or '', 200)}") from None
    except TemplateFailure:
        raise
    except PatchSetError as error:  # the closed-world reader refused an included file
        raise TemplateFailure(str(error)) from None
    except MemoryError as error:
        # The budgets refuse a value before it is built; one they missed must still end as one clear line.
        raise TemplateFailure(f"template error{_where(error, name)}: it needs more memory than this machine "
                              "gives it") from None
    except (RecursionError, SyntaxError) as error:
        # Compiling a template that nests thousands deep, or a template that
        # includes itself, calls a macro without end, extends itself.
        where = _where(error, name)
        raise TemplateFailure(f"template error{where}: it nests or recurses deeper than Python allows "
                              "(a template that includes, imports or extends itself, or a macro that calls "
                              "itself without end?)") from None
    except Exception as error:  # raised by the template while rendering: its author's to fix
        where = _where(error, name)
        if isinstance(error, BudgetExceeded):
            what = str(error)
        elif isinstance(error, SecurityError):
            what = f"not allowed in a template: {error}"
        else:
            what = f"{type(error).__name__}: {error}"
        raise TemplateFailure(f"template error{where}: {shown(what, 300)}") from None
    finally:
        _BUDGET.reset(token)


def _where(error: BaseException, name: str | None) -> str:
    """Say at which line of which template ``error`` was raised: the innermost template frame."""
    found: tuple[str, int] | None = None
    for frame, line in traceback.walk_tb(error.__traceback__):
        if "__jinja_exception__" in frame.f_globals:  # a frame Jinja rewrote to point at template source
            found = (frame.f_code.co_filename, line)
    if found is None:
        return f" in '{shown(name)}'" if name else ""
    filename, line = found
    # Inline code (a patch's 'code' or 'pattern') is named by the caller.
    return f" at line {line}" if filename == "<template>" else f" at line {line} of '{shown(filename)}'"


__all__ = ["PATCH_LIMITS", "REPORT_LIMITS", "BudgetExceeded", "PatcherEnvironment", "RenderLimits", "TemplateFailure",
           "Text", "make_environment", "python_literal", "render", "weight"]
