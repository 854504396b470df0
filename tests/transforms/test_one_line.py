"""One statement as a report shows it: on one line, as ``ast`` writes it, at most a hundred characters.

A compound statement shows its header and ``...``; metavariables read
back as ``$X``; code this Python cannot parse is shown as written, its
comments left out.
"""

from __future__ import annotations

import libcst as cst
import pytest

from patcher.transforms.closest import one_line


@pytest.mark.parametrize(("code", "shown"), [
    ("x = f(a,   b)  # note\n", "x = f(a, b)"),
    ("if use_v1:\n    out = 1\nelse:\n    out = 2\n", "if use_v1: ..."),
    ("y = __pv_X__ + __pvs_ARGS__\n", "y = $X + $...ARGS"),
    ("y = __pv____ + f(__pvs____)\n", "y = $_ + f($...)"),
    ("z = '" + "a" * 120 + "'\n", "z = '" + "a" * 92 + "..."),
])
def test_one_line_shows_code_as_ast_writes_it(code: str, shown: str) -> None:
    statement = cst.parse_module(code).body[0]
    assert one_line(statement) == shown


def test_one_line_is_at_most_a_hundred_characters() -> None:
    statement = cst.parse_module("w = " + " + ".join(f"v{i}" for i in range(60)) + "\n").body[0]
    shown = one_line(statement)
    assert len(shown) == 100 and shown.endswith("...") and shown.startswith("w = v0 + v1")


def test_an_exactly_hundred_character_statement_is_shown_whole() -> None:
    text = "use_v1 = max_seq_len <= 8192 and (max_num_partitions == 1 or num_seqs * num_heads > 512) and flag_ab"
    assert len(text) == 100
    assert one_line(cst.parse_module(text + "\n").body[0]) == text
    assert one_line(cst.parse_module(text + "x\n").body[0]) == text[:97] + "..."


def test_a_two_line_statement_shows_its_header_and_an_ellipsis() -> None:
    assert one_line(cst.parse_module("if use_v1:\n    out = 1\n").body[0]) == "if use_v1: ..."
    assert one_line(cst.parse_module("out = 1\n").body[0]) == "out = 1"


def test_code_this_python_cannot_read_is_shown_without_comments() -> None:
    # libcst reads a 3.12 `type` statement that Python 3.10 and 3.11 do not: the
    # line is shown as written, its comments left out, as `ast` would show it.
    code = "if TYPE_CHECKING:\n    # shapes\n    type Shape = tuple[int, int]\n"
    assert one_line(cst.parse_module(code).body[0]) == "if TYPE_CHECKING: ..."
    module = cst.parse_module("import torch\n\n# the cache layout\ntype Shape = tuple[int, int]\n")
    assert one_line(module.body[1]) == "type Shape = tuple[int, int]"
