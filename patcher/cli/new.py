"""``patcher new ID --target PATH --scope Class.method``: start a patch from the template.

``patcher new ID --from-edit VENDOR ORIGINAL EDITED`` (or ``VENDOR EDITED_TREE``) learns it from a hand edit.
"""

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
    " With --from-edit VENDOR ORIGINAL EDITED (or VENDOR EDITED_TREE) it learns the patch from a hand edit"
    " instead: the steps, markers, requires and an example, checked to turn ORIGINAL into EDITED byte for byte,"
    " written inactive (commented out in 'series') until 'patcher test --activate ID' passes; an edit no step can say is"
    " exit 2, naming the lines that block it, and nothing is written."
)


@click.command("new", epilog=EPILOG)
@click.argument("patch_id", metavar="ID")
@click.argument("inputs", nargs=-1, type=click.Path(path_type=Path), metavar="[VENDOR ORIGINAL EDITED]")
@click.option("--from-edit", "from_edit", is_flag=True,
              help="Learn the patch from a hand edit: VENDOR ORIGINAL EDITED, or VENDOR EDITED_TREE.")
@click.option("--target", default=None, metavar="PATH",
              help="Path the image runs the file at, e.g. vllm/attention/ops/paged_attn.py.")
@click.option("--scope", default=None, metavar="CLASS.METHOD",
              help="Qualified name of what the patch rewrites, e.g. PagedAttention.forward_decode.")
@click.option("--after", "after", default=None, metavar="OTHER", help="List the new patch right after patch OTHER.")
@click.option("--patches", "patches_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Patch set folder (default: the nearest 'patches' folder holding 'series', here or above).")
@verbose_option
@handle_errors
def new_command(patch_id: str, inputs: tuple[Path, ...], from_edit: bool, target: str | None, scope: str | None,
                after: str | None, patches_dir: Path | None, verbose: bool) -> None:
    """Start patch ID: write ID.toml from the template (or learn it from a hand edit) and list it, inactive."""
    from ..authoring.new import new_patch, patches_dir_for_new

    if from_edit or inputs:
        return _from_edit(patch_id, inputs, from_edit, target, scope, after, patches_dir_for_new(patches_dir))
    if target is None or scope is None:
        raise click.UsageError(f"Missing option '{'--target' if target is None else '--scope'}'.")

    written = new_patch(patches_dir_for_new(patches_dir), patch_id, target=target, scope=scope, after=after)
    place = f"after {written.after}" if written.after else "first"
    click.echo(f"wrote {written.path}; listed {place} in {written.series} (line {written.line}), inactive: "
               f"apply leaves it out until 'patcher test --activate {patch_id}' passes")
    click.echo(f"next: write its step and example, then run 'patcher test {patch_id}'")


def _from_edit(patch_id: str, inputs: tuple[Path, ...], from_edit: bool, target: str | None, scope: str | None,
               after: str | None, directory: Path) -> None:
    """``new ID --from-edit VENDOR ORIGINAL EDITED`` or ``VENDOR EDITED_TREE``: learn, check, write, report."""
    from ..authoring.from_edit import new_from_edit, new_from_edit_tree

    if not from_edit:
        raise click.UsageError("VENDOR ORIGINAL EDITED are for --from-edit: add it, or give --target and --scope.")
    if after is not None:
        raise click.UsageError("--after is for a new patch from the template; a learned patch goes last, inactive.")
    if len(inputs) == 3:
        written = new_from_edit(directory, patch_id, *inputs, scope=scope, target=target)
    elif len(inputs) == 2 and target is None:
        written = new_from_edit_tree(directory, patch_id, *inputs, scope=scope)
    else:
        raise click.UsageError("--from-edit takes VENDOR ORIGINAL EDITED, or VENDOR EDITED_TREE "
                               "(--target only with ORIGINAL EDITED).")
    for note in written.notes:
        click.echo(f"note: {note}", err=True)
    for learned, path in zip(written.patches, written.paths):
        click.echo(f"wrote {path}: {len(learned.steps)} step(s) on {learned.target} ({learned.shipped}), "
                   f"{len(learned.markers)} marker(s), {len(learned.requires)} requirement(s)")
        for number, (step, place) in enumerate(zip(learned.steps, learned.places), 1):
            click.echo(f"  step {number}: {step.words}, {place}")
    ids = " ".join(p.patch_id for p in written.patches)
    click.echo(f"listed inactive in {written.series}; next: say why in the description, then "
               f"'patcher test --activate {ids}', then 'patcher diff VENDOR'")
