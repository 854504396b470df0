"""Find the patch set and templates: a checkout's own, or those installed with the tool."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent
_INSTALLED = Path(sys.prefix) / "share" / "patcher"


def _bundled(name: str) -> Path:
    # An editable install or a checkout has the folders beside the package;
    # a wheel installs them under <prefix>/share/patcher (setup.cfg data_files).
    for base in (_CHECKOUT, _INSTALLED):
        if (base / name).is_dir():
            return base / name
    return _CHECKOUT / name


def nearest_patches_dir(start: Path) -> Path | None:
    """Find the patch set above ``start``, as git finds ``.git``: the nearest ``patches/`` holding ``series``.

    ``start`` itself counts, and so does a ``patches/`` folder ``start`` is
    inside (``series`` beside it). None when no folder up to the root has one.
    A ``series`` of any kind counts (a link, a FIFO): the loader then refuses
    it by name, rather than patcher quietly using another set.
    """
    start = Path(os.path.abspath(start))
    for folder in (start, *start.parents):
        if folder.name == "patches" and os.path.lexists(folder / "series"):
            return folder
        if os.path.lexists(folder / "patches" / "series"):
            return folder / "patches"
    return None


def default_patches_dir(cwd: Path | None = None) -> Path:
    """The nearest ``patches/`` at or above the current folder (as ``nearest_patches_dir``), else the bundled set."""
    return nearest_patches_dir(cwd or Path.cwd()) or _bundled("patches")


def templates_dir_for(patches: Path) -> Path:
    """The templates of a patch set: ``templates/`` inside it, else beside it."""
    inside = patches / "templates"
    return inside if inside.is_dir() else patches.parent / "templates"


def tool_templates_dir() -> Path:
    """The tool's own templates (the manifest, report formats)."""
    return _bundled("templates")
