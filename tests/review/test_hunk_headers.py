"""Every hunk header counts each side in its own file: ``@@ -a,b +c,d @@``, ``a`` a line of the old file, ``c`` of the new.

Checked the way a reader uses them: the ``b`` old lines of a hunk (context
and ``-``) are the old file's lines from ``a`` on, the ``d`` new lines
(context and ``+``) the new file's from ``c`` on. For ``patcher diff`` (each
``--per-patch`` section on top of the one before), for any edit (a property
test), and for ``patcher upgrade``'s scope diffs, which show a scope's code
alone but in the file's numbering, a class without its methods' bodies
(a hunk never spans what it leaves out), and lines counted as ``ast``
counts them (a form feed is no line break).
"""

from __future__ import annotations

import difflib
import json
import re
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from patcher.patchset.outcome import FileOutcome
from patcher.review.textdiff import hunks, numbered_diff, text_lines
from patcher.review.upgrade import scope_change

from tests.fixtures_cli import SERIES, patch_of, scopes_of
from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def parse_hunks(diff: list[str]) -> list[tuple[int, int, int, int, list[str], list[str]]]:
    """Return (a, b, c, d, old lines, new lines) of each hunk of a unified diff given as lines (with ends)."""
    found: list[tuple[int, int, int, int, list[str], list[str]]] = []
    for line in diff:
        match = HEADER.match(line)
        if match:
            a, b, c, d = match.groups()
            found.append((int(a), int(b or 1), int(c), int(d or 1), [], []))
        elif found and line[:1] in (" ", "-", "+"):
            body = line[1:]
            if line[0] in " -":
                found[-1][4].append(body)
            if line[0] in " +":
                found[-1][5].append(body)
    return found


def assert_headers_count_each_side(diff: list[str], old: list[str], new: list[str]) -> int:
    """Assert each hunk's old lines are old[a-1:a-1+b] and new lines new[c-1:c-1+d]; return the hunk count."""
    parsed = parse_hunks(diff)
    for a, b, c, d, old_lines, new_lines in parsed:
        assert len(old_lines) == b and len(new_lines) == d, (a, b, c, d)
        strip = [line.rstrip("\n") for line in old_lines]
        assert strip == [line.rstrip("\n") for line in old[a - 1: a - 1 + b]] if b else a <= len(old), (a, b)
        strip = [line.rstrip("\n") for line in new_lines]
        assert strip == [line.rstrip("\n") for line in new[c - 1: c - 1 + d]] if d else c <= len(new), (c, d)
    return len(parsed)


# -- the diff of whole files ------------------------------------------------------------------

edit = st.lists(st.sampled_from(["keep", "drop", "add", "change"]), min_size=1, max_size=60)


