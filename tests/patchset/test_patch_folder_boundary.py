"""A patch folder is a closed world: only its own regular files are read, each capped, each TOML shallow.

Series entries, patch files, templates (and what they include), and
policy.toml must resolve inside the patch folder (templates: inside the
templates folder) after symlinks are resolved; a FIFO, device or socket is
refused without being opened for a blocking read; every file has a size cap;
TOML nesting is capped before tomllib sees it; ids, names and example fields
that would crash later are refused at load. Each refusal is one line, exit 2,
naming the entry, and nothing is written.
"""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from patcher.errors import PatchSetError
from patcher.patchset import folder as folder_module
from patcher.patchset.folder import (MAX_FILE_BYTES, MAX_NESTING, PatchFolder, nesting_problem, parse_toml, read_file,
                                     templates_digest)
from patcher.patchset.load import load_outline, load_patch_set
from patcher.patchset.templates import make_environment, render
from tests import fixtures_hostile_patchset as hostile
from tests.fixtures_patches import write_patch_set
from tests.fixtures_vendor import VENDOR_ZIP
from tests.patchset.conftest import GUARD


def _refused(cli: Any, patches: Path, *args: Any) -> str:
    """Run ``diff VENDOR`` (or ``args``) on a hostile set: exit 2, one line, nothing written; return the line."""
    result = cli(*(args or ("diff", VENDOR_ZIP)), "--patches", patches)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ")
    assert list(cli.cwd.iterdir()) == []
    return line


# Symlinks and paths leading out ---------------------------------------------------


def test_a_template_symlinked_out_is_refused_and_its_text_never_ships(cli: Any, tmp_path: Path) -> None:
    secret = hostile.secret_outside(tmp_path)
    patches = hostile.template_symlinked_out(tmp_path, secret)
    line = _refused(cli, patches, "apply", VENDOR_ZIP, "-o", "ctx.tar")
    template = hostile.templates_of(patches) / hostile.THRESHOLDS
    assert line == (f"error: {template}: this template leads outside the templates folder (it resolves to {secret}) "
                    "(a patch set reads only files inside its own folders)")


def test_an_include_of_a_template_symlinked_out_is_refused(cli: Any, tmp_path: Path) -> None:
    secret = hostile.secret_outside(tmp_path)
    patches = hostile.include_outside(tmp_path, secret)
    line = _refused(cli, patches, "diff", VENDOR_ZIP, "--format", "markdown")
    assert f"{hostile.templates_of(patches) / 'leak.j2'}: this template leads outside the templates folder" in line
    assert "SECRET" not in line


def test_a_templates_folder_symlinked_out_is_refused(cli: Any, tmp_path: Path) -> None:
    patches = hostile.templates_folder_symlinked_out(tmp_path)
    line = _refused(cli, patches)
    assert line.startswith(f"error: {hostile.templates_of(patches)}: the templates folder leads outside the patch "
                           f"folder (it resolves to {tmp_path / 'outside-templates'})")


def test_a_templates_folder_linked_inside_the_set_is_read(tmp_path: Path) -> None:
    patches = hostile.copy_patch_set(tmp_path)
    inside = patches / "tpl"
    hostile.templates_of(patches).rename(inside)
    (patches / "templates").symlink_to("tpl", target_is_directory=True)
    patch_set = load_patch_set(patches, templates=patches / "templates")
    assert [p.id for p in patch_set.patches] == ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]


def test_a_file_in_place_of_the_templates_folder_leaves_the_set_without_templates(tmp_path: Path) -> None:
    patches = hostile.one_patch_set(tmp_path, "edit.toml", "edit")
    templates = hostile.templates_of(patches)
    templates.rmdir()
    templates.write_text("not a folder\n")
    assert PatchFolder.open(patches, templates) == PatchFolder(patches, patches.resolve(), templates, None)
    assert [p.id for p in load_patch_set(patches).patches] == ["edit"]


def test_a_missing_templates_folder_given_keys_the_patches_on_no_templates_not_on_the_folder_beside_the_set(
        tmp_path: Path) -> None:
    # A set loaded with a templates folder that does not exist renders from no
    # templates at all, never from the folder beside it: the digest the cache
    # keys on must not follow that folder either.
    patches = write_patch_set(tmp_path / "team", {"v1-guard.toml": GUARD}, templates={"v1-guard/route.py.j2": "x\n"})
    missing = tmp_path / "no-templates"
    (before,) = load_patch_set(patches, templates=missing, lazy=True).patches
    (tmp_path / "team" / "templates" / "v1-guard" / "route.py.j2").write_text("y\n")
    (after,) = load_patch_set(patches, templates=missing, lazy=True).patches
    assert after.code.digest == before.code.digest
    assert PatchFolder.open(patches, missing) == PatchFolder(patches, patches.resolve(), missing, None)


