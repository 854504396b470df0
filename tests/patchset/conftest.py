"""What the patch set's tests share: patches as engineers write them, a small file to patch, the cache's fixtures.

``GUARD`` and ``PREGATHER`` are the two patches the loader's tests start
from; ``EDIT`` is a patch with a parameter of each type; ``SOURCE`` is the
file the runner's tests patch. The cache's fixtures point it at tmp_path
and count the files it had to patch itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from patcher.patchset import cache, load_patch_set
from patcher.patchset.model import Patch, PatchSet
from patcher.patchset.runner import FileOutcome, PatchOutcome, Status, patch_source
from patcher.patchset.templates import PATCH_LIMITS, RenderLimits, make_environment, render

from tests.fixtures_patches import TEMPLATES, patch_toml, refusal, write_patch_set
from tests.fixtures_vendor import PATCHES, SHIPPED, VENDOR_TREE

# A patch as an engineer writes one: a DEP-3 header, a typed knob, one step.
GUARD = '''\
# Lift the V1 length guard of the shipped paged attention.
id = "v1-guard"
description = """
Route long decodes past V1

The vendor sends every decode to V1; V1 fails past 8192 tokens on the
BI-V100 (shared memory), so longer contexts go to the PyTorch path.
"""
origin = "other, patcher project"
last-update = "2026-11-29"
target = "vllm/attention/ops/paged_attn.py"
scope = "PagedAttention.forward_decode"

[params.limit]
type = "int"
default = 8192
min = 1
help = "Longest sequence, in tokens, that decodes with V1."

[[steps]]
op = "replace"
pattern = "use_v1 = True"
code = "use_v1 = actual_max <= {{ limit }}"
'''


# A second patch, of another file, with no parameter.
PREGATHER = '''\
id = "pregather"
description = "Gather the prefix once"
origin = "vendor"
last-update = "2026-11-30"
target = "vllm/attention/ops/prefix_prefill.py"
scope = "context_attention_fwd"

[[steps]]
op = "replace"
pattern = "k = gather(k_cache)"
code = "k = k_cache"
'''


def load_one(tmp_path: Path, text: str, **kwargs: Any) -> Patch:
    """Load TEXT as the one patch ``v1-guard`` of a set in tmp_path (KWARGS to ``load_patch_set``)."""
    folder = write_patch_set(tmp_path / "team", {"v1-guard.toml": text})
    (patch,) = load_patch_set(folder, **kwargs).patches
    return patch


# A patch with a parameter of each type; EXTRA goes above the parameters, TAIL after the step.
EDIT = '''id = "edit"
description = "An edit"
origin = "test"
last-update = "2026-11-29"
target = "x.py"
scope = "f"
{extra}
[params.flag]
type = "bool"
default = false
[params.n]
type = "int"
default = {n_default}
min = 1
max = 10
[params.ratio]
type = "float"
default = 1
[params.name]
type = "str"
default = "a"

[[steps]]
op = "replace"
pattern = "x = 1"
code = "x = 2"
{tail}
'''


DEFAULTS = {"flag": False, "n": 2, "ratio": 1, "name": "a"}


def load_edit(tmp_path: Path, extra: str = "", tail: str = "", overrides: tuple[str, ...] = (),
              n_default: str = "2") -> Any:
    """Load EDIT (its EXTRA header lines, its TAIL, N's default) as the one patch of a set, with OVERRIDES."""
    folder = write_patch_set(tmp_path / "set", {"edit.toml": EDIT.format(extra=extra, tail=tail, n_default=n_default)})
    (patch,) = load_patch_set(folder, overrides=list(overrides)).patches
    return patch


def edit_refusal(tmp_path: Path, **kwargs: Any) -> str:
    """Return how loading EDIT (see ``load_edit``) is refused, its path shortened to ``edit.toml``."""
    return refusal(load_edit, tmp_path, **kwargs).replace(str(tmp_path / "set" / "patches" / "edit.toml"), "edit.toml")


# The file the runner's tests patch, and what a patch rewriting another's code is told.
SOURCE = b"def f():\n    x = 1\n    y = 2\n    return x + y\n"
CLASH = "rewrites code that patch {} wrote (line {}); two patches must not rewrite the same code: " \
        "merge them or reorder the series"


def run_one(load_patch: Any, text: str, source: bytes = SOURCE) -> tuple[FileOutcome, PatchOutcome]:
    """Run the one patch TEXT on SOURCE as ``x.py``: return the file's outcome and the patch's."""
    result = patch_source("x.py", source, [load_patch(text)])
    (outcome,) = result.outcomes
    return result, outcome


def run_series(load_patch: Callable[[str], Any], source: bytes, *patches: tuple[str, str]) -> list[tuple[str, Status, str]]:
    """Run PATCHES, each (id, steps) of ``f``, in order on SOURCE: each one's id, status and detail."""
    result = patch_source("x.py", source, [load_patch(patch_toml(pid, steps)) for pid, steps in patches])
    return [(o.patch.id, o.status, o.detail) for o in result.outcomes]


# --------------------------------------------------------------------------- the patched-result cache


@pytest.fixture(scope="module")
def patch_set() -> PatchSet:
    """The shipped patch set."""
    return load_patch_set(PATCHES, templates=TEMPLATES)


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The cache's folder of patched results, in tmp_path, the cache on."""
    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "patched"


def spy_on_patching(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Return the paths the cache has to patch itself (a miss) from now on, in order."""
    calls: list[str] = []

    def counting(path: str, source: bytes, patches: Any) -> Any:
        calls.append(path)
        return patch_source(path, source, patches)

    monkeypatch.setattr(cache, "patch_source", counting)
    return calls


@pytest.fixture
def computed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the cache had to patch itself (a miss), in order."""
    return spy_on_patching(monkeypatch)


def shipped_patches(patch_set: PatchSet) -> Any:
    """The patches of PATCH_SET that patch the shipped file."""
    return patch_set.for_target(patch_set.patches[0].target)


def cache_summary(outcome: Any) -> tuple[Any, ...]:
    """All a cached outcome holds: path, bytes, parse error, and each patch's id, status, detail, diagnostic, prints."""
    return (outcome.path, outcome.original, outcome.patched, outcome.parse_error,
            [(o.patch.id, o.status, o.detail, o.diagnostic, o.prints) for o in outcome.outcomes])


# The shipped file as a large vendor drop has it: helpers around the class, members between the ones the series
# edits (the sparse parse's tests, tests/patchset/test_large_targets.py and test_sparse_patterns.py).
HELPERS = '''

def _describe(block_tables, where=""):
    """Say what a block table holds: 'class Fake:' and 'def forward_decode(' in a docstring."""
    text = ("[paged_attn] %s: %s"
            % (where,
               tuple(block_tables.shape)))  # brackets over lines
    note = \'\'\'
class PagedAttention:
    def forward_decode(self):
        pass
\'\'\'
    return text + note.strip() + "it's" + 'say "hi"' + "a\\\\" + f"{where!r:>{10}}"
    # a comment at the body's depth after the last statement
        # and a deeper one


@staticmethod
# a comment between decorator and definition
def _check(x):
    if x:
        return 1
    else:
        return 2
            # deeper than the else block


if TYPE_CHECKING:
    from typing import Any
elif False:
    pass
else:
    Any = object
# a comment at the module's depth: the next statement's


try:
    import os
except ImportError:  # no os
    os = None
finally:
    _LOADED = True


total = 1 + \\
    2
items = [
    "a",  # inside brackets
    "b",
]; other = 3
class _Small: x = 1
def _one(): return 0
'''

MEMBERS = '''
    @staticmethod
    def _validate(block_tables):  # a member the series never searches
        """Raise on a negative block id."""
        if block_tables.min() < 0:
            raise RuntimeError("bad block table")
            # deeper than the if block
        # at the member's depth, after it

    _LOG_ONCE: set = set()

    class _Cache:
        size = 0
'''


def vendor_file_with_helpers(variant: str) -> str:
    """The vendor file with helpers around the class and members between the ones the series edits."""
    head, sep, tail = (VENDOR_TREE / SHIPPED).read_text(encoding="utf-8").partition("\nclass PagedAttention:\n")
    body, marker, rest = tail.partition("    @staticmethod\n    def forward_decode(")
    assert sep and marker
    text = "from typing import TYPE_CHECKING\n" + head + HELPERS + sep + body + MEMBERS + marker + rest + HELPERS
    if variant == "tabs":  # a tab-indented helper first: the module's first indent is a tab
        text = "def _tabbed():\n\treturn 1\n\n" + text
    if variant == "crlf":
        text = text.replace("\n", "\r\n")
    if variant == "no-final-newline":
        text = text.rstrip("\n") + "\n\ndef _last():\n    return 1"
    return text


def render_template(source: str, values: dict[str, Any] | None = None, limits: RenderLimits = PATCH_LIMITS) -> str:
    """SOURCE rendered as apply renders a patch's template: in the sandbox, within LIMITS."""
    return render(make_environment(limits=limits), source=source, values=values or {})
