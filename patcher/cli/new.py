"""``patcher new ID --target PATH --scope Class.method``: start a patch from the template."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import handle_errors
from .options import verbose_option

EPILOG = (
    "Writes ID.toml into the patch set (--patches DIR, else the nearest 'patches' folder holding a 'series'"
    " file, in the current folder or above it, as git finds .git) from the new-patch/patch.toml.j2 template"
    " (the set's own templates folder first, then patcher's): a DEP-3 header dated today, one step to edit,"
    " and an example skeleton to fill in. The series lists it inactive, commented out with a note (at the"
    " end, or right after --after OTHER), so apply and diff leave it out; 'patcher test ID' runs its cases"
    " and 'patcher test --activate ID' lists it for real once they all pass. The series keeps its mode and"
    " line endings. Nothing is written when anything is refused."
    " Exit codes: 0 written; 2 refused (an existing or malformed ID, an unknown --after, no patch set"
    " folder or series, a broken template); 3 internal error."
)


@click.command("new", epilog=EPILOG)
@click.argument("patch_id", metavar="ID")
@click.option("--target", required=True, metavar="PATH",
              help="Path the image runs the file at, e.g. vllm/attention/ops/paged_attn.py.")
@click.option("--scope", required=True, metavar="CLASS.METHOD",
              help="Qualified name of what the patch rewrites, e.g. PagedAttention.forward_decode.")
@click.option("--after", "after", default=None, metavar="OTHER", help="List the new patch right after patch OTHER.")
@click.option("--patches", "patches_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Patch set folder (default: the nearest 'patches' folder holding 'series', here or above).")
@verbose_option
@handle_errors
def new_command(patch_id: str, target: str, scope: str, after: str | None, patches_dir: Path | None,
                verbose: bool) -> None:
    """Start patch ID: write ID.toml from the template and list it, inactive, in the series."""
    from ..authoring.new import new_patch, patches_dir_for_new

    written = new_patch(patches_dir_for_new(patches_dir), patch_id, target=target, scope=scope, after=after)
    place = f"after {written.after}" if written.after else "first"
    click.echo(f"wrote {written.path}; listed {place} in {written.series} (line {written.line}), inactive: "
               f"apply leaves it out until 'patcher test --activate {patch_id}' passes")
    click.echo(f"next: write its step and example, then run 'patcher test {patch_id}'")
