"""``patcher check PATH``: run the hardware safety rules on what a tree ships, or on one file."""

from __future__ import annotations

from pathlib import Path

import click

from ..report import CheckReport
from . import reached
from .errors import handle_errors
from .options import (allow_options, format_option, load_outline, load_policy_for, patches_option, stage_option,
                      verbose_option)

EPILOG = (
    "PATH is a vendor zip, a folder, a build context apply wrote (.tar.gz/.tgz/.tar), or one .py file."
    " In a tree every Python file the Dockerfile ships is checked (stale unshipped copies are not), and"
    " the install scripts for the files the patch set changes. Overrides that apply recorded in the"
    " tree's patcher-manifest.json count as allowed, so apply's output passes."
    " Output: one line per violation on stdout, 'error|warning|allowed: PATH:LINE: RULE: what was"
    " found (why: ...)', then 'note: PATH:LINE: RULE: ...' for what a rule skipped because it cannot"
    " run (e.g. a V2 call in the else of 'use_v1 = True; if use_v1:'); notes never fail a check."
    " A summary on stderr; --format json for machines (notes have severity \"note\")."
    " Exit codes: 0 no error (warnings are printed but do not fail); 1 a safety rule error;"
    " 2 bad input or usage (unreadable PATH, no Dockerfile, a bad policy); 3 internal error."
)


@click.command("check", epilog=EPILOG)
@click.argument("path", type=click.Path(path_type=Path), metavar="PATH")
@format_option
@stage_option
@patches_option
@allow_options
@verbose_option
@handle_errors
def check_command(path: Path, fmt: str, stage: str | None, patches_dir: Path | None, allow: tuple[str, ...],
                  reasons: tuple[str, ...], verbose: bool) -> None:
    """Run the hardware safety rules of the patch set's policy.toml on PATH."""
    from ..checks import parse_allowed
    from ..checks.inputs import check_path
    from ..report import ExitCode
    from ..resources import default_patches_dir

    single_file = path.suffix == ".py" and path.is_file()
    if single_file and stage is not None:
        raise click.UsageError("--target names a build stage of a tree; one .py file has none")
    # A single file needs only the policy; a tree also the patch set's targets (install-fails-loudly).
    patch_set = None if single_file else load_outline(patches_dir)
    policy = load_policy_for(patch_set.directory if patch_set else patches_dir or default_patches_dir())
    allowed = parse_allowed(allow, reasons, policy)
    result = check_path(path, policy, targets=patch_set.targets if patch_set else (), allowed=allowed, stage=stage)
    report = CheckReport(result, str(path))
    reached(report.exit_code)
    if fmt == "json":
        click.echo(report.to_json())
    else:
        for line in report.lines():
            click.echo(line)
    click.echo(report.summary(), err=True)
    if report.exit_code is not ExitCode.OK:
        raise SystemExit(int(report.exit_code))
