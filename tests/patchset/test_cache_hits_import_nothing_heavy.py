"""A run the patch cache answers loads no libcst; a patch that does not build still stops it.

The cache key is made from what each patch is built from, not from its
parsed steps: when every target hits, nothing renders or parses a patch.
Each command runs in a fresh interpreter (``probe_imports``).
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures_patches import break_first_step, copy_patch_set, probe_imports


def test_a_run_the_patch_cache_answers_loads_no_libcst(tmp_path: Path, vendor_zip: Path) -> None:
    # The cache key is made from what each patch is built from, not from its
    # parsed steps: when every target hits, nothing renders or parses a patch.
    cache = tmp_path / "cache"
    cold = probe_imports("diff", "--no-color", vendor_zip, cache=cache)
    assert cold["exit"] == 0 and "libcst" in cold["heavy"]  # type: ignore[operator]
    assert probe_imports("diff", "--no-color", vendor_zip, cache=cache) == {"exit": 0, "heavy": [], "writer": False}
    warm_apply = probe_imports("apply", vendor_zip, "-o", tmp_path / "out.tar.gz", cache=cache)
    assert warm_apply["exit"] == 0 and warm_apply["writer"] is True
    assert "libcst" not in warm_apply["heavy"]  # type: ignore[operator]


def test_a_patch_that_does_not_build_still_stops_a_run_the_cache_would_answer(tmp_path: Path,
                                                                              vendor_zip: Path) -> None:
    # Building is deferred, not skipped: a broken step changes the patch's
    # digest, so the run misses the cache, builds it, and fails as before.
    patches = copy_patch_set(tmp_path)
    cache = tmp_path / "cache"
    assert probe_imports("diff", vendor_zip, "--patches", patches, cache=cache)["exit"] == 0
    break_first_step(patches)
    assert probe_imports("diff", vendor_zip, "--patches", patches, cache=cache)["exit"] == 2
    assert probe_imports("apply", vendor_zip, "--patches", patches, "-o", tmp_path / "o.tar.gz", cache=cache)["exit"] == 2
    assert not (tmp_path / "o.tar.gz").exists()
