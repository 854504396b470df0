"""Builders for the shipping tests: a build context held in memory, and what the reader makes of it."""

from __future__ import annotations

import io
from typing import BinaryIO, Mapping

from patcher.archive.tree import SourceFile
from patcher.shipping import ShipPlan, plan_shipping


class MemoryTree:
    """A build context given as {path: text}: nothing touches the disk."""

    label = "context"

    def __init__(self, files: Mapping[str, str | bytes]):
        self._files = {path: data.encode() if isinstance(data, str) else data for path, data in files.items()}

    def files(self) -> list[SourceFile]:
        return [SourceFile(path, len(data), path.endswith(".sh")) for path, data in sorted(self._files.items())]

    def read(self, path: str) -> bytes:
        return self._files[path]

    def open(self, path: str) -> BinaryIO:
        return io.BytesIO(self._files[path])

    def exists(self, path: str) -> bool:
        return path in self._files

    def sha256(self) -> str | None:
        return None


def plan_of(files: Mapping[str, str | bytes], target: str | None = None) -> ShipPlan:
    """What the reader makes of a build context."""
    return plan_shipping(MemoryTree(files), target)


def image_of(files: Mapping[str, str | bytes], target: str | None = None) -> dict[str, str]:
    """Image path -> the context file the image holds there."""
    return {image: placed.source for image, placed in plan_of(files, target).image.items()}


def notes_of(plan: ShipPlan, kind: str) -> list[tuple[str, int, str]]:
    """(file, line, command) of each note of one kind."""
    return [(n.file, n.line, n.text) for n in plan.notes if n.kind == kind]


def script_context(script: str, *, run: str = "cd /w/s && ./i.sh", files: Mapping[str, str] | None = None,
                   ) -> dict[str, str | bytes]:
    """A context whose Dockerfile copies s/ to /w/s (in a /w it makes) and runs ``script`` as s/i.sh."""
    context: dict[str, str | bytes] = {
        "Dockerfile": f"FROM base\nRUN mkdir /w\nCOPY s /w/s\nRUN {run}\n",
        "s/i.sh": script,
        "s/x.py": "x = 1\n",
        "s/sub/y.py": "y = 1\n",
        "s/sub/deep/z.py": "z = 1\n",
    }
    context.update(files or {})
    return context
