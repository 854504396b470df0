"""Run the hand-written ("foreign") mutants of benchmarks/foreign_mutants/ against the test suite.

Each mutant is one unified diff, ``benchmarks/foreign_mutants/<package>/<NN>-<name>.diff``,
headed by ``# package:`` and ``# bug:`` lines: a realistic bug written into
``patcher/<package>`` (``core`` is ``patcher/*.py``) by someone who did not
read the tests. For each mutant this script applies the diff to ONE throwaway
copy of the checkout, runs that package's tests exactly as
``benchmarks/mutation.sh`` has mutmut run them (the pytest arguments come from
``bash benchmarks/mutation.sh --tests-for PACKAGE``), then takes the diff back
out and checks the copy is clean again. The checkout itself is never touched,
but for the report written to ``benchmarks/out/foreign_mutants.txt``.

Verdicts: pytest exit 1 is ``killed``; exit 0 is ``SURVIVED``; a run past the
timeout is ``timeout``; any other exit (2 collection error, 3 internal, 4
usage, 5 no tests), or a diff that does not apply, is ``error``, shown with
the last lines of output. Only ``killed`` counts as killed.

Run from anywhere (Python 3.10+, stdlib only; git and bash on PATH)::

    python benchmarks/foreign_mutants.py                      # every mutant (about an hour on 2 cores)
    python benchmarks/foreign_mutants.py --package shipping   # one package's
    python benchmarks/foreign_mutants.py 'shipping/03*' core/01-cache-area-not-authenticated
    python benchmarks/foreign_mutants.py --timeout 600 --keep archive/01-dotdot-leading-only

Exit status: 0 when it ran (whatever the score), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTANTS = ROOT / "benchmarks" / "foreign_mutants"
REPORT = ROOT / "benchmarks" / "out" / "foreign_mutants.txt"
PACKAGES = ("archive", "shipping", "patchset", "transforms", "checks", "numerics", "review", "authoring", "cli",
            "core")
PYTEST = ("-m", "pytest", "-x", "-q", "-p", "no:cacheprovider")
TAIL_LINES = 15


@dataclass(frozen=True)
class Mutant:
    """One diff file: its package, its name (``NN-short-name``) and where it is."""

    package: str
    name: str
    path: Path

    @property
    def label(self) -> str:
        return f"{self.package}/{self.name}"

    @property
    def bug(self) -> str:
        for line in self.path.read_text(encoding="utf-8").splitlines():
            if line.startswith("# bug:"):
                return line[len("# bug:"):].strip()
        return ""


@dataclass(frozen=True)
class Result:
    """What running the tests against one mutant gave."""

    mutant: Mutant
    verdict: str  # "killed", "SURVIVED", "timeout" or "error"
    seconds: float
    detail: str = ""  # for an error or a timeout: why, and the last lines of output


class UsageError(Exception):
    """Bad command-line usage: reported as one line, exit 2."""


# --------------------------------------------------------------------------- command line


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(prog="foreign_mutants.py", description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="MUTANT",
                        help="PACKAGE/NN-name, a glob of those ('shipping/0*'), a package, or a .diff path "
                             "(default: every mutant)")
    parser.add_argument("--package", choices=PACKAGES, help="only this package's mutants")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds per mutant (default 1200)")
    parser.add_argument("--keep", action="store_true", help="keep the throwaway copy of the checkout")
    args = parser.parse_args(argv)
    if args.timeout <= 0:
        raise UsageError("--timeout must be a positive number of seconds")
    return args


# --------------------------------------------------------------------------- finding mutants


def all_mutants() -> list[Mutant]:
    """Every mutant, package by package in PACKAGES order, then by file name."""
    found = []
    for package in PACKAGES:
        folder = MUTANTS / package
        if folder.is_dir():
            found += [Mutant(package, path.stem, path) for path in sorted(folder.glob("*.diff"))]
    return found


def _pattern(name: str) -> str:
    """A command-line name as a glob over ``package/NN-name``."""
    text = name.replace(os.sep, "/")
    if text.endswith(".diff"):
        text = text[: -len(".diff")]
    marker = "foreign_mutants/"
    if marker in text:
        text = text.split(marker, 1)[1]
    return f"{text}/*" if text in PACKAGES else text


def select(mutants: list[Mutant], names: list[str], package: str | None) -> list[Mutant]:
    """The mutants the names (globs) and ``--package`` pick; raise UsageError for a name that picks none."""
    chosen = [m for m in mutants if package is None or m.package == package]
    if not names:
        return chosen
    picked: dict[str, Mutant] = {}
    for name in names:
        pattern = _pattern(name)
        hits = [m for m in chosen if fnmatch.fnmatchcase(m.label, pattern)]
        if not hits:
            raise UsageError(f"no mutant matches {name!r}" + (f" in package {package}" if package else ""))
        picked.update((m.label, m) for m in hits)
    return [m for m in chosen if m.label in picked]


# --------------------------------------------------------------------------- the copy


def make_copy() -> Path:
    """Copy the checkout's tracked and untracked, not ignored, files into a new temporary folder (via tar)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True,
                            capture_output=True).stdout
    # A file deleted from the working tree but still tracked would make tar fail: leave it out.
    names = [n for n in listed.split(b"\0") if n and os.path.lexists(ROOT / os.fsdecode(n))]
    copy = Path(tempfile.mkdtemp(prefix="patcher-foreign-"))
    pack = subprocess.Popen(["tar", "cf", "-", "--null", "-T", "-"], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    unpack = subprocess.Popen(["tar", "xf", "-", "-C", str(copy)], stdin=pack.stdout)
    assert pack.stdin is not None and pack.stdout is not None
    pack.stdout.close()  # the unpacking tar holds it now
    pack.stdin.write(b"\0".join(names) + b"\0")
    pack.stdin.close()
    if pack.wait() != 0 or unpack.wait() != 0:
        shutil.rmtree(copy, ignore_errors=True)
        raise RuntimeError("copying the checkout with tar failed")
    return copy


def _git_env(copy: Path) -> dict[str, str]:
    # The copy is no repository: keep git from finding one above it (git apply would patch that one's paths).
    return {**os.environ, "GIT_CEILING_DIRECTORIES": str(copy.parent)}


def tests_for(copy: Path, package: str) -> list[str]:
    """The pytest arguments of ``package``'s tests, as benchmarks/mutation.sh gives them to mutmut."""
    done = subprocess.run(["bash", "benchmarks/mutation.sh", "--tests-for", package], cwd=copy,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"mutation.sh --tests-for {package} failed: {done.stderr.strip()}")
    return shlex.split(done.stdout)


# --------------------------------------------------------------------------- one mutant


def touched_paths(diff: str) -> list[str]:
    """The files a diff changes (the ``b/`` side of each ``diff --git`` line)."""
    paths = []
    for line in diff.splitlines():
        if line.startswith("diff --git a/") and " b/" in line:
            paths.append(line.rsplit(" b/", 1)[1])
    return paths


def snapshot(copy: Path, paths: list[str]) -> dict[str, bytes | None]:
    """The bytes of each path in the copy (None where there is no such file)."""
    return {p: (copy / p).read_bytes() if (copy / p).is_file() else None for p in paths}


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def forget_bytecode(copy: Path, paths: list[str]) -> None:
    """Remove the cached bytecode of changed modules: a run must never import a stale .pyc."""
    for path in paths:
        source = copy / path
        for cached in (source.parent / "__pycache__").glob(f"{source.stem}.*.pyc"):
            cached.unlink(missing_ok=True)


def git_apply(copy: Path, diff: Path, reverse: bool = False) -> str | None:
    """Apply (or take back) ``diff`` in the copy; None when it did, else git's message."""
    command = ["git", "apply", *(["-R"] if reverse else []), str(diff)]
    done = subprocess.run(command, cwd=copy, env=_git_env(copy), capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip() or f"git apply exit {done.returncode}")


def run_pytest(copy: Path, arguments: list[str], timeout: float) -> tuple[int | None, float, str]:
    """Run the tests in the copy; return pytest's exit status (None on timeout), the seconds and the output."""
    env = {**os.environ, "PYTHONPATH": str(copy)}
    start = time.monotonic()
    process = subprocess.Popen([sys.executable, *PYTEST, *arguments], cwd=copy, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
        status: int | None = process.returncode
    except subprocess.TimeoutExpired:
        output = _stop(process)
        status = None
    except BaseException:  # Ctrl-C: take the whole test run down with us
        _stop(process)
        raise
    return status, time.monotonic() - start, output.decode("utf-8", "replace")


def _stop(process: subprocess.Popen[bytes]) -> bytes:
    """End the test run and everything it started (its own process group), politely first."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            output, _ = process.communicate(timeout=wait)
            return output or b""
        except subprocess.TimeoutExpired:
            continue
    return b""


def verdict_of(status: int | None) -> str:
    if status is None:
        return "timeout"
    return {0: "SURVIVED", 1: "killed"}.get(status, "error")


def tail(output: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(output.rstrip().splitlines()[-lines:])


def run_mutant(copy: Path, mutant: Mutant, arguments: list[str], timeout: float) -> Result:
    """Apply the mutant, run its package's tests, take it back out and make sure the copy is clean."""
    paths = touched_paths(mutant.path.read_text(encoding="utf-8"))
    before = snapshot(copy, paths)
    problem = git_apply(copy, mutant.path)
    if problem is not None:
        return Result(mutant, "error", 0.0, f"the diff does not apply: {problem}")
    forget_bytecode(copy, paths)
    try:
        status, seconds, output = run_pytest(copy, arguments, timeout)
    finally:
        restored = restore(copy, mutant, before)
    verdict = verdict_of(status)
    detail = ""
    if verdict == "timeout":
        detail = f"no result after {timeout:g} s\n{tail(output)}"
    elif verdict == "error":
        detail = f"pytest exit {status}\n{tail(output)}"
    if restored:
        detail = (detail + "\n" if detail else "") + restored
    return Result(mutant, verdict, seconds, detail)


def restore(copy: Path, mutant: Mutant, before: dict[str, bytes | None]) -> str:
    """Take the diff back out; if the files are not as before, put the saved bytes back. Say what went wrong, if anything."""
    problem = git_apply(copy, mutant.path, reverse=True)
    after = snapshot(copy, list(before))
    dirty = [p for p in before if _digest(after[p]) != _digest(before[p])]
    for path in dirty:
        data = before[path]
        if data is None:
            (copy / path).unlink(missing_ok=True)
        else:
            (copy / path).write_bytes(data)
    forget_bytecode(copy, list(before))
    if problem is None and not dirty:
        return ""
    return f"note: the copy was not clean after 'git apply -R' ({problem or ', '.join(dirty)}); restored"


# --------------------------------------------------------------------------- report


def result_line(result: Result) -> str:
    return f"{result.verdict:<8}  {result.mutant.label}  {result.seconds:.1f} s"


def table(results: list[Result]) -> list[str]:
    """Per package: killed / total, and how many survived, timed out or erred; then the total."""
    rows = [f"{'package':<12}{'killed':>8} / {'total':<6}{'survived':>9}{'timeout':>9}{'error':>7}"]
    packages = [p for p in PACKAGES if any(r.mutant.package == p for r in results)]
    for name, group in [(p, [r for r in results if r.mutant.package == p]) for p in packages] + [("total", results)]:
        count = {v: sum(r.verdict == v for r in group) for v in ("killed", "SURVIVED", "timeout", "error")}
        rows.append(f"{name:<12}{count['killed']:>8} / {len(group):<6}{count['SURVIVED']:>9}{count['timeout']:>9}"
                    f"{count['error']:>7}")
    return rows


def details(results: list[Result]) -> list[str]:
    """Each surviving mutant with its bug, then each timeout and error with why."""
    lines = []
    survivors = [r for r in results if r.verdict == "SURVIVED"]
    if survivors:
        lines += ["", "survived (the tests pass with this bug in):"]
        lines += [f"  {r.mutant.label}: {r.mutant.bug}" for r in survivors]
    for r in results:
        if r.verdict in ("timeout", "error") or r.detail:
            lines += ["", f"{r.verdict}: {r.mutant.label}"] + ["  " + line for line in r.detail.splitlines()]
    return lines


def report(results: list[Result], started: str, timeout: float) -> str:
    head = [f"foreign mutants, {started}, {sys.executable} (Python {sys.version.split()[0]}), "
            f"timeout {timeout:g} s per mutant", ""]
    body = [result_line(r) for r in results] + [""] + table(results) + details(results)
    return "\n".join(head + body) + "\n"


def write_report(text: str) -> None:
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(text, encoding="utf-8")


# --------------------------------------------------------------------------- main


def run(mutants: list[Mutant], timeout: float, keep: bool) -> list[Result]:
    copy = make_copy()
    print(f"copy of the checkout: {copy}", flush=True)
    results: list[Result] = []
    arguments: dict[str, list[str]] = {}
    try:
        for mutant in mutants:
            try:
                if mutant.package not in arguments:
                    arguments[mutant.package] = tests_for(copy, mutant.package)
                result = run_mutant(copy, mutant, arguments[mutant.package], timeout)
            except RuntimeError as error:
                result = Result(mutant, "error", 0.0, str(error))
            results.append(result)
            print(result_line(result), flush=True)
    finally:
        if keep:
            print(f"kept the copy: {copy}", flush=True)
        else:
            shutil.rmtree(copy, ignore_errors=True)
    return results


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
        mutants = select(all_mutants(), args.names, args.package)
        if not mutants:
            raise UsageError(f"no mutants in {MUTANTS}")
        for tool in ("git", "bash", "tar"):
            if shutil.which(tool) is None:
                raise UsageError(f"{tool} is not on PATH")
    except UsageError as error:
        print(f"foreign_mutants.py: error: {error}", file=sys.stderr)
        return 2
    started = time.strftime("%Y-%m-%d %H:%M")
    try:
        results = run(mutants, args.timeout, args.keep)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    text = report(results, started, args.timeout)
    print("\n".join(text.splitlines()[len(results) + 2:]))  # the table and details; the lines were printed as they came
    write_report(text)
    print(f"report: {REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
