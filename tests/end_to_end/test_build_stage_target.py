"""``--target STAGE``: every command reads the build stage ``docker build --target STAGE`` makes the image.

The drop is the vendor's, with its one stage named ``runtime`` (which ships
``qwen3_6_scripts/`` through ``patch_ops.sh``, as the real one does) and a
later stage ``docs`` that ships nothing Python: without ``--target`` the
image is ``docs``, which ships no copy of the patch target. With
``--target runtime`` apply, check, diff, explain, inspect and verify-sync all
name the same shipped copy; apply records the stage in its manifest, and
every command on that context reads it without being told.
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures_cli import MANIFEST, TARGET
from tests.fixtures_vendor import SHIPPED

DOCS_STAGE = ("\r\nFROM registry.vendor-example.invalid/docs/nginx:1.27 AS docs\r\n"
              "COPY ./chat_dataset_v0.json /usr/share/nginx/html/\r\n")
NO_STAGE = "error: Dockerfile: no build stage named 'nope' (named stages: runtime, docs)"


@pytest.fixture
def drop(vendor_copy: Path, make_zip) -> Path:  # type: ignore[no-untyped-def]
    """The vendor zip, its stage named ``runtime``, followed by a last stage ``docs``."""
    dockerfile = vendor_copy / "Dockerfile"
    first, rest = dockerfile.read_bytes().decode().split("\r\n", 1)
    dockerfile.write_bytes(f"{first} AS runtime\r\n{rest.rstrip()}\r\n{DOCS_STAGE}".encode())
    return make_zip(vendor_copy, "staged.zip")  # type: ignore[no-any-return]


@pytest.fixture
def context(cli, drop: Path) -> Path:  # type: ignore[no-untyped-def]
    """What ``apply --target runtime`` writes from the drop."""
    output = cli.cwd / "ctx.tar.gz"
    result = cli("apply", drop, "-o", output, "--target", "runtime")
    assert result.exit_code == 0, result.stderr
    return output


def _member(context: Path, name: str) -> bytes:
    with tarfile.open(context) as archive:
        member = archive.extractfile(name)
        assert member is not None
        return member.read()


def _manifest(context: Path) -> dict[str, Any]:
    return json.loads(_member(context, MANIFEST))  # type: ignore[no-any-return]


def test_apply_patches_the_copy_the_target_stage_ships_and_syncs_its_mirror(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    last = cli("apply", drop, "-o", cli.cwd / "last.tar.gz")
    assert (last.exit_code, last.stdout) == (2, "")
    assert last.stderr.startswith(f"error: Dockerfile: nothing the image ships lands at .../{TARGET}")

    output = cli.cwd / "ctx.tar.gz"
    result = cli("apply", drop, "-o", output, "--target", "runtime")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"{output}\n"
    manifest = _manifest(output)
    assert [(p["file"], p["status"]) for p in manifest["patches"]] == [(SHIPPED, "applied")] * 3
    assert manifest["mirrors"] == [{"path": "paged_attn.py", "synced_to": SHIPPED, "differed_before": True}]
    assert _member(output, "paged_attn.py") == _member(output, SHIPPED)


def test_the_manifest_records_the_stage_and_a_run_without_target_records_none(cli, drop: Path, context: Path,  # type: ignore[no-untyped-def]
                                                                             vendor_zip: Path) -> None:
    assert _manifest(context)["stage"] == "runtime"
    assert b'\n  "stage": "runtime",\n' in _member(context, MANIFEST)
    plain = cli.cwd / "plain.tar.gz"
    assert cli("apply", vendor_zip, "-o", plain).exit_code == 0
    assert _manifest(plain)["stage"] is None


def test_every_command_given_the_target_names_the_same_shipped_copy(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    sync = cli("verify-sync", drop, "--target", "runtime")
    assert sync.exit_code == 1
    assert sync.stdout.startswith(f"paged_attn.py (245 lines) != {SHIPPED} (541 lines); the image ships {SHIPPED} -> ")
    # What apply would do is what apply does with that stage: the command named re-syncs them.
    assert f"'patcher apply {drop} --target runtime' re-syncs them" in sync.stderr

    inspect = cli("inspect", drop, "--target", "runtime", "--format", "json")
    assert inspect.exit_code == 0
    assert [t["shipped"] for t in json.loads(inspect.stdout)["targets"]] == [SHIPPED]

    check = cli("check", drop, "--target", "runtime")
    assert check.exit_code == 0
    assert "in 8 Python file(s) checked" in check.stderr
    assert "in 0 Python file(s) checked" in cli("check", drop).stderr  # the last stage ships none

    diff = cli("diff", drop, "--target", "runtime", "--stat")
    assert diff.exit_code == 0
    assert [line.split("|")[0].strip() for line in diff.stdout.splitlines()[:2]] == [SHIPPED, "paged_attn.py"]

    explain = cli("explain", "three-tier-decode", "--in", drop, "--target", "runtime", "--format", "json")
    assert explain.exit_code == 0, explain.stderr
    assert json.loads(explain.stdout)["in"]["shipped"] == SHIPPED


def test_a_context_apply_wrote_is_read_as_the_stage_its_manifest_records(cli, context: Path) -> None:  # type: ignore[no-untyped-def]
    check = cli("check", context)
    assert check.exit_code == 0
    assert "in 8 Python file(s) checked" in check.stderr

    sync = cli("verify-sync", context)
    assert sync.exit_code == 0
    assert sync.stdout.startswith(f"paged_attn.py == {SHIPPED} (575 lines); the image ships {SHIPPED} -> ")

    inspect = cli("inspect", context, "--format", "json")
    assert [t["shipped"] for t in json.loads(inspect.stdout)["targets"]] == [SHIPPED]

    explain = cli("explain", "three-tier-decode", "--in", context, "--format", "json")
    assert json.loads(explain.stdout)["in"]["status"] == "already applied"

    again = cli.cwd / "again.tar.gz"
    result = cli("apply", context, "-o", again)
    assert result.exit_code == 0, result.stderr
    assert "3 already applied" in result.stderr
    assert _manifest(again)["stage"] == "runtime"


def test_upgrade_reads_a_vendor_drop_as_the_stage_the_other_sides_context_records(cli, drop: Path,  # type: ignore[no-untyped-def]
                                                                                   context: Path) -> None:
    result = cli("upgrade", context, drop, "--format", "json")
    report = json.loads(result.stdout)
    assert [(p["old"], p["new"]) for p in report["patches"]] == [("applies", "applies")] * 3
    assert (result.exit_code, report["verdict"]["next"]) == (0, f"patcher apply {drop} --target runtime")


@pytest.mark.parametrize("command", [
    ("check", "{ctx}", "--target", "docs"),
    ("verify-sync", "{ctx}", "--target", "docs"),
    ("inspect", "{ctx}", "--target", "docs"),
    ("apply", "{ctx}", "-o", "out.tar.gz", "--target", "docs"),
    ("diff", "{ctx}", "--target", "docs"),
    ("explain", "three-tier-decode", "--in", "{ctx}", "--target", "docs"),
    ("upgrade", "{ctx}", "{drop}", "--target", "docs"),
])
def test_a_target_other_than_the_recorded_stage_is_refused_saying_both(cli, drop: Path, context: Path,  # type: ignore[no-untyped-def]
                                                                       command: tuple[str, ...]) -> None:
    result = cli(*(a.format(ctx=context, drop=drop) for a in command))
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"error: ctx.tar.gz: {MANIFEST}: records build stage 'runtime', but --target names "
                             "'docs' (leave out --target, or apply the vendor drop again with --target docs)\n")
    assert not (cli.cwd / "out.tar.gz").exists()


@pytest.mark.parametrize("command", [
    ("apply", "{drop}", "-o", "out.tar.gz"),
    ("check", "{drop}"),
    ("diff", "{drop}"),
    ("explain", "three-tier-decode", "--in", "{drop}"),
    ("upgrade", "{drop}", "{drop}"),
    ("verify-numerics", "{drop}"),
])
def test_an_unknown_stage_is_one_line_naming_the_dockerfile_and_the_stages(cli, drop: Path,  # type: ignore[no-untyped-def]
                                                                          command: tuple[str, ...]) -> None:
    # inspect and verify-sync said so before: the same line, from the same reader (shipping.plan_shipping).
    if command[0] == "verify-numerics":
        pytest.importorskip("torch")
    result = cli(*(a.format(drop=drop) for a in command), "--target", "nope")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(NO_STAGE)
    assert result.stderr.count("\n") == 1
    assert not (cli.cwd / "out.tar.gz").exists()


def test_a_hint_to_inspect_repeats_the_target_it_was_given(cli, drop: Path) -> None:  # type: ignore[no-untyped-def]
    refused = cli("apply", drop, "-o", cli.cwd / "docs.tar.gz", "--target", "docs")
    assert refused.exit_code == 2
    hint = f"(run 'patcher inspect {drop} --target docs' to see what the build copies where)"
    assert hint in refused.stderr, refused.stderr
    shown = cli("inspect", drop, "--target", "docs")  # the hint, pasted: the stage the refusal was about
    assert f"  {TARGET}: NOT SHIPPED" in shown.stdout, shown.stdout


@pytest.mark.parametrize("command", ["apply", "diff", "inspect", "verify-sync"])
def test_a_stage_taken_from_the_manifest_is_said_once_with_the_build_command(cli, drop: Path, context: Path,  # type: ignore[no-untyped-def]
                                                                              command: str) -> None:
    # docker build without --target builds the last stage: reading a context as another one is said.
    args = [command, context, "-o", cli.cwd / "again.tar.gz"] if command == "apply" else [command, context]
    note = (f"note: {context.name}: read as build stage 'runtime', which its {MANIFEST} records "
            "(build it with 'docker build --target runtime')")
    assert cli(*args).stderr.splitlines().count(note) == 1
    told = cli(*args, "--force", "--target", "runtime") if command == "apply" else cli(*args, "--target", "runtime")
    assert "read as build stage" not in told.stderr
    from_drop = [command, drop, "-o", cli.cwd / "d.tar.gz", "--target", "runtime"] if command == "apply" \
        else [command, drop, "--target", "runtime"]
    assert "read as build stage" not in cli(*from_drop).stderr
