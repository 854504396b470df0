"""One file's diff, byte for byte as git writes it: headers, modes, quoted names, hunks, the no-newline marker.

``patch -p1`` and ``git apply`` read these bytes, so each case pins the whole
output, not a fragment: a header line that changed, a hunk range off by one
or a marker dropped would each make a reviewer's replay fail or differ.
The expected bytes are what ``git diff`` writes for the same change.
"""

from __future__ import annotations

import pytest

from patcher.review.textdiff import (CONTEXT, NO_NEWLINE, FileChange, file_diff, hunks, line_count, quote_path,
                                     split_lines, text_lines)


def numbered(*numbers: int) -> bytes:
    """Lines "1\\n", "2\\n", ... for the given numbers."""
    return b"".join(b"%d\n" % n for n in numbers)


# -- whole files, as git writes them ----------------------------------------------------------


def test_a_changed_line_in_a_file_without_final_newlines_is_marked_on_both_sides() -> None:
    assert FileChange("x.py", b"a", b"b").unified() == (
        b"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n"
        b"-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n")
    assert NO_NEWLINE == b"\\ No newline at end of file\n"


def test_a_new_file_is_diffed_from_dev_null_with_its_mode() -> None:
    assert FileChange("qwen3_6_scripts/.dockerignore", None, b"patcher-manifest.json\n", False, False).unified() == (
        b"diff --git a/qwen3_6_scripts/.dockerignore b/qwen3_6_scripts/.dockerignore\nnew file mode 100644\n"
        b"--- /dev/null\n+++ b/qwen3_6_scripts/.dockerignore\n@@ -0,0 +1 @@\n+patcher-manifest.json\n")
    assert FileChange("run.sh", None, b"a\n", False, True).unified().splitlines()[1] == b"new file mode 100755"


def test_a_deleted_file_is_diffed_to_dev_null_with_its_mode() -> None:
    assert FileChange("patch_ops.sh", b"cp a b\n", None, True, False).unified() == (
        b"diff --git a/patch_ops.sh b/patch_ops.sh\ndeleted file mode 100755\n"
        b"--- a/patch_ops.sh\n+++ /dev/null\n@@ -1 +0,0 @@\n-cp a b\n")
    assert FileChange("x.py", b"a\n", None, False, False).unified().splitlines()[1] == b"deleted file mode 100644"


@pytest.mark.parametrize(("before", "after"), [(False, True), (True, False)])
def test_a_mode_change_alone_is_two_mode_lines_and_no_hunk(before: bool, after: bool) -> None:
    modes = {False: b"100644", True: b"100755"}
    expected = (b"diff --git a/patch_ops.sh b/patch_ops.sh\nold mode " + modes[before] + b"\nnew mode "
                + modes[after] + b"\n")
    assert FileChange("patch_ops.sh", b"cp a b\n", b"cp a b\n", before, after).unified() == expected
    assert FileChange("patch_ops.sh", b"", b"", before, after).unified() == expected


def test_a_mode_change_with_a_content_change_has_both() -> None:
    assert FileChange("patch_ops.sh", b"a\n", b"b\n", False, True).unified() == (
        b"diff --git a/patch_ops.sh b/patch_ops.sh\nold mode 100644\nnew mode 100755\n"
        b"--- a/patch_ops.sh\n+++ b/patch_ops.sh\n@@ -1 +1 @@\n-a\n+b\n")


def test_an_unchanged_file_has_no_diff_at_all() -> None:
    assert FileChange("x.py", b"a\n", b"a\n", True, True).unified() == b""
    assert FileChange("x.py", b"a\n", b"a\n").unified() == b""


def test_an_empty_new_file_is_a_header_without_hunks() -> None:
    assert FileChange("__init__.py", None, b"", False, False).unified() == (
        b"diff --git a/__init__.py b/__init__.py\nnew file mode 100644\n")


def test_a_binary_file_is_named_not_diffed() -> None:
    assert FileChange("libops.so", b"\x7fELF\0\x01", b"\x7fELF\0\x02").unified() == (
        b"diff --git a/libops.so b/libops.so\nBinary files a/libops.so and b/libops.so differ\n")
    # Either side holding a NUL decides, and a name with a space gets no tab in that line.
    assert FileChange("a b.bin", b"text\n", b"\0").unified() == (
        b"diff --git a/a b.bin b/a b.bin\nBinary files a/a b.bin and b/a b.bin differ\n")
    assert FileChange("new.bin", None, b"\0\1", False, True).unified() == (
        b"diff --git a/new.bin b/new.bin\nnew file mode 100755\nBinary files /dev/null and b/new.bin differ\n")
    assert FileChange("old.bin", b"\0\1", None).unified() == (
        b"diff --git a/old.bin b/old.bin\ndeleted file mode 100644\nBinary files a/old.bin and /dev/null differ\n")


