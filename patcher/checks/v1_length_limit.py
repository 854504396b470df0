"""Rule v1-length-limit: the decode threshold does not send long sequences to V1."""

from __future__ import annotations

import ast
from typing import Iterator

from .base import FileRule, Invalid, PythonSource, Settings, Valid, Violation, integer_value
from .keep_pytorch_fallbacks import DECODE
from .paged_attention import CLASS, classes, guarded_calls


class V1LengthLimit(FileRule):
    """The decode threshold, above which decode runs in PyTorch, is at most ``max-tokens``.

    Sequences up to the threshold go to the V1 kernel (directly, or after
    V2 fails), which fails past about 32K tokens. A threshold that is not a
    constant cannot be checked, and is reported too.
    """

    ID = "v1-length-limit"
    DESCRIPTION = __doc__ or ""
    PARAMS = {"max-tokens": 32768, "threshold-attribute": "_PYTORCH_DECODE_THRESHOLD"}
    VALID = (
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
            value = cls.attribute_value(attribute)
            if value is not None:
                statement = cls.attributes[attribute]
                problem = _problem(source, f"{attribute} = ", value, limit)
                if problem:
                    yield settings.violation(source.path, source.line(statement), problem)
            decode = cls.methods.get("forward_decode")
            for guarded in guarded_calls(source.index, decode, DECODE, attribute) if decode else ():
                threshold = guarded.threshold
                if threshold is None or guarded.test is None or integer_value(threshold) is None:
                    continue
                if source.reachability.dead(guarded.call) is None:
                    problem = _problem(source, "", threshold, limit, shown=source.code(guarded.test))
                    if problem:
                        yield settings.violation(source.path, source.line(threshold), problem)


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

