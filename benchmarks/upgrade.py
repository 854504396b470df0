"""Time ``patcher upgrade`` on pairs of realistic drops, and say where the time goes.

Usage: python benchmarks/upgrade.py [--repeat N] [--baseline CHECKOUT] [--profile] [--pair NAME ...]

OLD is the realistic drop (benchmarks/make_realistic_drop.py, built once under
benchmarks/out/), unpacked; each NEW is the same tree with one of the edits a
new vendor drop brings (fixtures/make_upgrade_pairs.py's variants, found with
``ast``, so they survive the generator's changes), plus two made here:

- ``broken-series``: the shipped paged_attn.py is the stale upstream-shaped
  root copy in both drops: no patch applies and the Triton import fails the
  rules (the case a CI gate must not call "no change");
- ``large-prefill``: the prefill grown by 4,400 lines of diagnostics, as the
  2,000-2,500-line versions seen in the wild, with every seventh one edited
  in NEW: both prefill patches rely on that scope, so it is diffed once for
  two patches.

Each pair is timed in a fresh process, as a user runs it, with the caches
off (PATCHER_NO_CACHE=1), cold (an empty cache folder: the first run on a
drop) and warm (a run before fills them), N times; the
table gives the median and the minimum wall time, and the CPU seconds of
the process and its children (the forked rule child). ``--baseline`` runs
the same pairs with another checkout's code (PYTHONPATH), alternating the
two sides, so load drifts hit both. ``--profile`` prints, for each pair,
the functions with the most cumulative time in one cold run. Not a test:
it prints figures and exits 0.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import cProfile
import io
import os
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "out" / "upgrade"
SHIPPED = "qwen3_6_scripts/paged_attn.py"

sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "fixtures"))
import make_realistic_drop  # noqa: E402
import make_upgrade_pairs  # noqa: E402

PAIRS = ("unchanged", "v2-gains-argument", "no-longer-applies", "broken-series", "large-prefill")


def build_pairs(names: list[str]) -> dict[str, tuple[Path, Path]]:
    """Unpack the realistic drop as OLD and, per pair, a NEW with that pair's edit; return the folders."""
    drop = make_realistic_drop.OUTPUT
    if not drop.exists():
        make_realistic_drop.build(drop)
    shutil.rmtree(WORK, ignore_errors=True)
    pairs = {}
    for name in names:
        old, new = WORK / name / "old", WORK / name / "new"
        for folder in (old, new):
            with zipfile.ZipFile(drop) as archive:
                archive.extractall(folder)
        old_root, new_root = _root(old), _root(new)
        if name == "broken-series":
            for root in (old_root, new_root):
                (root / SHIPPED).write_bytes((root / "paged_attn.py").read_bytes())
        elif name == "large-prefill":
            _grow_prefill(old_root, edit=False)
            _grow_prefill(new_root, edit=True)
        else:
            make_upgrade_pairs.VARIANTS[name](new_root)
        pairs[name] = (old_root, new_root)
    return pairs


def _root(folder: Path) -> Path:
    (top,) = [p for p in folder.iterdir() if p.is_dir()]
    return top


def _grow_prefill(root: Path, edit: bool) -> None:
    """Add 4,400 lines of diagnostics at the top of the prefill's per-sequence loop; NEW edits every 7th."""
    path = root / SHIPPED
    text = path.read_bytes().decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = text.split(newline)
    function = next(n for n in ast.walk(ast.parse(text.replace("\r\n", "\n")))
                    if isinstance(n, ast.FunctionDef) and n.name == "_forward_prefix_pytorch")
    loop = next(n for n in ast.walk(function) if isinstance(n, ast.For) and "batch_size" in ast.unparse(n.iter))
    indent = " " * loop.body[0].col_offset
    added = []
    for k in range(2200):
        tag = f"w{k}" if edit and k % 7 == 0 else f"v{k}"
        added += [f"{indent}if _DIAG_LEVEL > {k % 5}:  # diagnostics {k}",
                  f"{indent}    _diag_log('{tag}', i, ctx_len if {k % 3} else q_len)"]
    first = loop.body[0].lineno - 1
    lines[first:first] = added
    path.write_bytes(newline.join(lines).encode("utf-8"))


def run(checkout: Path, old: Path, new: Path, cache: Path | None) -> tuple[float, float, int]:
    """Run upgrade once in a fresh process; return wall seconds, CPU seconds (children included), exit code."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    if cache is None:
        env["PATCHER_NO_CACHE"] = "1"
    else:
        env.pop("PATCHER_NO_CACHE", None)
        env["PATCHER_CACHE_DIR"] = str(cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # Run from WORK: 'python -m' puts the working folder first on sys.path, and a checkout's own
    # folder there would shadow the PYTHONPATH that picks the side.
    done = subprocess.run([sys.executable, "-m", "patcher", "upgrade", str(old), str(new)], env=env, cwd=WORK,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"upgrade failed on {new}: {done.stderr.decode(errors='replace')}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def profile(old: Path, new: Path, top: int = 18) -> str:
    """Profile one cold run in this process; return the functions with the most cumulative time."""
    from patcher.cli import main

    os.environ["PATCHER_NO_CACHE"] = "1"
    profiler = cProfile.Profile()
    out = io.StringIO()
    profiler.enable()
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the report itself is not the point here
            main(["upgrade", str(old), str(new)], standalone_mode=False)
    except SystemExit:
        pass
    finally:
        profiler.disable()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(top)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    """Build the pairs, time each one, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per pair and setting (default: %(default)s)")
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout to compare with")
    parser.add_argument("--profile", action="store_true", help="print where one cold run spends its time")
    parser.add_argument("--pair", action="append", choices=PAIRS, default=None)
    args = parser.parse_args(argv)
    pairs = build_pairs(args.pair or list(PAIRS))
    sides = [("this checkout", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    print(f"# patcher upgrade on realistic-drop pairs; median (min) of {args.repeat} runs; CPU includes children")
    print(f"{'pair':<20} {'side':<14} {'cache':<6} {'exit':>4} {'wall s':>14} {'cpu s':>7}")
    for name, (old, new) in pairs.items():
        for cache_name in ("off", "cold", "warm"):
            timings: dict[str, list[tuple[float, float, int]]] = {label: [] for label, _ in sides}
            caches = {label: WORK / name / f"cache-{index}" for index, (label, _) in enumerate(sides)}
            if cache_name == "warm":
                for label, checkout in sides:
                    run(checkout, old, new, caches[label])  # fills the cache
            for repetition in range(args.repeat):
                order = sides if repetition % 2 == 0 else list(reversed(sides))
                for label, checkout in order:
                    if cache_name == "cold":
                        shutil.rmtree(caches[label], ignore_errors=True)  # empty: the first run of the day
                    timings[label].append(run(checkout, old, new, None if cache_name == "off" else caches[label]))
            for label, _ in sides:
                walls = [t[0] for t in timings[label]]
                cpus = [t[1] for t in timings[label]]
                codes = {t[2] for t in timings[label]}
                print(f"{name:<20} {label:<14} {cache_name:<6} {'/'.join(map(str, sorted(codes))):>4} "
                      f"{statistics.median(walls):>6.3f} ({min(walls):.3f}) {statistics.median(cpus):>7.3f}")
    if args.profile:
        sys.path.insert(0, str(ROOT))
        for name, (old, new) in pairs.items():
            print(f"\n# profile, {name}, cache off\n{profile(old, new)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
