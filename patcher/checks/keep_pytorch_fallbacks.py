"""Rule keep-pytorch-fallbacks: prefill and long-context decode keep their PyTorch paths."""

from __future__ import annotations

import ast
from typing import Iterator

from .base import FileRule, Invalid, PythonSource, Settings, Valid, Violation
from .paged_attention import CLASS, GuardedCall, PagedAttentionClass, classes, guarded_calls
from .syntax_index import dotted

PREFIX = "_forward_prefix_pytorch"
DECODE = "_forward_decode_pytorch"

_HEAD = """\
class PagedAttention:
    @staticmethod
    def _forward_prefix_pytorch(query):
        return query

    @staticmethod
    def _forward_decode_pytorch(query):
        return query

    _PYTORCH_DECODE_THRESHOLD = 32768

    @staticmethod
    def forward_prefix(query):
        return PagedAttention._forward_prefix_pytorch(query)

"""


class KeepPytorchFallbacks(FileRule):
    """``PagedAttention`` keeps both PyTorch paths, and the forward functions reach them.

    ``forward_prefix`` must call ``_forward_prefix_pytorch``; ``forward_decode``
    must call ``_forward_decode_pytorch`` when the length is above the
    decode threshold (or always), itself or through a method of the class it
    calls there (one level). Only a call that can run counts: one under
    ``if False:``, after a ``return``, under a module flag that is never
    true or inside a nested function nothing calls is no fallback (see
    ``reachability``).
    """

    ID = "keep-pytorch-fallbacks"
    DESCRIPTION = __doc__ or ""
    PARAMS = {"threshold-attribute": "_PYTORCH_DECODE_THRESHOLD"}
    VALID = (
        Valid(_HEAD + """\
    @staticmethod
    def forward_decode(query, seq_lens):
        actual_max = int(seq_lens.max().item())
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
        return query
"""),
        Valid(_HEAD + """\
    @staticmethod
    def forward_decode(query, seq_lens):
        if PagedAttention._PYTORCH_DECODE_THRESHOLD < seq_lens.max() and query.numel():
            return PagedAttention._forward_decode_pytorch(query)
        return query
"""),
        Valid(_HEAD + """\
    @staticmethod
    def forward_decode(query, max_len):
        if max_len <= 32768:
            return query
        else:
            return PagedAttention._forward_decode_pytorch(query)
"""),
        # Always decoding in PyTorch is slow, but safe.
        Valid(_HEAD + """\
    @staticmethod
    def forward_decode(query):
        return PagedAttention._forward_decode_pytorch(query)
"""),
        Valid("class Other:\n    pass\n"),
        # Long contexts handed to a helper method that calls the fallback: it is reached.
        Valid(_HEAD + """\
    @staticmethod
    def _decode_long(query):
        return PagedAttention._forward_decode_pytorch(query)

    @staticmethod
    def forward_decode(query, n):
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._decode_long(query)
        return query
"""),
        # A dead call beside a live one: the live one keeps the fallback.
        Valid(_HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
            return PagedAttention._forward_decode_pytorch(query.contiguous())
        return query
"""),
        # The threshold test through a local flag, and the vendor's own CRLF file.
        Valid(_HEAD + """\
    @staticmethod
    def forward_decode(query, seq_lens):
        actual_max = int(seq_lens.max().item())
        use_pytorch = actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD
        if use_pytorch:
            return PagedAttention._forward_decode_pytorch(query)
        return query
"""),
        Valid((_HEAD + """\
    @staticmethod
    def forward_decode(query, seq_lens, max_seq_len):
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
        use_v1 = True
        if use_v1:
            return query
""").replace("\n", "\r\n")),
    )
    INVALID = (
        Invalid(_HEAD.replace("""\
    @staticmethod
    def _forward_decode_pytorch(query):
        return query

""", "") + """\
    @staticmethod
    def forward_decode(query, n):
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
        return query
""", line=1, found="has no _forward_decode_pytorch"),
        Invalid(_HEAD.replace("return PagedAttention._forward_prefix_pytorch(query)",
                              "return context_attention_fwd(query)") + """\
    @staticmethod
    def forward_decode(query):
        return PagedAttention._forward_decode_pytorch(query)
""", line=13, found="forward_prefix does not call _forward_prefix_pytorch"),
        Invalid(_HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        if n < PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
        return query
""", line=19, found="not above the decode threshold"),
        Invalid(_HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        return query
""", line=17, found="never calls _forward_decode_pytorch"),
        # ixformer's own V2 past 32K: the PyTorch decode is still defined, but never called.
        Invalid(_HEAD + """\
    @staticmethod
    def forward_decode(query, seq_lens):
        import ixformer.functions as ixf_f
        actual_max = int(seq_lens.max().item())
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return ixf_f.paged_attention_v2_long(query, seq_lens)
        return query
""", line=17, found="never calls _forward_decode_pytorch"),
        # A fallback that cannot run is no fallback.
        Invalid(_HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            if False:
                return PagedAttention._forward_decode_pytorch(query)
        return query
""", line=20, found="calls _forward_decode_pytorch only where it cannot run (its test `False` is always false)"),
        # Nor is one after a `return`, under a module flag that is never true, or in a function nothing calls.
        Invalid(_HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        return ixf_f.paged_attention_v2_long(query, n)
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
""", line=20, found="only where it cannot run (it comes after the `return` at line 18)"),
        Invalid("USE_PYTORCH_DECODE = False\n" + _HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD and USE_PYTORCH_DECODE:
            return PagedAttention._forward_decode_pytorch(query)
        return ixf_f.paged_attention_v2_long(query, n)
""", line=20, found="only where it cannot run (`USE_PYTORCH_DECODE` is always False"),
        Invalid(_HEAD + """\
    @staticmethod
    def forward_decode(query, n):
        def long_context(q):
            return PagedAttention._forward_decode_pytorch(q)
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return ixf_f.paged_attention_v2_long(query, n)
        return query
""", line=19, found="(`long_context` is defined inside another function that never uses it)"),
        Invalid(_HEAD.replace("    _PYTORCH_DECODE_THRESHOLD = 32768\n", "") + """\
    @staticmethod
    def forward_decode(query, n):
        if n > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query)
        return query
""", line=18, found="which class PagedAttention does not define"),
    )

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Check every ``class PagedAttention`` in the file; other files have nothing to check."""
        if not source.mentions(CLASS):
            return
        attribute = str(settings.params["threshold-attribute"])
        for cls in classes(source.index):
            for message, node in _problems(source, cls, attribute):
                yield settings.violation(source.path, source.line(node), message)


def _reaching(source: PythonSource, cls: PagedAttentionClass, function: ast.FunctionDef | ast.AsyncFunctionDef,
              callee: str, attribute: str) -> list[GuardedCall]:
    """Return the calls of ``callee`` in ``function``, and its calls of a method of the class that calls ``callee``.

    One level deep: ``forward_decode`` may hand long contexts to a helper
    method (``PagedAttention._decode_long(...)``) that calls the fallback.
    Such a helper call counts when the fallback call inside the helper can
    run; it stands where the helper is called, under the tests of both.
    """
    found = guarded_calls(source, function, callee, attribute)
    dead = source.reachability.dead
    for name, helper in cls.methods.items():
        if helper is function or name == callee:
            continue
        inner = [g for g in guarded_calls(source, helper, callee, attribute) if dead(g.call) is None]
        if not inner:
            continue
        for site in guarded_calls(source, function, name, attribute):
            if dotted(site.call.func).rsplit(".", 1)[0] not in (CLASS, "cls", "self"):
                continue  # another object's method of that name
            first = inner[0]
            found.append(GuardedCall(site.call, (*site.chain, *first.chain[1:]), site.threshold or first.threshold,
                                     site.test if site.threshold is not None else first.test))
    return found


def _problems(source: PythonSource, cls: PagedAttentionClass, attribute: str) -> Iterator[tuple[str, ast.AST]]:
    index, dead = source.index, source.reachability.dead
    for name in (PREFIX, DECODE):
        if name not in cls.methods:
            yield f"class {CLASS} has no {name}", cls.node
    prefix = cls.methods.get("forward_prefix")
    if prefix is None:
        yield f"class {CLASS} has no forward_prefix, so nothing calls {PREFIX}", cls.node
    else:
        calls = _reaching(source, cls, prefix, PREFIX, attribute)
        live = [g for g in calls if dead(g.call) is None]
        if not calls:
            yield f"forward_prefix does not call {PREFIX}", prefix
        elif not live:
            why = dead(calls[0].call)
            yield f"forward_prefix calls {PREFIX} only where it cannot run ({why})", calls[0].call
    decode = cls.methods.get("forward_decode")
    if decode is None:
        yield f"class {CLASS} has no forward_decode, so nothing calls {DECODE}", cls.node
        return
    every = _reaching(source, cls, decode, DECODE, attribute)
    if not every:
        yield f"forward_decode never calls {DECODE}", decode
        return
    # A call in a branch that cannot run does not reach the fallback.
    found = [g for g in every if dead(g.call) is None]
    if not found:
        why = dead(every[0].call)
        yield f"forward_decode calls {DECODE} only where it cannot run ({why})", every[0].call
        return
    above = [g for g in found if g.threshold is not None]
    if not above and not any(g.unconditional for g in found):
        yield (f"forward_decode calls {DECODE}, but not above the decode threshold "
               f"(no `if length > {CLASS}.{attribute}:` leads to it)"), found[0].call
    for guarded in above:
        name = dotted(guarded.threshold) if guarded.threshold is not None else ""
        owner, _, attr = name.rpartition(".")
        if owner and attr not in cls.attributes:
            yield (f"forward_decode compares with {name}, which class {CLASS} does not define "
                   f"(AttributeError on the first decode)"), guarded.call

