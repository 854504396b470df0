"""``patcher inspect``: what the Docker build really ships, and where."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from . import reached
from .errors import handle_errors
from .options import (format_option, image_stage_said, input_argument, load_outline, patches_option, stage_option,
                      verbose_option)

EPILOG = (
    "The report goes to stdout; warnings (an install script that would hide a failed copy of a patched "
    "file: no 'set -e', '|| true', '2>/dev/null', ...; a patch target that lines the reader could not read "
    "could change) go to stderr, and into the JSON. "
    "Exit codes: 0 done; 1 with --strict, a warning or a patch target that does not ship; "
    "2 bad input or usage; 3 internal error."
)

@click.command("inspect", epilog=EPILOG)
@input_argument()
@format_option
@click.option("--strict", is_flag=True, help="Exit 1 when there is a warning or a patch target that does not ship.")
@stage_option
@patches_option
@verbose_option
@handle_errors
def inspect_command(source: Path, fmt: str, strict: bool, stage: str | None, patches_dir: Path | None,
                    verbose: bool) -> None:
    """Show what the Dockerfile and its install scripts put in the image, which of it the patches target,
    and which files of VENDOR never ship."""
    from ..archive import open_source
    from ..review.inspect import inspect_tree, lines, to_json

    patch_set = load_outline(patches_dir)
    with open_source(source) as tree:
        inspection = inspect_tree(tree, patch_set, image_stage_said(tree, stage))
    reached(inspection.exit_code(strict))
    if fmt == "json":
        click.echo(json.dumps(to_json(inspection), indent=2))
    else:
        click.echo("\n".join(lines(inspection)))
    for warning in inspection.warnings:
        click.echo(f"warning: {warning.message()}", err=True)
    for target in inspection.targets:
        if target.problem:
            click.echo(f"warning: {target.target}: {target.problem}", err=True)
        caveat = target.caveat()
        if caveat:
            click.echo(f"warning: {target.target}: {caveat}", err=True)
    sys.exit(int(inspection.exit_code(strict)))
