"""``patcher new ID --target PATH --scope Class.method``: start a patch from the template."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import handle_errors
from .options import patches_option, verbose_option

EPILOG = (
    "Writes ID.toml into the patch set (--patches, default ./patches or the bundled set) from the"
    " new-patch/patch.toml.j2 template (the set's own templates folder first, then patcher's): a DEP-3"
    " header dated today, one step to edit, and an example skeleton to fill in; then lists ID in"
    " 'series', at the end or right after --after OTHER. Until the example is written, 'patcher test'"
    " fails the patch with 'example not written yet'. Nothing is written when anything is refused."
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
@patches_option
@verbose_option
@handle_errors
def new_command(patch_id: str, target: str, scope: str, after: str | None, patches_dir: Path | None,
                verbose: bool) -> None:
    """Start patch ID: write ID.toml from the template and add it to the series."""
    from ..authoring.new import new_patch
    from ..resources import default_patches_dir

    written = new_patch(patches_dir or default_patches_dir(), patch_id, target=target, scope=scope, after=after)
    place = f"after {written.after}" if written.after else "first"
    click.echo(f"wrote {written.path}; listed {place} in {written.series} (patch {written.position})")
    click.echo(f"next: write its step and example, then run 'patcher test {patch_id}'")
