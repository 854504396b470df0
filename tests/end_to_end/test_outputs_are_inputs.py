"""Every output of apply (.tar.gz, .tar, .zip, folder) is an input of every command that takes a drop.

Exhaustively, over formats x commands: on each format of apply's output of
the demo zip, each command (apply again, check, verify-sync, inspect,
diff, upgrade with the output as OLD and as NEW, explain --in) gives the
same exit code, stdout and stderr as on the .zip output, but for the
input's own name; verify-numerics reads the same two copies from each (and
runs whole on the default .tar.gz); and apply run again writes the same
tree bytes and an equivalent manifest (equal but for ``input``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import Result

from tests.fixtures_cli import MANIFEST, run_patcher
from tests.fixtures_vendor import VENDOR_ZIP

# Names no output of a command holds by chance (not 'ctx': the code says ctx_len).
OUTPUTS = {"tar.gz": "out-targz.tar.gz", "tar": "out-tar.tar", "zip": "out-zip.zip", "folder": "out-folder"}
REFERENCE = "zip"

COMMANDS: dict[str, Callable[[Path], list[object]]] = {
    "check": lambda drop: ["check", drop],
    "check --format json": lambda drop: ["check", drop, "--format", "json"],
    "verify-sync": lambda drop: ["verify-sync", drop],
    "verify-sync --format json": lambda drop: ["verify-sync", drop, "--format", "json"],
    "inspect": lambda drop: ["inspect", drop],
    "inspect --format json": lambda drop: ["inspect", drop, "--format", "json"],
    "diff": lambda drop: ["diff", drop],
    "diff --keep-going --format json": lambda drop: ["diff", drop, "--keep-going", "--format", "json"],
    "upgrade OLD": lambda drop: ["upgrade", drop, VENDOR_ZIP, "--format", "json"],
    "upgrade NEW": lambda drop: ["upgrade", VENDOR_ZIP, drop, "--format", "json"],
    "explain --in": lambda drop: ["explain", "three-tier-decode", "--in", drop],
    "explain --in --format json": lambda drop: ["explain", "prefix-pregather", "--in", drop, "--format", "json"],
}


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """apply's output of the demo zip in every format."""
    folder = tmp_path_factory.mktemp("outputs")
    made = {}
    for fmt, name in OUTPUTS.items():
        result = run_patcher("apply", VENDOR_ZIP, "-o", folder / name)
        assert result.exit_code == 0, result.stderr
        made[fmt] = folder / name
    return made


@pytest.fixture(scope="module")
def answers() -> dict[tuple[str, str], tuple[int, str, str]]:
    """Each command's answer on each output, computed once."""
    return {}


def _answer(cache: dict[tuple[str, str], tuple[int, str, str]], command: str, fmt: str,
            drop: Path) -> tuple[int, str, str]:
    if (command, fmt) not in cache:
        result: Result = run_patcher(*COMMANDS[command](drop))
        assert result.exit_code != 3, result.stderr  # never a bug, whatever the format
        cache[command, fmt] = (result.exit_code, _anonymous(result.stdout, drop), _anonymous(result.stderr, drop))
    return cache[command, fmt]


def _anonymous(text: str, drop: Path) -> str:
    """TEXT with the input's path and name replaced: the one thing that may differ between formats."""
    return text.replace(str(drop), "INPUT").replace(drop.name, "INPUT")


@pytest.mark.parametrize("fmt", [f for f in OUTPUTS if f != REFERENCE])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_answers_on_every_format_as_on_the_zip(outputs, answers, command: str, fmt: str) -> None:  # type: ignore[no-untyped-def]
    reference = _answer(answers, command, REFERENCE, outputs[REFERENCE])
    assert reference[0] in (0, 1), reference[2]  # the reference itself is read, not refused
    assert _answer(answers, command, fmt, outputs[fmt]) == reference


def test_verify_numerics_compares_the_same_two_copies_from_every_format(outputs) -> None:  # type: ignore[no-untyped-def]
    # What the format can change is which bytes the comparison gets; the
    # comparison itself (seconds of PyTorch) is run once, below.
    from patcher.archive import open_source
    from patcher.numerics.sources import paged_attn_sources
    from patcher.cli.options import load_patches

    patch_set = load_patches(None, ())
    read = {}
    for fmt, path in outputs.items():
        with open_source(path) as tree:
            read[fmt] = paged_attn_sources(tree, patch_set)
    assert all(sources == read[REFERENCE] for sources in read.values())
    assert read[REFERENCE].vendor == read[REFERENCE].patched and read[REFERENCE].patches == ()


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="verify-numerics needs PyTorch")
def test_verify_numerics_runs_on_the_default_output(outputs) -> None:  # type: ignore[no-untyped-def]
    result = run_patcher("verify-numerics", outputs["tar.gz"])
    assert result.exit_code == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"compared qwen3_6_scripts/paged_attn.py of {OUTPUTS['tar.gz']}: vendor vs patched " \
                       "(no patch (already applied))"
    assert lines[-1].startswith("result: OK: prefill bitwise equal in all ")


def _files(path: Path) -> dict[str, bytes]:
    from patcher.archive import open_source

    with open_source(path) as tree:
        return {f.path: tree.read(f.path) for f in tree.files()}


@pytest.mark.parametrize("again", list(OUTPUTS))
@pytest.mark.parametrize("fmt", list(OUTPUTS))
def test_apply_on_any_output_into_any_format_is_idempotent(outputs, tmp_path: Path, fmt: str, again: str) -> None:  # type: ignore[no-untyped-def]
    dest = tmp_path / ("again-" + OUTPUTS[again])
    result = run_patcher("apply", outputs[fmt], "-o", dest)
    assert result.exit_code == 0, result.stderr
    assert "0 applied, 3 already applied, 0 failed" in result.stderr
    before, after = _files(outputs[fmt]), _files(dest)
    first: dict[str, Any] = json.loads(before.pop(MANIFEST))
    second: dict[str, Any] = json.loads(after.pop(MANIFEST))
    assert after == before
    assert second.pop("input")["name"] == outputs[fmt].name
    first.pop("input")
    assert second == first


def test_upgrade_between_two_formats_of_one_output_finds_nothing_to_review(outputs) -> None:  # type: ignore[no-untyped-def]
    result = run_patcher("upgrade", outputs["tar.gz"], outputs["folder"], "--format", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert [(p["old"], p["new"], p["captures_changed"]) for p in report["patches"]] == \
        [("applies", "applies", False)] * 3
