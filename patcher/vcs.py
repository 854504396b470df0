"""Every git call the tool makes, in one place (GitPython, imported only when needed)."""

from __future__ import annotations

import errno
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Iterable, Sequence

from .archive.layout import OutputFile
from .errors import OutputError, PatcherError

if TYPE_CHECKING:
    import git


class GitError(PatcherError):
    """A git repository, ref or path the user named cannot be used."""


NOT_IN_GIT = "not in a git repository"
NO_GIT, NO_GIT_HINT = "git is not installed", "install git, or put it on PATH"


def gitpython() -> ModuleType:
    """GitPython, once it has found git to run; else a GitError that says to install git.

    GitPython refuses to be imported when no git is on PATH (an ImportError
    many lines long), and with ``GIT_PYTHON_REFRESH=quiet`` it imports and
    fails at its first git command instead: both are one error line here.
    """
    try:
        import git
    except ImportError as error:
        if "git executable" not in str(error):
            raise  # GitPython itself is missing: a broken install, not the user's input
        raise GitError(NO_GIT, hint=NO_GIT_HINT) from None
    if shutil.which(str(git.Git.GIT_PYTHON_GIT_EXECUTABLE or "git")) is None:
        raise GitError(NO_GIT, hint=NO_GIT_HINT)
    return git


@dataclass(frozen=True)
class CommitRead:
    """The commit that holds a folder, or why there is none to record."""

    commit: str | None  # "<sha>" or "<sha>-dirty"
    reason: str | None  # why ``commit`` is None: NOT_IN_GIT (expected), or what went wrong and what to do


def describe_commit(folder: Path) -> str | None:
    """The commit that holds ``folder`` ("<sha>" or "<sha>-dirty"), or None when it cannot be read."""
    return read_commit(folder).commit


