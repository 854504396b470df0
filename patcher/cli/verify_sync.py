"""``patcher verify-sync``: are the stale copies of shipped files byte-identical to them?"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import handle_errors
from .options import (format_option, image_stage_said, input_argument, load_outline, load_patches, load_policy_for,
                      patches_option, stage_option, verbose_option)

if TYPE_CHECKING:
    from ..archive.tree import SourceTree
    from ..review.sync import ApplyOutlook

EPILOG = (
    "Groups: for each file the patch set targets, the copy the image ships and the same-named file at the "
    "context root (as apply finds them), plus [[verify-sync.mirrors]] tables (shipped = PATH, copies = [PATH, ...]) "
    "in patcher.toml beside the Dockerfile, or in the file --config names. "
    "One line per group goes to stdout (ending with the lines of the build the reader could not read, when they "
    "could change which file the image holds); the summary to stderr. "
    "Exit codes: 0 every copy is byte-identical to its shipped file; 1 a copy drifted (line endings included); "
    "2 bad input, configuration or usage; 3 internal error."
)


@click.command("verify-sync", epilog=EPILOG)
@input_argument()
@click.option("--diff", "show_diff", is_flag=True,
              help="After each drifted group, print the diff from the stale copy to the shipped file.")
@format_option
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False, exists=True), default=None,
              help="Read extra mirror groups from this file instead of the tree's patcher.toml.")
@stage_option
@patches_option
@verbose_option
@handle_errors
def verify_sync_command(source: Path, show_diff: bool, fmt: str, config: Path | None, stage: str | None,
                        patches_dir: Path | None, verbose: bool) -> None:
    """Check that every mirrored copy in VENDOR (a zip, a tree, or a git checkout of one) matches the shipped copy."""
    from ..archive import open_source
    from ..review.sync import check_sync, copy_diff, load_config

    patch_set = load_outline(patches_dir)
    with open_source(source) as tree:
        declared, config_name = load_config(tree, config)
        report = check_sync(tree, patch_set, declared, config_name, image_stage_said(tree, stage))
        # Only a drifted copy of a patched file makes the hint ask what apply would do (the series runs then).
        outlook = _apply_outlook(tree, source, patches_dir, stage) if any(
            g.origin == "patch set" for g in report.drifted) else None
    if fmt == "json":
        click.echo(json.dumps(report.to_json(diffs=show_diff), indent=2))
    else:
        # Bytes, not text: a diff's CRs must reach the reader unchanged.
        for group in report.groups:
            click.echo((group.line() + "\n").encode("utf-8"), nl=False)
            if show_diff:
                for copy in group.drifted:
                    click.echo(copy_diff(group, copy), nl=False)
    click.echo(report.summary(outlook), err=True)
    sys.exit(int(report.exit_code))


def _apply_outlook(tree: SourceTree, source: Path, patches_dir: Path | None, stage: str | None) -> ApplyOutlook:
    """Run what apply would run on this input (nothing written): would it write, and re-sync which copies?

    ``stage`` is the ``--target`` given (None: not given); the commands named repeat it.
    """
    from ..errors import PatcherError
    from ..pipeline import build, check, check_input, rules_ahead
    from ..report import ApplyReport, patch_arguments
    from ..review.sync import ApplyOutlook
    from ..shipping import plan_shipping

    from ..shipping.target_stage import image_stage

    given = " ".join(shlex.quote(a) for a in (str(source), *patch_arguments(patches_dir, (), stage)))
    command = f"patcher apply {given}"
    try:
        patch_set = load_patches(patches_dir, (), lazy=True)
        policy = load_policy_for(patch_set.directory)
        image = image_stage(tree, stage)
        plan = plan_shipping(tree, image)
        # As apply runs it: the file rules judge the files beside this process while it patches.
        with rules_ahead(tree, plan, policy) as ahead:
            result = build(tree, patch_set, plan, image)
            early = ahead.results()
            checks = check_input(result, policy, early) if result.failed else check(result, policy, early)
    except PatcherError as error:  # the patch set does not load, the build does not say what ships, ...
        return ApplyOutlook(command, False, frozenset(), f"it stops: {error}")
    synced = frozenset(m.path for m in result.mirrors)
    if result.failed:
        failed = ApplyReport(result).counts["failed"]
        return ApplyOutlook(command, False, synced, f"{failed} patch(es) do not apply; see "
                                                    f"'patcher diff --keep-going {given}'")
    if checks.errors:
        return ApplyOutlook(command, False, synced, f"{len(checks.errors)} safety rule error(s); "
                                                    f"see 'patcher check {given}'")
    return ApplyOutlook(command, True, synced)
