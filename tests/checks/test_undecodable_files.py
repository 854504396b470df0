"""A shipped file Python cannot decode: python-3.10 names the line of the first bad byte (or line 0 for the coding line),
and it is the only finding (CPython would refuse to import it; the check says so instead of crashing)."""

from __future__ import annotations

import pytest

from patcher.checks import run_rules

from tests.fixtures_rules import POLICY, python_3_10_findings


@pytest.mark.parametrize("data", [
    b"import torch\r\n\r\n# r\xe9glage du noyau\r\nx = 1\r\n",
    b"import torch\n\n# r\xe9glage du noyau",
    b"\nimport torch\n# r\xe9glage du noyau\n",
])
def test_a_latin_1_comment_in_a_utf_8_file_is_found_at_its_line(data: bytes) -> None:
    assert python_3_10_findings(data) == [(3, "cannot be decoded: byte 0xe9 is not utf-8 (declare the file's encoding with a "
                                "'# -*- coding: ... -*-' line), so Python will not import it")]


def test_a_file_that_declares_its_encoding_decodes() -> None:
    assert python_3_10_findings(b"# -*- coding: latin-1 -*-\r\n# r\xe9glage du noyau\r\nx = 1\r\n") == []
    assert python_3_10_findings(b"\xef\xbb\xbfimport torch\n") == []


def test_undecodable_first_lines_fail_where_python_reads_the_coding_line() -> None:
    assert python_3_10_findings(b"\xff\xfe = 1\n") == [
        (0, "cannot be decoded: invalid or missing encoding declaration, so Python will not import it")]


@pytest.mark.parametrize("data, line", [
    (b"# caf\xe9\nx = 1\n", 0),  # libcst's own detection, on the first two lines
    (b"x = 1\n\n# \xd6\xd0\xce\xc4 (GBK)\ny = 2\n", 3),
])
def test_a_file_that_does_not_decode_gets_only_the_python_3_10_finding(data: bytes, line: int) -> None:
    # CPython refuses to import such a file; the check must say so, not crash.
    result = run_rules([("vendor.py", lambda: data)], POLICY)
    assert [(v.rule, v.line) for v in result.violations] == [("python-3.10", line)]
    assert "cannot be decoded" in result.violations[0].message
