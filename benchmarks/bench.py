"""Time patcher against the GNU pipeline it replaces, and print the figures.

Usage: python benchmarks/bench.py [--repeat N] [--quick] [--case realistic|scale ...]

Two drops: the realistic one (benchmarks/make_realistic_drop.py: 481
files, 26 shipped Python files, 11.7K lines) for apply, check,
verify-sync, diff and inspect, and the vendor-scale one
(benchmarks/make_vendor_scale.py: 102 MB, 1,185 members) for apply's
throughput and peak memory. Both are built once under benchmarks/out/
(again when their generator changes). Before timing, each apply's build
context is compared with the GNU pipeline's file by file, and each
command's exit code and output recorded; the run exits 1 if a context
differs, so a faster patcher that writes other bytes does not pass.

Not a test: it prints a table. Each comparison alternates the two sides
(A B, then B A, ...) so drift in the machine's load hits both, and
reports medians. Commands run as a user runs them: the installed
'patcher' script in a fresh process, with Python's bytecode cache on (kept
under benchmarks/out/pycache; this repository's environment disables it
by default, which would charge every run for compiling patcher).

The GNU side is what a careful engineer would script to get the same
build context: 'unzip -q', 'patch -p1' with the diff 'patcher diff'
prints (made once, outside the timed region; 'diff -ruN' between the
vendor tree and apply's output if 'patcher diff' is missing), and
'tar --sort=name --mtime=... --owner=0 --group=0 --numeric-owner -czf'.
It writes no manifest and does not fsync; patcher does both.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import json
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT = HERE / "out"
WORK = OUT / "bench"
MTIME = "@315532800"  # what apply writes without SOURCE_DATE_EPOCH: 1980-01-01

sys.path.insert(0, str(HERE))
import make_realistic_drop  # noqa: E402
import make_vendor_scale  # noqa: E402


@dataclass
class Timing:
    """Wall and CPU seconds of each repetition."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


@dataclass
class Row:
    """One line of the table: our medians against a baseline's, and the target."""

    name: str
    ours: list[float]
    base: list[float] | None = None
    ours_cpu: list[float] | None = None
    base_cpu: list[float] | None = None
    base_name: str = ""
    target: float | None = None  # the highest acceptable ratio ours / base
    unit: str = "s"
    note: str = ""

    @property
    def ratio(self) -> float | None:
        if not self.base:
            return None
        return statistics.median(self.ours) / statistics.median(self.base)

    def cells(self) -> list[str]:
        if self.unit != "s":  # memory: the worst run is the figure that matters
            ours = _fmt(max(self.ours), self.unit)
        else:
            ours = _fmt(statistics.median(self.ours), self.unit) if self.ours else "not available"
        least = _fmt(min(self.ours), self.unit) if self.ours and self.unit == "s" else ""
        base = _fmt(statistics.median(self.base), self.unit) if self.base else ""
        ratio = f"{self.ratio:.2f}x" if self.ratio is not None else ""
        if self.target is None or not self.ours:
            verdict = ""
        else:
            absolute = max(self.ours) if self.unit != "s" else statistics.median(self.ours)
            value = self.ratio if self.base else absolute
            limit = f"{self.target:g}x" if self.base else f"{self.target:g} {self.unit}"
            verdict = f"<= {limit}: {'met' if value is not None and value <= self.target else 'MISSED'}"
        cpu = " / ".join(f"{statistics.median(t):.2f}" for t in (self.ours_cpu, self.base_cpu) if t)
        return [self.name, ours, least, self.base_name, base, ratio, verdict, cpu, self.note]


def _fmt(value: float, unit: str) -> str:
    return f"{value:.3f} s" if unit == "s" else f"{value:.0f} {unit}"


