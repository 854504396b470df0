"""Check what ``patcher check PATH`` is given: a vendor zip, a folder, a tar context, or one ``.py`` file."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..archive import open_source
from ..archive.limits import open_regular
from ..archive.tree import SourceTree
from ..depth import data_nesting_problem
from ..errors import PatcherError, ShippingError
from ..manifest_file import MANIFEST
from ..shipping import plan_shipping
from ..shipping.target_stage import image_stage
from .policy import Policy
from .runner import CheckResult, FileRulesAhead, Pending, check_tree, last_half, read_shipped_python, run_rules

MAX_SOURCE = 16 << 20  # one .py file given to check: far past any source, short of a parse that eats the memory


def check_path(
    path: Path,
    policy: Policy,
    *,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
    stage: str | None = None,
) -> CheckResult:
    """Run the rules on PATH; ``targets`` are image paths of the files a patch set changes.

    ``stage`` names the build stage that is the image (``--target``); without
    it, the one a context's manifest records, else the last.

    A single ``.py`` file gets the file rules. A tree gets them on every file
    its Dockerfile ships, and the tree rules; overrides recorded in its
    ``patcher-manifest.json`` (an ``apply --allow``) count as allowed, so
    ``apply``'s output passes.
    """
    if path.suffix == ".py" and not path.is_dir():
        with open_regular(path, str(path), MAX_SOURCE) as stream:  # a fifo or device named x.py is refused too
            data = stream.read()
        return run_rules([(str(path), lambda: data)], policy, allowed=allowed)
    with open_tree(path) as tree:
        return _check(tree, policy, targets, allowed, image_stage(tree, stage))


@contextmanager
def open_tree(path: Path) -> Iterator[SourceTree]:
    """Open a vendor zip or folder, or a build context tar that apply wrote, as a tree."""
    with open_source(path) as tree:  # a tar is read in place, like a zip (archive.tar_source)
        yield tree


def _check(tree: SourceTree, policy: Policy, targets: Sequence[str],
           allowed: Sequence[tuple[str, str]], stage: str | None) -> CheckResult:
    plan = plan_shipping(tree, stage)
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
        text = tree.read(MANIFEST).decode("utf-8")  # the size of any file of the tree is bounded by its limits
        deep = data_nesting_problem(text)  # before json, which recurses per level
        if deep is not None:
            raise PatcherError(f"cannot be read: {deep}", where=MANIFEST,
                               hint="was the manifest edited by hand? re-run {command}", command="apply")
        entries = json.loads(text).get("allowed_rules", [])
        return tuple((str(e["rule"]), str(e["reason"])) for e in entries)
    except (ValueError, AttributeError, KeyError, TypeError):
        raise PatcherError("allowed_rules is unreadable", where=MANIFEST,
                           hint="was the manifest edited by hand? re-run {command}", command="apply") from None