def edited(lines: list[str], plan: list[str]) -> list[str]:
    """Return ``lines`` with each line kept, dropped, changed or followed by a new one, as ``plan`` says."""
    out = []
    for number, (line, what) in enumerate(zip(lines, plan * (len(lines) // len(plan) + 1))):
        if what in ("keep", "add"):
            out.append(line)
        if what == "add":
            out.append(f"added after {number}\n")
        if what == "change":
            out.append(line.replace("line", "LINE"))
    return out


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(size=st.integers(min_value=0, max_value=120), plan=edit)
def test_any_edit_of_a_file_gets_headers_in_each_file_s_own_numbers(size: int, plan: list[str]) -> None:
    old = [f"line {n}\n" for n in range(1, size + 1)]
    new = edited(old, plan)
    diff = hunks("".join(old).encode(), "".join(new).encode()).decode().splitlines(keepends=True)
    assert_headers_count_each_side(diff, old, new)
    # Contiguous numbering from 1 gives exactly what diff -u (difflib) writes.
    numbered = numbered_diff(old, list(range(1, len(old) + 1)), new, list(range(1, len(new) + 1)), "a", "b")
    assert numbered == "".join(difflib.unified_diff(old, new, "a", "b"))


def test_patcher_diff_headers_count_the_vendor_file_and_the_written_file(plain, applied) -> None:  # type: ignore[no-untyped-def]
    vendor = (VENDOR_TREE / SHIPPED).read_bytes().decode().split("\n")
    written = applied[SHIPPED][0].decode().split("\n")
    section = plain.stdout_bytes.decode().split(f"diff --git a/{SHIPPED} ")[1].split("\ndiff --git")[0]
    diff = [line + "\n" for line in section.split("\n")]
    assert assert_headers_count_each_side(diff, [v + "\n" for v in vendor], [w + "\n" for w in written]) >= 3


def test_per_patch_sections_each_count_the_file_before_and_after_their_patch(per_patch, applied) -> None:  # type: ignore[no-untyped-def]
    current = (VENDOR_TREE / SHIPPED).read_bytes().decode().split("\n")
    sections = per_patch.stdout_bytes.decode().split("# ==== ")[1:]
    assert len(sections) == len(SERIES) + 1  # one per patch, then the mirrors
    for section in sections[: len(SERIES)]:
        diff = [line + "\n" for line in section.split(f"diff --git a/{SHIPPED} ")[1].split("\n")]
        parsed = parse_hunks(diff)
        assert parsed and assert_headers_count_each_side(diff, [c + "\n" for c in current],
                                                         [c + "\n" for c in _applied(current, parsed)])
        current = _applied(current, parsed)
    assert "\n".join(current).encode() == applied[SHIPPED][0]


def _applied(lines: list[str], parsed: list[tuple[int, int, int, int, list[str], list[str]]]) -> list[str]:
    """Apply parsed hunks to ``lines`` (without ends) by their old-side headers, as patch(1) would with no fuzz."""
    out, at = [], 0
    for a, b, _, _, old_lines, new_lines in parsed:
        start = a - 1 if b else a
        assert [line.rstrip("\n") for line in old_lines] == lines[start:start + b]
        out.extend(lines[at:start])
        out.extend(line.rstrip("\n") for line in new_lines)
        at = start + b
    return out + lines[at:]


# -- a scope's diff in the file's own numbers ---------------------------------------------------


def outcome(path: str, text: str) -> FileOutcome:
    return FileOutcome(path, text.encode(), text.encode(), ())


def shifted_pair() -> tuple[str, str]:
    """Return OLD and NEW versions of a module: NEW has 7 more lines above the class, and changes in and around it."""
    old = ("import torch\n\n\n"
           "class PagedAttention:\n"
           "    _PARTITION = 512\n\n"
           "    @staticmethod\n"
           "    def forward_decode(query):\n"
           + "".join(f"        step_{n} = query + {n}\n" for n in range(20)) +
           "        return ops.paged_attention_v2(query, step_19)\n\n"
           "    _PYTORCH_DECODE_THRESHOLD = 32768\n\n"
           "    @staticmethod\n"
           "    def swap_blocks(src, dst):\n"
           + "".join(f"        copy_{n} = src[{n}]\n" for n in range(15)) +
           "        return dst\n")
    helper = "".join(f"def helper_{n}():\n    return {n}\n\n\n" for n in range(2)) + "\x0c\n"
    new = old.replace("import torch\n\n\n", "import torch\n\n\n" + helper, 1)
    new = new.replace("paged_attention_v2(query, step_19)", "paged_attention_v2(query, step_19, None)")
    new = new.replace("_PYTORCH_DECODE_THRESHOLD = 32768", "_PYTORCH_DECODE_THRESHOLD = 65536")
    new = new.replace("        copy_3 = src[3]\n", "")
    return old, new


def test_a_function_scope_s_diff_counts_each_file(tmp_path: Path) -> None:
    old, new = shifted_pair()
    change = scope_change("PagedAttention.forward_decode", outcome("p.py", old), outcome("p.py", new))
    assert change.changed
    diff = change.diff.splitlines(keepends=True)
    assert diff[0] == "--- a/p.py (PagedAttention.forward_decode)\n"
    assert assert_headers_count_each_side(diff, text_lines(old), text_lines(new)) == 1
    a, _, c, _, _, _ = parse_hunks(diff)[0]
    assert c - a == 9  # the helpers and the form feed line above the class: 9 lines as ast counts them


def test_a_class_scope_s_diff_never_spans_a_method_body_it_leaves_out() -> None:
    old, new = shifted_pair()
    change = scope_change("PagedAttention", outcome("p.py", old), outcome("p.py", new))
    assert change.changed  # the threshold, a class attribute, changed; the methods' bodies are not its code
    diff = change.diff.splitlines(keepends=True)
    old_lines, new_lines = text_lines(old), text_lines(new)
    count = assert_headers_count_each_side(diff, old_lines, new_lines)
    assert count >= 1
    assert not any("step_" in line or "copy_" in line for line in diff)
    threshold = next(n for n, line in enumerate(new_lines, 1) if "_PYTORCH_DECODE_THRESHOLD" in line)
    assert any(c <= threshold < c + d for _, _, c, d, _, _ in parse_hunks(diff))


def test_a_scope_missing_on_one_side_counts_from_the_top() -> None:
    old, new = shifted_pair()
    gone = scope_change("PagedAttention.swap_blocks", outcome("p.py", old),
                        outcome("p.py", new.split("    @staticmethod\n    def swap_blocks")[0]))
    a, b, c, d, _, _ = parse_hunks(gone.diff.splitlines(keepends=True))[0]
    assert (c, d) == (0, 0) and b == 18 and text_lines(old)[a - 1].strip() == "@staticmethod"


def test_numbered_diff_splits_a_hunk_at_a_gap_in_the_numbering() -> None:
    old = ["a\n", "b\n", "c\n", "d\n"]
    numbers = [10, 11, 30, 31]  # lines 12-29 are left out
    new = ["a\n", "B\n", "C\n", "d\n"]
    diff = numbered_diff(old, numbers, new, numbers, "a", "b")
    assert diff == ("--- a\n+++ b\n"
                    "@@ -10,2 +10,2 @@\n a\n-b\n+B\n"
                    "@@ -30,2 +30,2 @@\n-c\n+C\n d\n")


def test_upgrade_shows_scope_diffs_in_each_drop_s_own_numbers(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    old_tree, new_tree = tmp_path / "old" / VENDOR_TREE.name, tmp_path / "new" / VENDOR_TREE.name
    shutil.copytree(VENDOR_TREE, old_tree)
    shutil.copytree(VENDOR_TREE, new_tree)
    shipped = new_tree / SHIPPED
    data = shipped.read_bytes().decode()
    anchor = "from vllm import _custom_ops as ops"
    helper = "\r\n\r\ndef _debug_dump(tensor):\r\n    return tensor.shape\r\n\r\n"
    data = data.replace(anchor, anchor + helper, 1)
    data = re.sub(r"(ops\.paged_attention_v2\(\s*)", r"\1None, ", data, count=1)
    shipped.write_bytes(data.encode())
    result = cli("upgrade", old_tree.parent, new_tree.parent, "--format", "json")
    assert result.exit_code == 1, result.stderr
    decode = scopes_of(patch_of(json.loads(result.stdout), "three-tier-decode"))["PagedAttention.forward_decode"]
    assert decode["changed"]
    old_lines = text_lines((VENDOR_TREE / SHIPPED).read_bytes().decode().replace("\r\n", "\n"))
    new_lines = text_lines(data.replace("\r\n", "\n"))
    diff = decode["diff"].splitlines(keepends=True)
    assert assert_headers_count_each_side(diff, old_lines, new_lines) >= 1
    a, _, c, _, _, _ = parse_hunks(diff)[0]
    assert c - a == 5  # the helper's five lines above the class


def test_a_change_across_a_gap_is_one_hunk_per_stretch_of_each_file() -> None:
    # Lines 7-19 of the old file are a method body the class's diff leaves out.
    assert numbered_diff(["a\n", "b\n", "c\n", "d\n"], [5, 6, 20, 21], ["x\n"], [7], "a", "b") == (
        "--- a\n+++ b\n@@ -5,2 +7 @@\n-a\n-b\n+x\n@@ -20,2 +7,0 @@\n-c\n-d\n")
    assert numbered_diff(["a\n"], [7], ["a\n", "b\n", "c\n", "d\n"], [5, 6, 20, 21], "a", "b") == (
        "--- a\n+++ b\n@@ -7 +5,2 @@\n a\n+b\n@@ -7,0 +20,2 @@\n+c\n+d\n")


def test_a_scope_that_is_all_new_or_all_gone_counts_the_empty_side_as_line_0() -> None:
    assert numbered_diff([], [], ["a\n", "b\n"], [3, 4], "a", "b") == "--- a\n+++ b\n@@ -0,0 +3,2 @@\n+a\n+b\n"
    assert numbered_diff(["a\n", "b\n"], [3, 4], [], [], "a", "b") == "--- a\n+++ b\n@@ -3,2 +0,0 @@\n-a\n-b\n"


def test_an_insertion_names_the_file_line_before_it() -> None:
    assert numbered_diff(["p\n", "q\n", "r\n"], [10, 11, 12], ["p\n", "new\n", "q\n", "r\n"], [10, 11, 12, 13],
                         "a", "b", context=0) == "--- a\n+++ b\n@@ -10,0 +11 @@\n+new\n"
    assert numbered_diff(["p\n", "q\n"], [10, 11], ["new\n", "p\n", "q\n"], [10, 11, 12], "a", "b",
                         context=0) == "--- a\n+++ b\n@@ -9,0 +10 @@\n+new\n"


def test_context_is_cut_to_the_lines_asked_for_in_each_file_s_numbers() -> None:
    old = ["k\n", "a\n", "b\n", "c\n", "d\n", "e\n", "f\n", "g\n", "h\n"]
    new = [line.replace("e", "E") for line in old]
    assert numbered_diff(old, list(range(40, 49)), new, list(range(50, 59)), "a", "b", context=1) == (
        "--- a\n+++ b\n@@ -44,3 +54,3 @@\n d\n-e\n+E\n f\n")
    assert numbered_diff(old, list(range(40, 49)), old, list(range(50, 59)), "a", "b") == ""


def test_a_last_line_without_a_newline_is_marked() -> None:
    assert numbered_diff(["a\n", "b"], [1, 2], ["a\n", "c"], [1, 2], "a", "b") == (
        "--- a\n+++ b\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n")
