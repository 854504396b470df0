"""What the authoring tests share: a copy of the patch set to edit, and where the shipped file's decode dispatch is."""

from __future__ import annotations

import ast
import zipfile
from pathlib import Path

import pytest

from tests.fixtures_patches import copy_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

# The name of three-tier-decode's first example.
FIRST_EXAMPLE = "the vendor's forced-V1 dispatch becomes three tiers"


@pytest.fixture
def team(tmp_path: Path) -> Path:
    """A copy of the patch set outside the repository, its templates beside it (the usual layout)."""
    return copy_patch_set(tmp_path / "team")


def shipped_source() -> str:
    """The shipped paged_attn.py, as the demo vendor zip holds it."""
    with zipfile.ZipFile(VENDOR_ZIP) as archive:
        name = next(n for n in archive.namelist() if n.endswith("/" + SHIPPED))
        return archive.read(name).decode("utf-8")


def decode_lines(source: str | None = None) -> tuple[int, int, int]:
    """Lines of the threshold assignment and of the use_v1 dispatch in the shipped file, found with ast."""
    tree = ast.parse(shipped_source() if source is None else source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PagedAttention")
    threshold = next(n for n in cls.body if isinstance(n, ast.Assign)
                     and getattr(n.targets[0], "id", "") == "_PYTORCH_DECODE_THRESHOLD")
    decode = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "forward_decode")
    first = next(n for n in decode.body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "use_v1")
    branch = next(n for n in decode.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "use_v1")
    assert branch.end_lineno is not None
    return threshold.lineno, first.lineno, branch.end_lineno
