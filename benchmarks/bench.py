"""Time patcher against the GNU pipeline it replaces, and print the figures.

Usage: python benchmarks/bench.py [--repeat N] [--quick] [--case real-size|benchmark|scale ...]
                                  [--baseline CHECKOUT]

Three drops, each built once under benchmarks/out/ (again when its
generator changes):

- ``real-size`` (benchmarks/make_realistic_drop.py, profile real-size):
  the real vendor drop's size, 480 members, 6.1 MB unpacked, 1.5 MB
  zipped, 26 shipped Python files, the shipped paged_attn.py 547 lines.
  apply (cache off and warm) against the GNU pipeline, and check,
  verify-sync, inspect and diff, warm and with the caches off. The
  README's figures come from this one.
- ``benchmark`` (the same generator, profile benchmark): the larger drop
  the bench used before (512 members, 7.8 MB zipped with a 6 MB wheel),
  apply only, so figures compare across sessions.
- ``scale`` (benchmarks/make_vendor_scale.py: 102 MB, 1,185 members):
  apply's throughput and peak memory.

Before timing, each apply's build context is compared with the GNU
pipeline's file by file, and each command's exit code and output recorded;
the run exits 1 if a context differs, so a faster patcher that writes
other bytes does not pass. With ``--baseline CHECKOUT`` (another checkout
of patcher, e.g. ``git worktree add /tmp/before main``) every patcher row
is timed for both, alternating, and the outputs of both are compared too
(the manifest's patch-set commit fields aside: they name each checkout).

Not a test: it prints tables, the last one issue 24's ("Speed measured on
a drop the size of the real one"), before and after when there is a
baseline. Each comparison alternates the sides (A B, then B A, ...) so
drift in the machine's load hits all of them, and reports medians: wall
seconds and CPU seconds (user + system of the whole process tree:
patcher's watcher, the command, its forked rule checker; bash, unzip,
patch, tar and gzip), the figure a loaded machine changes least. The load
average is printed before and after. Commands run as a user runs them:
the installed 'patcher' script in a fresh process (its code from
PYTHONPATH: this checkout, or the baseline), with Python's bytecode cache
on: PYTHONDONTWRITEBYTECODE is removed from the commands' environment and
PYTHONPYCACHEPREFIX points at benchmarks/out/pycache, so no run is charged
for compiling patcher (this repository's environment disables the cache
by default).

The GNU side is what a careful engineer would script to get the same
build context: 'unzip -q', 'patch -p1' with the diff 'patcher diff'
prints (made once, outside the timed region), and
'tar --sort=name --mtime=... --owner=0 --group=0 --numeric-owner -czf'.
It writes no manifest and does not fsync; patcher does both.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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
GNU = "unzip+patch+tar czf"

sys.path.insert(0, str(HERE))
import make_realistic_drop  # noqa: E402
import make_vendor_scale  # noqa: E402

CASES = ("real-size", "benchmark", "scale")
TITLES = {"real-size": "real-size drop", "benchmark": "benchmark drop", "scale": "vendor scale"}
# Targets of issue 24 (real-size drop): ratios to the GNU pipeline, or seconds.
APPLY_WARM_RATIO = 1.0
APPLY_COLD_RATIO = 2.0
READ_ONLY_WARM_S = 0.25  # check, verify-sync, inspect
DIFF_WARM_S = 0.3
SCALE_RATIO = 0.5
PEAK_MB = 150


@dataclass
class Timing:
    """Wall and CPU seconds of each repetition."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.wall)

    @property
    def cpu_median(self) -> float:
        return statistics.median(self.cpu)


@dataclass
class Side:
    """One patcher to time: a checkout whose code the 'patcher' script imports, with a warm cache of its own."""

    label: str
    checkout: Path
    cache: Path


@dataclass
class Row:
    """One line of the table: each side's timing, the GNU pipeline's if compared, and the target."""

    name: str
    sides: dict[str, Timing]
    gnu: Timing | None = None
    target: float | None = None  # the highest acceptable ratio to GNU, or seconds without GNU
    unit: str = "s"
    note: str = ""

    def ratio(self, label: str) -> float | None:
        if self.gnu is None or label not in self.sides:
            return None
        return self.sides[label].median / self.gnu.median

    def verdict(self, label: str) -> str:
        if self.target is None or label not in self.sides:
            return ""
        timing = self.sides[label]
        if self.unit != "s":
            value, limit = max(timing.wall), f"{self.target:g} {self.unit}"
        elif self.gnu is not None:
            value, limit = self.ratio(label) or 0.0, f"{self.target:g}x"
        else:
            value, limit = timing.median, f"{self.target:g} s"
        return f"<= {limit}: {'met' if value <= self.target else 'MISSED'}"


