"""The templates folder's digest covers every byte the template loader can read, through symlinked folders too."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from patcher.errors import PatchSetError
from patcher.patchset import cache, folder
from patcher.patchset.cache import cached_patch_source
from patcher.patchset.load import load_patch_set, templates_digest
from patcher.patchset.runner import patch_source
from tests.fixtures_hostile_cache import private_config
from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE

__all__ = ["private_config"]  # the autouse fixture: the key goes to tmp, never ~/.config


@pytest.fixture
def linked_set(tmp_path: Path) -> Path:
    """A copy of the patch set whose template folders are links to their real copies in ``templates/_real``.

    The links stay inside the templates folder: a link leading out of the
    patch folder is an error of the patch set, not a cache question.
    """
    shutil.copytree(PATCHES, tmp_path / "set" / "patches")
    templates = tmp_path / "set" / "templates"
    shutil.copytree(ROOT / "templates", templates / "_real")
    for item in sorted((templates / "_real").iterdir()):
        (templates / item.name).symlink_to(Path("_real") / item.name)
    return tmp_path / "set"


def _a_template_behind_a_link(linked_set: Path) -> Path:
    """A template the patches use, in a folder the templates folder reaches through a link."""
    link = linked_set / "templates" / "three-tier-decode"
    assert link.is_symlink() and link.is_dir()
    return link / "thresholds.py.j2"


def test_a_file_in_a_linked_folder_is_part_of_the_digest(linked_set: Path) -> None:
    before = templates_digest(linked_set / "templates")
    template = _a_template_behind_a_link(linked_set)
    template.write_text(template.read_text() + "# reviewed\n")
    assert templates_digest(linked_set / "templates") != before


def test_a_changed_file_in_a_linked_folder_misses_the_cache(linked_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counting(path: str, source: bytes, patches: Any) -> Any:
        calls.append(path)
        return patch_source(path, source, patches)

    monkeypatch.setattr(cache, "patch_source", counting)
    source = (VENDOR_TREE / SHIPPED).read_bytes()

    def run() -> Any:
        loaded = load_patch_set(linked_set / "patches", lazy=True)
        return cached_patch_source("x.py", source, loaded.for_target(loaded.patches[0].target))

    run()
    run()
    assert len(calls) == 1
    template = _a_template_behind_a_link(linked_set)
    template.write_text(template.read_text().replace("\n", "\n\n", 1))  # a blank line: other bytes, same code
    run()
    assert len(calls) == 2


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_link_back_to_a_folder_above_ends_the_walk(tmp_path: Path) -> None:
    root = _tree(tmp_path / "templates", {"a/x.j2": "x", "b.j2": "b"})
    plain = templates_digest(root)
    (root / "a" / "loop").symlink_to("..")
    (root / "self").symlink_to(".")
    looped = templates_digest(root)
    assert looped != plain  # the names exist: a template may include "a/loop/b.j2"
    assert templates_digest(root) == looped


def test_a_second_name_for_a_folder_counts(tmp_path: Path) -> None:
    # One folder reached as "real" and "alias": removing or retargeting the alias changes what can be loaded.
    root = _tree(tmp_path / "templates", {"real/x.j2": "x", "other/x.j2": "x"})
    without = templates_digest(root)
    (root / "alias").symlink_to("real")
    aliased = templates_digest(root)
    (root / "alias").unlink()
    (root / "alias").symlink_to("other")
    retargeted = templates_digest(root)
    assert len({without, aliased, retargeted}) == 3


def test_the_digest_does_not_depend_on_the_order_folders_are_listed(tmp_path: Path) -> None:
    first = _tree(tmp_path / "one", {"b/y.j2": "y", "a/x.j2": "x", "c.j2": "c"})
    second = _tree(tmp_path / "two", {"c.j2": "c", "a/x.j2": "x", "b/y.j2": "y"})
    assert templates_digest(first) == templates_digest(second)


def test_a_name_in_no_encoding_is_digested(tmp_path: Path) -> None:
    root = _tree(tmp_path / "templates", {"x.j2": "x"})
    plain = templates_digest(root)
    (root / os.fsdecode(b"\xff.j2")).write_text("y")
    assert templates_digest(root) != plain


def test_a_linked_folder_named_in_no_encoding_is_digested(tmp_path: Path) -> None:
    # A link's name is digested as the file system gives it, as a file's is.
    root = _tree(tmp_path / "templates", {"real/x.j2": "x"})
    plain = templates_digest(root)
    (root / os.fsdecode(b"\xff")).symlink_to("real")
    linked = templates_digest(root)
    assert linked != plain
    assert templates_digest(root) == linked


def test_templates_of_exactly_the_byte_cap_are_digested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The cap is on the bytes the templates hold: at it, the walk digests
    # them; one byte more anywhere is refused, naming the templates folder.
    monkeypatch.setattr(folder, "MAX_TEMPLATES_BYTES", 10)
    root = _tree(tmp_path / "templates", {"a.j2": "12345", "sub/b.j2": "67890"})
    templates_digest(root)
    (root / "sub" / "c.j2").write_text("!")
    with pytest.raises(PatchSetError) as refused:
        templates_digest(root)
    assert str(refused.value) == f"{root}: the templates folder holds more than 10 bytes"