@pytest.mark.parametrize(("entry", "said"), [
    ("../x.toml", "line 1 names '../x.toml', which leads outside the patch folder (it resolves to OUTSIDE) (a series "
                  "lists files inside its own folder)"),
    ("OUTSIDE", "line 1 names 'OUTSIDE', an absolute path (name each patch file relative to the patch folder)"),
    # A series written on Windows: rooted, though Linux would take it as a file name.
    ("\\set\\x.toml", "line 1 names '\\set\\x.toml', an absolute path (name each patch file relative to the patch "
                        "folder)"),
])
def test_a_series_entry_outside_the_folder_is_refused(cli: Any, tmp_path: Path, entry: str, said: str) -> None:
    patches = hostile.series_entry(tmp_path, entry)
    line = _refused(cli, patches)
    outside = str(tmp_path / "set" / "x.toml")
    # The whole line, hint included: what the user reads to fix the series.
    assert line == f"error: {patches / 'series'}: {said.replace('OUTSIDE', outside)}"


def test_a_series_entry_that_goes_out_and_back_in_is_read(tmp_path: Path) -> None:
    patches = hostile.copy_patch_set(tmp_path)
    (patches / "series").write_text("../patches/three-tier-decode.toml\n")
    assert load_outline(patches).patches == (("three-tier-decode", "vllm/attention/ops/paged_attn.py"),)


def test_a_patch_file_symlinked_out_is_refused(cli: Any, tmp_path: Path) -> None:
    patches = hostile.patch_file_symlinked_out(tmp_path)
    line = _refused(cli, patches)
    assert line.startswith(f"error: {patches / 'series'}: line 2 names 'three-tier-decode.toml', which leads outside "
                           "the patch folder")


def test_a_patch_file_linked_inside_the_set_is_read(tmp_path: Path) -> None:
    patches = hostile.copy_patch_set(tmp_path)
    (patches / "three-tier-decode.toml").rename(patches / "kept.txt")
    (patches / "three-tier-decode.toml").symlink_to("kept.txt")
    assert load_outline(patches).ids_for("vllm/attention/ops/paged_attn.py")[0] == "three-tier-decode"


def test_a_policy_symlinked_out_is_refused(cli: Any, tmp_path: Path) -> None:
    patches = hostile.policy_symlinked_out(tmp_path)
    line = _refused(cli, patches, "apply", VENDOR_ZIP, "-o", "ctx.tar")
    assert line.startswith(f"error: {patches / 'policy.toml'}: this policy file leads outside the patch folder")


def test_a_template_symlinked_to_a_device_is_refused(cli: Any, tmp_path: Path) -> None:
    patches = hostile.device_in_place_of_template(tmp_path)
    line = _refused(cli, patches)
    assert "this template leads outside the templates folder (it resolves to /dev/zero)" in line


# Only regular files -----------------------------------------------------------------


@pytest.mark.parametrize(("relative", "what"), [
    ("patches/series", "series file"),
    ("patches/three-tier-decode.toml", "patch file"),
    ("patches/policy.toml", "policy file"),
    (f"templates/{hostile.THRESHOLDS}", "template"),
])
def test_a_fifo_is_refused_at_once(cli: Any, tmp_path: Path, relative: str, what: str) -> None:
    # The reader refuses it from lstat, before any open: opening a FIFO for
    # reading would wait for a writer that never comes.
    patches = hostile.fifo_in_place_of(tmp_path, relative)
    line = _refused(cli, patches, "apply", VENDOR_ZIP, "-o", "ctx.tar")
    assert line == (f"error: {patches.parent / relative}: this {what} is a FIFO, not a regular file "
                    "(a patch set is made of plain files)")


def test_a_device_is_refused_without_reading_it() -> None:
    with pytest.raises(PatchSetError, match=r"^/dev/zero: this template is a character device, not a regular file"):
        read_file(Path("/dev/zero"), roots=(Path("/dev"),), what="template")


def test_a_socket_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        with pytest.raises(PatchSetError, match=r"this file is a socket, not a regular file"):
            read_file(path, roots=(tmp_path,))
    finally:
        server.close()


