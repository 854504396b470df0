"""``patcher upgrade OLD NEW``: how the patch series fares on a new vendor drop, for review."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .errors import handle_errors
from .options import limit_options, limits_from, load_patches, load_policy_for, patches_option, set_option, verbose_option

EPILOG = (
    "OLD and NEW are vendor zips, folders or build contexts. Nothing is written. For each patch: its status "
    "on OLD and NEW (applies, already-applied, fails with the closest code), whether what it captured changed, "
    "and for each scope it touches or requires whether the vendor changed that scope's code (judged on syntax: "
    "comments, blank lines, line breaks inside brackets and CRLF are no change), with a diff of that scope. "
    "Then: shipped copies that moved, mirror groups that appeared or went, safety-rule errors new in NEW or "
    "gone from it. Exit codes: 0 every patch behaves on NEW as on OLD and nothing it relies on changed; "
    "1 something needs review; 2 bad input or usage; 3 internal error."
)


@click.command("upgrade", epilog=EPILOG)
@click.argument("old", type=click.Path(path_type=Path), metavar="OLD")
@click.argument("new", type=click.Path(path_type=Path), metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]), default="text",
              show_default=True, help="text for a terminal, json for machines, markdown for the pull request.")
@patches_option
@set_option
@limit_options
@verbose_option
@handle_errors
def upgrade_command(old: Path, new: Path, fmt: str, patches_dir: Path | None, overrides: tuple[str, ...],
                    max_members: int, max_size: int, max_ratio: int, verbose: bool) -> None:
    """Compare how the patch series applies to vendor drop OLD and to NEW."""
    from ..archive import open_source
    from ..review import upgrade, upgrade_render

    patch_set = load_patches(patches_dir, overrides)
    policy = load_policy_for(patch_set.directory)
    limits = limits_from(max_members, max_size, max_ratio)
    with open_source(old, limits) as old_tree, open_source(new, limits) as new_tree:
        report = upgrade.compare(upgrade.read_drop(old_tree, patch_set, policy, str(old)),
                                 upgrade.read_drop(new_tree, patch_set, policy, str(new)))
    if fmt == "json":
        click.echo(upgrade_render.to_json_text(report))
    elif fmt == "markdown":
        click.echo(upgrade_render.markdown(report), nl=False)
    else:
        click.echo(upgrade_render.text(report), nl=False)
    sys.exit(int(report.exit_code))
