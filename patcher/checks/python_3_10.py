"""Rule python-3.10: every shipped Python file parses under the image's Python 3.10 grammar."""

from __future__ import annotations

import ast
import warnings
from typing import Iterator

import libcst as cst

from .base import FileRule, Invalid, PythonSource, Settings, Valid, Violation

# libcst 1.9's native parser ignores PartialParserConfig(python_version=...):
# it accepts `type X = int`, `except*`, PEP 695 generics and PEP 701
# f-strings under "3.10" (checked when this rule was written). So the file is
# read three ways: parsed by libcst (the tool must be able to read what
# ships), walked for the newer nodes libcst knows (`except*`, `type X = ...`,
# PEP 695 type parameters, and the PEP 646 star forms `x[*a]` / `*args: *Ts`,
# which ast accepts whatever feature_version says), and parsed by the stdlib
# with feature_version=(3, 10) for the rest (PEP 701 f-strings).
FEATURE_VERSION = (3, 10)


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
    )

    def check_file(self, source: PythonSource, settings: Settings) -> Iterator[Violation]:
        """Yield why the file is not Python 3.10: a parse error, or each newer construct."""
        try:
            module = source.module
        except cst.ParserSyntaxError as error:
            # CPython's own parser places a syntax error more precisely than libcst does.
            parsed = _stdlib_parse(source)
            if isinstance(parsed, tuple):
                yield settings.violation(source.path, parsed[0], f"does not parse: {parsed[1]}")
            else:
                yield settings.violation(source.path, error.raw_line,
                                         f"libcst cannot parse it: {_one_line(error.message)}")
            return
        except (SyntaxError, UnicodeDecodeError) as error:
            line, problem = _decode_problem(source, error)
            yield settings.violation(source.path, line, f"cannot be decoded: {problem}, so Python will not import it")
            return
        parsed = _stdlib_parse(source)
        if not isinstance(parsed, tuple) and not _may_use_pep_646(parsed):
            return
        # Rare: walk the libcst tree, which names each newer construct at its own line.
        finder = _NewSyntax()
        module.visit(finder)
        for node, what in finder.found:
            yield settings.violation(source.path, source.line(node), f"uses {what}, syntax newer than Python 3.10")
        if isinstance(parsed, tuple) and not finder.found:
            yield settings.violation(source.path, parsed[0], f"uses syntax newer than Python 3.10: {parsed[1]}")


class _NewSyntax(cst.CSTVisitor):
    """Nodes of Python 3.11+ syntax that libcst parses whatever version it is told."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[cst.CSTNode, str]] = []

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        self.found.append((node, "`except*` (3.11, PEP 654)"))

    def visit_TypeAlias(self, node: cst.TypeAlias) -> None:
        self.found.append((node, "a `type` alias statement (3.12, PEP 695)"))

    def visit_TypeParameters(self, node: cst.TypeParameters) -> None:
        self.found.append((node, "type parameters `[T]` (3.12, PEP 695)"))

    def visit_Index(self, node: cst.Index) -> None:
        if node.star is not None:
            self.found.append((node, "a star expression in a subscript (3.11, PEP 646)"))

    def visit_Param(self, node: cst.Param) -> None:
        if node.annotation is not None and isinstance(node.annotation.annotation, cst.StarredElement):
            self.found.append((node, "a star annotation on *args (3.11, PEP 646)"))


def _stdlib_parse(source: PythonSource) -> ast.Module | tuple[int, str]:
    """CPython's tree held to the 3.10 grammar, or where and why it rejects the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences in vendor code are not our concern
            return ast.parse(source.data, filename=source.path, feature_version=FEATURE_VERSION)
    except SyntaxError as error:
        return error.lineno or 0, _one_line(error.msg)
    except ValueError as error:  # null bytes, on Python 3.10 (3.11.4 and later raise SyntaxError)
        return 0, _one_line(str(error))


def _decode_problem(source: PythonSource, error: SyntaxError | UnicodeDecodeError) -> tuple[int, str]:
    """Where and why the bytes are not text; line 0 when libcst does not say (a bad coding line)."""
    if isinstance(error, SyntaxError):
        return error.lineno or 0, _one_line(error.msg)
    line = source.data.count(b"\n", 0, error.start) + 1
    return line, (f"byte {source.data[error.start]:#04x} is not {error.encoding} "
                  "(declare the file's encoding with a '# -*- coding: ... -*-' line)")


def _may_use_pep_646(tree: ast.Module) -> bool:
    """Whether a star sits in a subscript or an ``*args`` annotation (``x[(*a,)]`` is 3.10 too: libcst decides)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(part, ast.Starred) for part in parts):
                return True
        elif isinstance(node, ast.arguments) and node.vararg is not None:
            if isinstance(node.vararg.annotation, ast.Starred):
                return True
    return False


def _one_line(text: str) -> str:
    return " ".join(text.split())