class Bench:
    """Runs commands the way the table needs them."""

    def __init__(self, repeat: int) -> None:
        self.repeat = repeat
        self.patcher = _patcher_command()
        self.env = dict(os.environ)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.env["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
        self.env.pop("SOURCE_DATE_EPOCH", None)
        # Cold by default: every run patches from scratch. The warm rows use
        # a cache of their own, filled during set-up, never the user's.
        self.env["PATCHER_NO_CACHE"] = "1"
        self.warm_env = {k: v for k, v in self.env.items() if k != "PATCHER_NO_CACHE"}
        self.warm_env["PATCHER_CACHE_DIR"] = str(WORK / "cache")
        self.cpu: list[float] = []  # CPU seconds (user + system) of each run, children included

    def verdict(self, command: Sequence[str]) -> str:
        """Run COMMAND once, untimed; describe its exit code and a digest of its stdout and stderr."""
        result = subprocess.run(command, capture_output=True, env=self.env)
        return (f"exit {result.returncode}, stdout sha256 {hashlib.sha256(result.stdout).hexdigest()[:12]}"
                f" ({len(result.stdout):,} B), stderr {hashlib.sha256(result.stderr).hexdigest()[:12]}")

    def run(self, command: Sequence[str], *, ok: Sequence[int] = (0,), stdout: Path | None = None,
            cwd: Path | None = None, warm: bool = False) -> float:
        """Run COMMAND; return its wall time in seconds, failing on an unexpected exit code."""
        sink = open(stdout, "wb") if stdout else subprocess.DEVNULL
        try:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            result = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, cwd=cwd,
                                    env=self.warm_env if warm else self.env)
            elapsed = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        finally:
            if stdout:
                sink.close()  # type: ignore[union-attr]
        if result.returncode not in ok:
            raise SystemExit(f"bench: {' '.join(map(str, command))} exited {result.returncode}:\n"
                             + result.stderr.decode(errors="replace")[-2000:])
        return elapsed

    def has(self, command: str) -> bool:
        """Whether this patcher has COMMAND (others are still being written)."""
        return subprocess.run([*self.patcher, command, "--help"], capture_output=True, env=self.env).returncode == 0

    def alternate(self, a: Callable[[], float], b: Callable[[], float]) -> tuple[Timing, Timing]:
        """Time A and B REPEAT times each, swapping which goes first every round."""
        first, second = Timing(), Timing()
        for round_ in range(self.repeat):
            for side, action in ((second, b), (first, a)) if round_ % 2 else ((first, a), (second, b)):
                side.wall.append(action())
                side.cpu.append(self.cpu[-1])
        return first, second

    def times(self, action: Callable[[], float]) -> Timing:
        timing = Timing()
        for _ in range(self.repeat):
            timing.wall.append(action())
            timing.cpu.append(self.cpu[-1])
        return timing

    def peak_rss_mb(self, command: Sequence[str]) -> float:
        """Run COMMAND in a fresh Python that reports its children's peak resident memory."""
        probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
                 " stderr=subprocess.DEVNULL, check=True);"
                 " print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        result = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, env=self.env,
                                check=True, text=True)
        return int(result.stdout) / 1024  # ru_maxrss is in KiB on Linux


def _patcher_command() -> list[str]:
    # The console script beside this interpreter, not a shim that execs
    # another program first (pyenv's adds tens of milliseconds).
    script = Path(sys.executable).parent / "patcher"
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from patcher.cli import main; sys.argv[0] = 'patcher'; main()"]


def gnu_pipeline(bench: Bench, vendor: Path, diff: Path, output: Path, tag: str) -> Callable[[], float]:
    """Return a timed run of unzip + patch -p1 + tar czf; the scratch tree is removed before, untimed."""
    scratch = WORK / f"gnu-{tag}"
    top = _top_folder(vendor)
    script = (
        'set -e; mkdir "$1"; unzip -q "$2" -d "$1"; cd "$1/$3"; patch -p1 -s < "$4";'
        f' tar --sort=name --mtime={MTIME} --owner=0 --group=0 --numeric-owner -czf "$5" .'
    )

    def run() -> float:
        shutil.rmtree(scratch, ignore_errors=True)
        output.unlink(missing_ok=True)
        return bench.run(["bash", "-c", script, "gnu", str(scratch), str(vendor), top, str(diff), str(output)])

    return run


