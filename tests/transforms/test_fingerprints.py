"""A fingerprint is the code as ``ast`` sees it: layout ignored, code seen, the hash stable across releases.

``upgrade`` compares the manifests earlier runs wrote with this run's, so
the hash of the same code never changes; captured arguments read back as
arguments; code this Python cannot parse still prints apart.
"""

from __future__ import annotations

import ast
import sys

import libcst as cst

from patcher.transforms.fingerprint import fingerprint


def test_fingerprints_ignore_layout_and_see_code() -> None:
    first = cst.parse_module("x = f(a,\n      b)  # why\n").body[0]
    second = cst.parse_module("x = (f(a, b))\r\n").body[0]
    other = cst.parse_module("x = f(b, a)\n").body[0]
    assert fingerprint(first) == fingerprint(second)
    assert fingerprint(first).text == "x = f(a, b)"
    assert fingerprint(first).sha256 != fingerprint(other).sha256
    assert fingerprint(()).text == ""


def test_fingerprints_of_captured_arguments_read_as_arguments() -> None:
    call = cst.parse_module("y = f(q, k, scale=s)\n").body[0].body[0].value  # type: ignore[attr-defined]
    assert fingerprint(tuple(call.args)).text == "q, k, scale=s"
    assert fingerprint(call.args[0]).text == "q"


def test_positional_arguments_read_back_as_arguments_not_a_tuple() -> None:
    call = cst.parse_expression("ops.paged_attention_v1(output,\n    query)")
    assert isinstance(call, cst.Call)
    assert fingerprint(tuple(call.args)).text == "output, query"
    assert fingerprint(tuple(call.args)) != fingerprint(cst.parse_expression("(output, query)"))


# The sha256 a manifest records for `x = f(a, b)`: `upgrade` compares manifests
# written by earlier runs with this run's, so the hash of the same code must
# never change (the ast dump with field names, without positions).
X_EQUALS_F_A_B = "2d587f630af10d6eae559919a6a9948fcb1be2ee9ada2a7269ac9cfb7963d90c"


def test_a_fingerprint_is_the_hash_earlier_manifests_recorded() -> None:
    assert fingerprint(cst.parse_module("x = f(a,\n b)  # layout\r\n").body[0]).sha256 == X_EQUALS_F_A_B
    assert fingerprint(()).sha256 == fingerprint(()).sha256 != X_EQUALS_F_A_B


# What manifests written by earlier runs recorded for an empty capture (`$...X`
# that took nothing): the sha256 of the ast dump of an empty module.
EMPTY_RUN = "3543b4693a36a1098850b8bc928887694ed59a6deb7d3dfd0339de01f55a77b6"


def test_an_empty_capture_keeps_the_hash_earlier_manifests_recorded() -> None:
    assert (fingerprint(()).sha256, fingerprint(()).text) == (EMPTY_RUN, "")


def test_statements_this_python_cannot_read_still_print_apart() -> None:
    # A 3.12 `type` statement: libcst reads it, `ast` before 3.12 does not. Its
    # print is its own text, comments aside, not one print shared by all such code.
    first = cst.parse_module("import torch\n\n# the cache layout\ntype Shape = tuple[int, int]\n").body[1]
    second = cst.parse_module("type Shape = tuple[int, int, int]\n").body[0]
    assert fingerprint(first).text == "type Shape = tuple[int, int]"
    assert fingerprint(second).text == "type Shape = tuple[int, int, int]"
    assert fingerprint(first).sha256 != fingerprint(second).sha256
    block = cst.parse_module("if TYPE_CHECKING:\n    # shapes\n    type Shape = tuple[int, int]\n").body[0]
    expected = "if TYPE_CHECKING:\n    type Shape = tuple[int, int]" if sys.version_info >= (3, 12) else \
        "if TYPE_CHECKING: type Shape = tuple[int, int]"
    assert fingerprint(block).text == expected


def test_an_expression_this_python_cannot_read_prints_its_text() -> None:
    # An f-string reusing its quote inside {} (PEP 701) is read by libcst, and by `ast` only from 3.12.
    source = 'f"decode {stats["tokens"]}  tokens"'
    spaced = cst.parse_expression(source.replace("{stats", "{ stats"))
    printed = fingerprint(spaced)
    if sys.version_info >= (3, 12):
        assert printed.text == ast.unparse(ast.parse(source, mode="eval"))
    else:
        assert printed.text == 'f"decode { stats["tokens"]} tokens"'
    assert printed.sha256 != fingerprint(cst.parse_expression(source.replace("tokens\"]", "count\"]"))).sha256
