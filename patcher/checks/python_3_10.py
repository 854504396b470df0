"""Rule python-3.10: every shipped Python file parses under the image's Python 3.10 grammar."""

from __future__ import annotations

import ast
import re
from typing import Iterator

from ..depth import TooDeepError, parse_problem
from .base import FileRule, Invalid, PythonSource, Settings, Valid, Violation

# The file is read with the stdlib parser held to the 3.10 grammar
# (``PythonSource.tree``). What that refuses is named from the tree this
# interpreter's own grammar gives (``except*``, ``type X = ...``, PEP 695
# type parameters), or, when this interpreter is older than the syntax, from
# libcst's, imported only then. ``ast`` accepts the PEP 646 star forms
# ``x[*a]`` and ``*args: *Ts`` whatever feature_version says: those are
# looked for in the 3.10 tree.


class Python310(FileRule):
    """The file parses as Python 3.10 (the image's interpreter): no 3.11+ syntax."""

    ID = "python-3.10"
    DESCRIPTION = __doc__ or ""
    VALID = (
        Valid("match command:\n    case [x, *rest]:\n        pass\n"),
        Valid("with (open('a') as a, open('b') as b):\n    pass\n"),
        Valid("x[(*a, b)]\ndef f(*args: int) -> None: ...\n"),
        Valid("from typing import List\r\nx: List[int] = []\r\n"),
    )
    INVALID = (
        Invalid("x = 1\ntype Vector = list[float]\n", line=2, found="uses a `type` alias statement"),
        Invalid("try:\n    pass\nexcept* ValueError:\n    pass\n", line=3, found="uses `except*`"),
        Invalid("def first[T](items: list[T]) -> T:\n    return items[0]\n", line=1, found="type parameters"),
        Invalid("class Box[T]:\n    pass\n", line=1, found="type parameters"),
        Invalid("name = 'x'\ns = f\"{'a' + \"b\"}\"\n", line=2, found="newer than Python 3.10"),
        Invalid("def f(*args: *Ts):\n    pass\n", line=1, found="star annotation"),
        Invalid("x = 1\ny = x[*a]\n", line=2, found="star expression in a subscript"),
        Invalid("print 'hello'\n", line=1, found="does not parse"),
        Invalid("# -*- coding: no-such-codec -*-\nx = 1\n", line=0, found="cannot be decoded: unknown encoding"),
        Invalid("x = 1\n# \x00\n", line=0, found="null bytes"),
        # 1,500 brackets: CPython refuses them, and libcst's parser crashed the process on them
        Invalid("x = 1\ny = " + "(" * 1500 + "1" + ")" * 1500 + "\n", line=2, found="nests deeper than 200 levels"),
    )

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield why the file is not Python 3.10: a parse error, or each newer construct."""
        try:
            source.tree
        except UnicodeDecodeError as error:
            line = source.data.count(b"\n", 0, error.start) + 1
            yield settings.violation(source.path, line, (
                f"cannot be decoded: byte {source.data[error.start]:#04x} is not {error.encoding} "
                "(declare the file's encoding with a '# -*- coding: ... -*-' line), so Python will not import it"))
            return
        except (SyntaxError, ValueError) as error:
            yield self._unreadable(source, settings, error)
            return
        newer = source.newer_syntax
        found = _named(source) if newer is not None or _STAR_FORMS.search(source.data) else []
        for line, what in found:
            yield settings.violation(source.path, line, f"uses {what}, syntax newer than Python 3.10")
        if newer is not None and not found:
            line, problem = _where(newer)
            yield settings.violation(source.path, line, f"uses syntax newer than Python 3.10: {problem}")

    def _unreadable(self, source: PythonSource, settings: Settings, error: SyntaxError | ValueError) -> Violation:
        """Say why a file this interpreter cannot parse at all is not Python 3.10."""
        if isinstance(error, TooDeepError):  # never handed to a parser: it could crash this process
            return settings.violation(source.path, error.problem.line, (
                f"{error.problem.reason}: patcher does not parse it, so no rule can vouch for it"))
        line, problem = _where(error)
        if b"\0" in source.data:
            return settings.violation(source.path, 0, f"does not parse: {problem}")
        if isinstance(error, SyntaxError) and _is_decoding(error):
            return settings.violation(source.path, 0, f"cannot be decoded: {problem}, so Python will not import it")
        found = _named_by_libcst(source.data)
        if found:
            return settings.violation(source.path, found[0][0], f"uses {found[0][1]}, syntax newer than Python 3.10")
        if found is not None:
            return settings.violation(source.path, line, f"uses syntax newer than Python 3.10: {problem}")
        return settings.violation(source.path, line, f"does not parse: {problem}")


# Where a PEP 646 star can sit: `x[*a`, `x[a, *b`, `*args: *Ts`. A byte test before walking the
# tree; list displays (`[*a, b]`) match too, and are told apart in the tree.
_STAR_FORMS = re.compile(rb"\[\s*\*|\[[^\]\[()]*,\s*\*|:\s*\*\s*\w")


def _is_decoding(error: SyntaxError) -> bool:
    """Tell whether ``tokenize.detect_encoding`` refused the file: a bad coding line or undecodable first lines."""
    return error.filename is None and error.lineno is None


def _where(error: SyntaxError | ValueError) -> tuple[int, str]:
    if isinstance(error, SyntaxError):
        return error.lineno or 0, _one_line(error.msg)
    return 0, _one_line(str(error))  # null bytes, on Python 3.10 (3.11.4 and later raise SyntaxError)


def _named(source: PythonSource) -> list[tuple[int, str]]:
    """Return the 3.11+ constructs in the file's ``ast`` tree, each at its own line."""
    index = source.index
    found = []
    if source.newer_syntax is not None:  # rare: walk everything for the statements 3.10 lacks
        for node in ast.walk(source.tree):
            kind = type(node).__name__
            if kind == "TryStar":
                handlers = getattr(node, "handlers", [])
                found.append((handlers[0].lineno if handlers else node.lineno,  # type: ignore[attr-defined]
                              "`except*` (3.11, PEP 654)"))
            elif kind == "TypeAlias":
                found.append((node.lineno, "a `type` alias statement (3.12, PEP 695)"))  # type: ignore[attr-defined]
            elif getattr(node, "type_params", None):
                found.append((node.lineno, "type parameters `[T]` (3.12, PEP 695)"))  # type: ignore[attr-defined]
    for subscript in index.of(ast.Subscript):
        if _bare_star(subscript):
            parts = subscript.slice.elts if isinstance(subscript.slice, ast.Tuple) else [subscript.slice]
            star = next(part for part in parts if isinstance(part, ast.Starred))
            found.append((star.lineno, "a star expression in a subscript (3.11, PEP 646)"))
    for arguments in index.of(ast.arguments):
        if arguments.vararg is not None and isinstance(arguments.vararg.annotation, ast.Starred):
            found.append((arguments.vararg.lineno, "a star annotation on *args (3.11, PEP 646)"))
    return sorted(found)


