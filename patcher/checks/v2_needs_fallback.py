"""Rule v2-needs-fallback: every V2 decode call can fall back to V1."""

from __future__ import annotations

import ast
from typing import Iterator, Sequence

from .base import FileRule, Invalid, PythonSource, Settings, Severity, Valid, Violation
from .syntax_index import SCOPES, TRY, SyntaxIndex, dotted

V1 = "paged_attention_v1"
V2 = "paged_attention_v2"
# NotImplementedError is a RuntimeError; a handler for any of these catches it.
CATCHES = frozenset({"NotImplementedError", "RuntimeError", "Exception", "BaseException"})
_EXITS = {ast.Raise: "raises", ast.Return: "returns", ast.Break: "breaks out", ast.Continue: "continues the loop"}


# The vendor's forward_decode, in its shape: the upstream heuristic, then the override.
_VENDOR = """\
class PagedAttention:
    _PYTORCH_DECODE_THRESHOLD = 32768  # V1 fails past this

    @staticmethod
    def forward_decode(query, key_cache, value_cache, block_tables, seq_lens, max_seq_len,
                       kv_cache_dtype, num_kv_heads, scale, alibi_slopes, k_scale, v_scale):
        actual_max = int(seq_lens.max().item()) if seq_lens.numel() > 0 else max_seq_len
        if actual_max > PagedAttention._PYTORCH_DECODE_THRESHOLD:
            return PagedAttention._forward_decode_pytorch(query, key_cache, value_cache,
                                                          block_tables, seq_lens, scale)
        output = torch.empty_like(query)
        num_seqs, num_heads, head_size = query.shape
        max_num_partitions = (max_seq_len + _PARTITION_SIZE - 1) // _PARTITION_SIZE
        use_v1 = (max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512))
        use_v1 = True
        if use_v1:
            ops.paged_attention_v1(output, query, key_cache, value_cache, num_kv_heads, scale,
                                   block_tables, seq_lens, block_size, max_seq_len, alibi_slopes)
        else:
            tmp_output = torch.empty_like(output)
            ops.paged_attention_v2(output, exp_sums, max_logits, tmp_output, query, key_cache,
                                   value_cache, num_kv_heads, scale, block_tables, seq_lens)
        return output
"""


class V2NeedsFallback(FileRule):
    """Every ``ops.paged_attention_v2`` call sits in a ``try`` whose handler reaches ``ops.paged_attention_v1``.

    The handler is the first one that catches ``NotImplementedError`` (bare,
    or naming it, ``RuntimeError``, ``Exception`` or ``BaseException``).
    "Reaches" is control flow, read off the syntax: the handler itself calls
    V1, or the handler does not raise, return, break or continue, and a V1
    call follows the ``try`` in one of the enclosing blocks of the same
    function (the patched shape: the handler clears ``use_v2`` and falls
    through to ``if not use_v2: ops.paged_attention_v1(...)``). It does not
    follow values: a flag the handler forgets to clear is not seen.

    A V2 call is ``x.paged_attention_v2(...)``, a call of a name V2 was
    imported as, or of ``getattr(ops, "paged_attention_v2")``. V2 handed on as
    a value (``kernel = ops.paged_attention_v2 if long else ...``) outside a
    ``try`` that falls back is a warning: the call it leads to cannot be read.

    A V2 call in a branch that cannot run (``use_v1 = True`` then ``if
    use_v1: ... else: <V2>``, ``if False:``; see ``reachability``) is not a
    violation: it gets a note saying why it cannot run.
    """

    ID = "v2-needs-fallback"
    DESCRIPTION = __doc__ or ""
    VALID = (
        # The shape three-tier-decode writes.
        Valid("""\
def forward_decode():
    use_v2 = actual_max > 8192 and not PagedAttention._v2_unavailable
    if use_v2:
        try:
            ops.paged_attention_v2(output, query)
        except (NotImplementedError, RuntimeError):
            PagedAttention._v2_unavailable = True
            use_v2 = False
    if not use_v2:
        ops.paged_attention_v1(output, query)
"""),
        Valid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        ops.paged_attention_v1(output, query)
"""),
        Valid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except Exception as error:
        log(error)
        if True:
            ops.paged_attention_v1(output, query)
"""),
        Valid("""\
def forward_decode():
    try:
        try:
            ops.paged_attention_v2(output, query)
        except ValueError:
            raise
    except NotImplementedError:
        ops.paged_attention_v1(output, query)
"""),
        Valid("def forward_decode():\n    ops.paged_attention_v1(output, query)\n"),
        # The vendor original: the V2 call sits in the else of `if use_v1:` right after `use_v1 = True`.
        Valid(_VENDOR, note="ops.paged_attention_v2 at line 21 cannot run: `use_v1` is always True here (line 15)"),
        Valid(_VENDOR.replace("use_v1 = True", "use_v1 = (True)").replace("\n", "\r\n"),
              note="`use_v1` is always True here (line 15)"),
        Valid("def forward_decode():\n    if False:\n        ops.paged_attention_v2(output, query)\n",
              note="its test `False` is always false"),
        Valid("def forward_decode():\n    if 0:\n        ops.paged_attention_v2(output, query)\n"
              "    ops.paged_attention_v1(output, query)\n", note="its test `0` is always false"),
    )
    INVALID = (
        # The vendor's shape without its override: the upstream heuristic alone can pick V2.
        Invalid(_VENDOR.replace("        use_v1 = True\n", ""), line=20, found="outside any try"),
        # A reassignment between the literal and the test, on some path, makes the branch live.
        Invalid("""\
def forward_decode(n):
    use_v1 = True
    if n > 8192:
        use_v1 = False
    if use_v1:
        ops.paged_attention_v1(output, query)
    else:
        ops.paged_attention_v2(output, query)
""", line=8, found="outside any try"),
        # The back edge: a later pass of the loop sees the reassignment.
        Invalid("""\
def forward_decode(batches):
    use_v1 = True
    for batch in batches:
        if use_v1:
            ops.paged_attention_v1(output, batch)
        else:
            ops.paged_attention_v2(output, batch)
        use_v1 = batch.short
""", line=7, found="outside any try"),
        # V2 imported under another name is still V2.
        Invalid("""\
from vllm._custom_ops import paged_attention_v2 as _decode_v2


def forward_decode():
    _decode_v2(output, query)
""", line=5, found="_decode_v2(...) is called outside any try"),
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        raise
""", line=3, found="raises"),
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        return None
    ops.paged_attention_v1(output, query)
""", line=3, found="returns"),
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        pass
""", line=3, found="no ops.paged_attention_v1 call follows"),
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except ValueError:
        ops.paged_attention_v1(output, query)
""", line=3, found="catches only ValueError"),
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        def later():
            ops.paged_attention_v1(output, query)
