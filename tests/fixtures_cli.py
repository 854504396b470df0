"""What the tests that run whole commands share: the golden outputs, the names a run writes, and
helpers to run a command and read what it wrote.

The golden files stay in ``tests/golden/``, where the benchmarks and the numerics tests also read
them; every test names them through ``GOLDEN`` and ``GOLDEN_GATHER0`` here.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.fixtures_vendor import ROOT, SHIPPED, VENDOR_TREE

from make_upgrade_pairs import make_pair, make_tree  # noqa: E402  (fixtures/ is on sys.path once fixtures_vendor is imported)

# The demo zip's shipped paged_attn.py as the bundled series patches it (max_gather_tokens 8192, and 0).
GOLDEN = ROOT / "tests" / "golden" / "paged_attn.patched.py"
GOLDEN_GATHER0 = ROOT / "tests" / "golden" / "paged_attn.patched-gather0.py"

MANIFEST = "patcher-manifest.json"
SERIES = ["three-tier-decode", "prefix-pregather", "prefix-buffer-reuse"]
TARGET = "vllm/attention/ops/paged_attn.py"  # where the patches say the image runs the file
COREX = "/usr/local/corex/lib/python3/dist-packages/vllm"
INSTALLED = f"{COREX}/attention/ops/paged_attn.py"  # where patch_ops.sh installs the shipped copy


def run_patcher(*args: object) -> Result:
    """Run ``patcher ARGS`` in-process, in the current folder; stdout and stderr apart."""
    from patcher.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def tar_files(path: Path) -> dict[str, tuple[int, bytes]]:
    """Return each file of the tar at PATH as (mode, bytes)."""
    with tarfile.open(path) as archive:
        return {
            m.name: (m.mode, archive.extractfile(m).read())  # type: ignore[union-attr]
            for m in archive.getmembers()
            if m.isfile()
        }


def vendor_files() -> dict[str, bytes]:
    """Return the demo vendor tree's files by context-relative path."""
    return {p.relative_to(VENDOR_TREE).as_posix(): p.read_bytes() for p in VENDOR_TREE.rglob("*") if p.is_file()}


def apply_demo(cli, vendor_zip: Path, name: str = "ctx.tar.gz") -> tuple[Result, Path]:  # type: ignore[no-untyped-def]
    """Apply the bundled series to the demo zip into NAME; return the CLI result and the output's path."""
    result = cli("apply", vendor_zip, "-o", name)
    assert result.exit_code == 0, result.stderr
    return result, cli.cwd / name


def apply_to_folder(cli, source: Path, name: str = "ctx") -> tuple[Path, dict]:  # type: ignore[no-untyped-def]
    """Apply the bundled series to SOURCE into the folder NAME; return it and its manifest."""
    result = cli("apply", source, "-o", name)
    assert result.exit_code == 0, result.stderr
    folder = cli.cwd / name
    return folder, json.loads((folder / MANIFEST).read_text())


# --- diffs and the trees they take back -------------------------------------------------------

GNU_PATCH = shutil.which("patch")
needs_patch = pytest.mark.skipif(GNU_PATCH is None, reason="GNU patch is not installed")


def context_files(folder: Path) -> dict[str, tuple[bytes, bool]]:
    """Return each file under FOLDER (.git aside) as (bytes, executable)."""
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
            for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts}


def unzip(zip_path: Path, into: Path) -> Path:
    """Unzip as unzip(1) does, keeping the executable bits."""
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            archive.extract(info, into)
            if not info.is_dir():
                (into / info.filename).chmod((info.external_attr >> 16) & 0o777)
    return into / VENDOR_TREE.name


def applied_folder(cli, source: Path, name: str = "applied", *extra: str) -> Path:  # type: ignore[no-untyped-def]
    """Apply the series to SOURCE into the folder NAME and return it."""
    result = cli("apply", source, "-o", name, *extra)
    assert result.exit_code == 0, result.stderr
    return cli.cwd / name