def patcher_apply(bench: Bench, vendor: Path, output: Path, *, warm: bool = False) -> Callable[[], float]:
    def run() -> float:
        output.unlink(missing_ok=True)
        return bench.run([*bench.patcher, "apply", str(vendor), "-o", str(output)], warm=warm)

    return run


def make_diff(bench: Bench, vendor: Path, applied: Path, dest: Path, use_patcher: bool) -> str:
    """Write the diff the GNU pipeline applies; return how it was made."""
    if use_patcher:
        bench.run([*bench.patcher, "diff", "--no-color", str(vendor)], stdout=dest)
        return "patcher diff"
    # Fallback: diff the unpacked vendor tree against apply's own output.
    scratch = WORK / "diff-trees"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    with zipfile.ZipFile(vendor) as archive:
        archive.extractall(scratch / "vendor")
    with tarfile.open(applied) as archive:
        archive.extractall(scratch / "b", filter="data")
    (scratch / "b" / "patcher-manifest.json").unlink()
    os.rename(scratch / "vendor" / _top_folder(vendor), scratch / "a")
    with open(dest, "wb") as out:
        subprocess.run(["diff", "-ruN", "a", "b"], cwd=scratch, stdout=out, check=False)
    shutil.rmtree(scratch)
    return "diff -ruN (patcher diff not available)"


def _top_folder(vendor: Path) -> str:
    with zipfile.ZipFile(vendor) as archive:
        dockerfiles = sorted((n for n in archive.namelist() if n.endswith("Dockerfile")), key=len)
    return dockerfiles[0].rpartition("/")[0]


def same_context(ours: Path, gnu: Path) -> str:
    """Compare two build contexts file by file, the manifest aside."""
    def files(path: Path) -> dict[str, tuple[int, str]]:
        found = {}
        with tarfile.open(path) as archive:
            for member in archive:
                if member.isfile():
                    stream = archive.extractfile(member)
                    assert stream is not None
                    name = member.name.removeprefix("./")
                    found[name] = (member.mode, hashlib.sha256(stream.read()).hexdigest())
        found.pop("patcher-manifest.json", None)
        return found

    a, b = files(ours), files(gnu)
    if a == b:
        return f"identical ({len(a)} files, modes and bytes; manifest aside)"
    differing = sorted(set(a) ^ set(b) | {k for k in set(a) & set(b) if a[k] != b[k]})
    return f"DIFFERENT in {len(differing)} files, e.g. {differing[:3]}"


_PROBE = """
import ast, hashlib, json, sys
import libcst
seen = []
def record(parse):
    def wrapper(source, *args, **kwargs):
        data = source if isinstance(source, bytes) else str(source).encode()
        seen.append(hashlib.sha256(data).hexdigest())
        return parse(source, *args, **kwargs)
    return wrapper
libcst.parse_module = record(libcst.parse_module)
ast.parse = record(ast.parse)
from patcher.cli import main
try:
    main(sys.argv[1:], standalone_mode=False)
finally:
    print(json.dumps(seen), file=sys.__stdout__)
"""


def parsed_files(bench: Bench, vendor: Path) -> str:
    """Say which files of VENDOR an apply parses (libcst or ast), by content digest."""
    output = WORK / "probe.tar.gz"
    result = subprocess.run([sys.executable, "-c", _PROBE, "apply", str(vendor), "-o", str(output)],
                            capture_output=True, text=True, env=bench.env, check=True)
    digests = json.loads(result.stdout.strip().splitlines()[-1])
    by_digest: dict[str, list[str]] = {}
    with zipfile.ZipFile(vendor) as archive:
        top = _top_folder(vendor) + "/"
        files = [i for i in archive.infolist() if not i.is_dir()]
        for info in files:
            by_digest.setdefault(hashlib.sha256(archive.read(info)).hexdigest(), []).append(
                info.filename.removeprefix(top))
    vendor_files = sorted({path for d in digests for path in by_digest.get(d, [])})
    other = sum(1 for d in digests if d not in by_digest)
    return (f"parsed by apply at scale: {len(vendor_files)} of {len(files)} vendor files"
            f" ({', '.join(vendor_files)}), plus {other} texts that are not vendor files"
            " (patterns, templates, the patched target)")


