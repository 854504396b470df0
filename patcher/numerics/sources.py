"""Find the vendor and patched ``paged_attn.py`` of a vendor tree, without PyTorch."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ..archive.tree import SourceTree
from ..errors import PatcherError, PatchSetError
from ..patchset.model import PatchSet
from ..patchset.outcome import Status

TARGET_NAME = "paged_attn.py"


@dataclass(frozen=True)
class PagedAttnSources:
    """The shipped ``paged_attn.py``: as the vendor ships it and as ``apply`` would write it."""

    path: str  # context path of the shipped copy
    vendor: bytes
    patched: bytes
    patches: tuple[str, ...]  # ids of the patches that changed it


def paged_attn_sources(tree: SourceTree, patch_set: PatchSet, stage: str | None = None) -> PagedAttnSources:
    """Run apply's core in memory and return the shipped ``paged_attn.py`` before and after.

    ``stage`` names the build stage that is the image (``--target``; None: the last).
    """
    from ..pipeline import build

    result = build(tree, patch_set, stage=stage)
    if result.failed:
        failed = [f"{f.path}: {o.patch.id}: {o.detail}" for f in result.files for o in f.outcomes if o.detail]
        parse = [f"{f.path}: {f.parse_error}" for f in result.files if f.parse_error]
        raise PatcherError(f"the patch set does not apply: {'; '.join(parse + failed)}",
                           hint="run {command} for the full report", command="apply")
    paths = sorted({path for target, path in result.targets.items()
                    if posixpath.basename(target) == TARGET_NAME})
    if not paths:
        raise PatchSetError(f"no patch targets a {TARGET_NAME}: there is nothing to compare",
                            where=str(patch_set.directory))
    path = paths[0]
    outcome = next(f for f in result.files if f.path == path)
    applied = tuple(o.patch.id for o in outcome.outcomes if o.status is Status.APPLIED)
    vendor = tree.read(path)
    return PagedAttnSources(path, vendor, result.changes.get(path, vendor), applied)