def patch_p1(context: Path, diff: bytes) -> None:
    """Apply DIFF in CONTEXT with ``patch -p1``, as a reviewer would."""
    done = subprocess.run([GNU_PATCH or "patch", "-p1", "--quiet", "--batch"], cwd=context, input=diff,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def broken_drop(tmp_path: Path, *variants: str) -> Path:
    """Build the demo tree with VARIANTS of fixtures/make_upgrade_pairs.py applied, in tmp_path/drop."""
    return make_tree(tmp_path / "drop", *variants)


# --- what the image ships: a Dockerfile and install script in the forms real ones take ----------

# A Dockerfile with what real ones use: ARG/ENV, JSON form, --chown, line
# continuations, relative WORKDIR, a glob, RUN in exec form, .dockerignore.
DOCKERFILE = """\
FROM registry.example.invalid/bi100-base:v1.2.3
ARG APP=/workspace
ENV SCRIPTS=qwen3_6_scripts
WORKDIR ${APP}
COPY --chown=1000:1000 ["qwen3_6_scripts", "./$SCRIPTS"]
COPY launch_service \\
     computility-run.yaml \\
     ${APP}/bin/
ADD *.json data/
WORKDIR qwen3_6_scripts
RUN ["bash", "./patch_ops.sh"]
"""

LOOPING_SCRIPT = """\
#!/bin/sh
set -e
for root in /usr/local/corex/lib/python3/dist-packages /usr/lib/python3/dist-packages; do
  VLLM="$root/vllm"
  if [ -d "$VLLM" ]; then
    cp ./paged_attn.py "$VLLM/attention/ops/paged_attn.py" 2>/dev/null || true
    install -m 644 ./sequence.py ${VLLM}/sequence.py
  fi
done
cp -r ./reasoning "$VLLM/"
"""


def modernise(vendor_copy: Path) -> Path:
    """Give the demo tree a richer Dockerfile, a .dockerignore and a later-style install script."""
    (vendor_copy / "Dockerfile").write_text(DOCKERFILE)
    (vendor_copy / ".dockerignore").write_text("# not part of the context\nvllm\n**/__pycache__\n")
    (vendor_copy / "qwen3_6_scripts" / "patch_ops.sh").write_text(LOOPING_SCRIPT)
    return vendor_copy


def copy_the_context_root(vendor: Path) -> None:
    """Make VENDOR's Dockerfile copy the whole context into the image instead of qwen3_6_scripts/ alone."""
    dockerfile = vendor / "Dockerfile"
    dockerfile.write_bytes(dockerfile.read_bytes().replace(b"COPY ./qwen3_6_scripts /workspace/qwen3_6_scripts",
                                                           b"COPY . /workspace/"))


# --- patcher upgrade's JSON report ----------------------------------------------------------------


def install_line() -> int:
    """The line of patch_ops.sh that copies the shipped paged_attn.py into the image."""
    script = (VENDOR_TREE / "qwen3_6_scripts" / "patch_ops.sh").read_text().splitlines()
    [line] = [n for n, text in enumerate(script, 1) if text.lstrip().startswith("cp ") and text.rstrip().endswith(TARGET)]
    return line


def upgrade(cli, tmp_path: Path, variant: str, *extra: str) -> tuple[int, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """Run ``patcher upgrade --format json`` on the pair VARIANT; return the exit code and the report."""
    old, new = make_pair(tmp_path / "pair", variant)
    result = cli("upgrade", old, new, "--format", "json", *extra)
    assert result.exit_code in (0, 1), result.stderr
    report = json.loads(result.stdout)
    assert report["old"] == str(old) and report["new"] == str(new)
    assert [p["id"] for p in report["patches"]] == SERIES
    return result.exit_code, report


def patch_of(report: dict[str, Any], patch_id: str) -> dict[str, Any]:
    """Return the report's entry for PATCH_ID."""
    return next(p for p in report["patches"] if p["id"] == patch_id)


def scopes_of(patch: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Return a patch entry's scopes by name."""
    return {s["scope"]: s for s in patch["scopes"]}


def assert_unchanged(patch: dict[str, Any]) -> None:
    """Assert that PATCH applies to both drops, captures the same code and sees no scope change."""
    assert (patch["old"], patch["new"]) == ("applies", "applies")
    assert patch["diagnostic"] == "" and patch["closest"] is None
    assert patch["captures_changed"] is False and patch["captures"] == []
    assert all(not s["changed"] and s["diff"] == "" for s in patch["scopes"]), patch["scopes"]


def assert_nothing_around(report: dict[str, Any]) -> None:
    """Assert that the shipped copy, the mirrors and the rule findings are the same in both drops."""
    shipping = report["shipping"][TARGET]
    assert (shipping["old"], shipping["new"], shipping["moved"]) == (SHIPPED, SHIPPED, False)
    assert report["mirrors"] == {"appeared": [], "went": []}
    assert rule_differences(report) == {"new_errors": [], "fixed": [], "new_warnings": [], "gone_warnings": []}


def rule_differences(report: dict[str, Any]) -> dict[str, list[Any]]:
    """Return what the safety rules find new in the patched NEW, or gone from it: errors and warnings."""
    return {key: report["rules"][key] for key in ("new_errors", "fixed", "new_warnings", "gone_warnings")}
