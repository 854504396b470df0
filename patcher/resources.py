"""Find the patch set and templates: a checkout's own, or those installed with the tool."""

from __future__ import annotations

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


def default_patches_dir(cwd: Path | None = None) -> Path:
    """``./patches`` when the current directory has one, else the bundled set."""
    local = (cwd or Path.cwd()) / "patches"
    if (local / "series").is_file():
        return local
    return _bundled("patches")


def templates_dir_for(patches: Path) -> Path:
    """The templates of a patch set: ``templates/`` inside it, else beside it."""
    inside = patches / "templates"
    return inside if inside.is_dir() else patches.parent / "templates"


def tool_templates_dir() -> Path:
    """The tool's own templates (the manifest, report formats)."""
    return _bundled("templates")