def read_commit(folder: Path) -> CommitRead:
    """Read the commit that holds ``folder``; when there is none, say why (``NOT_IN_GIT`` outside git).

    Staged, unstaged and untracked changes under the folder make it
    "<sha>-dirty". git refusing the repository (dubious ownership), no git,
    no file descriptors left to run it, a broken HEAD or object: each is a
    reason of its own, with what to do about it.
    """
    # Plain git rather than GitPython: every apply asks this, and importing
    # GitPython costs more than the two git calls.
    program = shutil.which("git")
    if program is None:
        return CommitRead(None, f"{NO_GIT} ({NO_GIT_HINT})")
    head = _git(program, folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if isinstance(head, str):
        return CommitRead(None, head)
    if head.returncode == 1:  # --quiet: HEAD resolves to no commit, and git says nothing more
        return CommitRead(None, "HEAD names no commit: the repository has no commit yet, or its HEAD is broken "
                                "(commit the patch set)")
    if head.returncode != 0:
        return CommitRead(None, _refused(head.stderr, folder))
    # Staged, unstaged and untracked changes under the folder all count.
    status = _git(program, folder, "status", "--porcelain", "--untracked-files=all", "--", ".")
    if isinstance(status, str):
        return CommitRead(None, status)
    if status.returncode != 0:
        return CommitRead(None, _refused(status.stderr, folder))
    sha = head.stdout.strip()
    return CommitRead(f"{sha}-dirty" if status.stdout.strip() else sha, None)


def _git(program: str, folder: Path, *args: str) -> subprocess.CompletedProcess[str] | str:
    """Run git in ``folder``; return what it did, or why it could not run."""
    try:
        return subprocess.run([program, "-C", str(folder), *args], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, check=False, errors="replace")
    except OSError as error:  # EMFILE, ENOMEM, a git that cannot be executed
        hint = " (raise the open-file limit: ulimit -n)" if error.errno == errno.EMFILE else ""
        return f"cannot run git: {error.strerror or error}{hint}"


def _refused(stderr: str, folder: Path) -> str:
    """Say why git failed, from its last 'fatal:' line, and what to do; NOT_IN_GIT outside any repository."""
    fatal = [line[len("fatal:"):].strip() for line in stderr.splitlines() if line.startswith("fatal:")]
    said = fatal[-1] if fatal else (stderr.strip().splitlines() or ["git failed"])[-1].strip()
    if said.startswith("not a git repository"):
        dot_git = next((parent / ".git" for parent in (folder.resolve(), *folder.resolve().parents)
                        if os.path.lexists(parent / ".git")), None)
        if dot_git is None:
            return NOT_IN_GIT
        return f"git does not take {dot_git} for a repository (check its HEAD and config: git fsck)"
    if "dubious ownership" in said:
        found = re.search(r"repository at '(.*)'", said)
        place = found.group(1) if found else str(folder)
        return f"git refuses the repository: {said} (if you trust it: git config --global --add safe.directory {place})"
    return f"git fails in the repository: {said} (check it with git fsck)"


def _repository(folder: Path, purpose: str) -> git.Repo:
    """The git repository holding ``folder``, or a GitError that says what to do."""
    git = gitpython()
    try:
        return git.Repo(folder, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError("not in a git repository", where=str(folder),
                       hint=f"{purpose} reads the patch set's history: use a git checkout of it") from None


@dataclass(frozen=True)
class Materialised:
    """Folders as they were at a commit, written out under a scratch folder."""

    commit: str  # the full hash ``ref`` resolved to
    folders: dict[Path, Path]  # folder in the working tree -> its copy as at the commit


def materialise(folders: Sequence[Path], ref: str, dest: Path) -> Materialised:
    """Write each folder as it was at ``ref`` under ``dest``, keeping paths relative to the repository.

    The working tree, the index and HEAD are left alone: blobs are read
    from the object database. The first folder must exist at ``ref``; the
    others are skipped where they did not.
    """
    repo = _repository(folders[0], "--base")  # which refuses a machine without git
    import git

    try:
        commit = repo.commit(ref)
    except (git.BadName, git.BadObject, ValueError, git.GitCommandError):
        raise GitError(f"unknown revision '{ref}'", where=str(repo.working_tree_dir),
                       hint="name a commit, branch or tag of this repository ('git log --oneline' lists them)") from None
    root = Path(str(repo.working_tree_dir)).resolve()
    written: dict[Path, Path] = {}
    for number, folder in enumerate(folders):
        try:
            relative = folder.resolve().relative_to(root).as_posix()
        except ValueError:
            if number == 0:
                raise GitError(f"not inside the repository at {root}", where=str(folder)) from None
            continue
        try:
            tree = commit.tree / relative if relative != "." else commit.tree
        except KeyError:
            if number == 0:
                raise GitError(f"'{relative}' does not exist at {ref} ({commit.hexsha[:12]})",
                               where=str(root), hint="pick a commit that has the patch set") from None
            continue
        if tree.type != "tree":
            continue
        for item in tree.traverse():
            if not isinstance(item, git.Blob):
                continue  # folders are implied; submodules are not part of a patch set
            target = dest / item.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(item.data_stream.read())
        written[folder] = dest / relative
    return Materialised(commit.hexsha, written)


@dataclass(frozen=True)
class Snapshot:
    """One commit to record: its message and the files it writes (the whole tree for the first)."""

    message: str
    files: tuple[OutputFile, ...]


AUTHOR = ("patcher", "patcher@localhost")


def record_history(dest: Path, snapshots: Iterable[Snapshot], *, date: int, force: bool = False) -> list[str]:
    """Write ``snapshots`` as the commits of a new repository at ``dest``; return their hashes.

    Author, committer, date, branch and modes are fixed, so the same
    snapshots give the same commit hashes. The repository is built beside
    ``dest`` and moved into place at the end; ``dest`` may be missing or
    an empty folder, or anything when ``force`` is set.
    """
    from .archive.writer import remove_leftovers, temporary_name
    from .interrupt import temporary

    dest = Path(os.path.abspath(dest))
    check_record_dest(dest, force)  # which refuses a machine without git
    import git

    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(dest.parent)  # of a record killed outright, as the archive writer does
    temp = temporary_name(dest, "tmp")
    with temporary(temp):  # an interrupt that cannot wait for the clean-up below removes it too
        return _record(temp, dest, snapshots, git.Actor(*AUTHOR), f"{date} +0000")


def refuse_git_files(paths: Iterable[str], dest: Path) -> None:
    """Refuse a tree to record at ``dest`` that holds a top-level ``.git/``: it would be written over the
    repository's own files (its config and hooks, which git runs)."""
    for path in paths:
        if path.split("/", 1)[0] == ".git":
            raise GitError(f"the tree holds '{path}', which would overwrite the repository's own files",
                           where=str(dest))


def _record(temp: Path, dest: Path, snapshots: Iterable[Snapshot], actor: git.Actor, stamp: str) -> list[str]:
    """Build the repository at ``temp``, then move it to ``dest``; return the commits' hashes."""
    import git

    hashes: list[str] = []
    try:
        for number, snapshot in enumerate(snapshots):
            if number == 0:
                os.mkdir(temp)
                repo = git.Repo.init(temp)
                # The branch name must not depend on the user's init.defaultBranch.
                repo.git.symbolic_ref("HEAD", "refs/heads/main")
            refuse_git_files((item.path for item in snapshot.files), dest)
            for item in snapshot.files:
                # A scratch checkout: no fsync per file; the repository is moved into place at the end.
                path = temp / item.path
                path.parent.mkdir(parents=True, exist_ok=True)
                with item.reader() as reader, open(path, "wb") as out:
                    shutil.copyfileobj(reader, out, 1 << 20)
                    reader.finish()
                os.chmod(path, 0o755 if item.executable else 0o644)
            repo.index.add(_blobs(repo, snapshot.files))
            commit = repo.index.commit(_cleanup(snapshot.message), author=actor, committer=actor,
                                       author_date=stamp, commit_date=stamp, skip_hooks=True)
            hashes.append(commit.hexsha)
        if not hashes:
            raise GitError("nothing to record")
        _replace(temp, dest)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return hashes


def _blobs(repo: git.Repo, files: Sequence[OutputFile]) -> list[git.IndexEntry]:
    """Store the files as blobs, byte for byte, with one git process; return their index entries."""
    import git

    with tempfile.TemporaryFile() as listing:
        listing.write("".join(item.path + "\n" for item in files).encode("utf-8", "surrogateescape"))
        listing.seek(0)
        # --no-filters: the vendor's bytes as they are, whatever .gitattributes or autocrlf say.
        hashes = repo.git.hash_object("-w", "--no-filters", "--stdin-paths", istream=listing).split()
    if len(hashes) != len(files):
        raise GitError(f"git stored {len(hashes)} of {len(files)} files", where=str(repo.working_tree_dir))
    return [git.IndexEntry.from_base(git.BaseIndexEntry((0o100755 if item.executable else 0o100644,
                                                         bytes.fromhex(digest), 0, item.path)))
            for item, digest in zip(files, hashes)]


def _cleanup(message: str) -> str:
    """Tidy a message as ``git commit`` does: no trailing spaces, no runs of blank lines."""
    lines = [line.rstrip() for line in message.strip().splitlines()]
    kept = [line for number, line in enumerate(lines) if line or (number and lines[number - 1])]
    return "\n".join(kept) + "\n"


def check_record_dest(dest: Path, force: bool) -> None:
    """Refuse an existing file or non-empty folder at ``dest`` unless ``force``, and a machine without git."""
    gitpython()
    if force or not os.path.lexists(dest):
        return
    if dest.is_dir() and not dest.is_symlink() and not any(dest.iterdir()):
        return
    raise OutputError("already exists and is not an empty folder", where=str(dest),
                      hint="pick another folder, or pass --force to replace it")


def _replace(temp: Path, dest: Path) -> None:
    if os.path.lexists(dest):
        if dest.is_dir() and not dest.is_symlink():
            shutil.rmtree(dest)
        else:
            dest.unlink()
    os.rename(temp, dest)
