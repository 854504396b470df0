"""``patcher diff``: the vendor tree against exactly what ``apply`` would write."""

from __future__ import annotations

import dataclasses
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import PatcherError
from ..report import ApplyReport, ExitCode, Failure, failed_patches, patch_arguments
from . import reached
from .errors import handle_errors
from .options import (color_option, colour_wanted, image_stage_said, input_argument, load_patches, patches_option,
                      set_option, stage_option, verbose_option)

if TYPE_CHECKING:
    from ..archive import SourceTree
    from ..checks import CheckResult
    from ..patchset import PatchSet
    from ..pipeline import Build
    from ..review.changes import DiffReport

EPILOG = (
    "The diff goes to stdout with a/ and b/ paths relative to the context root (the folder holding the "
    "Dockerfile): 'patch -p1' or 'git apply' run there reproduces apply's tree, the manifest aside. "
    "Lines starting with '#' name the patches behind each file; patch and git apply skip them. "
    "Exit codes: 0 done (with --exit-code: the diff is empty); 1 the diff is not empty (--exit-code only); "
    "2 bad input or usage, an unknown --base revision, or a patch that does not apply (with --keep-going: "
    "after showing what the others change); 3 internal error. A patch that does not apply is named with the "
    "code that came closest to it; the safety rules then run on the input as it is and their errors are "
    "listed too."
)


@click.command("diff", epilog=EPILOG)
@input_argument()
@click.option("--per-patch", is_flag=True,
              help="One section per patch, in series order: each patch's own change on top of the ones before it.")
@click.option("--stat", "show_stat", is_flag=True, help="Print a summary (files, lines added and removed) instead of the diff.")
@click.option("--exit-code", "check", is_flag=True, help="Exit 1 when the diff is not empty.")
@click.option("--format", "fmt", type=click.Choice(["unified", "json", "markdown"]), default="unified",
              show_default=True, help="unified for patch/git apply, json for machines, markdown for a pull request.")
@color_option
@click.option("--keep-going", is_flag=True,
              help="When patches do not apply, show what the others change, then list the failures "
                   "with the closest code (exit 2).")
@click.option("--base", metavar="REF", default=None,
              help="Diff apply's output with the patch set as at git revision REF against the working tree's.")
@stage_option
@patches_option
@set_option
@verbose_option
@handle_errors
def diff_command(source: Path, per_patch: bool, show_stat: bool, check: bool, fmt: str, color: bool | None,
                 keep_going: bool, base: str | None, stage: str | None, patches_dir: Path | None,
                 overrides: tuple[str, ...], verbose: bool) -> None:
    """Show what 'patcher apply' changes in VENDOR (a zip or a folder), and which patch changes what."""
    from ..archive import open_source
    from ..review.base import patch_set_at
    from ..review.changes import apply_diff, base_diff, per_patch_diff

    if per_patch and base:
        raise click.UsageError("--per-patch and --base cannot be combined")
    # Steps are built when a target misses the patch cache: a cached run loads no libcst.
    patch_set = load_patches(patches_dir, overrides, lazy=True)
    with ExitStack() as stack:
        if base is not None:  # a bad revision fails before any work
            checkout = stack.enter_context(patch_set_at(patch_set.directory, base))
            try:
                old_set = dataclasses.replace(load_patches(checkout.folder, overrides), commit=checkout.ref.commit)
            except PatcherError as error:
                raise checkout.explain(error) from None
        tree = stack.enter_context(open_source(source))
        image = image_stage_said(tree, stage)  # a context apply wrote is built as the stage it records
        rerun = (str(source), *patch_arguments(patches_dir, overrides, stage))
        builds = [_build(tree, patch_set, image, "", rerun, keep_going)]
        if base is not None:
            builds.insert(0, _build(tree, old_set, image, f"at {base}: ", (*rerun, "--base", base), keep_going))
            report = base_diff(builds[0], builds[1], source.name, checkout.ref)
        elif per_patch:
            report = per_patch_diff(builds[0], source.name)
        else:
            report = apply_diff(builds[0], source.name)
        failures = [failure for b in builds for failure in failed_patches(b)]
        rules = _input_rules(builds[-1], patch_set) if failures else None
        code = ExitCode.BAD_INPUT if failures else report.exit_code(check)
        reached(code)
        _show(report, builds[-1], fmt, show_stat, color, failures, rules)
    if failures:
        _report_failures(failures, rules, sum(ApplyReport(b).counts["failed"] for b in builds))
    sys.exit(int(code))


def _build(tree: SourceTree, patch_set: PatchSet, stage: str | None, label: str, rerun: tuple[str, ...],
           keep_going: bool) -> Build:
    from ..pipeline import build
    from ..report import ApplyReport

    result = build(tree, patch_set, stage=stage)
    if result.failed and not keep_going:
        report = ApplyReport(result, checks=_input_rules(result, patch_set), input_name=rerun[0],
                             patch_args=rerun[1:])
        reached(report.exit_code)
        for line in report.errors():
            click.echo(f"error: {label}{line}", err=True)
        sys.exit(int(report.exit_code))
    return result


def _input_rules(result: Build, patch_set: PatchSet) -> CheckResult:
    from ..pipeline import check_input
    from .options import load_policy_for

    return check_input(result, load_policy_for(patch_set.directory))


def _report_failures(failures: list[Failure], rules: CheckResult | None, failed: int) -> None:
    from ..report import violation_line

    for failure in failures:
        click.echo(f"error: {failure.line()}", err=True)
    if rules is not None:
        for violation in rules.errors:
            click.echo(f"error: {violation_line(violation, rules)}", err=True)
    # Every patch on a target that does not parse failed too: no code was there to name as closest.
    unparsed = sum(f.patch is None for f in failures)
    todo = [f"fix the line named above in the {unparsed} target(s) that do not parse"] if unparsed else []
    if any(f.patch for f in failures):
        todo.append(f"update each {'other ' if unparsed else ''}one to the code named as closest")
    click.echo(f"{failed} patch(es) did not apply; the diff above leaves them out ({'; '.join(todo)})", err=True)


def _show(report: DiffReport, build: Build, fmt: str, show_stat: bool, color: bool | None,
          failures: list[Failure], rules: CheckResult | None) -> None:
    from ..review import render

    if fmt == "json":
        document = render.to_json(report, diffs=not show_stat)
        document["failed"] = [failure.to_json() for failure in failures]
        document["rule_errors"] = [] if rules is None else [
            {"rule": v.rule, "path": v.path, "line": v.line, "message": v.message} for v in rules.errors]
        click.echo(json.dumps(document, indent=2))
    elif fmt == "markdown":
        rows = render.summary_rows(build, report)
        click.echo(render.markdown(report, diffs=not show_stat, rows=rows, failures=failures, rules=rules), nl=False)
    elif show_stat:
        click.echo(render.stat(report), nl=False)
    else:
        data = render.unified(report)
        if colour_wanted(color, sys.stdout):
            data = render.colour(data)
        # Bytes, not text: CRs and undecodable bytes must reach 'patch' unchanged.
        click.echo(data, nl=False)
    if report.empty:
        click.echo("no changes", err=True)
