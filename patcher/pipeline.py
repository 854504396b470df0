"""The apply pipeline: read the tree, patch what ships, sync mirrors, pack the context.

``build`` does all the work in memory and returns a value; ``write`` packs
that value. Nothing here prints or exits: the CLI layer reports.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator, Mapping

from .archive import OutputFile
from .archive.paths import printable
from .archive.tree import SourceTree
from .errors import PatcherError
from .interrupt import test_hook
from .manifest_file import MANIFEST, Record, RecordError, read_record
from .patchset.model import PatchSet
from .patchset.cache import cached_patch_source
from .shipping import MirrorGroup, ShipPlan, find_mirrors, line_endings_only, plan_shipping
from .shipping.dockerignore import DOCKERIGNORE

if TYPE_CHECKING:
    from .archive.prefetch import Prefetch
    from .checks import CheckResult, Policy
    from .checks.runner import Ahead, FileRulesAhead
    from .patchset.outcome import FileOutcome

# Test hook, unset outside the test suite: announce that patching (the
# parse, which native code runs for seconds on a large target) starts, then
# wait for a signal (patcher.interrupt.test_hook).
TEST_PATCH_STARTED = "PATCHER_TEST_PATCH_STARTED"

@dataclass(frozen=True)
class MirrorSync:
    """One mirror copy and whether it differed from the shipped copy before the run."""

    path: str
    shipped: str
    differed: bool
    line_endings_only: bool = False


@dataclass(frozen=True)
class Build:
    """Everything a run decided, before anything is written."""

    tree: SourceTree
    patch_set: PatchSet
    plan: ShipPlan
    targets: Mapping[str, str]  # patch target -> shipped context path
    files: tuple[FileOutcome, ...]
    mirrors: tuple[MirrorSync, ...]
    changes: Mapping[str, bytes]  # context path -> new content, for every file the run changes
    allowed: tuple[tuple[str, str], ...] = field(default=())  # (rule id, reason) overrides, see checks
    manifest_ignored: bool = False  # .dockerignore gained the manifest: the Dockerfile copies the context root
    # The record of the run that wrote the input (its manifest), when the input is a context apply
    # wrote and still holds what that run wrote; the new manifest carries it forward.
    record: Record | None = None
    record_note: str | None = None  # why an input's manifest is not carried forward
    stage: str | None = None  # the build stage that is the image ('--target'); None: the last

    @property
    def failed(self) -> bool:
        """Whether any target could not be parsed or any patch failed."""
        return any(f.failed for f in self.files)


def build(tree: SourceTree, patch_set: PatchSet, plan: ShipPlan | None = None, stage: str | None = None) -> Build:
    """Patch the shipped copy of every target and make its mirrors identical to it.

    ``stage`` names the build stage that is the image (``docker build --target``; default the last);
    ``plan`` is the tree's ship plan for that stage, if known.
    """
    plan = plan or plan_shipping(tree, stage)
    targets = {target: plan.shipped_copy(target) for target in patch_set.targets}
    test_hook(TEST_PATCH_STARTED, "patch")
    outcomes: list[FileOutcome] = []
    changes: dict[str, bytes] = {}
    mirrors: list[MirrorSync] = []
    for target, path in targets.items():
        outcome = cached_patch_source(path, tree.read(path), patch_set.for_target(target))
        outcomes.append(outcome)
        if outcome.changed:
            changes[path] = outcome.patched
        group = find_mirrors(tree, path)
        mirrors.extend(_sync(tree, group, outcome.original, outcome.patched, changes))
    ignored = _keep_manifest_out_of_image(tree, plan, changes)
    record, note = input_record(tree)
    return Build(tree, patch_set, plan, targets, tuple(outcomes), tuple(mirrors), changes,
                 manifest_ignored=ignored, record=record, record_note=note, stage=stage)


def input_record(tree: SourceTree) -> tuple[Record | None, str | None]:
    """Return the record of the run that wrote TREE, if it still holds what that run wrote, else why not.

    A context apply wrote carries a manifest saying how it was made from
    the vendor drop; run again on it, apply finds every patch already
    applied and recomputes nothing, so the record is what keeps the steps,
    fingerprints and changed files. It is carried only while every file it
    says the run changed still has the bytes the run wrote: after a hand
    edit it no longer describes the tree.
    """
    try:
        record = read_record(tree)
    except RecordError as exc:
        return None, f"{MANIFEST} is not one apply wrote ({exc}); the new one records this run alone"
    if record is None:
        return None, None
    for path, digest in record.changed.items():
        if not tree.exists(path) or sha256_hex(tree.read(path)) != digest:
            how = "changed since" if tree.exists(path) else "is gone since"
            return None, (f"{printable(path)} {how} {MANIFEST} was written; "
                          "the new manifest records this run alone")
    return record, None


def _keep_manifest_out_of_image(tree: SourceTree, plan: ShipPlan, changes: dict[str, bytes]) -> bool:
    """If a COPY would take the manifest into the image, list it in .dockerignore."""
    if not plan.would_ship(MANIFEST):
        return False
    old = tree.read(DOCKERIGNORE) if tree.exists(DOCKERIGNORE) else b""
    newline = b"\r\n" if b"\r\n" in old else b"\n"
    separator = newline if old and not old.endswith(b"\n") else b""
    changes[DOCKERIGNORE] = old + separator + MANIFEST.encode() + newline
    return True


def rules_ahead(tree: SourceTree, plan: ShipPlan, policy: "Policy") -> "FileRulesAhead":
    """Start the file rules on the shipped Python files as the input has them, beside this process.

    ``check`` and ``check_input`` take its ``results()``: a file the run
    does not change is then not judged again. A file that cannot be read
    here is left to them, which report it as they always do.
    """
    from .checks.runner import FileRulesAhead, read_shipped_python

    return FileRulesAhead(read_shipped_python(tree, plan), policy)


def check(build: Build, policy: "Policy", ahead: "Mapping[str, Ahead] | None" = None) -> "CheckResult":
    """Run the safety rules on the shipped files as ``write`` would pack them: patched bytes first."""
    from .checks import check_tree

    return check_tree(build.tree, build.plan, policy, changes=build.changes,
                      targets=tuple(build.targets.values()), allowed=build.allowed, ahead=ahead)


def check_input(build: Build, policy: "Policy", ahead: "Mapping[str, Ahead] | None" = None) -> "CheckResult":
    """Run the safety rules on the shipped files as the input has them (no patch applied).

    When a patch fails nothing is written, but what the input itself breaks
    belongs in the same report: the next drop is fixed knowing both.
    """
    from .checks import check_tree

    return check_tree(build.tree, build.plan, policy, targets=tuple(build.targets.values()), allowed=build.allowed,
                      ahead=ahead)


def _sync(tree: SourceTree, group: MirrorGroup, original: bytes, content: bytes,
          changes: dict[str, bytes]) -> Iterator[MirrorSync]:
    """Make each mirror ``content``; say whether it differed from the shipped copy's ``original``."""
    for mirror in group.mirrors:
        before = tree.read(mirror)
        if before != content:
            changes[mirror] = content
        yield MirrorSync(
            path=mirror,
            shipped=group.shipped,
            differed=before != original,
            line_endings_only=line_endings_only(before, original),
        )


