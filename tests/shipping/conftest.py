"""Builders for the shipping tests: a build context held in memory, and what the reader makes of it."""

from __future__ import annotations

from typing import Iterator, Mapping

import pytest

from patcher.checks import examples
from patcher.shipping import ShipPlan, plan_shipping
from patcher.shipping import shell_words
from patcher.shipping.python_effects import python_effects


class MemoryTree(examples.MemoryTree):
    """A build context given as {path: text}: nothing touches the disk; scripts (``.sh``) are executable."""

    label = "context"

    def __init__(self, files: Mapping[str, str | bytes]):
        super().__init__(files, executable=[path for path in files if path.endswith(".sh")])


@pytest.fixture(autouse=True)
def helpers_read_afresh() -> Iterator[None]:
    """Each test reads its Python helpers itself, not from what an earlier test (or run in this process) cached."""
    python_effects.cache_clear()
    yield


@pytest.fixture(autouse=True)
def separators_built_afresh() -> Iterator[None]:
    """Each test builds the IFS separators it splits with, not one an earlier test left in the module's cache
    (which would hide a change to how they are built)."""
    shell_words._separators.clear()
    yield


def plan_of(files: Mapping[str, str | bytes], target: str | None = None) -> ShipPlan:
    """What the reader makes of a build context."""
    return plan_shipping(MemoryTree(files), target)


def image_of(files: Mapping[str, str | bytes], target: str | None = None) -> dict[str, str]:
    """Image path -> the context file the image holds there."""
    return {image: placed.source for image, placed in plan_of(files, target).image.items()}


def notes(plan: ShipPlan) -> list[tuple[str, int, str, str]]:
    """(kind, line, command, reason) of every note, in order."""
    return [(n.kind, n.line, n.text, n.reason) for n in plan.notes]


def placed_and_noted(script: str) -> tuple[list[str], list[tuple[str, int, str]]]:
    """The image paths ``script`` (run as ``script_context`` runs it) placed outside /w/, and its notes
    (kind, line, command)."""
    plan = plan_of(script_context(script))
    return sorted(p for p in plan.image if not p.startswith("/w/")), [(n.kind, n.line, n.text) for n in plan.notes]


def notes_by_file(plan: ShipPlan) -> list[tuple[str, str, int, str]]:
    """(kind, file, line, reason) of every note, in order: a Python helper's notes name the helper or the Dockerfile."""
    return [(n.kind, n.file, n.line, n.reason) for n in plan.notes]


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


def run_script(script: str, run: str = "bash i.sh", files: Mapping[str, str] | None = None) -> ShipPlan:
    """What the reader makes of ``script`` as s/i.sh, run by ``run`` in /w/s of an image that has /dest.

    Beside it the context holds s/x.py, s/sub/y.py and ``files``. The tests of bash's own forms run it with
    ``bash i.sh``; ``dash i.sh`` or ``sh i.sh`` show what the other shells make of the same lines.
    """
    context: dict[str, str | bytes] = {"Dockerfile": f"FROM base\nRUN mkdir /w /dest\nCOPY s /w/s\nRUN cd /w/s && {run}\n",
                                       "s/i.sh": script, "s/x.py": "", "s/sub/y.py": ""}
    context.update(files or {})
    return plan_of(context)


def in_dest(plan: ShipPlan) -> list[str]:
    """The image paths the build filled under /dest, sorted."""
    return sorted(path for path in plan.image if path.startswith("/dest/"))


def run_helper(code: str, script: str = "python3 h.py\n") -> ShipPlan:
    """What the reader makes of the Python helper CODE, saved as s/h.py, when the script (``python3 h.py`` alone
    unless ``script`` says more) runs it; see ``run_script``."""
    return run_script(script, files={"s/h.py": code})