""", line=3, found="falls through, but no ops.paged_attention_v1 call follows"),
        Invalid("""\
def forward_decode():
    try:
        pass
    finally:
        ops.paged_attention_v2(output, query)
    ops.paged_attention_v1(output, query)
""", line=5, found="outside any try"),
        # The first matching handler is the one that runs: the fallback below it never does.
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        raise
    except Exception:
        ops.paged_attention_v1(output, query)
""", line=3, found="the handler at line 4 raises"),
        Invalid("""\
def forward_decode():
    try:
        ops.paged_attention_v2(output, query)
    except NotImplementedError:
        use_v2 = False
    else:
        ops.paged_attention_v1(output, query)
""", line=3, found="no ops.paged_attention_v1 call follows"),
    )

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield each V2 call that no ``try`` protects with a path to V1; a note for each that cannot run."""
        if not source.mentions(V2):
            return
        index, dead = source.index, source.reachability.dead
        v1 = [index.ancestors(call) for call in index.calls(V1) if dead(call) is None]
        calls, references = _v2_uses(index)
        found: list[Violation] = []
        for call in calls:
            name = _named(call.func, source)
            why = dead(call)
            if why is not None:
                found.append(settings.note(source.path, source.line(call),
                                           f"{name} at line {source.line(call)} cannot run: {why}"))
                continue
            problem = _unprotected((*index.ancestors(call), call), v1, source)
            if problem:
                found.append(settings.violation(source.path, source.line(call), f"{name}(...) {problem}"))
        for reference in references:
            # Called elsewhere, under a name the rule cannot follow: unless the reference itself sits in a
            # try that falls back to V1 (where its call most likely is too), say the call is not checked.
            if dead(reference) is not None or _unprotected((*index.ancestors(reference), reference), v1,
                                                           source) is None:
                continue
            found.append(Violation(settings.rule, Severity.WARNING, source.path, source.line(reference), (
                f"{_named(reference, source)} is handed on as a value (`{source.code(reference)}`), so the call it "
                f"leads to cannot be checked for a fallback to ops.{V1}; call it where a try falls back to V1")))
        yield from sorted(found, key=lambda v: v.line)


V1Calls = Sequence[tuple[ast.AST, ...]]  # the ancestors of each V1 call that can run


def _v2_uses(index: SyntaxIndex) -> tuple[list[ast.Call], list[ast.expr]]:
    """Return the V2 calls and the V2 references not called where they stand.

    A call is ``x.paged_attention_v2(...)``, a call of a name it was imported
    as (``from vllm._custom_ops import paged_attention_v2 as pa2``) or of
    ``getattr(ops, "paged_attention_v2")``; a reference is any of these not
    called there (``kernel = ops.paged_attention_v2 if long else ops.paged_attention_v1``).
    """
    names = {V2} | {a.asname for n in index.of(ast.ImportFrom) for a in n.names if a.name == V2 and a.asname}
    uses: list[ast.expr] = [a for a in index.of(ast.Attribute) if a.attr == V2 and isinstance(a.ctx, ast.Load)]
    uses += [n for n in index.of(ast.Name) if n.id in names and isinstance(n.ctx, ast.Load)]
    uses += [c for c in index.of(ast.Call) if dotted(c.func) == "getattr" and len(c.args) >= 2
             and isinstance(c.args[1], ast.Constant) and c.args[1].value == V2]
    calls: list[ast.Call] = []
    references: list[ast.expr] = []
    for use in uses:
        parent = index.parent(use)
        if isinstance(parent, ast.Call) and parent.func is use:
            calls.append(parent)
        else:
            references.append(use)
    return sorted(calls, key=_position), sorted(references, key=_position)


def _position(node: ast.expr) -> tuple[int, int]:
    return node.lineno, node.col_offset


def _named(node: ast.expr, source: PythonSource) -> str:
    """Name a V2 use in a message: ``ops.paged_attention_v2``, ``pa2``, or the ``getattr`` as written."""
    if isinstance(node, ast.Call):
        return source.code(node)
    return dotted(node) or V2


def _unprotected(chain: Sequence[ast.AST], v1: V1Calls, source: PythonSource) -> str | None:
    """None when some enclosing ``try`` falls back to V1, else why not (innermost ``try`` first)."""
    reasons = []
    for index in range(len(chain) - 2, -1, -1):
        node = chain[index]
        if isinstance(node, SCOPES):
            break
        if not isinstance(node, TRY) or not any(s is chain[index + 1] for s in node.body):
            continue
        reason = _handler_problem(node, chain[:index + 1], v1, source)
        if reason is None:
            return None
        reasons.append(reason)
    if not reasons:
        return f"is called outside any try, so nothing falls back to ops.{V1}"
    return reasons[0]


def _handler_problem(statement: ast.Try, chain: Sequence[ast.AST], v1: V1Calls,
                     source: PythonSource) -> str | None:
    """None when the handler of ``statement`` that catches NotImplementedError reaches V1, else what stops it."""
    # Python runs the first handler that matches; the ones after it never see the error.
    handler = next((h for h in statement.handlers if _catches(h)), None)
    if handler is None:
        caught = ", ".join(source.code(h.type) for h in statement.handlers if h.type is not None) or "nothing"
        return (f"sits in a try (line {source.line(statement)}) that catches only {caught}, "
                f"not NotImplementedError")
    if any(_runs_in(ancestors, handler) for ancestors in v1):
        return None
    exit_ = _exit(handler)
    if exit_ is None and _v1_follows(chain, v1):
        return None
    where = f"sits in a try, but the handler at line {source.line(handler)}"
    if exit_ is not None:
        return f"{where} {exit_} before reaching ops.{V1}"
    return f"{where} falls through, but no ops.{V1} call follows the try"


def _catches(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(dotted(t).split(".")[-1] in CATCHES for t in types)


def _exit(handler: ast.ExceptHandler) -> str | None:
    """How the handler leaves without falling through ("raises", "returns", ...), if it does."""
    for statement in handler.body:
        if type(statement) in _EXITS:
            return _EXITS[type(statement)]
    return None


def _v1_follows(chain: Sequence[ast.AST], v1: V1Calls) -> bool:
    """Whether a V1 call comes after ``chain[-1]`` (the ``try``) in any enclosing block of its function."""
    for index in range(len(chain) - 1, 0, -1):
        node, parent = chain[index], chain[index - 1]
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if not isinstance(block, list):
                continue
            position = next((i for i, s in enumerate(block) if s is node), None)
            if position is None:
                continue
            later = block[position + 1:]
            if any(_runs_in(ancestors, statement) for statement in later for ancestors in v1):
                return True
        if isinstance(parent, SCOPES):
            return False
    return False


def _runs_in(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Whether a call with these ancestors runs as part of ``node`` (not in a function defined there)."""
    for position, ancestor in enumerate(ancestors):
        if ancestor is node:
            return not any(isinstance(a, SCOPES) for a in ancestors[position + 1:])
    return False
