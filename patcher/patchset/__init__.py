"""Load the patch series: declarative patch files rendered through Jinja2."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import Example, Param, Patch, PatchSet, SeriesOutline

if TYPE_CHECKING:
    from .load import load_outline, load_patch_set

__all__ = ["Example", "Param", "Patch", "PatchSet", "SeriesOutline", "load_outline", "load_patch_set"]


def __getattr__(name: str) -> Any:
    # The loader imports on first use, so that importing the model (as the
    # read-only commands do) costs nothing.
    if name in ("load_outline", "load_patch_set"):
        from . import load

        return getattr(load, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
