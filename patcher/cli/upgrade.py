"""``patcher upgrade OLD NEW``: how the patch series fares on a new vendor drop, for review."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import reached
from .errors import handle_errors
from .options import (limit_options, limits_from, load_patches, load_policy_for, patches_option, set_option,
                      stage_option, verbose_option)
from .progress import StageLine

EPILOG = (
    "OLD and NEW are vendor zips, folders or build contexts (any output of apply). A context counts as the "
    "vendor drop it was made from while it still holds what its manifest says: each patch found already applied "
    "there with the recorded file and parameters takes the recorded status and fingerprints, and scopes are "
    "compared as patched on both drops; a context edited since, or whose manifest does not read, is compared as "
    "a tree, with a note. Nothing is written. The report opens with the "
    "verdict and its reasons, most serious first, and ends with the command to run next. For each patch: "
    "its status on OLD and NEW (applies, already-applied, fails with the closest code, not-shipped), whether "
    "what it captured changed, and for each scope it touches or requires whether the vendor changed that "
    "scope's code (judged on syntax: comments, blank lines, line breaks inside brackets and CRLF are no "
    "change), with that scope's diff printed once for all the patches that rely on it. Then: shipped copies "
    "that moved or are no longer shipped, mirror groups that appeared or went, and the safety rules on each "
    "drop as apply would write it (patched as far as the patches apply): errors and warnings new in NEW or "
    "gone from it. Exit codes: 0 every patch applies (or is already applied) on NEW as on OLD with the same "
    "captures, nothing it relies on changed, the patched NEW passes the safety rules and the shipped copies "
    "are where they were; 1 something needs review (a patch that fails, a target NEW no longer ships, a rule "
    "error in the patched NEW, a changed scope or capture, a moved copy, a new warning); 2 bad input or "
    "usage; 3 internal error."
)


@click.command("upgrade", epilog=EPILOG)
@click.argument("old", type=click.Path(path_type=Path), metavar="OLD")
@click.argument("new", type=click.Path(path_type=Path), metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="text for a terminal, json for machines, markdown for the pull request.")
@stage_option
@patches_option
@set_option
@limit_options
@verbose_option
@handle_errors
def upgrade_command(old: Path, new: Path, fmt: str, stage: str | None, patches_dir: Path | None,
                    overrides: tuple[str, ...], max_members: int, max_size: int, max_ratio: int,
                    verbose: bool) -> None:
    """Compare how the patch series applies to vendor drop OLD and to NEW."""
    from ..archive import open_source
    from ..report import patch_arguments
    from ..review import upgrade, upgrade_render
    from ..shipping.target_stage import pair_stages

    patch_set = load_patches(patches_dir, overrides, lazy=True)
    policy = load_policy_for(patch_set.directory)
    limits = limits_from(max_members, max_size, max_ratio)
    with StageLine("upgrade", 5) as progress:
        with open_source(old, limits) as old_tree, open_source(new, limits) as new_tree:
            stages = pair_stages(old_tree, new_tree, stage)  # a context is read as the stage it records
            drops = upgrade.read_drops(old_tree, new_tree, patch_set, policy, (str(old), str(new)), progress,
                                       stages)
        progress("comparing")
        # The commands it names run on NEW alone: they repeat the stage NEW was read as.
        report = upgrade.compare(*drops, patch_args=patch_arguments(patches_dir, overrides, stages[1]))
        rendered = (upgrade_render.to_json_text(report) + "\n" if fmt == "json" else
                    upgrade_render.markdown(report) if fmt == "markdown" else upgrade_render.text(report))
    code = report.exit_code
    reached(code)
    click.echo(rendered, nl=False)
    sys.exit(int(code))
