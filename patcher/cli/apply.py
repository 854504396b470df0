"""``patcher apply``: a vendor zip in, a patched, synced, deterministic build context out."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..report import EXIT_CODES_HELP, ApplyReport, patch_arguments
from . import reached
from .errors import handle_errors
from .options import (allow_options, image_stage_said, input_argument, limit_options, limits_from, load_patches,
                      load_policy_for, patches_option, set_option, stage_option, verbose_option)
from .progress import ProgressBar

if TYPE_CHECKING:
    from ..patchset import PatchSet


@click.command(
    "apply",
    epilog=EXIT_CODES_HELP
    + " OUTPUT's suffix picks the format: .tar.gz/.tgz/.tar give a Docker build context"
    " (Dockerfile at the root: docker build - < ctx.tar.gz), .zip keeps the vendor's layout,"
    " anything else is a folder. Before writing, the safety rules of the patch set's policy.toml"
    " run on every shipped file as it would be written: an error stops the run (exit 2, nothing"
    " written), a warning is printed.",
)
@input_argument()
@click.option("-o", "--output", type=click.Path(path_type=Path), default=None,
              help="Where to write (default: build/<zip stem>.tar.gz).")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists.")
@click.option("--record-git", type=click.Path(path_type=Path, file_okay=False), default=None, metavar="DIR",
              help="Also write the run as a new git repository in DIR: the vendor tree, then one commit per "
                   "applied patch (read it with 'git log -p'). DIR must be new or empty unless --force.")
@stage_option
@patches_option
@set_option
@limit_options
@allow_options
@verbose_option
@handle_errors
def apply_command(source: Path, output: Path | None, force: bool, record_git: Path | None, stage: str | None,
                  patches_dir: Path | None, overrides: tuple[str, ...], max_members: int, max_size: int,
                  max_ratio: int, allow: tuple[str, ...], reasons: tuple[str, ...], verbose: bool) -> None:
    """Patch the copy of each target the image ships, sync its mirrors, and pack the context.

    VENDOR is a vendor zip, a folder, or any output of apply (.tar.gz, .tar,
    .zip, folder): run on its own output, apply finds every patch already
    applied and writes the same tree. The report goes to stderr; the output
    path is printed on stdout.
    """
    from ..archive import open_source
    from ..manifest import render_manifest
    from ..checks import parse_allowed
    from ..pipeline import build, check, check_input, prefetch_unchanged, rules_ahead, write
    from ..shipping import plan_shipping

    # Steps are built when a target misses the patch cache: a cached run loads no libcst.
    patch_set = load_patches(patches_dir, overrides, lazy=True)
    _warn_without_commit(patch_set)
    policy = load_policy_for(patch_set.directory)
    allowed = parse_allowed(allow, reasons, policy)
    output = output or Path("build") / f"{_stem(source)}.tar.gz"
    _check_apart(source, output)
    if record_git is not None:
        from ..review import history  # git and the series replay load only for --record-git

        history.check_dest(record_git, force)
    with open_source(source, limits_from(max_members, max_size, max_ratio)) as tree:
        if record_git is not None:
            history.check_tree(tree, record_git)  # before the output is written: all or nothing
        image = image_stage_said(tree, stage)  # a context apply wrote is built as the stage it records
        plan = plan_shipping(tree, image)
        # The file rules read the files the run does not change while it
        # patches, and a thread reads ahead what the writer will copy.
        with rules_ahead(tree, plan, policy) as ahead, prefetch_unchanged(tree) as prefetch:
            result = replace(build(tree, patch_set, plan, image), allowed=allowed)
            early = ahead.results()
            # The rules judge what would be written; when a patch failed nothing is,
            # and they judge the input as it is, so the report holds both problems.
            checks = check_input(result, policy, early) if result.failed else check(result, policy, early)
            report = ApplyReport(result, checks=checks, input_name=str(source),
                                 patch_args=patch_arguments(patches_dir, overrides, stage))
            if report.exit_code:
                _print(report)
                raise SystemExit(int(report.exit_code))
            manifest = render_manifest(result, source.name)
            with ProgressBar(f"writing {output.name}") as bar:
                sha = write(result, output, manifest, force=force, progress=bar.update, prefetch=prefetch)
        if record_git is not None:
            from ..review import history

            commits = history.record_git(result, manifest, record_git, source.name, force=force)
            click.echo(f"recorded {len(commits)} commits in {record_git}", err=True)
    report = ApplyReport(result, str(output), sha, checks, str(source))
    _print(report)
    if result.record_note:
        click.echo(f"note: {source}: {result.record_note}", err=True)
    click.echo(str(output))


def _warn_without_commit(patch_set: PatchSet) -> None:
    """Say why the manifest will record no commit, unless the patch set simply is not in git."""
    from ..vcs import NOT_IN_GIT

    if patch_set.commit is None and patch_set.commit_reason not in (None, NOT_IN_GIT):
        click.echo(f'warning: {patch_set.directory}: the manifest records "commit": null: {patch_set.commit_reason}',
                   err=True)


def _check_apart(source: Path, output: Path) -> None:
    """Refuse an OUTPUT that is the input, or lies inside the input folder: the input is never modified."""
    from ..errors import OutputError

    given, dest = source.resolve(), output.resolve()
    if dest == given or (source.is_dir() and given in dest.parents):
        where = "the input itself" if dest == given else "inside the input folder"
        if dest == given:
            outside = output.with_name(f"{_stem(output)}-2{output.name[len(_stem(output)):]}")
        else:  # beside the input folder
            outside = Path(os.path.relpath(given.parent / output.name))
        raise OutputError(f"is {where}, which apply never modifies", where=str(output),
                          hint=f"write elsewhere, e.g. -o {outside}")


def _print(report: ApplyReport) -> None:
    reached(report.exit_code)  # a reader of the report that stops early does not turn a failure into 0
    for line in report.errors():
        click.echo(f"error: {line}", err=True)
    for line in report.lines():
        click.echo(line, err=True)


def _stem(source: Path) -> str:
    name = source.name
    for suffix in (".zip", ".tar.gz", ".tgz", ".tar"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name or "context"
