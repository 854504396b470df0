"""Time ``patcher apply`` on drops whose shipped ``paged_attn.py`` has grown to 1 MB and 2 MB.

Usage: python benchmarks/large_target.py [--sizes 1,2] [--repeat N] [--keep DIR]

The vendor's diagnostic versions of ``paged_attn.py`` ran to 2,000-2,500
lines: module-level flags read from the environment, per-process logging
sets, validation helpers that raise ``RuntimeError`` on bad block tables,
``os.getpid()`` in every log line. This grows the fixture's shipped copy
the same way, much further: diagnostics helpers and validators inside
``PagedAttention`` (after the methods the patches edit), and module-level
helper functions, classes and dataclasses before and after the class,
drawn from ``make_realistic_drop``'s grammar and from the diagnostics
shapes, until the file holds SIZE MB; then CRLF, as the vendor's editor
saves it. The scopes the patch series edits are the fixture's, so the
series applies. Seeded: the same size gives the same bytes.

Each drop is the fixture tree with that file in place of the shipped
copy (the stale root copy becomes its mirror). ``patcher apply`` runs in a
fresh process with the patch cache off, REPEAT times per size; the script
prints the file's lines and bytes, each run's wall time, the median, and
whether the 2 MB target meets 10 s. Exit 1 if a run fails.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "fixtures"))
import make_realistic_drop as realistic  # noqa: E402  (the Python grammar)
from build_demo_zip import TREE, build_zip  # noqa: E402

SHIPPED = "qwen3_6_scripts/paged_attn.py"
SEED = 20261220
TARGET_2MB_S = 10.0
MB = 1 << 20
CLASS_END = "    @staticmethod\n    def swap_blocks("  # helpers go in the class before this method


def grow(size: int, seed: int = SEED) -> bytes:
    """Return the fixture's shipped ``paged_attn.py`` grown to about SIZE bytes, in CRLF."""
    rng = random.Random(seed + size)
    base = (TREE / SHIPPED).read_text(encoding="utf-8")
    head, sep, tail = base.partition("\nclass PagedAttention:")
    if not sep or CLASS_END not in tail:
        raise SystemExit(f"{SHIPPED}: the fixture no longer has the shape this benchmark grows")
    body, end, rest = tail.partition(CLASS_END)
    # A third each: module helpers before the class, methods in it, module helpers after it.
    share = max(0, size - len(base)) // 3
    before = _module_helpers(rng, share, prefix="_pre")
    methods = _class_helpers(rng, share)
    after = _module_helpers(rng, size - len(base) - len(before) - len(methods), prefix="_post")
    text = head + "\n" + _flags(rng) + before + sep + body + methods + end + rest.rstrip("\n") + "\n" + after
    compile(text, SHIPPED, "exec")  # a generator bug must not pass for a slow patcher
    return text.replace("\n", "\r\n").encode()


def _flags(rng: random.Random) -> str:
    lines = ["import os", "", "# Diagnostics (BI-V100 bring-up): read once at import."]
    for word in rng.sample(realistic._WORDS, 12):
        lines.append(f'_DEBUG_{word.upper()} = int(os.environ.get("PAGED_ATTN_DEBUG_{word.upper()}", "0"))')
    lines += ["_LOGGED_SHAPES: set = set()", "_WARNED: set = set()", "", ""]
    return "\n".join(lines) + "\n"


def _module_helpers(rng: random.Random, size: int, prefix: str) -> str:
    out: list[str] = []
    length = 0
    number = 0
    while length < size:
        kind = rng.random()
        if kind < 0.35:
            unit = ["", ""] + _validator(rng, f"{prefix}_check_{number}", indent="")
        elif kind < 0.55:
            unit = _compiling(lambda: realistic._class(rng))
        elif kind < 0.65:
            unit = realistic._dataclass(rng)
        else:
            unit = ["", ""] + _function(rng, indent="", method=False)
        number += 1
        out += unit
        length += sum(len(line) + 2 for line in unit)
    return "\n".join(out) + "\n" if out else ""


def _class_helpers(rng: random.Random, size: int) -> str:
    out: list[str] = []
    length = 0
    number = 0
    while length < size:
        if rng.random() < 0.5:
            unit = ["    @staticmethod"] + _validator(rng, f"_validate_{number}", indent="    ")
        else:
            unit = _function(rng, indent="    ", method=True, attributes=[realistic._ident(rng)])
        unit.append("")
        number += 1
        out += unit
        length += sum(len(line) + 2 for line in unit)
    return "\n".join(out) + "\n" if out else ""


def _function(rng: random.Random, *, indent: str, method: bool, attributes: list[str] | None = None) -> list[str]:
    return _compiling(lambda: realistic._function(rng, indent=indent, method=method, attributes=attributes),
                      indent)


