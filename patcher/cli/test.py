"""``patcher test [PATCH_ID ...]``: run a patch set's examples and its safety rules' examples."""

from __future__ import annotations

from pathlib import Path

import click

from .errors import handle_errors
from .options import format_option, load_patches, patches_option, verbose_option

EPILOG = (
    "For each patch (or each one named): every example in LF and CRLF (before gives exactly after; an"
    " 'error' example must fail with that message; one with neither must change nothing), and for each"
    " example with an 'after', that the patch recognises its own result and that applying it twice"
    " changes nothing. With no PATCH_ID also the VALID/INVALID examples of every safety rule the set's"
    " policy.toml declares. Output: one line per case, FAIL with a unified diff of expected against"
    " got, then 'N passed, M failed'; --format json for machines."
    " Exit codes: 0 every case passed; 1 a case failed; 2 the patch set does not load, or an unknown"
    " PATCH_ID; 3 internal error."
)


@click.command("test", epilog=EPILOG)
@click.argument("patch_ids", nargs=-1, metavar="[PATCH_ID]...")
@format_option
@patches_option
@verbose_option
@handle_errors
def test_command(patch_ids: tuple[str, ...], fmt: str, patches_dir: Path | None, verbose: bool) -> None:
    """Run the examples of a patch set: its patches' and its safety rules'."""
    from ..authoring.cases import collect_cases, run_cases

    patch_set = load_patches(patches_dir, ())
    report = run_cases(patch_set.directory, collect_cases(patch_set, patch_ids))
    if fmt == "json":
        click.echo(report.to_json())
    else:
        for line in report.lines():
            click.echo(line)
        click.echo(report.summary())
    raise SystemExit(int(report.exit_code))