def _fmt(value: float, unit: str = "s") -> str:
    return f"{value:.3f} s" if unit == "s" else f"{value:.0f} {unit}"


class Bench:
    """Runs commands the way the tables need them."""

    def __init__(self, repeat: int, sides: list[Side]) -> None:
        self.repeat = repeat
        self.sides = sides
        self.script = _patcher_script()
        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)  # the bytecode cache on, as a user's install has it
        base["PYTHONPYCACHEPREFIX"] = str(OUT / "pycache")
        base.pop("SOURCE_DATE_EPOCH", None)
        for name in [n for n in base if n.startswith("PATCHER_")]:
            del base[name]
        self.base_env = base
        self.cpu: list[float] = []  # CPU seconds (user + system) of each run, children included

    def env(self, side: Side | None, *, warm: bool) -> dict[str, str]:
        """The environment of a run: SIDE's code; its own cache when WARM, else none."""
        env = dict(self.base_env)
        if side is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(side.checkout), env.get("PYTHONPATH", "")]))
        if warm and side is not None:
            env["PATCHER_CACHE_DIR"] = str(side.cache)
        else:
            env["PATCHER_NO_CACHE"] = "1"
        return env

    def patcher(self, side: Side) -> list[str]:
        """The command that runs SIDE's patcher (the same script: SIDE's environment picks the code)."""
        return [*self.script]

    def verdict(self, side: Side, command: Sequence[str], *, warm: bool = False) -> str:
        """Run COMMAND once, untimed; describe its exit code and a digest of its stdout and stderr."""
        result = subprocess.run([*self.patcher(side), *command], capture_output=True, env=self.env(side, warm=warm))
        return (f"exit {result.returncode}, stdout sha256 {hashlib.sha256(result.stdout).hexdigest()[:12]}"
                f" ({len(result.stdout):,} B), stderr {hashlib.sha256(result.stderr).hexdigest()[:12]}")

    def run(self, command: Sequence[str], env: dict[str, str], *, ok: Sequence[int] = (0,),
            stdout: Path | None = None) -> float:
        """Run COMMAND; return its wall time in seconds (CPU seconds in self.cpu), failing on an unexpected exit."""
        sink = open(stdout, "wb") if stdout else subprocess.DEVNULL
        try:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)  # microseconds, where os.times counts ticks
            start = time.perf_counter()
            result = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, env=env)
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

    def alternate(self, actions: dict[str, Callable[[], float]]) -> dict[str, Timing]:
        """Time each action REPEAT times, rotating which goes first every round."""
        timings = {name: Timing() for name in actions}
        names = list(actions)
        for round_ in range(self.repeat):
            shift = round_ % len(names)
            for name in names[shift:] + names[:shift]:
                timings[name].wall.append(actions[name]())
                timings[name].cpu.append(self.cpu[-1])
        return timings

    def peak_rss_mb(self, side: Side, command: Sequence[str]) -> float:
        """Run COMMAND in a fresh Python that reports its children's peak resident memory."""
        probe = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,"
                 " stderr=subprocess.DEVNULL, check=True);"
                 " print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        result = subprocess.run([sys.executable, "-c", probe, *self.patcher(side), *command], capture_output=True,
                                env=self.env(side, warm=False), check=True, text=True)
        return int(result.stdout) / 1024  # ru_maxrss is in KiB on Linux


def _patcher_script() -> list[str]:
    # The console script beside this interpreter, not a shim that execs
    # another program first (pyenv's adds tens of milliseconds). Either way
    # the code comes from PYTHONPATH, which each side sets.
    script = Path(sys.executable).parent / "patcher"
    if script.is_file() and script.read_bytes().startswith(b"#!") and b"patcher.__main__" in script.read_bytes():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from patcher.__main__ import run; sys.argv[0] = 'patcher'; run()"]


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
        return bench.run(["bash", "-c", script, "gnu", str(scratch), str(vendor), top, str(diff), str(output)],
                         bench.env(None, warm=False))

    return run


def patcher_run(bench: Bench, side: Side, command: Sequence[str], *, warm: bool, ok: Sequence[int] = (0,),
                removes: Path | None = None) -> Callable[[], float]:
    """Return a timed run of ``patcher COMMAND`` for SIDE (REMOVES: its output, deleted first, untimed)."""
    def run() -> float:
        if removes is not None:
            removes.unlink(missing_ok=True)
        return bench.run([*bench.patcher(side), *command], bench.env(side, warm=warm), ok=ok)

    return run


