"""Shared fixtures: the demo vendor zip, its tree, the patch set, and a CLI runner."""

from __future__ import annotations

import functools
import inspect
import os
import re
import textwrap
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.fixtures_vendor import FIXTURES, PATCHES, ROOT, SHIPPED, VENDOR_TREE, VENDOR_ZIP, build_zip  # noqa: F401


def _keep_stderr_apart() -> None:
    """Make click < 8.2's CliRunner capture stderr apart, as click 8.2 and later always do.

    Before 8.2 a runner mixes stderr into stdout unless built with
    ``mix_stderr=False`` (a parameter 8.2 removed), and ``Result.stderr``
    raises. Every test reads the two streams apart, so the default is
    changed once here for every runner, the ones tests build themselves too.
    """
    init = CliRunner.__init__
    if "mix_stderr" not in inspect.signature(init).parameters:
        return

    @functools.wraps(init)
    def separate(self: CliRunner, *args: Any, mix_stderr: bool = False, **kwargs: Any) -> None:
        init(self, *args, mix_stderr=mix_stderr, **kwargs)  # type: ignore[call-arg]

    CliRunner.__init__ = separate  # type: ignore[method-assign]


_keep_stderr_apart()


@pytest.fixture(scope="session")
def session_pid() -> int:
    """Return the id of the process running this session.

    Under mutmut (``MUTANT_UNDER_TEST`` names a mutant) the session first
    takes a process group of its own: a mutant of the rules' forked child
    that signals its group (``os.kill(0, ...)``) then ends this one run, not
    mutmut and every run after it.
    """
    if "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", ""):
        os.setpgrp()
    return os.getpid()


@pytest.fixture(autouse=True)
def no_stray_fork(session_pid: int) -> Any:
    """End a forked process that came back into a test instead of exiting: it must not run the suite twice.

    The rules' forked child (``runner.FileRulesAhead``) always ends with
    ``os._exit``; a bug (or a mutant) that lets it return would otherwise run
    every remaining test again, forking again at each check.
    """
    yield
    if os.getpid() != session_pid:
        os._exit(70)


@pytest.fixture(autouse=True)
def memos_of_the_mutant_under_test() -> None:
    """Under mutmut, start each test with patcher's memo caches (``functools.lru_cache``) empty.

    mutmut runs every mutant in a fork of the process that ran the tests
    cleanly, so a memo still holds the clean code's answers and a test asking
    again is answered from it: the mutant is never run and "survives".
    """
    if "__mutmut_" not in os.environ.get("MUTANT_UNDER_TEST", ""):
        return
    for name, module in list(sys.modules.items()):
        if name == "patcher" or name.startswith("patcher."):
            for value in list(vars(module).values()):
                clear = getattr(value, "cache_clear", None)
                if callable(clear):
                    clear()


@pytest.fixture(autouse=True)
def fresh_statement_searches() -> None:
    """Start each test with pattern.find_statements' memo empty.

    The memo answers again for the same pattern and node objects, and a
    test module may build both once, at import: without this, a later test
    would be answered from an earlier one instead of searching (and a bug
    in the search could hide behind the memo).
    """
    pattern = sys.modules.get("patcher.transforms.pattern")  # not imported: nothing to clear
    if pattern is not None:
        pattern._FOUND.clear()


@pytest.fixture(scope="session", autouse=True)
def hermetic_session_folders(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Point the cache and per-user settings at fresh folders for fixtures wider than one test.

    ``hermetic_cache`` below does it per test; a module- or package-scoped
    fixture that runs patcher starts before it, and must not write to
    ~/.cache or ~/.config either.
    """
    with pytest.MonkeyPatch.context() as patch:
        folder = tmp_path_factory.mktemp("session-cache")
        patch.setenv("XDG_CACHE_HOME", str(folder))
        patch.setenv("PATCHER_CACHE_DIR", str(folder / "patcher"))
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("session-config")))
        yield


@pytest.fixture(autouse=True)
def hermetic_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point patcher's result cache (and XDG_CACHE_HOME, XDG_CONFIG_HOME) at fresh folders: no test writes to ~/.cache or ~/.config.

    Subprocesses inherit it through the environment. Tests of the cache's
    own location unset PATCHER_CACHE_DIR themselves.
    """
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(folder))
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(folder / "patcher"))
    # Per-user settings (the cache's secret among them) go to a fresh folder too, never ~/.config.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    return folder / "patcher"


@pytest.fixture
def vendor_zip() -> Path:
    """The committed demo vendor zip (never modified by a test)."""
    return VENDOR_ZIP


@pytest.fixture
def vendor_copy(tmp_path: Path) -> Path:
    """A writable copy of the vendor tree, to build variant zips from."""
    target = tmp_path / "vendor" / VENDOR_TREE.name
    shutil.copytree(VENDOR_TREE, target)
    return target


@pytest.fixture
def modern(vendor_copy: Path) -> Path:
    """The demo tree with a richer Dockerfile and a later-style install script."""
    from tests.fixtures_cli import modernise

    return modernise(vendor_copy)


@pytest.fixture
def demo_applied(cli, vendor_zip):  # type: ignore[no-untyped-def]
    """apply's run on the demo zip into ctx.tar.gz: the CLI result and the output's path."""
    from tests.fixtures_cli import apply_demo

    return apply_demo(cli, vendor_zip)


@pytest.fixture
def make_zip(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Build a vendor zip from a (modified) tree copy."""

    def make(tree: Path, name: str = "variant.zip") -> Path:
        output = tmp_path / name
        build_zip(tree, output)
        return output

    return make


@pytest.fixture
def load_patch(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Load one patch from TOML text, as the only patch of a series in a scratch folder."""
    from patcher.patchset import load_patch_set

    def load(text: str) -> Any:
        found = re.search(r'^id = "([^"]+)"', text, re.MULTILINE)
        assert found, "the patch needs an id"
        folder = tmp_path / "one-patch" / "patches"
        (folder.parent / "templates").mkdir(parents=True, exist_ok=True)
        folder.mkdir(exist_ok=True)
        (folder / f"{found.group(1)}.toml").write_text(text)
        (folder / "series").write_text(f"{found.group(1)}.toml\n")
        (patch,) = load_patch_set(folder).patches
        return patch

    return load


@pytest.fixture
def run_steps(load_patch):  # type: ignore[no-untyped-def]
    """Run one patch made of STEPS (TOML) on SOURCE as ``x.py``, as apply does: return (patched text, outcome)."""
    from patcher.patchset.runner import patch_source

    def run(steps: str, source: str, scope: str = "") -> tuple[str, Any]:
        text = textwrap.dedent('''
            id = "steps"
            description = "A patch made of the steps under test"
            origin = "test"
            last-update = "2026-12-01"
            target = "x.py"
            scope = "{scope}"

            {steps}
        ''').format(scope=scope, steps=textwrap.dedent(steps))
        result = patch_source("x.py", source.encode(), [load_patch(text)])
        (outcome,) = result.outcomes
        return result.patched.decode(), outcome

    return run


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Run ``patcher ARGS`` in-process from a scratch folder; stdout and stderr apart."""
    from patcher.cli import main

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)

    def run(*args: str, **kwargs: object) -> Result:
        return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False, **kwargs)  # type: ignore[arg-type]

    run.cwd = work  # type: ignore[attr-defined]
    return run