def between_check_and_open(monkeypatch: pytest.MonkeyPatch, change: Callable[[], None]) -> None:
    """Run ``change`` once, right after read_file's own lstat of the file answers: the file then changes between
    the reader's check and its open, as another process (an editor, a checkout) could change it."""
    lstat, done = os.lstat, []

    def lstat_then_change(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        found = lstat(path, *args, **kwargs)
        if sys._getframe(1).f_globals["__name__"] == read_file.__module__ and not done:
            done.append(True)
            change()
        return found

    monkeypatch.setattr(os, "lstat", lstat_then_change)


def test_a_file_of_a_kind_linux_does_not_have_is_refused_unopened(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # macOS and the BSDs show a whiteout (S_IFWHT, 0o160000) on a union mount, Solaris a door: kinds with no name
    # in the reader's list. lstat is made to report one: the file is refused as no plain file, never opened.
    path = tmp_path / "series"
    path.write_text("edit.toml\n")
    lstat, opened = os.lstat, []

    def lstat_as_whiteout(target: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        found = lstat(target, *args, **kwargs)
        if sys._getframe(1).f_globals["__name__"] != read_file.__module__:
            return found
        return os.stat_result((0o160000 | 0o644,) + tuple(found)[1:])

    monkeypatch.setattr(os, "lstat", lstat_as_whiteout)
    monkeypatch.setattr(os, "open", lambda *args, **kwargs: opened.append(args) or -1)
    with pytest.raises(PatchSetError) as refused:
        read_file(path, roots=(tmp_path,), what="series file")
    assert str(refused.value) == (f"{path}: this series file is a file of a kind this system does not name, not a "
                                  "regular file (a patch set is made of plain files)")
    assert opened == []


def test_a_system_without_o_nofollow_still_reads_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Windows has no O_NOFOLLOW: the reader opens without it (the fstat after
    # the open still tells a swapped file) and reads the file as anywhere else.
    monkeypatch.delattr(os, "O_NOFOLLOW", raising=False)
    (tmp_path / "series").write_text("edit.toml\n")
    assert read_file(tmp_path / "series", roots=(tmp_path,), what="series file") == b"edit.toml\n"


def test_a_file_removed_between_its_check_and_its_open_is_refused_naming_it(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # A checkout removing the series after the reader's lstat: the open fails,
    # and the refusal is one line naming the file, as the OS words it.
    series = tmp_path / "series"
    series.write_text("edit.toml\n")
    between_check_and_open(monkeypatch, lambda: os.unlink(series))
    with pytest.raises(PatchSetError) as refused:
        read_file(series, roots=(tmp_path,), what="series file")
    assert str(refused.value) == f"{series}: cannot read this series file: no such file or directory"


def test_a_file_the_system_fails_to_read_is_refused_naming_it() -> None:
    # /proc/self/mem is a regular file whose first bytes (address 0) fail to
    # read with EIO, as a file on a failing disk does: one line, no traceback.
    folder = PatchFolder.open(Path("/proc/self"))
    with pytest.raises(PatchSetError) as refused:
        folder.read(Path("/proc/self/mem"))
    assert str(refused.value) == "/proc/self/mem: cannot read this file: input/output error"


def test_a_path_through_a_plain_file_is_refused_naming_it(tmp_path: Path) -> None:
    # "policy.toml/base.toml": the OS says ENOTDIR at lstat, which is neither
    # missing nor a crash; the reader words it as the OS does.
    (tmp_path / "policy.toml").write_text("[cache]\n")
    with pytest.raises(PatchSetError) as refused:
        read_file(tmp_path / "policy.toml" / "base.toml", roots=(tmp_path,))
    assert str(refused.value) == f"{tmp_path / 'policy.toml' / 'base.toml'}: cannot read this file: not a directory"


@pytest.mark.parametrize("swap", ["a link to it", "another file"])
def test_a_file_changed_between_its_check_and_its_open_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   swap: str) -> None:
    # Between the reader's lstat (a regular file) and its open, the file is moved out and a link to it put in
    # its place (even to that very file, the link is not followed), or another regular file is moved into the
    # checked name (an editor saving, a checkout): nothing of what is opened is read.
    patches = tmp_path / "patches"
    patches.mkdir()
    series = patches / "series"
    series.write_text("edit.toml\n")
    aside = tmp_path / "aside"
    if swap == "another file":
        aside.write_text("evil.toml\n")

    def swapped() -> None:
        if swap == "another file":
            os.replace(aside, series)
        else:
            os.replace(series, aside)
            series.symlink_to(aside)

    between_check_and_open(monkeypatch, swapped)
    with pytest.raises(PatchSetError) as refused:
        read_file(series, roots=(patches,), what="series file")
    assert str(refused.value) == f"{series}: this series file changed while it was read (run again)"
    assert series.is_symlink() == (swap == "a link to it")
    assert (swap == "a link to it") or series.read_text() == "evil.toml\n"


def test_a_folder_in_place_of_a_patch_file_is_refused(tmp_path: Path) -> None:
    patches = hostile.copy_patch_set(tmp_path)
    (patches / "three-tier-decode.toml").unlink()
    (patches / "three-tier-decode.toml").mkdir()
    with pytest.raises(PatchSetError, match=r"three-tier-decode.toml: this patch file is a directory, not a regular"):
        load_outline(patches)


def test_a_template_that_is_a_symlink_loop_is_refused_as_a_symlink(tmp_path: Path) -> None:
    # A link that resolves to nothing regular (here, to itself through a
    # second link) is met by lstat as what it is: never opened, one line.
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "a.j2").symlink_to("b.j2")
    (folder / "b.j2").symlink_to("a.j2")
    with pytest.raises(PatchSetError) as refused:
        templates_digest(folder)
    assert str(refused.value) == (f"{folder / 'a.j2'}: this template is a symlink, not a regular file "
                                  "(a patch set is made of plain files)")


def test_a_name_holding_a_nul_is_refused_naming_it_escaped(tmp_path: Path) -> None:
    # The OS would raise ValueError on the NUL: the reader refuses the name
    # first, and shows it with the NUL escaped, in one line.
    with pytest.raises(PatchSetError) as refused:
        read_file(tmp_path / "a\0b.j2", roots=(tmp_path,), what="template")
    assert str(refused.value) == f"{tmp_path}/a\\x00b.j2: cannot read this template: its name holds a NUL character"


def test_files_are_capped_at_a_mebibyte(cli: Any, tmp_path: Path) -> None:
    patches = hostile.oversized_template(tmp_path, MAX_FILE_BYTES + 1)
    line = _refused(cli, patches)
    assert line == (f"error: {hostile.templates_of(patches) / hostile.THRESHOLDS}: this template is 1,048,577 bytes, "
                    "more than the 1,048,576 a patch set file may hold")
    exactly = tmp_path / "exactly"
    exactly.mkdir()
    (exactly / "f").write_bytes(b"x" * MAX_FILE_BYTES)
    assert len(read_file(exactly / "f", roots=(exactly,))) == MAX_FILE_BYTES


def test_one_load_reads_at_most_16_mebibytes(tmp_path: Path) -> None:
    patches = hostile.oversized_set(tmp_path, files=17, size=MAX_FILE_BYTES)
    with pytest.raises(PatchSetError) as refused:
        load_outline(patches)
    assert str(refused.value) == (f"{patches / 'padded-15.toml'}: the patch set holds more than the 16,777,216 bytes "
                                  "one load may read")
    assert len(load_outline(hostile.oversized_set(tmp_path / "fits", files=15, size=MAX_FILE_BYTES)).patches) == 18


def test_the_templates_digest_refuses_what_rendering_would(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "a.j2").write_text("x")
    before = templates_digest(folder)
    (folder / "link.j2").symlink_to(hostile.secret_outside(tmp_path))
    with pytest.raises(PatchSetError, match=r"link.j2: this template leads outside the templates folder"):
        templates_digest(folder)
    (folder / "link.j2").unlink()
    os.mkfifo(folder / "pipe.j2")
    with pytest.raises(PatchSetError, match=r"pipe.j2: this template is a FIFO, not a regular file"):
        templates_digest(folder)
    (folder / "pipe.j2").unlink()
    assert templates_digest(folder) == before


def test_the_templates_digest_refuses_a_link_to_a_missing_template(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "gone.j2").symlink_to("removed.j2")
    with pytest.raises(PatchSetError) as refused:
        templates_digest(folder)
    assert str(refused.value) == f"{folder / 'gone.j2'}: no such template"


def test_the_templates_digest_refuses_a_folder_link_leading_out_naming_the_link_and_its_target(tmp_path: Path) -> None:
    # A link to a folder of someone else's templates: refused naming the
    # link, and where it leads in full (a long path, cut only past 200 characters).
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "a.j2").write_text("x")
    elsewhere = tmp_path / ("shared-kernel-templates-" + "k" * max(0, 120 - len(str(tmp_path))))
    elsewhere.mkdir()
    (elsewhere / "b.j2").write_text("y")
    (folder / "shared").symlink_to(elsewhere, target_is_directory=True)
    target = os.path.realpath(elsewhere)
    assert 80 < len(target) <= 200
    with pytest.raises(PatchSetError) as refused:
        templates_digest(folder)
    assert str(refused.value) == (f"{folder / 'shared'}: this template link leads outside the templates folder "
                                  f"(it resolves to {target})")


def test_the_templates_digest_follows_links_inside(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    (folder / "real").mkdir(parents=True)
    (folder / "other").mkdir()
    (folder / "real" / "a.j2").write_text("x")
    (folder / "other" / "a.j2").write_text("x")
    (folder / "link").symlink_to("real", target_is_directory=True)
    first = templates_digest(folder)
    (folder / "link").unlink()
    (folder / "link").symlink_to("other", target_is_directory=True)
    assert templates_digest(folder) != first  # the same files, but the link names another folder


# TOML that tomllib would recurse on or crawl through ---------------------------------


@pytest.mark.parametrize("shape", ["arrays", "inline tables", "dotted key"])
def test_deep_toml_is_refused_with_its_line(cli: Any, tmp_path: Path, shape: str) -> None:
    patches = hostile.deep_toml(tmp_path, shape)
    assert _refused(cli, patches) == (
        f"error: {patches / 'three-tier-decode.toml'}: line 1: values or keys nest more than {MAX_NESTING} levels deep "
        "(a patch needs a few levels; flatten the tables)")


def test_a_deep_policy_is_refused_with_its_line(cli: Any, tmp_path: Path) -> None:
    patches = hostile.deep_policy(tmp_path)
    line = _refused(cli, patches, "apply", VENDOR_ZIP, "-o", "ctx.tar")
    assert line.startswith(f"error: {patches / 'policy.toml'}: line 1: values or keys nest more than")


def test_nesting_counts_brackets_and_dotted_keys_but_not_strings_or_comments() -> None:
    assert nesting_problem("a = " + "[" * 32 + "]" * 32) is None
    assert nesting_problem("a = " + "[" * 33 + "]" * 33) == (1, 33)
    assert nesting_problem("x = 1\n\n" + "[t]\n" + "k" + ".k" * 33 + " = 1\n") == (4, 33)
    assert nesting_problem("[" + "t." * 33 + "t]\n") == (1, 33)
    assert nesting_problem("a = {b = {" + "c." * 40 + "d = 1}}") == (1, 33)
    assert nesting_problem('a = "' + "[" * 100 + '"\nb = \'' + "{" * 100 + "'\n# " + "[" * 100) is None
    assert nesting_problem('a = """\n' + "[" * 100 + '\n"""\nb = \'\'\'' + "." * 100 + "'''") is None
    assert nesting_problem("a = 1.5\nb = [1.0, 2.0]\nc = 1979-05-27T07:32:00.999\n" + "d = " + "." * 0 + "3.14") is None
    assert nesting_problem('a = "\\"[[["\nb = ' + "[" * 40 + "]" * 40) == (2, 33)
    # A literal string (single quotes, as patterns often are) ends at its quote: what follows is still counted.
    assert nesting_problem("pattern = 'use_v1 = True'\nb = " + "[" * 40 + "]" * 40) == (2, 33)


def test_an_apostrophe_in_a_comment_does_not_change_how_a_literal_string_after_it_is_read(tmp_path: Path) -> None:
    # The literal string 'x' ends at its own closing quote, not at the
    # apostrophe of the comment above it: two levels deep, parsed as tomllib parses it.
    text = "# it's the pattern\na = [['x']]\n"
    assert nesting_problem(text) is None
    assert parse_toml(text, tmp_path / "x.toml") == {"a": [["x"]]}


def test_a_basic_string_after_the_first_line_is_skipped_and_what_follows_it_counted() -> None:
    # The string is read from its own opening quote, wherever it is in the file.
    assert nesting_problem('limit = 1\nname = "v1"\nb = ' + "[" * 40 + "]" * 40) == (3, 33)


@pytest.mark.parametrize("second", ["pattern = 'use_v1'", "'quoted key' = 2"])
def test_a_literal_string_after_the_first_line_is_skipped_and_what_follows_it_counted(tmp_path: Path,
                                                                                     second: str) -> None:
    # A single-quoted string (a value, or a quoted key opening its line) ends at its own closing quote, whatever
    # line break comes before it: the deep value after it is still refused with its line.
    text = f"limit = 1\n{second}\nb = " + "[" * 40 + "]" * 40 + "\n"
    assert nesting_problem(text) == (3, 33)
    with pytest.raises(PatchSetError) as refused:
        parse_toml(text, tmp_path / "x.toml")
    assert str(refused.value).startswith(f"{tmp_path / 'x.toml'}: line 3: values or keys nest more than {MAX_NESTING}")
    assert parse_toml("limit = 1\n'quoted key' = 2\n", tmp_path / "x.toml") == {"limit": 1, "quoted key": 2}


@pytest.mark.parametrize("extra", [1, 2])
@pytest.mark.parametrize("quote", ['"', "'"])
def test_a_multiline_string_ending_in_extra_quotes_is_skipped_whole(tmp_path: Path, quote: str, extra: int) -> None:
    # Up to two quotes of the content may sit against the closing three:
    # """a""""" holds 'a""', """a"""" holds 'a"'. The scan skips all the
    # quotes, and what follows the string is still counted.
    string = f"{quote * 3}a{quote * (3 + extra)}"
    assert nesting_problem(f"a = {string}\nb = " + "[" * 40 + "]" * 40 + "\n") == (2, 33)
    assert parse_toml(f"a = {string}\nb = [[1]]\n", tmp_path / "x.toml") == {"a": f"a{quote * extra}", "b": [[1]]}


@pytest.mark.parametrize("quote", ['"""', "'''"])
def test_the_line_of_deep_nesting_counts_the_lines_inside_a_multiline_string(tmp_path: Path, quote: str) -> None:
    # A description over three lines, then a value nested too deep on line 5:
    # the refusal names line 5, the line the author must look at.
    text = f"description = {quote}\nFirst line.\nSecond line.\n{quote}\nb = " + "[" * 40 + "]" * 40 + "\n"
    assert nesting_problem(text) == (5, 33)
    with pytest.raises(PatchSetError) as refused:
        parse_toml(text, tmp_path / "x.toml")
    assert str(refused.value).startswith(f"{tmp_path / 'x.toml'}: line 5: values or keys nest more than {MAX_NESTING}")


def test_arrays_side_by_side_do_not_add_up() -> None:
    # Each closing bracket ends its array: forty pairs in one array are two levels, not forty.
    text = "cases = [" + ", ".join(f"[{n}, 16]" for n in range(40)) + "]\nblock = [[1]]\n"
    assert nesting_problem(text) is None
    assert parse_toml(text, Path("cases.toml"))["cases"][39] == [39, 16]


def test_a_table_header_and_dotted_keys_under_it_nest_together(tmp_path: Path) -> None:
    # Neither line nests past the cap on its own (21 and 20 levels), but the
    # keys under "[a.a...]" sit 41 levels deep in the parsed value: refused.
    text = "[" + "a." * 20 + "a]\n" + "b." * 20 + "b = 1\n"
    assert nesting_problem(text) is None
    with pytest.raises(PatchSetError) as refused:
        parse_toml(text, tmp_path / "x.toml")
    assert str(refused.value) == f"{tmp_path / 'x.toml'}: values or keys nest more than {MAX_NESTING} levels deep"


def test_the_nesting_caps_leave_every_committed_toml_alone() -> None:
    from tests.fixtures_vendor import PATCHES

    for path in sorted(PATCHES.glob("*.toml")):
        assert nesting_problem(path.read_text()) is None, path
        parse_toml(path.read_text(), path)


def test_an_integer_of_thousands_of_digits_is_bad_toml(tmp_path: Path) -> None:
    # Python's own words: "(4300 digits)" from 3.11, "(4300) for integer string conversion" on 3.10.
    with pytest.raises(PatchSetError, match=r"x.toml: not valid TOML: Exceeds the limit \(4300( digits)?\)"):
        parse_toml("a = " + "1" * 5000, tmp_path / "x.toml")


def test_pythons_words_on_a_too_long_integer_are_cut_at_120_characters(tmp_path: Path) -> None:
    # Python's message (140 characters on 3.11) is shown in full up to 120 characters, cut with "..." past that.
    with pytest.raises(ValueError) as python:
        int("1" * 5000)
    said = str(python.value)
    assert len(said) > 120
    with pytest.raises(PatchSetError) as refused:
        parse_toml("a = " + "1" * 5000, tmp_path / "x.toml")
    assert str(refused.value) == f"{tmp_path / 'x.toml'}: not valid TOML: {said[:117]}..."


def test_a_parse_that_runs_out_of_python_stack_is_refused_naming_the_file(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # The nesting cap keeps tomllib far below Python's recursion limit, but a
    # caller already deep in its own stack can still run out: one line naming
    # the file, not a traceback. (No text gets past the cap to recurse that
    # deep on its own, so tomllib is made to run out here.)
    def out_of_stack(text: str) -> dict[str, Any]:
        raise RecursionError("maximum recursion depth exceeded")

    decode_error = folder_module.tomllib.TOMLDecodeError
    monkeypatch.setattr(folder_module, "tomllib", SimpleNamespace(loads=out_of_stack, TOMLDecodeError=decode_error))
    with pytest.raises(PatchSetError) as refused:
        parse_toml("a = [[1]]\n", tmp_path / "x.toml")
    assert str(refused.value) == f"{tmp_path / 'x.toml'}: values nest more than {MAX_NESTING} levels deep"


def test_the_templates_digest_refuses_a_folder_of_more_than_10000_entries(tmp_path: Path) -> None:
    # Each entry costs the walk a stat, and each folder a listing: empty
    # folders count as entries too (100 holding 99 each: 10,000 in all), and
    # one more entry anywhere is refused, naming the templates folder.
    folder = tmp_path / "templates"
    for outer in range(100):
        for inner in range(99):
            (folder / f"d{outer}" / f"e{inner}").mkdir(parents=True)
    templates_digest(folder)
    (folder / "d0" / "one-more").mkdir()
    with pytest.raises(PatchSetError) as refused:
        templates_digest(folder)
    assert str(refused.value) == f"{folder}: the templates folder holds more than 10,000 entries"


@pytest.mark.parametrize("text", [
    'pattern = "use_v1 = True\ncode = "x = 2"\n',  # a basic string whose closing quote was forgotten
    "pattern = 'use_v1 = True\ncode = 'x = 2'\n",  # a literal one
])
def test_an_unterminated_string_is_left_for_tomllib_to_place(tmp_path: Path, text: str) -> None:
    with pytest.raises(PatchSetError, match=r"^.*x\.toml: not valid TOML: .* \(at line 1, column 25\)$"):
        parse_toml(text, tmp_path / "x.toml")


def test_an_unterminated_string_opening_the_file_is_left_for_tomllib_whatever_follows(tmp_path: Path) -> None:
    # A quoted key whose closing quote was forgotten: the scan stops there,
    # so tomllib names the string, not the deep value after it.
    text = '"use_v1 = True\nb = ' + "[" * 40 + "]" * 40 + "\n"
    assert nesting_problem(text) is None
    with pytest.raises(PatchSetError) as refused:
        parse_toml(text, tmp_path / "x.toml")
    assert str(refused.value) == (
        f"{tmp_path / 'x.toml'}: not valid TOML: Illegal character '\\n' (at line 1, column 15)")


# Ids, names and fields that would crash later ------------------------------------------


def test_a_long_patch_id_is_refused(cli: Any, tmp_path: Path) -> None:
    patches = hostile.long_patch_id(tmp_path)
    line = _refused(cli, patches, "test")
    assert line.endswith(": the id is 250 characters long, more than 100 (choose a shorter id, and name the file after it)")


def test_a_series_entry_too_long_for_the_file_system_is_refused(cli: Any, tmp_path: Path) -> None:
    patches = hostile.series_naming_a_long_file(tmp_path)
    line = _refused(cli, patches, "test")
    # The name is cut to 80 characters in the message: 77 of it, then "...".
    assert line == (f"error: {patches / 'series'}: line 1 names '{'a' * 77}...': its name is too long for the file "
                    "system (305 bytes; at most 255)")


@pytest.mark.parametrize("patch_id", ["a|b", "a`b", "a b", "-ab", "a\u00e9"])
def test_an_id_with_odd_characters_is_refused(cli: Any, tmp_path: Path, patch_id: str) -> None:
    patches = hostile.odd_patch_id(tmp_path, patch_id)
    line = _refused(cli, patches, "test")
    assert line == (f"error: {patches / (patch_id + '.toml')}: the id '{patch_id}' holds characters an id may not "
                    "(use letters, digits, '.' and '-', starting with a letter or digit, e.g. 'decode-fast-path')")


def test_a_series_entry_with_control_characters_is_refused_and_shown_escaped(cli: Any, tmp_path: Path) -> None:
    patches = hostile.odd_patch_id(tmp_path, "a\x1b[31mb")
    line = _refused(cli, patches, "test")
    assert line == f"error: {patches / 'series'}: line 1 names 'a\\x1b[31mb.toml', which holds control characters"


def test_new_refuses_a_long_id_before_touching_the_file_system(cli: Any, tmp_path: Path) -> None:
    patches = hostile.copy_patch_set(tmp_path)
    series = (patches / "series").read_bytes()
    result = cli("new", "a" * 300, "--target", "vllm/x.py", "--scope", "A.b", "--patches", patches)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: 'aaaa") and "is not a patch id: 300 characters, more than 100" in line
    assert (patches / "series").read_bytes() == series


@pytest.mark.parametrize(("example", "said"), [
    ("name = 5\nbefore = 'x = 1'", "'examples[1].name' must be a string, not an integer"),
    ("before = ['x = 1']", "'examples[1].before' must be a string, not an array"),
    ("before = 'x = 1'\nafter = 2", "'examples[1].after' must be a string, not an integer"),
    ("before = 'x = 1'\nerror = true", "'examples[1].error' must be a string, not a boolean"),
    ("before = 'x = 1'\nparams = 'n=1'", "'examples[1].params' must be a table of parameter values, not a string"),
    ("before = 'x = 1'\nparams = 0.5", "'examples[1].params' must be a table of parameter values, not a float"),
    ("before = 'x = 1'\nparams = { n = 1 }", "'examples[1].params': the patch has no parameter 'n'"),
])
def test_a_wrongly_typed_example_field_is_refused(cli: Any, tmp_path: Path, example: str, said: str) -> None:
    patches = hostile.example_with(tmp_path, example)
    assert _refused(cli, patches, "test") == f"error: {patches / 'edit.toml'}: {said}"


@pytest.mark.parametrize(("line", "said"), [
    ('description = ["a"]', "'description' must be a string, not an array"),
    ("target = 3", "'target' must be a string, not an integer"),
    ("scope = { a = 1 }", "'scope' must be a string, not a table"),
    ("last-update = 3", "'last-update' must be a date, not an integer"),
    ("last-update = 2026.12", "'last-update' must be a date, not a float"),
    ("id = 7", "'id' must be a string, not an integer"),
])
def test_a_wrongly_typed_header_field_is_refused(tmp_path: Path, line: str, said: str) -> None:
    patches = hostile.one_patch_set(tmp_path, "edit.toml", "edit")
    toml = patches / "edit.toml"
    key = line.split(" = ")[0]
    text = "\n".join(line if existing.startswith(key + " = ") else existing
                     for existing in toml.read_text().splitlines()) + "\n"
    toml.write_text(text)
    with pytest.raises(PatchSetError) as refused:
        load_outline(patches)
    assert str(refused.value) == f"{toml}: {said}"


def test_an_applied_when_marker_that_is_not_a_string_is_refused(tmp_path: Path) -> None:
    patches = hostile.one_patch_set(tmp_path, "edit.toml", "edit", 'applied-when = [{ pattern = { a = 1 } }]')
    with pytest.raises(PatchSetError, match=r"'applied-when\[1\].pattern' must be a string, not a table"):
        load_patch_set(patches)


def test_a_refused_set_leaves_the_folder_as_it_was(cli: Any, tmp_path: Path) -> None:
    patches = hostile.deep_toml(tmp_path, "arrays")
    before = {p: p.read_bytes() for p in patches.parent.rglob("*") if p.is_file()}
    _refused(cli, patches, "apply", VENDOR_ZIP, "-o", "ctx.tar")
    assert {p: p.read_bytes() for p in patches.parent.rglob("*") if p.is_file()} == before


def test_the_repository_set_reads_as_before() -> None:
    from tests.fixtures_vendor import PATCHES, ROOT

    folder = PatchFolder.open(PATCHES, ROOT / "templates")
    assert folder.templates_root == (ROOT / "templates").resolve()
    assert [p.id for p in load_patch_set(PATCHES, templates=ROOT / "templates").patches] == [
        "three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]


def test_a_template_read_from_a_set_without_a_templates_folder_is_missing(tmp_path: Path) -> None:
    # The folder says why it has no such file; the renderer names the
    # template the patch asked for, as it does for any missing template.
    patches = tmp_path / "patches"
    patches.mkdir()
    folder = PatchFolder.open(patches, tmp_path / "templates")
    assert folder.templates_root is None
    with pytest.raises(PatchSetError) as missing:
        folder.template(["v1-guard", "route.py.j2"])
    assert str(missing.value) == "no templates folder"
    with pytest.raises(PatchSetError) as refused:
        render(make_environment(folder), name="v1-guard/route.py.j2", values={})
    assert str(refused.value) == "no template 'v1-guard/route.py.j2' in the templates folder"


def test_a_template_linked_to_a_file_of_the_patch_folder_is_refused_as_outside_the_templates_folder(
        tmp_path: Path) -> None:
    # Templates read only the templates folder: a link to a patch file, inside
    # the patch folder but outside the templates folder, is refused by the reader itself.
    patches = tmp_path / "patches"
    templates = patches / "templates"
    templates.mkdir(parents=True)
    (patches / "edit.toml").write_text('id = "edit"\n')
    (templates / "link.j2").symlink_to(patches / "edit.toml")
    folder = PatchFolder.open(patches, templates)
    with pytest.raises(PatchSetError) as refused:
        folder.template(["link.j2"])
    assert str(refused.value) == (f"{templates / 'link.j2'}: this template leads outside the templates folder "
                                  f"(it resolves to {os.path.realpath(patches / 'edit.toml')}) "
                                  "(a patch set reads only files inside its own folders)")


def test_a_name_too_long_for_the_file_system_is_shown_cut_to_300_characters(tmp_path: Path) -> None:
    # A name of 301 characters is refused before the OS is asked: shown as its first 297, then "...", 300 in all.
    with pytest.raises(PatchSetError) as refused:
        read_file(Path("a" * 301), roots=(tmp_path,), what="template")
    assert str(refused.value) == (f"{'a' * 297}...: cannot read this template: its name is too long for the file "
                                  "system (301 bytes; at most 255)")


def test_a_multiline_basic_string_on_one_line_is_skipped_from_its_opening_quotes(tmp_path: Path) -> None:
    # The brackets are the string's text, not arrays: nothing nests.
    text = 'a = """' + "[" * 100 + '"""\n'
    assert nesting_problem(text) is None
    assert parse_toml(text, tmp_path / "x.toml") == {"a": "[" * 100}


def test_inline_tables_line_after_line_each_close_at_their_brace(tmp_path: Path) -> None:
    # Forty one-level inline tables, one a line, are one level each, not forty.
    text = "".join(f"t{n} = {{a = 1}}\n" for n in range(40))
    assert nesting_problem(text) is None
    assert parse_toml(text, tmp_path / "x.toml")["t39"] == {"a": 1}


def test_a_dotted_key_after_a_comma_in_an_inline_table_is_counted() -> None:
    # The key after the comma is 34 levels deep inside the table: 35 in all.
    assert nesting_problem("a = {b = 1, " + "c." * 33 + "d = 1}\n") == (1, 33)
