"""Rule v1-length-limit: the decode threshold does not send long sequences to V1."""

from __future__ import annotations

import ast
from typing import Iterator

from .base import FileRule, Invalid, PythonSource, Settings, Valid, Violation
from .keep_pytorch_fallbacks import DECODE
from .paged_attention import CLASS, Function, resolved, classes, guarded_calls
from .syntax_index import dotted, integer_value


# A real version's shape: the threshold raised, V2 "enabled" through the upstream heuristic
# with a pure-PyTorch V2 substitute.
_SUBSTITUTE = """\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 65536

    @staticmethod
    def forward_decode(query, seq_lens, max_seq_len, num_seqs, num_heads, max_num_partitions):
        actual_max = int(seq_lens.max().item())
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query, seq_lens)
        output = torch.empty_like(query)
        use_v1 = (max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512))
        if use_v1:
            ops.paged_attention_v1(output, query)
        else:
            PagedAttention._paged_attention_v2_pytorch(output, query)
        return output
"""


class V1LengthLimit(FileRule):
    """The decode threshold, above which decode runs in PyTorch, is at most ``max-tokens``.

    Sequences up to the threshold go to the V1 kernel (directly, or after
    V2 fails), which fails past about 32K tokens. A threshold that is not a
    constant cannot be checked, and is reported too. When every V1 call that
    can run sits under a test bounding the length at most ``max-tokens``
    (``v1_bound``), the threshold sends nothing long to V1, and passes.
    """

    ID = "v1-length-limit"
    DESCRIPTION = __doc__ or ""
    PARAMS = {"max-tokens": 32768, "threshold-attribute": "_PYTORCH_DECODE_THRESHOLD"}
    VALID = (
        # Raised to 65536, but V1 only ever runs under the upstream heuristic's 8192 bound:
        # longer sequences go to a pure-PyTorch V2 substitute.
        Valid(_SUBSTITUTE),
        Valid(_SUBSTITUTE.replace("use_v1 = (max_seq_len <= 8192", "use_v1 = (8192 >= max_seq_len")
              .replace("\n", "\r\n")),
        Valid("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 32768\n"),
        Valid("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 16 * 1024\n"),
        Valid("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 65536\n", params={"max-tokens": 65536}),
        Valid("""\
class PagedAttention:
    @staticmethod
    def forward_decode(q, n):
        if n > 16384:
            return PagedAttention._forward_decode_pytorch(q)
"""),
    )
    INVALID = (
        # Raised to 999999 in front of the three-tier decode: V1 runs after V2 fails, at any length.
        Invalid(_SUBSTITUTE.replace("65536", "999999").replace("""\
        if use_v1:
            ops.paged_attention_v1(output, query)
        else:
            PagedAttention._paged_attention_v2_pytorch(output, query)
""", """\
        if not use_v1:
            try:
                ops.paged_attention_v2(output, query)
            except NotImplementedError:
                use_v1 = True
        if use_v1:
            ops.paged_attention_v1(output, query)
"""), line=2, found="sends sequences of 32769 to 999999 tokens to the V1 kernel"),
        Invalid("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 65536\n", line=2,
                found="_PYTORCH_DECODE_THRESHOLD = 65536 sends sequences of 32769 to 65536 tokens"),
        Invalid("class PagedAttention:\n    _PYTORCH_DECODE_THRESHOLD = 1 << 16\n", line=2, found="= 65536"),
        Invalid("import os\nclass PagedAttention:\n"
                "    _PYTORCH_DECODE_THRESHOLD = int(os.environ.get('T', '32768'))\n",
                line=3, found="is not a constant"),
        Invalid("""\
class PagedAttention:
    @staticmethod
    def forward_decode(q, n):
        if n > 40000:
            return PagedAttention._forward_decode_pytorch(q)
""", line=4, found="n > 40000 sends sequences of 32769 to 40000 tokens"),
    )

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Check the threshold attribute and literal thresholds of each ``class PagedAttention``."""
        if not source.mentions(CLASS):
            return
        limit = int(settings.params["max-tokens"])
        attribute = str(settings.params["threshold-attribute"])
        for cls in classes(source.index):
            decode = cls.methods.get("forward_decode")
            bound = v1_bound(source, decode) if decode is not None else None
            if bound is not None and bound <= limit:
                continue  # V1 never sees a sequence past the limit, whatever the threshold
            value = cls.attribute_value(attribute)
            if value is not None:
                statement = cls.attributes[attribute]
                problem = _problem(source, f"{attribute} = ", value, limit)
                if problem:
                    yield settings.violation(source.path, source.line(statement), problem)
            for guarded in guarded_calls(source, decode, DECODE, attribute) if decode else ():
                threshold = guarded.threshold
                if threshold is None or guarded.test is None or integer_value(threshold) is None:
                    continue
                if source.reachability.dead(guarded.call) is None:
                    problem = _problem(source, "", threshold, limit, shown=source.code(guarded.test))
                    if problem:
                        yield settings.violation(source.path, source.line(threshold), problem)


V1 = "paged_attention_v1"
# A comparison bounds a sequence length when what it compares is named like one.
_LENGTH_WORDS = ("len", "token", "ctx", "context", "actual_max")


def v1_bound(source: PythonSource, decode: Function) -> int | None:
    """Return the longest sequence any V1 call of ``decode`` that can run is reached with, when tests bound them all.

    A V1 call is bounded by an enclosing ``if`` whose test (or the local flag
    it reads, e.g. the upstream ``use_v1 = (max_seq_len <= 8192 and ...)``)
    holds ``length <= N`` / ``length < N`` (one operand of ``and`` is
    enough), or by the ``else`` of ``length > N``; ``length`` is a name like
    ``max_seq_len`` or ``actual_max``. None when some V1 call is unbounded,
    or there is none.
    """
    calls = [c for c in source.index.calls(V1, inside=decode) if source.reachability.dead(c) is None]
    bounds = []
    for call in calls:
        found = []
        child: ast.AST = call
        for parent in reversed(source.index.ancestors(call)):
            if parent is decode:
                break
            if isinstance(parent, ast.If) and child is not parent.test:
                test = resolved(source, parent.test, parent)
                at_most = _at_most(test, in_body=any(s is child for s in parent.body))
                if at_most is not None:
                    found.append(at_most)
            child = parent
        if not found:
            return None
        bounds.append(min(found))
    return max(bounds) if bounds else None


def _at_most(test: ast.expr, *, in_body: bool) -> int | None:
    """Return the largest length ``test`` lets through in its body (``in_body``) or its else, if it bounds one."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _at_most(test.operand, in_body=not in_body)
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and in_body:
        found = [b for b in (_at_most(v, in_body=True) for v in test.values) if b is not None]
        return min(found) if found else None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    operator, left, right = test.ops[0], test.left, test.comparators[0]
    if not in_body:  # the else of `x > N` is `x <= N`
        flipped = {ast.Gt: ast.LtE, ast.GtE: ast.Lt, ast.Lt: ast.GtE, ast.LtE: ast.Gt}.get(type(operator))
        if flipped is None:
            return None
        operator = flipped()
    if isinstance(operator, (ast.Gt, ast.GtE)):  # N > x, N >= x
        operator, left, right = (ast.Lt() if isinstance(operator, ast.Gt) else ast.LtE()), right, left
    number = integer_value(right)
    if number is None or not _is_length(left):
        return None
    return number - 1 if isinstance(operator, ast.Lt) else number if isinstance(operator, ast.LtE) else None


def _is_length(node: ast.expr) -> bool:
    name = dotted(node.func if isinstance(node, ast.Call) else node) or ""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" and node.args:
        return _is_length(node.args[0])
    return any(word in name.lower() for word in _LENGTH_WORDS)


def _problem(source: PythonSource, prefix: str, value: ast.expr, limit: int, shown: str | None = None) -> str | None:
    number = integer_value(value)
    text = shown or f"{prefix}{source.code(value)}"
    if number is None:
        return (f"{text} is not a constant, so whether decode sends sequences longer than "
                f"{limit} tokens to V1 cannot be checked")
    if number <= limit:
        return None
    if shown is None and source.code(value) != str(number):
        text = f"{text} = {number}"
    return (f"{text} sends sequences of {limit + 1} to {number} tokens to the V1 kernel "
            f"(directly or after V2 fails), past its {limit}-token limit")