def _compiling(draw: Callable[[], list[str]], indent: str = "") -> list[str]:
    """Draw units of the realistic grammar until one compiles (it may draw a parameter name twice)."""
    while True:
        unit = draw()
        try:
            compile("class C:\n" * bool(indent) + "\n".join(unit), "<unit>", "exec")
        except SyntaxError:
            continue
        return unit


def _validator(rng: random.Random, name: str, indent: str) -> list[str]:
    """A block-table or shape check as the diagnostic versions wrote them, with its logging."""
    tensor = rng.choice(("block_tables", "seq_lens", "context_lens", "query_start_loc", "key_cache", "value_cache"))
    flag = f"_DEBUG_{rng.choice(realistic._WORDS).upper()}"
    i = indent
    return [
        f"{i}def {name}({tensor}: torch.Tensor, num_blocks: int, where: str = \"\") -> None:",
        f'{i}    """Raise RuntimeError if ``{tensor}`` points outside the cache ({realistic._sentence(rng)})."""',
        f"{i}    if {tensor} is None or {tensor}.numel() == 0:",
        f"{i}        return",
        f"{i}    low = int({tensor}.min().item())",
        f"{i}    high = int({tensor}.max().item())",
        f"{i}    if low < 0 or high >= num_blocks:",
        f"{i}        raise RuntimeError(",
        f'{i}            "[paged_attn pid=%d] %s: {tensor} out of range [%d, %d] for %d blocks"',
        f"{i}            % (os.getpid(), where, low, high, num_blocks))",
        f"{i}    key = (where, tuple({tensor}.shape))",
        f"{i}    if {flag} and key not in _LOGGED_SHAPES:  # once per shape and process",
        f"{i}        _LOGGED_SHAPES.add(key)",
        f'{i}        print("[paged_attn pid=%d] %s {tensor}=%s" % (os.getpid(), where, key[1]), file=sys.stderr)',
    ]


FORCED_V1 = b"        use_v1 = True  # BI-V100: the V2 kernel is not available\r\n"


def make_drop(size: int, folder: Path, *, failing: bool = False) -> tuple[Path, bytes]:
    """Write the fixture tree with the grown shipped copy as a zip under FOLDER; return it and the file.

    ``failing`` drops the vendor's forced-V1 line: three-tier-decode's step
    then finds nothing, and the closest code is searched for.
    """
    data = grow(size)
    if failing:
        assert FORCED_V1 in data, "the fixture's forced-V1 line moved"
        data = data.replace(FORCED_V1, b"", 1)
    tree = folder / f"tree-{size}" / TREE.name
    shutil.copytree(TREE, tree)
    (tree / SHIPPED).write_bytes(data)
    output = folder / f"large-{size // MB}mb{'-failing' if failing else ''}.zip"
    build_zip(tree, output)
    shutil.rmtree(tree.parent)
    return output, data


def time_apply(drop: Path, folder: Path) -> tuple[float, float, int, str]:
    """Run ``patcher apply`` on DROP in a fresh process; return wall and CPU seconds, exit code, stderr's last line.

    CPU seconds are user + system of the process and everything it ran
    (the watcher, the command, its forked rule checker): the figure the
    machine's load does not change.
    """
    output = folder / "ctx.tar.gz"
    env = {**os.environ, "PATCHER_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "patcher", "apply", str(drop), "-o", str(output), "--force",
                           "--patches", str(ROOT / "patches")], capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    output.unlink(missing_ok=True)
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return seconds, cpu, done.returncode, last


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,2", help="target sizes in MB, comma-separated (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (default: %(default)s)")
    parser.add_argument("--keep", type=Path, default=None, help="write the drops here and keep them")
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.keep or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"# patcher apply, patch cache off, {args.repeat} run(s) per size; {os.cpu_count()} CPUs, "
              f"load average {os.getloadavg()[0]:.1f}")
        print(f"{'size':>6} {'lines':>7} {'bytes':>9}  {'wall runs (s)':<22} {'wall median':>11} {'CPU median':>10}")
        for size in (int(float(s) * MB) for s in args.sizes.split(",")):
            drop, data = make_drop(size, folder)
            walls, cpus = [], []
            for _ in range(args.repeat):
                seconds, cpu, code, last = time_apply(drop, folder)
                walls.append(seconds)
                cpus.append(cpu)
                if code:
                    failed = True
                    print(f"  exit {code}: {last}")
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            verdict = ""
            if size == 2 * MB:
                verdict = f"  target < {TARGET_2MB_S:.0f} s: {'met' if wall < TARGET_2MB_S else 'missed'}"
            runs = " ".join(f"{t:.2f}" for t in walls)
            lines = data.count(b"\n")
            print(f"{size / MB:4.1f}MB {lines:>7} {len(data):>9}  {runs:<22} {wall:>9.2f} s {cpu:>8.2f} s{verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
