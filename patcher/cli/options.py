"""Options shared by several commands, defined once."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable

import click

if TYPE_CHECKING:
    from ..archive.limits import Limits
    from ..archive.tree import SourceTree
    from ..checks import Policy
    from ..patchset import PatchSet, SeriesOutline

patches_option = click.option(
    "--patches",
    "patches_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Patch set folder (default: the nearest patches/ holding a series file, in this folder or one above it; "
         "else the set installed with patcher).",
)
set_option = click.option(
    "--set",
    "overrides",
    multiple=True,
    metavar="PATCH.PARAM=VALUE",
    help="Override a patch parameter (repeatable), e.g. --set three-tier-decode.small_max=4096.",
)
stage_option = click.option(
    "--target", "stage", metavar="STAGE", default=None,
    help="The build stage that is the image, as 'docker build --target STAGE' (default: the one a context apply wrote records, else the last).")


def image_stage_said(tree: "SourceTree", stage: str | None) -> str | None:
    """The stage that is the image (``target_stage.image_stage``), saying on stderr when a context's manifest chose it.

    Without ``--target``, a context apply wrote is read as the stage its
    manifest records; ``docker build`` without ``--target`` builds the last
    stage, so the choice is said once, with the command that builds it.
    """
    from ..manifest_file import MANIFEST
    from ..shipping.target_stage import image_stage

    image = image_stage(tree, stage)
    if stage is None and image is not None:
        click.echo(f"note: {tree.label}: read as build stage {image!r}, which its {MANIFEST} records "
                   f"(build it with 'docker build --target {image}')", err=True)
    return image


verbose_option = click.option("-v", "--verbose", is_flag=True, help="Show tracebacks for errors.")

color_option = click.option(
    "--color/--no-color", "color", default=None,
    help="Colour the output: --color always, --no-color never; by default only on a terminal, and never "
         "when NO_COLOR is set to anything but an empty value (no-color.org).",
)


def colour_wanted(choice: bool | None, stream: IO[Any]) -> bool:
    """Decide whether to colour what goes to ``stream``: one rule for every command that colours.

    ``--color`` / ``--no-color`` decide when given (a flag given for one
    run outranks the environment, as no-color.org asks). Otherwise a
    non-empty ``NO_COLOR`` turns colour off, on a terminal too; else colour
    only on a terminal.
    """
    if choice is not None:
        return choice
    if os.environ.get("NO_COLOR", ""):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or a closed stream
        return False


format_option = click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                             show_default=True, help="Output format on stdout.")


def input_argument(name: str = "source") -> Callable[[Any], Any]:
    """The vendor zip or tree argument (existence is checked by the archive layer)."""
    return click.argument(name, type=click.Path(path_type=Path, dir_okay=True), metavar="VENDOR")


def load_patches(patches_dir: Path | None, overrides: tuple[str, ...], *, lazy: bool = False) -> PatchSet:
    """Load the patch set the way every command does, recording its git commit.

    ``lazy``: build each patch's steps when first used (see load_patch_set).
    """
    from ..errors import PatchSetError
    from ..patchset import load_patch_set
    from ..resources import default_patches_dir, templates_dir_for
    from ..vcs import read_commit

    directory = patches_dir or default_patches_dir()
    if not directory.is_dir():
        raise PatchSetError("no such patch set folder", where=str(directory))
    recorded = read_commit(directory)
    patch_set = load_patch_set(
        directory,
        overrides=overrides,
        templates=templates_dir_for(directory),
        commit=recorded.commit,
        lazy=lazy,
    )
    return replace(patch_set, commit_reason=recorded.reason)


def load_outline(patches_dir: Path | None) -> SeriesOutline:
    """Read which file each patch targets, as load_patches finds the set, without rendering it.

    Commands that only read the vendor tree use this: it imports neither
    Jinja2 nor libcst, and a patch whose steps do not build does not stop them.
    """
    from ..errors import PatchSetError
    from ..patchset.load import load_outline as read_outline
    from ..resources import default_patches_dir

    directory = patches_dir or default_patches_dir()
    if not directory.is_dir():
        raise PatchSetError("no such patch set folder", where=str(directory))
    return read_outline(directory)


def limit_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add --max-members/--max-size/--max-ratio, the zip-bomb limits for untrusted input."""
    from ..archive.limits import Limits

    defaults = Limits()
    options = [
        click.option("--max-members", type=click.IntRange(1), default=defaults.max_members, show_default=True,
                     help="Refuse zips with more members."),
        click.option("--max-size", type=click.IntRange(1), default=defaults.max_total_size, show_default=True,
                     help="Refuse zips expanding to more bytes in all."),
        click.option("--max-ratio", type=click.IntRange(1), default=defaults.max_ratio, show_default=True,
                     help="Refuse members over 1 MiB that expand more than this many times."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def limits_from(max_members: int, max_size: int, max_ratio: int) -> Limits:
    """The Limits the options ask for."""
    from ..archive.limits import Limits

    return Limits(max_members=max_members, max_total_size=max_size, max_ratio=max_ratio)


def allow_options(command: Any) -> Any:
    """``--allow RULE --reason TEXT`` (repeatable, paired in order): override a safety rule for one run."""
    command = click.option(
        "--reason", "reasons", multiple=True, metavar="TEXT",
        help="Why the matching --allow is acceptable; required, one per --allow, in the same order.",
    )(command)
    return click.option(
        "--allow", "allow", multiple=True, metavar="RULE",
        help="Let this run break safety rule RULE (see patches/policy.toml); repeatable; "
             "each needs its own --reason, and apply records both in the manifest.",
    )(command)


def load_policy_for(patches_dir: Path) -> "Policy":
    """The safety policy beside a patch set (the bundled one when it has none)."""
    from ..checks import load_policy, policy_path

    return load_policy(policy_path(patches_dir))
