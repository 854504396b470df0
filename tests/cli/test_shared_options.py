"""Options several commands share, defined once (``cli.options``): the same names, help, defaults and checks everywhere.

The zip-bomb limits (``--max-members``, ``--max-size``, ``--max-ratio``)
default to ``archive.limits.Limits`` and reach the reader; ``--allow`` and
``--reason`` pair up; ``--patches`` falls back to ``./patches`` holding a
series, then the bundled set; a folder that is not there is one error line.
"""

from __future__ import annotations

import json
import shutil

import pytest

from patcher.archive.limits import Limits
from tests.fixtures_vendor import PATCHES, ROOT, VENDOR_TREE, VENDOR_ZIP


def help_text(cli, command: str) -> str:  # type: ignore[no-untyped-def]
    """The command's --help with every run of whitespace made one space."""
    result = cli(command, "--help", terminal_width=400)
    assert result.exit_code == 0
    return " ".join(result.stdout.split())


@pytest.mark.parametrize("command", ["apply", "upgrade"])
def test_the_limits_are_documented_with_their_defaults(cli, command: str) -> None:  # type: ignore[no-untyped-def]
    text = help_text(cli, command)
    defaults = Limits()
    assert (f"--max-members INTEGER RANGE Refuse zips with more members. [default: {defaults.max_members}; x>=1]"
            in text)
    assert (f"--max-size INTEGER RANGE Refuse zips expanding to more bytes in all. "
            f"[default: {defaults.max_total_size}; x>=1]" in text)
    assert (f"--max-ratio INTEGER RANGE Refuse members over 1 MiB that expand more than this many times. "
            f"[default: {defaults.max_ratio}; x>=1]" in text)
    assert text.index("--max-members") < text.index("--max-size") < text.index("--max-ratio")


@pytest.mark.parametrize("option", ["--max-members", "--max-size", "--max-ratio"])
def test_a_limit_below_one_is_a_usage_error(cli, option: str) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", VENDOR_ZIP, "-o", "ctx.tar", option, "0")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.endswith(f"Error: Invalid value for '{option}': 0 is not in the range x>=1.\n")


@pytest.mark.parametrize("option, value, said", [
    ("--max-members", "5", "zip declares 33 members, more than the limit of 5"),
    ("--max-size", "1000", "members declare more than 1000 bytes in all: possible zip bomb"),
])
@pytest.mark.parametrize("command", ["apply", "upgrade"])
def test_each_limit_reaches_the_reader_and_its_refusal_names_the_option(cli, command: str, option: str, value: str,  # type: ignore[no-untyped-def]
                                                                       said: str) -> None:
    args = (VENDOR_ZIP, "-o", "ctx.tar") if command == "apply" else (VENDOR_ZIP, VENDOR_ZIP)
    result = cli(command, *args, option, value)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"error: {VENDOR_ZIP.name}: {said} (if the archive is trusted, raise the limit with "
                             f"{option})\n")


def test_allow_and_reason_are_documented_where_they_are_taken(cli) -> None:  # type: ignore[no-untyped-def]
    for command in ("apply", "check"):
        text = help_text(cli, command)
        assert ("--allow RULE Let this run break safety rule RULE (see patches/policy.toml); repeatable; each needs "
                "its own --reason, and apply records both in the manifest." in text)
        assert ("--reason TEXT Why the matching --allow is acceptable; required, one per --allow, in the same order."
                in text)
        assert text.index("--allow RULE") < text.index("--reason TEXT")


def test_the_patch_set_options_are_documented_alike(cli) -> None:  # type: ignore[no-untyped-def]
    for command in ("apply", "diff", "upgrade", "explain", "verify-numerics"):
        text = help_text(cli, command)
        assert ("--patches DIRECTORY Patch set folder (default: the nearest patches/ holding a series file, in this "
                "folder or one above it; else the set installed with patcher)." in text), command
        assert ("--set PATCH.PARAM=VALUE Override a patch parameter (repeatable), e.g. --set "
                "three-tier-decode.small_max=4096." in text), command
        assert "-v, --verbose Show tracebacks for errors." in text, command
    for command in ("check", "inspect", "verify-sync", "explain"):
        assert "--format [text|json] Output format on stdout. [default: text]" in help_text(cli, command), command


