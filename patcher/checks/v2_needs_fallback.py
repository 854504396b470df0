"""Rule v2-needs-fallback: every V2 decode call can fall back to V1."""

from __future__ import annotations

from typing import Iterator, Sequence

import libcst as cst

from .base import FileRule, Invalid, PythonSource, Settings, Valid, Violation, code, dotted

V1 = "paged_attention_v1"
V2 = "paged_attention_v2"
# NotImplementedError is a RuntimeError; a handler for any of these catches it.
CATCHES = frozenset({"NotImplementedError", "RuntimeError", "Exception", "BaseException"})
_BOUNDARIES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_EXITS = (cst.Raise, cst.Return, cst.Break, cst.Continue)


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
    )
    INVALID = (
        # The vendor original: V2 unreachable behind `use_v1 = True`, but unguarded.
        Invalid("""\
def forward_decode():
    use_v1 = True
    if use_v1:
        ops.paged_attention_v1(output, query)
    else:
        ops.paged_attention_v2(output, query)
""", line=6, found="outside any try"),
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
        """Yield each V2 call that no ``try`` protects with a path to V1."""
        if not source.mentions(V2):
            return
        v1 = [chain for _, chain in source.index.calls(V1)]
        for call, chain in source.index.calls(V2):
            problem = _unprotected((*chain, call), v1, source)
            if problem:
                name = dotted(call.func) or V2
                yield settings.violation(source.path, source.line(call), f"{name}(...) {problem}")


V1Calls = Sequence[tuple[cst.CSTNode, ...]]  # the ancestors of each V1 call


def _unprotected(chain: Sequence[cst.CSTNode], v1: V1Calls, source: PythonSource) -> str | None:
    """None when some enclosing ``try`` falls back to V1, else why not (innermost ``try`` first)."""
    reasons = []
    for index in range(len(chain) - 2, -1, -1):
        node = chain[index]
        if isinstance(node, _BOUNDARIES):
            break
        if not isinstance(node, cst.Try) or chain[index + 1] is not node.body:
            continue
        reason = _handler_problem(node, chain[:index + 1], v1, source)
        if reason is None:
            return None
        reasons.append(reason)
    if not reasons:
        return f"is called outside any try, so nothing falls back to ops.{V1}"
    return reasons[0]


def _handler_problem(statement: cst.Try, chain: Sequence[cst.CSTNode], v1: V1Calls,
                     source: PythonSource) -> str | None:
    """None when the handler of ``statement`` that catches NotImplementedError reaches V1, else what stops it."""
    # Python runs the first handler that matches; the ones after it never see the error.
    handler = next((h for h in statement.handlers if _catches(h)), None)
    if handler is None:
        caught = ", ".join(code(h.type) for h in statement.handlers if h.type is not None) or "nothing"
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


def _catches(handler: cst.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
    return any(dotted(t).split(".")[-1] in CATCHES for t in types)


def _exit(handler: cst.ExceptHandler) -> str | None:
    """How the handler leaves without falling through ("raises", "returns", ...), if it does."""
    body = handler.body
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    for statement in statements:
        smalls = statement.body if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else []
        for small in smalls:
            if isinstance(small, _EXITS):
                return {cst.Raise: "raises", cst.Return: "returns", cst.Break: "breaks out",
                        cst.Continue: "continues the loop"}[type(small)]
    return None


def _v1_follows(chain: Sequence[cst.CSTNode], v1: V1Calls) -> bool:
    """Whether a V1 call comes after ``chain[-1]`` (the ``try``) in any enclosing block of its function."""
    for index in range(len(chain) - 1, 0, -1):
        node, parent = chain[index], chain[index - 1]
        if isinstance(parent, _BOUNDARIES):
            return False
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            position = next((i for i, s in enumerate(parent.body) if s is node), None)
            if position is None:
                continue
            later = parent.body[position + 1:]
            if any(_runs_in(ancestors, statement) for statement in later for ancestors in v1):
                return True
    return False


def _runs_in(ancestors: Sequence[cst.CSTNode], node: cst.CSTNode) -> bool:
    """Whether a call with these ancestors runs as part of ``node`` (not in a function defined there)."""
    for position, ancestor in enumerate(ancestors):
        if ancestor is node:
            return not any(isinstance(a, _BOUNDARIES) for a in ancestors[position + 1:])
    return False
