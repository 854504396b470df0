"""What the nesting guard costs, beside the parse it protects, and how deep real code goes.

Usage: python benchmarks/nesting_guard.py [--repeat N] [--corpus DIR ...]

On the shipped Python of the realistic drop (``make_realistic_drop.py``,
built under ``benchmarks/out/`` if missing) it times ``parse_problem``
(libcst's count, and ast's) against ``ast.parse`` of the same text, best
of N in CPU time, and prints the deepest count of each file set beside the bound.
With ``--corpus``, every ``.py`` under each folder is scanned as ``ast``
readers scan it, and the files past the bound are listed with their
count: how often real code would be refused.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
import warnings
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from patcher.depth import MAX_NESTING, nesting_count, parse_problem, source_text  # noqa: E402

DROP = HERE / "out" / "realistic-drop.zip"
FIXTURE = HERE.parent / "fixtures" / "vendor" / "enginex-vllm-bi100-qwen36-main"


def shipped_sources() -> dict[str, str]:
    """The shipped Python of the realistic drop, decoded."""
    if not DROP.exists():
        import make_realistic_drop

        make_realistic_drop.main(["--output", str(DROP)])
    with zipfile.ZipFile(DROP) as archive:
        return {info.filename: source_text(archive.read(info)) for info in archive.infolist()
                if "/qwen3_6_scripts/" in info.filename and info.filename.endswith(".py")}


def best(repeat: int, work: object) -> float:
    """The least CPU time WORK took in REPEAT runs (CPU time: on a shared machine wall time is mostly others')."""
    fastest = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        work()  # type: ignore[operator]
        fastest = min(fastest, time.process_time() - start)
    return fastest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--corpus", type=Path, nargs="*", default=[])
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    sources = shipped_sources()
    texts = list(sources.values())
    size = sum(len(t) for t in texts)
    guard = best(args.repeat, lambda: [parse_problem(t) for t in texts])
    guard_ast = best(args.repeat, lambda: [parse_problem(t, strings_nest=False) for t in texts])
    parse = best(args.repeat, lambda: [ast.parse(t) for t in texts])
    print(f"realistic drop: {len(texts)} shipped Python files, {size / 1e3:.0f} KB "
          f"(CPU time, best of {args.repeat})")
    print(f"  ast.parse                     {parse * 1e3:8.1f} ms")
    print(f"  guard, libcst's count         {guard * 1e3:8.1f} ms  ({guard / parse:.0%} of the parse)")
    print(f"  guard, ast's count            {guard_ast * 1e3:8.1f} ms  ({guard_ast / parse:.0%} of the parse)")
    for label, files in (("realistic drop", sources),
                         ("fixture tree", {str(p): p.read_text() for p in sorted(FIXTURE.rglob("*.py"))})):
        worst = max(files, key=lambda name: nesting_count(files[name]))
        print(f"  deepest count, {label:16} {nesting_count(files[worst]):4} of {MAX_NESTING} ({Path(worst).name})")
    for folder in args.corpus:
        paths = sorted(folder.rglob("*.py"))
        start, flagged, scanned = time.perf_counter(), [], 0
        for path in paths:
            try:
                text = source_text(path.read_bytes())
            except OSError:
                continue
            scanned += len(text)
            if parse_problem(text, strings_nest=False) is not None:
                flagged.append(path)
        took = time.perf_counter() - start
        print(f"corpus {folder}: {len(paths)} files, {scanned / 1e6:.1f} MB in {took:.1f} s; "
              f"{len(flagged)} past the bound as ast reads them")
        for path in flagged:
            print(f"  {nesting_count(source_text(path.read_bytes()), strings_nest=False):6}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
