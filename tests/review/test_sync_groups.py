"""What ``verify-sync`` finds and says, from its values: the groups, each copy's state, every line and summary.

The lines are what a maintainer acts on, so each wording is pinned whole:
"==" and "!=", the line counts and endings, the plural of "line" and "group",
the caveat about lines the reader did not read. Groups come from the patch
set's targets and from ``patcher.toml``; a bad ``patcher.toml`` is refused
with the key or path at fault.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from patcher.archive.dir_source import DirSource
from patcher.errors import PatcherError
from patcher.patchset.model import SeriesOutline
from patcher.review.sync import (ApplyOutlook, ConfigError, CopyState, DeclaredGroup, GroupCheck, SyncReport,
                                 check_sync, copy_diff, endings, load_config)
from patcher.shipping.shell_records import Note

from tests.fixtures_cli import INSTALLED, TARGET
from tests.fixtures_vendor import SHIPPED

SEQUENCE = "qwen3_6_scripts/sequence.py"
SEQUENCE_INSTALLED = "/usr/local/corex/lib/python3/dist-packages/vllm/sequence.py"
SHIPS = f"the image ships {SHIPPED} -> {INSTALLED}"
EVAL = Note("qwen3_6_scripts/patch_ops.sh", 12, 'eval "$CMD"', "an eval of a string the reader cannot know", "unread")
PIP = Note("qwen3_6_scripts/patch_ops.sh", 40, "pip install -r reqs.txt", "a program it does not follow", "program")


def group(*copies: CopyState, image_paths: tuple[str, ...] = (INSTALLED,), unread: tuple[Note, ...] = (),
          lines: int = 547, line_endings: str = "LF") -> GroupCheck:
    return GroupCheck(SHIPPED, lines, line_endings, image_paths, "patch set", copies,
                      tuple(b"" for _ in copies), unread)


# -- one line per group -------------------------------------------------------------------------


def test_a_group_in_sync_names_every_copy() -> None:
    check = group(CopyState("paged_attn.py", 547, "LF", "identical"), CopyState("old/paged_attn.py", 547, "LF",
                                                                                "identical"))
    assert check.drifted == ()
    assert check.line() == f"paged_attn.py, old/paged_attn.py == {SHIPPED} (547 lines); {SHIPS}"
    assert group(CopyState("a.py", 1, "none", "identical"), lines=1).line() == f"a.py == {SHIPPED} (1 line); {SHIPS}"


def test_a_drifted_copy_is_named_with_its_lines_and_only_the_drifted_ones() -> None:
    check = group(CopyState("paged_attn.py", 245, "CRLF", "drifted"), CopyState("ok.py", 547, "LF", "identical"),
                  CopyState("crlf.py", 1, "CRLF", "line endings only"))
    assert [c.path for c in check.drifted] == ["paged_attn.py", "crlf.py"]
    assert check.line() == (f"paged_attn.py (245 lines), crlf.py (1 line; line endings only) != {SHIPPED} "
                            f"(547 lines); {SHIPS}")


def test_copies_that_differ_in_line_endings_only_say_so_with_each_side_s_endings() -> None:
    check = group(CopyState("paged_attn.py", 547, "CRLF", "line endings only"),
                  CopyState("b.py", 1, "mixed", "line endings only"), CopyState("c.py", 547, "LF", "identical"))
    assert check.line() == (f"paged_attn.py (547 lines, CRLF), b.py (1 line, mixed) != {SHIPPED} (547 lines, LF) "
                            f"in line endings only; {SHIPS}")
    assert group(CopyState("p.py", 2, "LF", "line endings only"), lines=1, line_endings="CRLF").line() == (
        f"p.py (2 lines, LF) != {SHIPPED} (1 line, CRLF) in line endings only; {SHIPS}")


def test_a_file_installed_twice_names_both_places_and_one_not_shipped_says_so() -> None:
    copy = CopyState("paged_attn.py", 547, "LF", "identical")
    twice = group(copy, image_paths=(INSTALLED, "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"))
    assert twice.line().endswith(
        f"; the image ships {SHIPPED} -> {INSTALLED}, /usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py")
    assert group(copy, image_paths=()).line() == f"paged_attn.py == {SHIPPED} (547 lines); the image does not ship {SHIPPED}"


def test_lines_the_reader_did_not_read_are_named_as_a_caveat() -> None:
    copy = CopyState("paged_attn.py", 245, "CRLF", "drifted")
    assert group(copy, unread=(EVAL,)).line() == (
        f"paged_attn.py (245 lines) != {SHIPPED} (547 lines); {SHIPS}, but line 12 of qwen3_6_scripts/patch_ops.sh "
        "(`eval \"$CMD\"`) was not read: it could change that")
    assert group(copy, unread=(EVAL, PIP)).line().endswith(
        f"{SHIPS}, but lines 12 and 40 of qwen3_6_scripts/patch_ops.sh (`eval \"$CMD\"`, `pip install -r reqs.txt`) "
        "were not read: they could change that")


# -- the summary and exit code ---------------------------------------------------------------------


def test_the_summary_counts_groups_and_drift() -> None:
    same = group(CopyState("paged_attn.py", 547, "LF", "identical"))
    drifted = group(CopyState("paged_attn.py", 245, "CRLF", "drifted"))
    assert SyncReport("t", (), None).summary() == "no mirror groups: no shipped file has a stale copy in this tree"
    assert SyncReport("t", (same,), None).summary() == "the mirror group is in sync"
    assert SyncReport("t", (same, same), None).summary() == "all 2 mirror groups in sync"
    assert SyncReport("t", (drifted,), None).summary() == (
        "1 of 1 mirror group drifted: copy the shipped file over each stale copy")
    apply = ApplyOutlook("patcher apply drop.zip", True, frozenset({"paged_attn.py"}))
    assert SyncReport("t", (drifted,), None).summary(apply) == (
        "1 of 1 mirror group drifted: 'patcher apply drop.zip' re-syncs them, or copy the shipped file over each "
        "stale copy")
    assert SyncReport("t", (same, drifted, drifted), None).summary().startswith("2 of 3 mirror groups drifted: ")
    assert [int(SyncReport("t", groups, None).exit_code) for groups in ((), (same,), (same, drifted))] == [0, 0, 1]
    assert SyncReport("t", (same, drifted), None).drifted == (drifted,)


def test_the_summary_says_how_many_groups_depend_on_unread_lines() -> None:
    uncertain = group(CopyState("paged_attn.py", 547, "LF", "identical"), unread=(EVAL,))
    same = group(CopyState("paged_attn.py", 547, "LF", "identical"))
    caveat = " depends on lines the reader did not read (see 'patcher inspect')"
    assert SyncReport("t", (uncertain,), None).summary() == (
        f"the mirror group is in sync; which file the image holds for 1 group{caveat}")
    assert SyncReport("t", (uncertain, uncertain, same), None).summary() == (
        f"all 3 mirror groups in sync; which file the image holds for 2 groups{caveat}")
    drifted = group(CopyState("paged_attn.py", 1, "LF", "drifted"), unread=(PIP,))
    assert SyncReport("t", (drifted,), None).summary().endswith(
        f"over each stale copy; which file the image holds for 1 group{caveat}")


def test_json_gives_each_group_copy_and_unread_line_as_fields() -> None:
    drifted = CopyState("paged_attn.py", 245, "CRLF", "drifted")
    same = CopyState("b.py", 547, "LF", "identical")
    check = GroupCheck(SHIPPED, 547, "LF", (INSTALLED,), "patcher.toml", (drifted, same), (b"-x\n+\xff\n", b""), (EVAL,))
    report = SyncReport("drop.zip", (check,), "patcher.toml")
    assert report.to_json(diffs=True) == {
        "input": "drop.zip", "config": "patcher.toml", "in_sync": False,
        "groups": [{
            "shipped": SHIPPED, "lines": 547, "line_endings": "LF", "image_paths": [INSTALLED], "origin": "patcher.toml",
            "in_sync": False,
            "unread": [{"file": "qwen3_6_scripts/patch_ops.sh", "line": 12, "text": 'eval "$CMD"', "kind": "unread",
                        "reason": "an eval of a string the reader cannot know"}],
            "copies": [{"path": "paged_attn.py", "lines": 245, "line_endings": "CRLF", "state": "drifted",
                        "diff": "-x\n+\ufffd\n"},
                       {"path": "b.py", "lines": 547, "line_endings": "LF", "state": "identical", "diff": None}],
        }],
    }
    assert "diff" not in report.to_json()["groups"][0]["copies"][0]
    assert SyncReport("t", (group(same),), None).to_json()["in_sync"] is True
    assert SyncReport("t", (group(same),), None).to_json()["groups"][0]["in_sync"] is True


def test_line_endings_are_named_as_an_editor_would() -> None:
    assert [endings(data) for data in (b"a\nb\n", b"a\r\nb\r\n", b"a\r\nb\n", b"no newline", b"", b"a\rb\r")] == \
        ["LF", "CRLF", "mixed", "none", "none", "none"]


# -- the groups of a tree ------------------------------------------------------------------------------


def outline() -> SeriesOutline:
    return SeriesOutline(Path("patches"), (("three-tier-decode", TARGET), ("prefix-pregather", TARGET)))


def test_each_copy_is_compared_byte_for_byte_and_a_drifted_one_gets_the_diff_to_the_shipped_file(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    shipped = (vendor_copy / SHIPPED).read_bytes()
    (vendor_copy / "paged_attn.py").write_bytes(shipped.replace(b"\n", b"\r\n"))
    (vendor_copy / "sequence.py").write_bytes(b"stale = True\n")
    (vendor_copy / "seq_same.py").write_bytes((vendor_copy / SEQUENCE).read_bytes())
    declared = (DeclaredGroup(SEQUENCE, (SEQUENCE, "sequence.py", "seq_same.py", "sequence.py")),)
    report = check_sync(DirSource(vendor_copy), outline(), declared, "groups.toml")
    first, second = report.groups
    assert (first.shipped, first.origin, first.image_paths) == (SHIPPED, "patch set", (INSTALLED,))
    assert first.copies == (CopyState("paged_attn.py", shipped.count(b"\n"), "CRLF", "line endings only"),)
    assert first.diffs == (b"",) and first.endings == "LF" and first.lines == shipped.count(b"\n")
    # The shipped file itself and a repeated copy are dropped; the diff turns the copy into the shipped file.
    assert (second.shipped, second.origin, second.image_paths) == (SEQUENCE, "groups.toml", (SEQUENCE_INSTALLED,))
    assert [(c.path, c.state) for c in second.copies] == [("sequence.py", "drifted"), ("seq_same.py", "identical")]
    assert copy_diff(second, second.copies[0]).startswith(
        f"diff --git a/sequence.py b/{SEQUENCE}\n--- a/sequence.py\n+++ b/{SEQUENCE}\n@@ -1 +1,".encode())
    assert copy_diff(second, second.copies[1]) == b""
    assert report.label == DirSource(vendor_copy).label and report.config == "groups.toml"


def test_a_declared_group_for_a_patched_file_joins_apply_s_group(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    shutil.copyfile(vendor_copy / SHIPPED, vendor_copy / "mirror_two.py")
    declared = (DeclaredGroup(SHIPPED, ("mirror_two.py",)),)
    (only,) = check_sync(DirSource(vendor_copy), outline(), declared).groups
    assert only.origin == "patch set"
    assert [(c.path, c.state) for c in only.copies] == [("paged_attn.py", "drifted"), ("mirror_two.py", "identical")]
    (alone,) = check_sync(DirSource(vendor_copy), SeriesOutline(Path("p"), ()), declared).groups
    assert alone.origin == "patcher.toml"


def test_a_file_only_copied_into_the_image_ships_where_copy_puts_it(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "qwen3_6_scripts" / "notes.txt").write_text("kept\n")
    (vendor_copy / "notes.txt").write_text("kept\n")
    (check,) = check_sync(DirSource(vendor_copy), SeriesOutline(Path("p"), ()),
                          (DeclaredGroup("qwen3_6_scripts/notes.txt", ("notes.txt",)),)).groups
    assert check.image_paths == ("/workspace/qwen3_6_scripts/notes.txt",)
    (check,) = check_sync(DirSource(vendor_copy), SeriesOutline(Path("p"), ()),
                          (DeclaredGroup("notes.txt", ("qwen3_6_scripts/notes.txt",)),)).groups
    assert check.image_paths == ()


# -- patcher.toml ---------------------------------------------------------------------------------------


def test_no_patcher_toml_declares_nothing(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    assert load_config(DirSource(vendor_copy), None) == ((), None)


def test_groups_are_read_with_surrounding_slashes_dropped(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "patcher.toml").write_text(
        '[[verify-sync.mirrors]]\nshipped = "/qwen3_6_scripts/sequence.py"\ncopies = ["paged_attn.py/", "Dockerfile"]\n'
        '[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/paged_attn.py"\ncopies = ["paged_attn.py"]\n')
    assert load_config(DirSource(vendor_copy), None) == (
        (DeclaredGroup(SEQUENCE, ("paged_attn.py", "Dockerfile")), DeclaredGroup(SHIPPED, ("paged_attn.py",))),
        "patcher.toml")


def test_config_given_by_path_is_read_from_disk_not_the_tree(vendor_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "patcher.toml").write_text("not toml at all [")
    given = tmp_path / "groups.toml"
    given.write_text('[verify-sync]\nmirrors = [{shipped = "qwen3_6_scripts/sequence.py", copies = ["Dockerfile"]}]\n')
    assert load_config(DirSource(vendor_copy), given) == ((DeclaredGroup(SEQUENCE, ("Dockerfile",)),), str(given))
    empty = tmp_path / "empty.toml"
    empty.write_text("[some-other-command]\nanything = 1\n")  # other tables belong to other commands
    assert load_config(DirSource(vendor_copy), empty) == ((), str(empty))


def test_an_unreadable_config_says_why(vendor_copy, tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError) as caught:
        load_config(DirSource(vendor_copy), missing)
    assert str(caught.value) == f"{missing}: no such file (pass the patcher.toml file itself)"


@pytest.mark.parametrize(("text", "message"), [
    ("verify-sync = 3\n", "'verify-sync' must be a table"),
    ("[verify-sync]\nmirror = []\n", "unknown key 'verify-sync.mirror'; did you mean 'verify-sync.mirrors'?"),
    ("[verify-sync]\nzzz = 1\n", "unknown key 'verify-sync.zzz' (known: mirrors)"),
    ('[[verify-sync.mirrors]]\nshipped = "Dockerfile"\ncopies = ["paged_attn.py"]\nzzz = 1\n',
     "unknown key 'verify-sync.mirrors[1].zzz' (known: copies, shipped)"),
    ("[verify-sync]\nmirrors = 1\n",
     "'verify-sync.mirrors' must be an array of tables ([[verify-sync.mirrors]])"),
    ("[verify-sync]\nmirrors = [1]\n",
     "'verify-sync.mirrors' must be an array of tables ([[verify-sync.mirrors]])"),
    ('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\ncopies = ["Dockerfile"]\ncopy = []\n',
     "unknown key 'verify-sync.mirrors[1].copy'; did you mean 'verify-sync.mirrors[1].copies'?"),
    ('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\ncopies = ["Dockerfile"]\n'
     '[[verify-sync.mirrors]]\nshipped = 1\ncopies = ["Dockerfile"]\n',
     "'verify-sync.mirrors[2].shipped' must name the copy the image ships"),
    ('[[verify-sync.mirrors]]\nshipped = ""\ncopies = ["Dockerfile"]\n',
     "'verify-sync.mirrors[1].shipped' must name the copy the image ships"),
    ('[[verify-sync.mirrors]]\ncopies = ["Dockerfile"]\n',
     "'verify-sync.mirrors[1].shipped' must name the copy the image ships"),
    ('[[verify-sync.mirrors]]\nshipped = "Dockerfile"\ncopies = []\n',
     "'verify-sync.mirrors[1].copies' must be a non-empty list of paths"),
    ('[[verify-sync.mirrors]]\nshipped = "Dockerfile"\ncopies = "paged_attn.py"\n',
     "'verify-sync.mirrors[1].copies' must be a non-empty list of paths"),
    ('[[verify-sync.mirrors]]\nshipped = "Dockerfile"\ncopies = ["paged_attn.py", 3]\n',
     "'verify-sync.mirrors[1].copies' must be a non-empty list of paths"),
    ('[[verify-sync.mirrors]]\nshipped = "Dockerfile"\ncopies = ["paged_attn.py", ""]\n',
     "'verify-sync.mirrors[1].copies' must be a non-empty list of paths"),
    ('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/sequence.py"\ncopies = ["sequence.py"]\n',
     "[verify-sync] names 'sequence.py', which is not a file of {label} "
     "(paths are relative to the folder holding the Dockerfile)"),
    ('[[verify-sync.mirrors]]\nshipped = "qwen3_6_scripts/gone.py"\ncopies = ["paged_attn.py"]\n',
     "[verify-sync] names 'qwen3_6_scripts/gone.py', which is not a file of {label} "
     "(paths are relative to the folder holding the Dockerfile)"),
])
def test_a_bad_config_is_refused_with_the_key_or_path_at_fault(vendor_copy, text: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "patcher.toml").write_text(text)
    tree = DirSource(vendor_copy)
    with pytest.raises(ConfigError) as caught:
        load_config(tree, None)
    assert str(caught.value) == "patcher.toml: " + message.format(label=tree.label)
    assert isinstance(caught.value, PatcherError) and caught.value.exit_code == 2


@pytest.mark.parametrize("data", [b"[verify-sync\n", b"\xff\xfe[verify-sync]\n"])
def test_a_config_that_is_not_toml_or_not_utf8_is_refused(vendor_copy, data: bytes) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "patcher.toml").write_bytes(data)
    with pytest.raises(ConfigError, match=r"^patcher\.toml: not valid TOML: "):
        load_config(DirSource(vendor_copy), None)


def test_a_target_without_a_stale_copy_makes_no_group(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    (vendor_copy / "paged_attn.py").unlink()
    report = check_sync(DirSource(vendor_copy), outline())
    assert report.groups == () and report.summary().startswith("no mirror groups")


def test_names_are_taken_as_written_but_for_slashes_around_them(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    # Names that start or end with other characters keep them: only '/' is dropped.
    (vendor_copy / "qwen3_6_scripts" / "XINDEX").write_text("x\n")
    (vendor_copy / "XINDEX").write_text("x\n")
    (vendor_copy / "patcher.toml").write_text(
        '[[verify-sync.mirrors]]\nshipped = "/qwen3_6_scripts/XINDEX/"\ncopies = ["/XINDEX/"]\n')
    assert load_config(DirSource(vendor_copy), None) == ((DeclaredGroup("qwen3_6_scripts/XINDEX", ("XINDEX",)),),
                                                          "patcher.toml")


def test_an_unread_line_that_changes_only_the_unused_copy_is_no_caveat(vendor_copy) -> None:  # type: ignore[no-untyped-def]
    # The image runs the installed copy; a sed on the one COPY left in /workspace cannot change that.
    script = vendor_copy / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_text(script.read_text() + f"sed -i 's/a/b/' /workspace/{SHIPPED}\n")
    (check,) = check_sync(DirSource(vendor_copy), outline()).groups
    assert check.image_paths == (INSTALLED,) and check.unread == ()
    script.write_text(script.read_text() + f"sed -i 's/a/b/' {INSTALLED}\n")
    (check,) = check_sync(DirSource(vendor_copy), outline()).groups
    assert [n.text for n in check.unread] == [f"sed -i 's/a/b/' {INSTALLED}"]