def machine() -> list[str]:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    tools = []
    for tool in (["tar", "--version"], ["gzip", "--version"], ["unzip", "-v"], ["patch", "--version"]):
        try:
            first = subprocess.run(tool, capture_output=True, text=True).stdout.splitlines()[0]
        except (OSError, IndexError):
            first = f"{tool[0]}: not found"
        tools.append(first.split(" of ")[0].split(" by ")[0].strip())
    return [
        f"machine: {usable} CPUs usable (nproc), {model}; {platform.system()} {platform.release()}",
        f"python {platform.python_version()} ({sys.executable}); {'; '.join(tools)}",
    ]


def zip_line(path: Path) -> str:
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    files = [i for i in infos if not i.is_dir()]
    size = sum(i.file_size for i in files)
    return (f"{path.name}: {len(infos)} members, {sum(i.filename.endswith('.py') for i in files)} .py,"
            f" {size / 1e6:.1f} MB uncompressed, {path.stat().st_size / 1e6:.1f} MB zipped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=None, help="repetitions of each timing (default 5, quick 2)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, for a first look")
    parser.add_argument("--case", action="append", choices=("realistic", "scale"), default=None,
                        help="time only this drop (repeatable; default: both)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (2 if args.quick else 5)
    cases = args.case or ["realistic", "scale"]
    for tool in ("unzip", "patch", "tar", "gzip", "diff", "bash"):
        if shutil.which(tool) is None:
            raise SystemExit(f"bench: {tool} is not installed; the GNU pipeline needs it")

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    generators = {"realistic": make_realistic_drop, "scale": make_vendor_scale}
    drops = {tag: _built(generators[tag].OUTPUT, generators[tag]) for tag in cases}
    bench = Bench(repeat)
    has_diff, has_verify = bench.has("diff"), bench.has("verify-sync")

    # Untimed set-up: warm the bytecode cache and the page cache, make the
    # diffs, and check that both sides build the same context.
    notes: list[str] = []
    differ = False
    diffs: dict[str, tuple[Path, str]] = {}
    for tag, vendor in drops.items():
        applied = WORK / f"setup-{tag}.tar.gz"
        patcher_apply(bench, vendor, applied)()
        patcher_apply(bench, vendor, WORK / f"fill-{tag}.tar.gz", warm=True)()  # fills the warm rows' cache
        diff = WORK / f"{tag}.diff"
        diffs[tag] = (diff, make_diff(bench, vendor, applied, diff, has_diff))
        gnu_out = WORK / f"gnu-{tag}.tar.gz"
        gnu_pipeline(bench, vendor, diff, gnu_out, tag)()
        same = same_context(applied, gnu_out)
        differ |= not same.startswith("identical")
        notes.append(f"{tag}: GNU context vs apply's: {same};"
                     f" .tar.gz {applied.stat().st_size:,} B (patcher) vs {gnu_out.stat().st_size:,} B (GNU)")
    if "realistic" in drops:
        vendor = drops["realistic"]
        for command in _commands(vendor, has_diff, has_verify):
            notes.append(f"realistic: patcher {command[0]}: {bench.verdict([*bench.patcher, *command])}")
    if "scale" in drops:
        notes.append(parsed_files(bench, drops["scale"]))

    print(f"timing, {repeat} repetitions each ...", file=sys.stderr)
    rows: list[Row] = []
    for tag, vendor in drops.items():
        target, title = (1.0, "apply, realistic drop") if tag == "realistic" else (0.5, "apply, vendor scale")
        ours, gnu = bench.alternate(patcher_apply(bench, vendor, WORK / f"ours-{tag}.tar.gz"),
                                    gnu_pipeline(bench, vendor, diffs[tag][0], WORK / f"gnu-{tag}.tar.gz", tag))
        rows.append(Row(title, ours.wall, gnu.wall, ours.cpu, gnu.cpu, "unzip+patch+tar czf", target,
                        note=f"diff from {diffs[tag][1]}; cache off"))
        warm, gnu = bench.alternate(patcher_apply(bench, vendor, WORK / f"warm-{tag}.tar.gz", warm=True),
                                    gnu_pipeline(bench, vendor, diffs[tag][0], WORK / f"gnu-{tag}.tar.gz", tag))
        rows.append(Row("  same, patch cache warm", warm.wall, gnu.wall, warm.cpu, gnu.cpu, "unzip+patch+tar czf",
                        target, note="repeated run on the same drop"))
        if tag != "realistic":
            continue
        for command in _commands(vendor, has_diff, has_verify):
            timing = bench.times(lambda c=command: bench.run([*bench.patcher, *c], ok=(0, 1)))  # type: ignore[misc]
            rows.append(Row(f"patcher {command[0]}, realistic drop", timing.wall, ours_cpu=timing.cpu, target=0.3,
                            note="cache off"))
        timing = bench.times(lambda: bench.run([*bench.patcher, "diff", "--no-color", str(vendor)], warm=True))
        rows.append(Row("  diff, patch cache warm", timing.wall, ours_cpu=timing.cpu, target=0.3))
    if "scale" in drops:
        scale_zip = drops["scale"]
        rss = [bench.peak_rss_mb([*bench.patcher, "apply", str(scale_zip), "-o", str(WORK / f"rss-{i}.tar.gz")])
               for i in range(min(repeat, 3))]
        rows.append(Row("peak RSS, apply at vendor scale", rss, target=150, unit="MB",
                        note="largest of the runs' max RSS"))
    helps, clicks = bench.alternate(lambda: bench.run([*bench.patcher, "--help"]),
                                    lambda: bench.run([sys.executable, "-c", "import click"]))
    rows.append(Row("patcher --help", helps.wall, clicks.wall, helps.cpu, clicks.cpu, "python -c 'import click'", 2.0))

    print_table(rows)
    print()
    for line in [*machine(), *(zip_line(vendor) for vendor in drops.values()), *notes]:
        print(line)
    if differ:
        print("bench: a build context differs from the GNU pipeline's (see above)", file=sys.stderr)
        return 1
    return 0


def _built(path: Path, generator: object) -> Path:
    """Return PATH, (re)building it with GENERATOR when missing or older than the generator's code."""
    source = Path(generator.__file__)  # type: ignore[attr-defined]
    if not path.is_file() or path.stat().st_mtime < source.stat().st_mtime:
        print(f"building {path} ...", file=sys.stderr)
        generator.build(path)  # type: ignore[attr-defined]
    return path


def _commands(vendor: Path, has_diff: bool, has_verify: bool) -> list[list[str]]:
    """The read-only commands timed on the realistic drop (check and verify-sync exit 1 on it: vendor findings)."""
    commands = [["check", str(vendor)], ["inspect", str(vendor)]]
    if has_verify:
        commands.insert(1, ["verify-sync", str(vendor)])
    if has_diff:
        commands.insert(2, ["diff", "--no-color", str(vendor)])
    return commands


def print_table(rows: list[Row]) -> None:
    header = ["", "patcher (median)", "(min)", "baseline", "(median)", "ratio", "target", "cpu s (ours / base)", "note"]
    cells = [header, *(row.cells() for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    for number, line in enumerate(cells):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        if number == 0:
            print("  ".join("-" * width for width in widths))


if __name__ == "__main__":
    sys.exit(main())
