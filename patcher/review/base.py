"""The patch set as it was at a git revision, for ``patcher diff --base``."""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..errors import PatcherError
from ..vcs import materialise
from .changes import BaseRef


@dataclass(frozen=True)
class BaseCheckout:
    """A patch set written out as it was at a revision."""

    folder: Path  # the patch set folder to load
    ref: BaseRef
    scratch: Path  # the temporary folder holding it

    def explain(self, error: PatcherError) -> PatcherError:
        """The same error, said of the revision rather than of a temporary path."""
        text = str(error).replace(str(self.scratch) + "/", "")
        return type(error)(f"the patch set at {self.ref.ref} ({self.ref.commit[:12]}): {text}")


@contextmanager
def patch_set_at(patches: Path, ref: str) -> Iterator[BaseCheckout]:
    """Write ``patches`` (and the ``templates`` beside it) as at ``ref`` to a temporary folder.

    The working tree is never touched, and the copy is removed on exit.
    """
    with tempfile.TemporaryDirectory(prefix="patcher-base-") as scratch:
        written = materialise([patches, patches.parent / "templates"], ref, Path(scratch))
        yield BaseCheckout(written.folders[patches], BaseRef(ref, written.commit), Path(scratch))
