"""Fixtures of the review tests: runs on the demo zip that several tests only read, made once.

They outlive one test, so they do not see the per-test cache folder (conftest's hermetic_cache):
they get a cache folder of their own, so that no run writes to the user's cache.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from click.testing import Result

from tests.fixtures_cli import MANIFEST, context_files, run_patcher
from tests.fixtures_vendor import VENDOR_ZIP


@pytest.fixture(scope="package")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Point patcher's cache at a fresh folder while the folder-wide fixtures run."""
    folder = tmp_path_factory.mktemp("shared-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder))
        patch.setenv("PATCHER_CACHE_DIR", str(folder / "patcher"))
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("shared-config")))  # the cache's secret
        yield


@pytest.fixture(scope="package")
def plain(shared_cache: None) -> Result:
    """``patcher diff`` on the demo zip."""
    return run_patcher("diff", VENDOR_ZIP)


@pytest.fixture(scope="package")
def per_patch(shared_cache: None) -> Result:
    """``patcher diff --per-patch`` on the demo zip."""
    return run_patcher("diff", "--per-patch", VENDOR_ZIP)


@pytest.fixture(scope="package")
def applied(shared_cache: None, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bool]]:
    """apply's output folder for the demo zip, the manifest aside."""
    folder = tmp_path_factory.mktemp("applied") / "out"
    assert run_patcher("apply", VENDOR_ZIP, "-o", folder).exit_code == 0
    files = context_files(folder)
    del files[MANIFEST]
    return files


@pytest.fixture(scope="package")
def bundled(shared_cache: None):  # type: ignore[no-untyped-def]
    """The bundled patch set (patches/), loaded once: real Patch values for the report builders' tests."""
    from patcher.patchset.load import load_patch_set
    from tests.fixtures_vendor import PATCHES

    return load_patch_set(PATCHES)


@pytest.fixture(scope="package")
def demo_build(bundled):  # type: ignore[no-untyped-def]
    """The bundled series run on the demo vendor tree (nothing written), made once."""
    from patcher.archive.dir_source import DirSource
    from patcher.pipeline import build
    from tests.fixtures_vendor import VENDOR_TREE

    return build(DirSource(VENDOR_TREE), bundled)
