"""Every git call the tool makes, in one place (GitPython, imported only when needed)."""

from __future__ import annotations

from pathlib import Path

from .errors import PatcherError


class GitError(PatcherError):
    """A git repository, ref or path the user named cannot be used."""


def describe_commit(folder: Path) -> str | None:
    """The commit that holds ``folder`` ("<sha>" or "<sha>-dirty"), or None outside git."""
    try:
        import git
    except ImportError:  # pragma: no cover - GitPython is a dependency
        return None
    try:
        repo = git.Repo(folder, search_parent_directories=True)
        sha = repo.head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError, git.GitCommandError):
        return None
    except git.GitCommandNotFound:
        return None
    relative = str(folder.resolve().relative_to(Path(repo.working_tree_dir).resolve())) if repo.working_tree_dir else "."
    dirty = repo.is_dirty(untracked_files=True, path=relative)
    return f"{sha}-dirty" if dirty else sha
