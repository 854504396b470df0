"""What the cache's key holds: the bytes, the patches in order and what each is built from, the tools' versions, the Python.

Anything else, and a result computed under other libraries, another
patcher, another entry format or another interpreter, is a miss.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from patcher import __version__
from patcher.patchset import cache
from patcher.patchset.cache import cached_patch_source
from patcher.patchset.load import load_patch_set
from patcher.patchset.model import PatchSet

from tests.fixtures_patches import TEMPLATES, VENDOR_SOURCE, copy_patch_set
from tests.fixtures_vendor import PATCHES
from tests.patchset.conftest import shipped_patches, spy_on_patching


def test_the_key_holds_the_installed_libcst_and_jinja2_versions() -> None:
    cache._versions.cache_clear()
    try:
        assert cache._versions() == (f"libcst {version('libcst')}", f"jinja2 {version('jinja2')}")
    finally:
        cache._versions.cache_clear()


def _package(root: Path, name: str, files: dict[str, str]) -> None:
    (root / name).mkdir(parents=True)
    for file, text in files.items():
        (root / name / file).write_text(text, encoding="utf-8")


@pytest.mark.parametrize(("text", "found"), [
    ('__version__ = "1.2.3"\n', "1.2.3"),
    ("# Copyright Łukasz, 2024\n\"\"\"Fused kernels.\"\"\"\n\n__version__ = version = '1.9.0'\n", "1.9.0"),
    ('"""Docs."""\nimport sys\n__version__: str\n__version__ = "2.0rc1"  # bumped by CI\n', "2.0rc1"),
    ('VERSION = "3.0"\nversion = "3.0"\n', "unknown"),
    ('def __version__():\n    return "4.0"\n', "unknown"),
])
def test_a_version_is_the_one_assigned_in_the_file_else_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, found: str
) -> None:
    # No metadata is installed for these packages: without the assignment, "unknown".
    _package(tmp_path, "patcher_test_vendored", {"__init__.py": "", "_version.py": text})
    monkeypatch.syspath_prepend(str(tmp_path))
    assert cache._version_of("patcher_test_vendored", "_version.py") == found


def test_a_version_file_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    # A POSIX locale without Python's UTF-8 mode reads text as ASCII by default: the
    # maintainer's name in the header must neither stop the run nor hide the version.
    _package(tmp_path, "patcher_test_vendored", {"__init__.py": "",
                                                 "_version.py": "# Copyright Łukasz\n__version__ = '1.9.0'\n"})
    env = {**os.environ, "LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, sys.path)])}
    probe = ("import locale, sys; from patcher.patchset import cache; "
             "print(locale.getpreferredencoding(False), cache._version_of('patcher_test_vendored', '_version.py'))")
    done = subprocess.run([sys.executable, "-X", "utf8=0", "-c", probe], env=env,
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, "ANSI_X3.4-1968 1.9.0\n"), done.stderr


def test_a_package_that_is_not_installed_has_an_unknown_version() -> None:
    assert cache._version_of("patcher_test_not_installed", "__init__.py") == "unknown"


def test_without_the_file_the_installed_metadata_says_the_version() -> None:
    assert cache._version_of("jinja2", "no_such_file.py") == version("jinja2")


def test_a_namespace_package_is_looked_up_in_each_of_its_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Split over two folders (no __init__.py): the first lacks the file.
    (tmp_path / "first" / "patcher_test_split").mkdir(parents=True)
    _package(tmp_path / "second", "patcher_test_split", {"_version.py": "__version__ = '5.1'\n"})
    monkeypatch.syspath_prepend(str(tmp_path / "second"))
    monkeypatch.syspath_prepend(str(tmp_path / "first"))
    assert cache._version_of("patcher_test_split", "_version.py") == "5.1"


def test_other_bytes_or_other_parameters_miss(store: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = spy_on_patching(monkeypatch)
    source = VENDOR_SOURCE
    cached_patch_source("x.py", source, shipped_patches(patch_set))
    cached_patch_source("x.py", source.replace(b"\n", b"\r\n"), shipped_patches(patch_set))
    other = load_patch_set(PATCHES, templates=TEMPLATES,
                           overrides=["three-tier-decode.small_max=4096"])
    cached_patch_source("x.py", source, shipped_patches(other))
    assert len(calls) == 3
    assert len(list(store.iterdir())) == 3


@pytest.mark.parametrize("change", ["libraries", "tool", "code", "format"])
def test_other_libraries_or_another_patcher_miss(store: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch,
                                                 computed: list[str], change: str) -> None:
    source = VENDOR_SOURCE
    cached_patch_source("x.py", source, shipped_patches(patch_set))
    cached_patch_source("x.py", source, shipped_patches(patch_set))
    assert computed == ["x.py"]
    if change == "libraries":
        monkeypatch.setattr(cache, "_versions", lambda: ("libcst 0.4.0", f"jinja2 {version('jinja2')}"))
    elif change == "tool":
        monkeypatch.setattr(cache, "__version__", __version__ + ".post1")
    elif change == "code":
        monkeypatch.setattr(cache, "_code_digest", lambda: "an edited checkout")
    else:
        monkeypatch.setattr(cache, "FORMAT", cache.FORMAT + 1)
    cached_patch_source("x.py", source, shipped_patches(patch_set))
    assert computed == ["x.py", "x.py"]
    assert len(list(store.iterdir())) == 2


def test_fewer_patches_or_another_order_miss(store: Path, patch_set: PatchSet, computed: list[str]) -> None:
    patches = shipped_patches(patch_set)
    assert len(patches) >= 2
    source = VENDOR_SOURCE
    for series in (patches, patches[1:], patches[:-1], (patches[1], patches[0], *patches[2:])):
        outcome = cached_patch_source("x.py", source, series)
        assert [o.patch.id for o in outcome.outcomes] == [p.id for p in series]
    assert len(computed) == 4 and len(list(store.iterdir())) == 4


def test_an_edited_template_misses(tmp_path: Path, store: Path, computed: list[str]) -> None:
    copy_patch_set(tmp_path / "set")
    source = VENDOR_SOURCE

    def run() -> Any:
        loaded = load_patch_set(tmp_path / "set" / "patches", templates=tmp_path / "set" / "templates", lazy=True)
        return cached_patch_source("x.py", source, shipped_patches(loaded))

    before = run()
    run()
    template = sorted((tmp_path / "set" / "templates").rglob("*.j2"))[0]
    template.write_text(template.read_text() + "\n# reviewed\n")
    run()
    assert len(computed) == 2 and before.changed


def test_another_python_misses(store: Path, patch_set: PatchSet, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file libcst cannot parse is described with what this interpreter's parser
    # makes of it ("it parses under Python 3.11 ..."): another Python must not reuse it.
    calls = spy_on_patching(monkeypatch)
    cached_patch_source("x.py", b"def broken(:\n", shipped_patches(patch_set))
    monkeypatch.setattr(sys, "version", "3.10.12 (another build)")
    cached_patch_source("x.py", b"def broken(:\n", shipped_patches(patch_set))
    assert calls == ["x.py", "x.py"]