def test_binary_means_a_nul_in_the_first_8000_bytes_as_git_decides() -> None:
    assert FileChange("x", b"a" * 7999 + b"\0", b"").binary
    assert not FileChange("x", b"a" * 8000 + b"\0", b"").binary
    assert FileChange("x", b"", b"a" * 7999 + b"\0").binary
    assert not FileChange("x", None, b"plain\n").binary
    assert FileChange("x", b"\0" * 3, b"\0" * 4).counts() == (0, 0)


def test_old_path_names_the_a_side() -> None:
    change = FileChange("qwen3_6_scripts/paged_attn.py", b"old\n", b"new\n")
    assert file_diff(change, old_path="paged_attn.py") == (
        b"diff --git a/paged_attn.py b/qwen3_6_scripts/paged_attn.py\n"
        b"--- a/paged_attn.py\n+++ b/qwen3_6_scripts/paged_attn.py\n@@ -1 +1 @@\n-old\n+new\n")


# -- names --------------------------------------------------------------------------------------


def test_a_name_with_a_space_gets_a_tab_after_it_in_the_file_lines_only() -> None:
    assert FileChange("sp ace.py", b"a\n", b"b\n").unified() == (
        b"diff --git a/sp ace.py b/sp ace.py\n--- a/sp ace.py\t\n+++ b/sp ace.py\t\n@@ -1 +1 @@\n-a\n+b\n")


@pytest.mark.parametrize(("name", "quoted"), [
    ("plain/paged_attn.py", b"plain/paged_attn.py"),
    ("tab\tname.py", b'"tab\\tname.py"'),
    ("new\nline.py", b'"new\\nline.py"'),
    ('q"uote.py', b'"q\\"uote.py"'),
    ("back\\slash.py", b'"back\\\\slash.py"'),
    ("caf\u00e9.py", b'"caf\\303\\251.py"'),
    ("bell\x07.py", b'"bell\\007.py"'),
    ("unit\x1f.py", b'"unit\\037.py"'),
    ("del\x7f.py", b'"del\\177.py"'),
    ("tilde~.py", b"tilde~.py"),
    ("space .py", b"space .py"),
    ("bad\udcff.py", b'"bad\\377.py"'),  # an undecodable byte of the zip's name, kept as it was
])
def test_names_are_c_quoted_as_git_quotes_them(name: str, quoted: bytes) -> None:
    assert quote_path(name) == quoted


def test_a_quoted_name_takes_its_prefix_inside_the_quotes() -> None:
    assert FileChange("caf\u00e9.py", b"a\n", b"b\n").unified() == (
        b'diff --git "a/caf\\303\\251.py" "b/caf\\303\\251.py"\n'
        b'--- "a/caf\\303\\251.py"\n+++ "b/caf\\303\\251.py"\n@@ -1 +1 @@\n-a\n+b\n')


# -- hunks --------------------------------------------------------------------------------------


def test_changes_far_apart_are_separate_hunks_with_three_lines_of_context() -> None:
    before = numbered(*range(1, 21))
    after = numbered(*(n for n in range(1, 21) if n != 5)) + b"x\n"
    assert CONTEXT == 3
    assert hunks(before, after) == (
        b"@@ -2,7 +2,6 @@\n 2\n 3\n 4\n-5\n 6\n 7\n 8\n"
        b"@@ -18,3 +17,4 @@\n 18\n 19\n 20\n+x\n")


def test_changes_closer_than_twice_the_context_share_a_hunk() -> None:
    before = numbered(*range(1, 13))
    after = before.replace(b"3\n", b"three\n").replace(b"9\n", b"nine\n")
    assert hunks(before, after) == (
        b"@@ -1,12 +1,12 @@\n 1\n 2\n-3\n+three\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n")
    assert hunks(before, after, context=1) == (
        b"@@ -2,3 +2,3 @@\n 2\n-3\n+three\n 4\n@@ -8,3 +8,3 @@\n 8\n-9\n+nine\n 10\n")