def output_files(build: Build, manifest: bytes, prefetch: "Prefetch | None" = None) -> Iterator[OutputFile]:
    """Every file of the context: changed ones from memory, the rest streamed from the input.

    What ``prefetch`` already read is copied from memory instead.
    """
    tree = build.tree
    existing = set()
    for item in tree.files():
        existing.add(item.path)
        if item.path == MANIFEST:
            continue  # a manifest from an earlier run is replaced by this run's
        if item.path in build.changes:
            yield OutputFile(item.path, item.executable, data=build.changes[item.path])
        else:
            yield OutputFile(item.path, item.executable, source=_opener(tree, item.path, prefetch), size=item.size)
    for path in sorted(set(build.changes) - existing):
        yield OutputFile(path, False, data=build.changes[path])  # files the run adds (.dockerignore)
    yield OutputFile(MANIFEST, False, data=manifest)


def _opener(tree: SourceTree, path: str, prefetch: "Prefetch | None") -> Callable[[], BinaryIO]:
    if prefetch is None:
        return lambda: tree.open(path)
    return lambda: prefetch.open(path) or tree.open(path)


def prefetch_unchanged(tree: SourceTree) -> "Prefetch":
    """Start reading the tree's files in the writer's order while the run patches (see archive.prefetch).

    Start it after ``rules_ahead``: that forks, and a process with a second
    thread does not fork (the child could inherit a lock the thread holds).
    """
    from .archive.prefetch import Prefetch

    return Prefetch(tree, [item for item in tree.files() if item.path != MANIFEST])


def write(build: Build, output: Path, manifest: bytes, *, force: bool = False,
          progress: Callable[[int, int], None] | None = None, prefetch: "Prefetch | None" = None) -> str:
    """Pack the context in the format OUTPUT's suffix asks for; return its sha256.

    ``progress`` is told the content bytes written so far and the total;
    ``prefetch`` holds files already read (``prefetch_unchanged``).
    """
    from .archive import OutputFormat, write_output  # the writers load only when something is written

    if build.failed:
        raise PatcherError("refusing to write: a patch did not apply")
    fmt = OutputFormat.for_path(output)
    prefix = getattr(build.tree, "prefix", "")
    return write_output(output, output_files(build, manifest, prefetch), fmt=fmt, zip_prefix=prefix, force=force,
                        progress=progress)


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()