def apply_run(bench: Bench, side: Side, vendor: Path, output: Path, *, warm: bool) -> Callable[[], float]:
    return patcher_run(bench, side, ["apply", str(vendor), "-o", str(output)], warm=warm, removes=output)


def _top_folder(vendor: Path) -> str:
    with zipfile.ZipFile(vendor) as archive:
        dockerfiles = sorted((n for n in archive.namelist() if n.endswith("Dockerfile")), key=len)
    return dockerfiles[0].rpartition("/")[0]


def context_files(path: Path) -> dict[str, tuple[int, str]]:
    """Each file of a build context: mode and sha256; the manifest's patch-set commit fields blanked."""
    found = {}
    with tarfile.open(path) as archive:
        for member in archive:
            if member.isfile():
                stream = archive.extractfile(member)
                assert stream is not None
                name = member.name.removeprefix("./")
                data = stream.read()
                if name == "patcher-manifest.json":
                    data = _without_commit(data)
                found[name] = (member.mode, hashlib.sha256(data).hexdigest())
    return found


def _without_commit(manifest: bytes) -> bytes:
    """The manifest with the patch set's commit and commit_reason blanked (they name each checkout).

    A ``"stage": null`` is dropped too: it says what a manifest without the
    field (written before patcher recorded the stage) means, the last stage.
    """
    text = manifest.decode("utf-8")
    value = json.loads(text)
    value["patch_set"]["commit"] = value["patch_set"]["commit_reason"] = None
    if value.get("stage") is None:
        value.pop("stage", None)
    return json.dumps(value, sort_keys=True).encode()


def compare(a: dict[str, tuple[int, str]], b: dict[str, tuple[int, str]], *, manifest: bool) -> str:
    """Say whether two contexts hold the same files (the manifest aside unless MANIFEST)."""
    if not manifest:
        a = {k: v for k, v in a.items() if k != "patcher-manifest.json"}
        b = {k: v for k, v in b.items() if k != "patcher-manifest.json"}
    if a == b:
        return f"identical ({len(a)} files, modes and bytes{'' if manifest else '; manifest aside'})"
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


def parsed_files(bench: Bench, side: Side, vendor: Path) -> str:
    """Say which files of VENDOR an apply parses (libcst or ast, this process), by content digest."""
    output = WORK / "probe.tar.gz"
    result = subprocess.run([sys.executable, "-c", _PROBE, "apply", str(vendor), "-o", str(output)],
                            capture_output=True, text=True, env=bench.env(side, warm=False), check=True)
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
    return (f"parsed by apply at scale (in its own process; the forked rule checker aside):"
            f" {len(vendor_files)} of {len(files)} vendor files ({', '.join(vendor_files)}),"
            f" plus {other} texts that are not vendor files (patterns, templates, the patched target)")


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
        "bytecode cache: on for every command (PYTHONDONTWRITEBYTECODE removed, PYTHONPYCACHEPREFIX="
        f"{OUT / 'pycache'}), filled by the untimed set-up runs",
    ]


