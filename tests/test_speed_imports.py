"""What each command imports: the read-only ones start without libcst, Jinja2 or GitPython.

Each command runs in a fresh interpreter (a module once imported stays in
``sys.modules``, so an in-process run would see what earlier tests loaded),
through a wrapper that prints the exit code and the heavy modules loaded.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fixtures_vendor import PATCHES, ROOT

HEAVY = ("libcst", "jinja2", "git")

_WRAPPER = """
import json, sys
from patcher.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
    code = 0
except SystemExit as exit:
    code = exit.code
heavy = sorted({name.split(".")[0] for name in sys.modules} & set(HEAVY))
writer = "patcher.archive.writer" in sys.modules
print(json.dumps({"exit": code, "heavy": heavy, "writer": writer}), file=sys.__stderr__)
"""


def _run(tmp_path: Path, *args: object, cache: Path | None = None) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATCHER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    if cache is None:
        env["PATCHER_NO_CACHE"] = "1"
    else:
        env["PATCHER_CACHE_DIR"] = str(cache)
    result = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n" + _WRAPPER, *map(str, args)],
                            capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    report: dict[str, object] = json.loads(result.stderr.strip().splitlines()[-1])
    return report


@pytest.mark.parametrize("command, exit_code", [("verify-sync", 1), ("inspect", 0)])
def test_read_only_commands_load_no_heavy_library(tmp_path: Path, vendor_zip: Path, command: str,
                                                  exit_code: int) -> None:
    # The demo zip's root paged_attn.py has drifted: verify-sync exits 1 on it.
    assert _run(tmp_path, command, vendor_zip) == {"exit": exit_code, "heavy": [], "writer": False}


def test_check_renders_no_patch(tmp_path: Path, vendor_zip: Path) -> None:
    # check needs the patches' targets only (install-fails-loudly), and the
    # rules read the stdlib ast: neither the loader's libraries nor libcst
    # load. The vendor release passes (its V2 call cannot run: a note).
    report = _run(tmp_path, "check", vendor_zip)
    assert report["exit"] == 0
    assert not {"libcst", "jinja2", "git"} & set(report["heavy"])  # type: ignore[arg-type]
    assert report["writer"] is False


def test_diff_loads_no_archive_writer_and_no_git(tmp_path: Path, vendor_zip: Path) -> None:
    report = _run(tmp_path, "diff", "--no-color", vendor_zip)
    assert report["exit"] == 0
    assert "git" not in report["heavy"]  # type: ignore[operator]
    assert report["writer"] is False


def test_the_probe_sees_heavy_libraries_when_they_load(tmp_path: Path, vendor_zip: Path) -> None:
    # apply parses and renders: if the wrapper reported nothing here, the test above would prove nothing.
    report = _run(tmp_path, "apply", vendor_zip, "-o", tmp_path / "out.tar.gz")
    assert report["exit"] == 0
    assert {"libcst", "jinja2"} <= set(report["heavy"])  # type: ignore[arg-type]
    assert report["writer"] is True


def test_read_only_commands_need_only_the_targets_of_the_patches(tmp_path: Path, vendor_zip: Path) -> None:
    # A step that does not build stops apply, but not the commands that only
    # ask where the patches' targets ship.
    patches = tmp_path / "patches"
    shutil.copytree(PATCHES, patches)
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    broken = patches / "three-tier-decode.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace('op = "', 'op = "no-such-', 1), encoding="utf-8")
    assert _run(tmp_path, "apply", vendor_zip, "--patches", patches, "-o", tmp_path / "out.tar.gz")["exit"] == 2
    assert _run(tmp_path, "verify-sync", vendor_zip, "--patches", patches)["exit"] == 1
    assert _run(tmp_path, "inspect", vendor_zip, "--patches", patches)["exit"] == 0


def test_a_run_the_patch_cache_answers_loads_no_libcst(tmp_path: Path, vendor_zip: Path) -> None:
    # The cache key is made from what each patch is built from, not from its
    # parsed steps: when every target hits, nothing renders or parses a patch.
    cache = tmp_path / "cache"
    cold = _run(tmp_path, "diff", "--no-color", vendor_zip, cache=cache)
    assert cold["exit"] == 0 and "libcst" in cold["heavy"]  # type: ignore[operator]
    assert _run(tmp_path, "diff", "--no-color", vendor_zip, cache=cache) == {"exit": 0, "heavy": [], "writer": False}
    warm_apply = _run(tmp_path, "apply", vendor_zip, "-o", tmp_path / "out.tar.gz", cache=cache)
    assert warm_apply["exit"] == 0 and warm_apply["writer"] is True
    assert "libcst" not in warm_apply["heavy"]  # type: ignore[operator]


def test_a_patch_that_does_not_build_still_stops_a_run_the_cache_would_answer(tmp_path: Path,
                                                                              vendor_zip: Path) -> None:
    # Building is deferred, not skipped: a broken step changes the patch's
    # digest, so the run misses the cache, builds it, and fails as before.
    patches = tmp_path / "patches"
    shutil.copytree(PATCHES, patches)
    shutil.copytree(ROOT / "templates", tmp_path / "templates")
    cache = tmp_path / "cache"
    assert _run(tmp_path, "diff", vendor_zip, "--patches", patches, cache=cache)["exit"] == 0
    broken = patches / "three-tier-decode.toml"
    broken.write_text(broken.read_text(encoding="utf-8").replace('op = "', 'op = "no-such-', 1), encoding="utf-8")
    assert _run(tmp_path, "diff", vendor_zip, "--patches", patches, cache=cache)["exit"] == 2
    assert _run(tmp_path, "apply", vendor_zip, "--patches", patches, "-o", tmp_path / "o.tar.gz", cache=cache)["exit"] == 2
    assert not (tmp_path / "o.tar.gz").exists()