def test_an_insertion_names_the_line_before_it_and_a_deletion_the_line_after_it() -> None:
    # "-3,0": zero old lines, inserted after old line 3 (diff -u's convention); "+3,0" likewise for a removal.
    assert hunks(numbered(1, 2, 3, 4, 5, 6), numbered(1, 2, 3, 4, 5, 6), context=0) == b""
    assert hunks(numbered(1, 2, 3, 5, 6), numbered(1, 2, 3, 4, 5, 6), context=0) == b"@@ -3,0 +4 @@\n+4\n"
    assert hunks(numbered(1, 2, 3, 4, 5, 6), numbered(1, 2, 3, 5, 6), context=0) == b"@@ -4 +3,0 @@\n-4\n"
    assert hunks(numbered(1, 2), numbered(1, 2, 3, 4), context=0) == b"@@ -2,0 +3,2 @@\n+3\n+4\n"
    assert hunks(b"", numbered(1, 2)) == b"@@ -0,0 +1,2 @@\n+1\n+2\n"


def test_crlf_stays_part_of_the_line_and_a_lone_cr_is_a_byte() -> None:
    assert hunks(b"a\r\nb\r\n", b"a\r\nc\r\n") == b"@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
    assert hunks(b"a\rb\n", b"a\rc\n") == b"@@ -1 +1 @@\n-a\rb\n+a\rc\n"


def test_counts_are_lines_added_and_removed() -> None:
    before = numbered(*range(1, 11))
    after = before.replace(b"2\n", b"two\nTWO\n").replace(b"7\n8\n", b"")
    assert FileChange("x", before, after).counts() == (2, 3)
    assert FileChange("x", None, b"a\nb\nc").counts() == (3, 0)
    assert FileChange("x", b"a\nb\n", None).counts() == (0, 2)


# -- lines ----------------------------------------------------------------------------------------


def test_lines_split_on_newline_only_and_keep_it() -> None:
    assert split_lines(b"") == []
    assert split_lines(b"\n") == [b"\n"]
    assert split_lines(b"a\r\nb\rc\n\nd") == [b"a\r\n", b"b\rc\n", b"\n", b"d"]
    assert split_lines(b"a\nb\n") == [b"a\n", b"b\n"]
    assert (line_count(b""), line_count(b"a"), line_count(b"a\n"), line_count(b"a\nb"), line_count(b"\n\n")) == \
        (0, 1, 1, 2, 2)


def test_text_lines_break_where_python_numbers_lines_and_nowhere_else() -> None:
    assert text_lines("a\r\nb\rc\nd") == ["a\r\n", "b\r", "c\n", "d"]
    assert text_lines("x = 1\x0c\ny = '\u2028'\n\x1c\n") == ["x = 1\x0c\n", "y = '\u2028'\n", "\x1c\n"]
    assert text_lines("") == [] and text_lines("\n\n") == ["\n", "\n"]
    assert text_lines("last") == ["last"]


def test_a_file_diff_takes_the_context_it_is_asked_for() -> None:
    before = numbered(*range(1, 10))
    change = FileChange("x.py", before, before.replace(b"5\n", b"five\n"))
    assert change.unified(context=1).endswith(b"@@ -4,3 +4,3 @@\n 4\n-5\n+five\n 6\n")
    assert change.unified().endswith(b"@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n")


@pytest.mark.parametrize(("old", "new", "header"), [
    # Only the tab git adds after a name with a space is dropped from the diff --git line, nothing else.
    ("docs/INDEX", "docs/INDEX", b"diff --git a/docs/INDEX b/docs/INDEX\n"),
    ("a b ", "a b ", b"diff --git a/a b  b/a b \n"),
    ("old name ", "qwen3_6_scripts/paged_attn.py", b"diff --git a/old name  b/qwen3_6_scripts/paged_attn.py\n"),
    ("paged_attn.py", "new name ", b"diff --git a/paged_attn.py b/new name \n"),
])
def test_the_git_line_keeps_every_character_of_both_names(old: str, new: str, header: bytes) -> None:
    diff = file_diff(FileChange(new, b"a\n", b"b\n"), old_path=old)
    assert diff.splitlines(keepends=True)[0] == header
    assert diff.splitlines(keepends=True)[1] == b"--- a/" + old.encode() + (b"\t" if " " in old else b"") + b"\n"