def _bare_star(node: ast.Subscript) -> bool:
    """Tell whether it is ``x[*a]`` or ``x[*a, b]`` (3.11), not ``x[(*a, b)]`` (3.10): a bare tuple with a star."""
    index = node.slice
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    if not any(isinstance(part, ast.Starred) for part in parts):
        return False
    # A parenthesised tuple starts at its "(", an unparenthesised one at its first element.
    return not (isinstance(index, ast.Tuple) and (index.lineno, index.col_offset) !=
                (parts[0].lineno, parts[0].col_offset))


def _named_by_libcst(data: bytes) -> list[tuple[int, str]] | None:
    """Return the 3.11+ constructs libcst names in a file this interpreter cannot parse; None if libcst fails too."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    if parse_problem(data) is not None:  # ast's bound counts adjacent strings once; libcst nests them
        return None
    try:
        module = cst.parse_module(data)
    except (cst.ParserSyntaxError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    kinds = {cst.ExceptStarHandler: "`except*` (3.11, PEP 654)",
             cst.TypeAlias: "a `type` alias statement (3.12, PEP 695)",
             cst.TypeParameters: "type parameters `[T]` (3.12, PEP 695)"}
    found = [(positions[node].start.line, kinds[type(node)]) for node in positions if type(node) in kinds]
    # PEP 646 stars: on a 3.10 interpreter these are what made ``ast`` refuse the file.
    found += [(positions[node].start.line, "a star expression in a subscript (3.11, PEP 646)")
              for node in positions if isinstance(node, cst.Index) and getattr(node, "star", None)]
    found += [(positions[node].start.line, "a star annotation on *args (3.11, PEP 646)")
              for node in positions if isinstance(node, cst.Param) and node.annotation is not None
              and isinstance(node.annotation.annotation, cst.StarredElement)]
    return sorted(found)


def _one_line(text: str) -> str:
    return " ".join(text.split())