def load() -> str:
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average: unknown"
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} (1, 5, 15 min)"


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
    parser.add_argument("--case", action="append", choices=CASES, default=None,
                        help="time only this drop (repeatable; default: all three)")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another patcher checkout, timed beside this one (its code through PYTHONPATH)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (2 if args.quick else 5)
    cases = [c for c in CASES if c in (args.case or CASES)]
    for tool in ("unzip", "patch", "tar", "gzip", "diff", "bash"):
        if shutil.which(tool) is None:
            raise SystemExit(f"bench: {tool} is not installed; the GNU pipeline needs it")
    if args.baseline is not None and not (args.baseline / "patcher" / "__main__.py").is_file():
        raise SystemExit(f"bench: {args.baseline} holds no patcher/__main__.py; give a checkout of patcher")

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    drops = {tag: _built(tag) for tag in cases}
    sides = [Side("now", ROOT, WORK / "cache-now")]
    if args.baseline is not None:
        sides.append(Side("before", args.baseline.resolve(), WORK / "cache-before"))
    bench = Bench(repeat, sides)
    started = load()

    # Untimed set-up: warm the bytecode cache and the page cache, fill each
    # side's cache, make the diffs, and check that every side builds the
    # GNU pipeline's context and prints what the others print.
    notes: list[str] = []
    differ = False
    diffs: dict[str, Path] = {}
    ours = sides[0]
    for tag, vendor in drops.items():
        contexts = {}
        for side in sides:
            applied = WORK / f"setup-{tag}-{side.label}.tar.gz"
            apply_run(bench, side, vendor, applied, warm=False)()
            warm_out = WORK / f"fill-{tag}-{side.label}.tar.gz"
            apply_run(bench, side, vendor, warm_out, warm=True)()  # fills the warm rows' caches
            contexts[side.label] = context_files(applied)
            warm_same = compare(contexts[side.label], context_files(warm_out), manifest=True)
            differ |= not warm_same.startswith("identical")
            notes.append(f"{tag}: {side.label}: warm apply's context vs cold apply's: {warm_same}")
        diff = diffs[tag] = WORK / f"{tag}.diff"
        bench.run([*bench.patcher(ours), "diff", "--no-color", str(vendor)], bench.env(ours, warm=False), stdout=diff)
        gnu_out = WORK / f"gnu-{tag}.tar.gz"
        gnu_pipeline(bench, vendor, diff, gnu_out, tag)()
        same = compare(contexts[ours.label], context_files(gnu_out), manifest=False)
        differ |= not same.startswith("identical")
        notes.append(f"{tag}: GNU context vs apply's: {same}; .tar.gz"
                     f" {(WORK / f'setup-{tag}-{ours.label}.tar.gz').stat().st_size:,} B (patcher) vs"
                     f" {gnu_out.stat().st_size:,} B (GNU)")
        for side in sides[1:]:
            same = compare(contexts[ours.label], contexts[side.label], manifest=True)
            differ |= not same.startswith("identical")
            notes.append(f"{tag}: context now vs {side.label}: {same} (the manifest's commit fields aside)")
    if "real-size" in drops:
        vendor = drops["real-size"]
        for command in _read_only(vendor):
            for warm in (False, True):
                said = {side.label: bench.verdict(side, command, warm=warm) for side in sides}
                same = len(set(said.values())) == 1
                differ |= not same
                cache = "warm" if warm else "cache off"
                notes.append(f"real-size: patcher {command[0]} ({cache}): {said[ours.label]}"
                             + ("" if len(sides) == 1 else "; the same before" if same
                                else f"; DIFFERENT before: {said['before']}"))
    if "scale" in drops:
        notes.append(parsed_files(bench, ours, drops["scale"]))

    print(f"timing, {repeat} repetitions each ...", file=sys.stderr)
    rows: list[Row] = []
    for tag, vendor in drops.items():
        title = TITLES[tag]
        target_cold, target_warm = ((SCALE_RATIO, SCALE_RATIO) if tag == "scale" else
                                    (APPLY_COLD_RATIO, APPLY_WARM_RATIO) if tag == "real-size" else (None, None))
        for warm, target in ((False, target_cold), (True, target_warm)):
            gnu = gnu_pipeline(bench, vendor, diffs[tag], WORK / f"gnu-{tag}.tar.gz", tag)
            actions = {side.label: apply_run(bench, side, vendor, WORK / f"apply-{tag}-{side.label}.tar.gz",
                                             warm=warm) for side in sides}
            timed = bench.alternate({**actions, GNU: gnu})
            rows.append(Row(f"apply, {'cache warm' if warm else 'cache off'}, {title}",
                            {side.label: timed[side.label] for side in sides}, timed[GNU], target,
                            note="same drop, same patches" if warm else f"diff for GNU from patcher diff"))
        if tag == "real-size":
            for command in _read_only(vendor):
                for warm in (True, False):
                    limit = (DIFF_WARM_S if command[0] == "diff" else READ_ONLY_WARM_S) if warm else None
                    timed = bench.alternate({side.label: patcher_run(bench, side, command, warm=warm, ok=(0, 1))
                                             for side in sides})
                    rows.append(Row(f"{command[0]}, {'cache warm' if warm else 'cache off'}, {title}", timed,
                                    target=limit))
        if tag == "scale":
            rss = {side.label: Timing(wall=[bench.peak_rss_mb(side, ["apply", str(vendor), "-o",
                                                                     str(WORK / f"rss-{side.label}-{i}.tar.gz")])
                                            for i in range(min(repeat, 3))]) for side in sides}
            rows.append(Row("peak RSS, apply at vendor scale", rss, target=PEAK_MB, unit="MB",
                            note="largest of the runs' max RSS"))
    clicks = bench.alternate({**{side.label: patcher_run(bench, side, ["--help"], warm=False) for side in sides},
                              "click": lambda: bench.run([sys.executable, "-c", "import click"],
                                                         bench.env(None, warm=False))})
    rows.append(Row("patcher --help (GNU column: python -c 'import click')",
                    {side.label: clicks[side.label] for side in sides}, clicks["click"], 2.0))

    print_table(rows, sides)
    print()
    print_issue_table(rows, sides)
    print()
    for line in [*machine(), f"before timing: {started}", f"after timing: {load()}",
                 *(zip_line(vendor) for vendor in drops.values()), *notes]:
        print(line)
    if differ:
        print("bench: an output differs (a context from the GNU pipeline's or between sides, or a command's"
              " output between sides; see above)", file=sys.stderr)
        return 1
    return 0


