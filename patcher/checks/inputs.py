"""Check what ``patcher check PATH`` is given: a vendor zip, a folder, a tar context, or one ``.py`` file."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..archive import open_source
from ..archive.tree import SourceTree
from ..errors import BadArchive, PatcherError, ShippingError
from ..manifest_file import MANIFEST
from ..shipping import plan_shipping
from .policy import Policy
from .runner import CheckResult, FileRulesAhead, Pending, check_tree, last_half, read_shipped_python, run_rules

TAR_SUFFIXES = (".tar", ".tar.gz", ".tgz")


def check_path(
    path: Path,
    policy: Policy,
    *,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
) -> CheckResult:
    """Run the rules on PATH; ``targets`` are image paths of the files a patch set changes.

    A single ``.py`` file gets the file rules. A tree gets them on every file
    its Dockerfile ships, and the tree rules; overrides recorded in its
    ``patcher-manifest.json`` (an ``apply --allow``) count as allowed, so
    ``apply``'s output passes.
    """
    if path.is_file() and path.suffix == ".py":
        return run_rules([(str(path), path.read_bytes)], policy, allowed=allowed)
    with open_tree(path) as tree:
        return _check(tree, policy, targets, allowed)


@contextmanager
def open_tree(path: Path) -> Iterator[SourceTree]:
    """Open a vendor zip or folder, or a build context tar that apply wrote, as a tree."""
    if path.is_file() and path.name.endswith(TAR_SUFFIXES):
        import tempfile  # tarfile and tempfile load only for a tar: a zip or a folder needs neither

        with tempfile.TemporaryDirectory(prefix="patcher-") as folder:
            _unpack_tar(path, Path(folder))
            with open_source(Path(folder)) as tree:
                yield tree
        return
    with open_source(path) as tree:
        yield tree


def _check(tree: SourceTree, policy: Policy, targets: Sequence[str],
           allowed: Sequence[tuple[str, str]]) -> CheckResult:
    plan = plan_shipping(tree)
    shipped = []
    for target in targets:
        try:
            shipped.append(plan.shipped_copy(target))
        except ShippingError:
            continue  # a tree that does not ship this target has no install of it to check
    recorded = tuple((r, f"{reason} (recorded in {MANIFEST})") for r, reason in manifest_overrides(tree))
    # Parsing is most of the rules' cost: a forked child judges the second
    # half of the files while this process judges the first.
    later = last_half(read_shipped_python(tree, plan))
    with FileRulesAhead(later, policy) as ahead:
        return check_tree(tree, plan, policy, targets=shipped, allowed=(*recorded, *allowed),
                          ahead=Pending(ahead, later))


def manifest_overrides(tree: SourceTree) -> tuple[tuple[str, str], ...]:
    """The ``--allow`` overrides an earlier ``apply`` recorded in the tree's manifest."""
    if not tree.exists(MANIFEST):
        return ()
    try:
        entries = json.loads(tree.read(MANIFEST)).get("allowed_rules", [])
        return tuple((str(e["rule"]), str(e["reason"])) for e in entries)
    except (ValueError, AttributeError, KeyError, TypeError):
        raise PatcherError("allowed_rules is unreadable", where=MANIFEST,
                           hint="was the manifest edited by hand? re-run 'patcher apply'") from None


def _unpack_tar(path: Path, folder: Path) -> None:
    # A build context that apply wrote: plain files and folders. The "data"
    # filter refuses links out of the folder, devices and absolute names.
    import tarfile

    if not hasattr(tarfile, "data_filter"):
        raise PatcherError(f"checking a tar needs Python 3.10.12 or later (this is {sys.version.split()[0]})",
                           where=str(path), hint="unpack it and check the folder")
    try:
        with tarfile.open(path) as archive:
            archive.extractall(folder, filter="data")
    except (tarfile.TarError, OSError, EOFError) as error:
        raise BadArchive(f"not a readable tar: {error}", where=str(path)) from None