@pytest.mark.parametrize("command", ["apply", "diff", "inspect", "verify-sync", "verify-numerics"])
def test_the_vendor_argument_is_named_vendor_in_the_usage(cli, command: str) -> None:  # type: ignore[no-untyped-def]
    assert cli(command, "--help").stdout.startswith(f"Usage: main {command} [OPTIONS] VENDOR\n")


@pytest.mark.parametrize("command, args", [
    ("apply", (VENDOR_ZIP,)), ("diff", (VENDOR_ZIP,)), ("upgrade", (VENDOR_ZIP, VENDOR_ZIP)),
    ("explain", ("three-tier-decode",)), ("inspect", (VENDOR_ZIP,)), ("verify-sync", (VENDOR_ZIP,)),
    ("check", (VENDOR_ZIP,)),
])
def test_a_patch_set_folder_that_is_not_there_is_one_line_and_exit_2(cli, tmp_path, command: str, args) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "no-patches"
    result = cli(command, *args, "--patches", missing)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"error: {missing}: no such patch set folder\n")


def _local_set(folder, drop: str | None = None, templates_inside: bool = False):  # type: ignore[no-untyped-def]
    """A copy of the bundled set at FOLDER/patches (templates beside it, or inside), without patch DROP."""
    patches = folder / "patches"
    shutil.copytree(PATCHES, patches)
    shutil.copytree(ROOT / "templates", patches / "templates" if templates_inside else folder / "templates")
    if drop is not None:
        series = patches / "series"
        series.write_text("".join(line for line in series.read_text().splitlines(keepends=True)
                                  if not line.startswith(drop)))
    return patches


def test_without_patches_a_patches_folder_here_is_the_set(cli) -> None:  # type: ignore[no-untyped-def]
    _local_set(cli.cwd, drop="prefix-buffer-reuse")
    result = cli("apply", VENDOR_ZIP, "-o", "ctx")
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((cli.cwd / "ctx" / "patcher-manifest.json").read_text())
    assert manifest["patch_set"]["series"] == ["three-tier-decode", "prefix-pregather"]


def test_a_set_with_its_own_templates_folder_renders_from_it(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    patches = _local_set(tmp_path / "own", templates_inside=True)
    result = cli("apply", VENDOR_ZIP, "-o", "ctx", "--patches", patches)
    assert result.exit_code == 0, result.stderr
    assert (cli.cwd / "ctx" / "qwen3_6_scripts" / "paged_attn.py").read_bytes() != \
        (VENDOR_TREE / "qwen3_6_scripts" / "paged_attn.py").read_bytes()


def test_the_manifest_records_the_sets_parameters_and_why_it_has_no_commit(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    patches = _local_set(tmp_path / "outside-git")
    result = cli("apply", VENDOR_ZIP, "-o", "ctx", "--patches", patches, "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((cli.cwd / "ctx" / "patcher-manifest.json").read_text())
    assert manifest["patch_set"]["commit"] is None
    assert manifest["patch_set"]["commit_reason"] == "not in a git repository"
    [decode] = [p for p in manifest["patches"] if p["id"] == "three-tier-decode"]
    assert decode["params"]["small_max"] == 4096


def test_the_target_stage_option_is_documented_alike_wherever_a_drop_is_read(cli) -> None:  # type: ignore[no-untyped-def]
    for command in ("apply", "check", "diff", "upgrade", "explain", "verify-numerics", "verify-sync", "inspect"):
        assert ("--target STAGE The build stage that is the image, as 'docker build --target STAGE' (default: the "
                "one a context apply wrote records, else the last)." in help_text(cli, command)), command
