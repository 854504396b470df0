"""What the authoring tests share: a copy of the patch set to edit, and where the shipped file's decode dispatch is."""

from __future__ import annotations

import ast
import os
import zipfile
from pathlib import Path

import pytest

from tests.fixtures_patches import copy_patch_set
from tests.fixtures_vendor import SHIPPED, VENDOR_ZIP

# The name of three-tier-decode's first example.
FIRST_EXAMPLE = "the vendor's forced-V1 dispatch becomes three tiers"


@pytest.fixture(scope="session", autouse=True)
def learned_in_this_session() -> None:
    """Start each session with no learned patch kept from an earlier one in the same process.

    ``fixtures_edits.learned`` and ``learned_mission`` keep what they learn
    for the rest of the process. mutmut runs the whole suite once in its
    own process (to see which tests call which function), then forks that
    process for each mutant: without this, the mutant's session would be
    handed the patches learned by the original code, and no mutant of the
    learner could fail a test that reads them.
    """
    from tests.fixtures_edits import learned, learned_mission

    learned.cache_clear()
    learned_mission.cache_clear()


@pytest.fixture(autouse=True)
def learned_in_this_test() -> None:
    """While mutmut maps tests to the functions they call, let every test learn its patches itself.

    Kept from an earlier test, a learned patch would tie the learner's
    functions to that test alone, and mutmut would not run the others (which
    read other parts of the patch) on the learner's mutants.
    """
    if os.environ.get("MUTANT_UNDER_TEST") == "stats":
        from tests.fixtures_edits import learned, learned_mission

        learned.cache_clear()
        learned_mission.cache_clear()


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