def _built(tag: str) -> Path:
    """Return the drop TAG names, (re)building it when missing or older than its generator's code."""
    if tag == "scale":
        path, source, make = make_vendor_scale.OUTPUT, make_vendor_scale.__file__, make_vendor_scale.build
    else:
        profile = make_realistic_drop.PROFILES[tag]
        path, source = profile.output, make_realistic_drop.__file__

        def make(output: Path) -> Path:
            return make_realistic_drop.build(output, profile=profile)
    if not path.is_file() or path.stat().st_mtime < Path(source).stat().st_mtime:
        print(f"building {path} ...", file=sys.stderr)
        make(path)
    return path


def _read_only(vendor: Path) -> list[list[str]]:
    """The read-only commands timed on the real-size drop (check exits 0 on it, with a warning)."""
    return [["check", str(vendor)], ["verify-sync", str(vendor)], ["inspect", str(vendor)],
            ["diff", "--no-color", str(vendor)]]


def print_table(rows: list[Row], sides: list[Side]) -> None:
    """Every row: each side's median, least and CPU; GNU's; ratios; the target."""
    header = [""]
    for side in sides:
        header += [f"{side.label} (median)", "(min)", "cpu s"]
    header += ["GNU/base (median)", "cpu s", *(f"ratio {s.label}" for s in sides), "target (now)", "note"]
    lines = [header]
    for row in rows:
        cells = [row.name]
        for side in sides:
            timing = row.sides.get(side.label)
            if timing is None:
                cells += ["", "", ""]
            elif row.unit != "s":
                cells += [_fmt(max(timing.wall), row.unit), "", ""]
            else:
                cells += [_fmt(timing.median), _fmt(min(timing.wall)), f"{timing.cpu_median:.2f}"]
        cells += [_fmt(row.gnu.median) if row.gnu else "", f"{row.gnu.cpu_median:.2f}" if row.gnu else ""]
        cells += [f"{r:.2f}x" if (r := row.ratio(side.label)) is not None else "" for side in sides]
        cells += [row.verdict(sides[0].label), row.note]
        lines.append(cells)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for number, line in enumerate(lines):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        if number == 0:
            print("  ".join("-" * width for width in widths))


def print_issue_table(rows: list[Row], sides: list[Side]) -> None:
    """Issue 24's table in markdown: medians (wall, and CPU), the GNU pipeline's, the ratio; before and after."""
    by_name = {row.name: row for row in rows}
    labels = [s.label for s in reversed(sides)]  # before, then now
    print("Issue 24's table (median wall seconds, CPU seconds in brackets; ratio of the wall medians):")
    print()
    header = ["", *(f"patcher {label}" for label in labels), f"GNU {GNU}", *(f"ratio {label}" for label in labels)]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for drop in ("benchmark drop", "real-size drop"):
        for cache in ("cache off", "cache warm"):
            row = by_name.get(f"apply, {cache}, {drop}")
            if row is None:
                continue
            cells = [f"apply, {cache}, {drop}"]
            cells += [f"{row.sides[label].median:.2f} s ({row.sides[label].cpu_median:.2f})" for label in labels]
            assert row.gnu is not None
            cells += [f"{row.gnu.median:.2f} s ({row.gnu.cpu_median:.2f})"]
            cells += [f"{row.ratio(label):.2f}x" for label in labels]
            print("| " + " | ".join(cells) + " |")
    for command in ("check", "verify-sync", "inspect", "diff"):
        warm, off = by_name.get(f"{command}, cache warm, real-size drop"), by_name.get(
            f"{command}, cache off, real-size drop")
        if warm is None or off is None:
            continue
        cells = [f"{command}, cache warm / off, real-size drop"]
        cells += [f"{warm.sides[label].median:.2f} / {off.sides[label].median:.2f} s"
                  f" ({warm.sides[label].cpu_median:.2f} / {off.sides[label].cpu_median:.2f})" for label in labels]
        cells += [""] + [""] * len(labels)
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())
