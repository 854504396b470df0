"""``patcher test [PATCH_ID ...]``: run a patch set's examples and its safety rules' examples."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import handle_errors
from .options import format_option, verbose_option

EPILOG = (
    "For each patch (or each one named): every example in LF and CRLF (before gives exactly after; an"
    " 'error' example must fail with that message; one with neither must change nothing), and for each"
    " example with an 'after', that the patch recognises its own result and that applying it twice"
    " changes nothing. For each file several of those patches edit: each of their examples run through"
    " the whole series, after which every patch must still be recognised by its applied-when markers."
    " With no PATCH_ID also the VALID/INVALID examples of every safety rule the set's policy.toml"
    " declares. A PATCH_ID may name an inactive patch ('patcher new' lists new patches commented out):"
    " it is tested in its place in the series, and with --activate its series line is uncommented once"
    " every case passes (nothing is written otherwise). Output: one line per case, FAIL with a unified"
    " diff of expected against got, then 'N passed, M failed'; --format json for machines; notes about"
    " inactive patches on stderr. The patch set is --patches DIR, else the nearest 'patches' folder"
    " holding 'series' here or above, else the set installed with patcher."
    " Exit codes: 0 every case passed; 1 a case failed (nothing activated); 2 the patch set does not load,"
    " an unknown PATCH_ID, or --activate without one; 3 internal error."
)


@click.command("test", epilog=EPILOG)
@click.argument("patch_ids", nargs=-1, metavar="[PATCH_ID]...")
@click.option("--activate", is_flag=True,
              help="List each named inactive patch in the series once every case passes.")
@format_option
@click.option("--patches", "patches_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Patch set folder (default: the nearest 'patches' folder holding 'series', here or above; "
                   "else the set installed with patcher).")
@verbose_option
@handle_errors
def test_command(patch_ids: tuple[str, ...], activate: bool, fmt: str, patches_dir: Path | None,
                 verbose: bool) -> None:
    """Run the examples of a patch set: its patches' and its safety rules'."""
    from ..authoring.cases import collect_cases, run_cases
    from ..authoring.new import nearest_patches_dir
    from ..authoring.series_file import activate as activate_lines
    from ..authoring.series_file import load_with, open_series
    from ..errors import PatcherError
    from ..resources import default_patches_dir

    directory = patches_dir or nearest_patches_dir(Path.cwd()) or default_patches_dir()
    _, series = open_series(directory)
    if activate and not patch_ids:
        example = series.inactive[0] if series.inactive else "ID"
        raise PatcherError("--activate needs the inactive patches to activate, by id",
                           hint=f"e.g. 'patcher test --activate {example}'" if series.inactive
                           else "the series has no inactive patch")
    patch_set = load_with(directory, include=patch_ids)
    untested = tuple(i for i in series.inactive if i not in patch_ids)
    report = run_cases(patch_set.directory, collect_cases(patch_set, patch_ids), inactive=untested)
    if fmt == "json":
        click.echo(report.to_json())
    else:
        for line in report.lines():
            click.echo(line)
        click.echo(report.summary())
    tested = [i for i in patch_ids if i in series.inactive]
    if activate:
        for patch_id in patch_ids:
            if patch_id not in series.inactive:
                click.echo(f"note: {patch_id} is already active", err=True)
        if tested and report.failed:
            click.echo(f"not activated: {', '.join(tested)} ({report.failed} case(s) failed; "
                       "the series is unchanged)", err=True)
        elif tested:
            for patch_id, position in activate_lines(directory, tested).items():
                click.echo(f"activated {patch_id}: {series.path} lists it as patch {position}", err=True)
    else:
        for patch_id in tested:
            click.echo(f"note: {patch_id} is inactive: apply leaves it out until "
                       f"'patcher test --activate {patch_id}' passes", err=True)
    if untested:
        click.echo(f"note: {len(untested)} inactive patch(es) not tested: {', '.join(untested)} "
                   f"(apply leaves them out; 'patcher test {untested[0]}' runs its cases)", err=True)
    raise SystemExit(int(report.exit_code))
