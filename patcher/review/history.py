"""``apply --record-git``: the run as a git history, one commit per applied patch, for ``git log -p``."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from ..archive.layout import OutputFile, resolve_mtime
from ..archive.tree import SourceTree
from ..manifest_file import MANIFEST
from ..patchset.outcome import Status
from ..pipeline import Build
from ..vcs import Snapshot, check_record_dest, record_history, refuse_git_files
from .series import replay


def snapshots(build: Build, manifest: bytes, input_name: str) -> Iterator[Snapshot]:
    """The vendor tree as unpacked, each applied patch's step, then the mirror sync and the manifest.

    The last snapshot leaves the tree exactly as ``apply`` writes it.
    """
    tree = build.tree
    modes = {item.path: item.executable for item in tree.files()}
    digest = tree.sha256()
    yield Snapshot(
        f"Unpack {input_name}\n\nThe vendor tree as unpacked, before any patch.\n"
        f"sha256: {digest or 'none (read from a folder, not a zip)'}\n",
        tuple(OutputFile(item.path, item.executable, source=_opener(tree, item.path), size=item.size)
              for item in tree.files()),
    )
    for step in replay(build):
        if step.status is Status.APPLIED:
            yield Snapshot(step.patch.header(), (OutputFile(step.path, modes[step.path], data=step.after),))
    synced = [m for m in build.mirrors if m.path in build.changes]
    files = [OutputFile(m.path, modes[m.path], data=build.changes[m.path]) for m in synced]
    patched = {f.path for f in build.files} | {m.path for m in synced}
    added = sorted(p for p in build.changes if p not in patched)  # e.g. .dockerignore
    files += [OutputFile(p, modes.get(p, False), data=build.changes[p]) for p in added]
    files.append(OutputFile(MANIFEST, False, data=manifest))
    body = "".join(f"{m.path}: made identical to {m.shipped}\n" for m in synced)
    body += "".join(f"{p}: keeps {MANIFEST} out of the image\n" for p in added)
    yield Snapshot(f"Sync stale copies with the shipped files; write {MANIFEST}\n\n{body}", tuple(files))


def record_git(build: Build, manifest: bytes, dest: Path, input_name: str, *, force: bool = False) -> list[str]:
    """Write the run as a new git repository at ``dest``; return the commit hashes, oldest first.

    Dates come from SOURCE_DATE_EPOCH, else 1980-01-01, so the history is
    reproducible.
    """
    return record_history(dest, snapshots(build, manifest, input_name), date=resolve_mtime(None), force=force)


def check_dest(dest: Path, force: bool) -> None:
    """Fail before any work when ``dest`` cannot take the repository."""
    check_record_dest(dest, force)


def check_tree(tree: SourceTree, dest: Path) -> None:
    """Fail before anything is written when the tree cannot be recorded at ``dest`` (it holds ``.git/``)."""
    refuse_git_files((item.path for item in tree.files()), dest)


def _opener(tree: SourceTree, path: str) -> Callable[[], BinaryIO]:
    return lambda: tree.open(path)
