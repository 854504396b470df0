"""``patcher explain PATCH_ID [--in VENDOR]``: what a patch does, and why it matched what it matched."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import handle_errors
from .options import format_option, load_patches, patches_option, set_option, stage_option, verbose_option

EPILOG = (
    "Shows the patch's DEP-3 header, its markers, its parameters (type, bounds, default, help, and the"
    " value this run renders it with, after --set), and each step in words with the code it looks for"
    " and writes. With --in VENDOR (a vendor zip, a folder, or a build context .tar/.tar.gz that apply"
    " wrote): the file the image ships as the target, the scope's lines, whether the patch applies, is"
    " already applied or fails there, and for each step the line range of each match and what each"
    " metavariable captured; where it fails, the closest code. Line numbers are those of the shipped"
    " file, before any patch. --format json gives the same as one object: 'patch' (the header),"
    " 'params' (name, type, default, value, set, help, bounds), 'steps' (number, op, scope, words,"
    " patterns) and 'in' (null without --in; else vendor, shipped, scope_lines, status, detail,"
    " diagnostic, and 'matches': step, file, scope, what, lines, captures)."
    " Exit codes: 0 shown; 2 bad input (an unknown PATCH_ID, a patch set that does not load, an"
    " unreadable VENDOR or one that does not ship the target); 3 internal error."
)


@click.command("explain", epilog=EPILOG)
@click.argument("patch_id", metavar="PATCH_ID")
@click.option("--in", "vendor", type=click.Path(path_type=Path), default=None, metavar="VENDOR",
              help="Show where the patch matches in this vendor zip, folder or build context.")
@format_option
@stage_option
@set_option
@patches_option
@verbose_option
@handle_errors
def explain_command(patch_id: str, vendor: Path | None, fmt: str, stage: str | None, overrides: tuple[str, ...],
                    patches_dir: Path | None, verbose: bool) -> None:
    """Explain patch PATCH_ID to a reviewer: header, parameters, steps, and its matches in VENDOR."""
    from ..authoring.cases import select_patches
    from ..authoring.explain import explain_patch, locate, render_lines, to_json

    if stage is not None and vendor is None:
        raise click.UsageError("--target names a build stage of the drop --in VENDOR; give --in VENDOR too")
    patch_set = load_patches(patches_dir, overrides)
    (patch,) = select_patches(patch_set, [patch_id])
    explanation = explain_patch(patch)
    if vendor is not None:
        explanation = locate(explanation, patch_set, vendor, stage)
    if fmt == "json":
        import json

        click.echo(json.dumps(to_json(explanation), indent=2))
    else:
        click.echo("\n".join(render_lines(explanation)))
