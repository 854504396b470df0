"""Load the patch series: declarative patch files rendered through Jinja2."""

from .load import load_patch_set
from .model import Example, Param, Patch, PatchSet

__all__ = ["Example", "Param", "Patch", "PatchSet", "load_patch_set"]
