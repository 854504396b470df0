"""The patch set as it was at a git revision, for ``patcher diff --base``."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..vcs import materialise
from .changes import BaseRef


@contextmanager
def patch_set_at(patches: Path, ref: str) -> Iterator[tuple[Path, BaseRef]]:
    """Write ``patches`` (and the ``templates`` beside it) as at ``ref`` to a temporary folder.

    Yields the folder to load the old patch set from and the revision it
    came from; the working tree is never touched, and the copy is removed
    on exit.
    """
    with tempfile.TemporaryDirectory(prefix="patcher-base-") as scratch:
        written = materialise([patches, patches.parent / "templates"], ref, Path(scratch))
        yield written.folders[patches], BaseRef(ref, written.commit)
