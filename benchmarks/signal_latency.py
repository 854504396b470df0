"""Measure how long ``patcher apply`` takes to stop after SIGTERM or SIGINT, at points through a large run.

Usage: python benchmarks/signal_latency.py [--size MB] [--at 0.5,1,2,4,8] [--signal TERM] [--unsupervised] [--failing]

Builds the 2 MB drop of ``large_target.py`` (its shipped paged_attn.py
grown to SIZE MB), starts ``python -m patcher apply`` on it with the patch
cache off, and sends the signal AT seconds after the start (a run that has
already ended is reported as such); then once at the start of patching and
once mid-write, through the test hooks, which wait for the signal there.
For each: the time from the signal to the process's exit, its exit code,
the lines on stderr, and whether anything is left in the output folder.
``--unsupervised`` adds the same runs with PATCHER_NO_SUPERVISOR=1 (the
command in one process, as before the watcher): Python handles a signal
only when native code (libcst's parser) lets it. ``--failing`` drops the
vendor's ``use_v1 = True`` line, so a step fails and the target is parsed
whole (seconds of libcst's parser holding the interpreter lock) to name
the closest code. Exit 1 if a supervised
run took a second or more, did not exit 130, printed other than one line,
or left anything.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import large_target  # noqa: E402

TARGET_S = 1.0


def run_once(drop: Path, out: Path, signum: int, *, at: float | None, hook: str | None,
             supervised: bool) -> tuple[str, float | None, int, int, list[str]]:
    """Start apply, signal it; return (when, seconds from signal to exit, exit code, stderr lines, what is left)."""
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATCHER_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    env.pop("PATCHER_NO_SUPERVISOR", None)
    if not supervised:
        env["PATCHER_NO_SUPERVISOR"] = "1"
    pass_fds: tuple[int, ...] = ()
    started = -1
    if hook is not None:
        started, started_w = os.pipe()
        env[hook] = f"/dev/fd/{started_w}"
        pass_fds = (started_w,)
    begin = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "patcher", "apply", str(drop), "-o", str(out / "ctx.tar.gz"),
                                "--patches", str(ROOT / "patches")], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env, pass_fds=pass_fds,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    if hook is not None:
        os.close(pass_fds[0])
        with os.fdopen(started, "rb") as pipe:
            reached = pipe.readline()
        when = hook.removeprefix("PATCHER_TEST_").removesuffix("_STARTED").lower() + " started"
        if not reached:
            process.communicate()
            return when + " (never reached)", None, process.returncode, 0, []
    else:
        assert at is not None
        time.sleep(max(0.0, at - (time.perf_counter() - begin)))
        when = f"{at:.1f} s"
    if process.poll() is not None:
        process.communicate()
        return when + " (already ended)", None, process.returncode, 0, []
    sent = time.perf_counter()
    process.send_signal(signum)
    _, stderr = process.communicate()
    latency = time.perf_counter() - sent
    left = sorted(p.name for p in out.iterdir())
    for name in left:
        (out / name).unlink()
    return when, latency, process.returncode, len(stderr.decode().splitlines()), left


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=float, default=2.0, help="target size in MB (default: %(default)s)")
    parser.add_argument("--at", default="0.5,1,2,3,4,6,8", help="seconds after start to signal (default: %(default)s)")
    parser.add_argument("--signal", default="TERM", choices=["TERM", "INT"], help="which signal (default: TERM)")
    parser.add_argument("--unsupervised", action="store_true", help="also run without the watcher, to compare")
    parser.add_argument("--failing", action="store_true", help="make a step fail, so the target is parsed whole")
    args = parser.parse_args(argv)
    signum = getattr(signal, f"SIG{args.signal}")
    bad = False
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        drop, data = large_target.make_drop(int(args.size * large_target.MB), folder, failing=args.failing)
        lines = data.count(b"\n")
        print(f"# patcher apply on a {len(data) / large_target.MB:.1f} MB target ({lines} lines), "
              f"SIG{args.signal}; patch cache off; {os.cpu_count()} CPUs")
        print(f"{'mode':<13} {'signalled at':<28} {'to exit':>9}  exit  lines  left")
        modes = [True, False] if args.unsupervised else [True]
        points: list[tuple[float | None, str | None]] = [(float(a), None) for a in args.at.split(",")]
        points += [(None, "PATCHER_TEST_PATCH_STARTED"), (None, "PATCHER_TEST_WRITE_STARTED")]
        for supervised in modes:
            for at, hook in points:
                when, latency, code, lines, left = run_once(drop, folder / "out", signum, at=at, hook=hook,
                                                            supervised=supervised)
                shown = "-" if latency is None else f"{latency:.3f} s"
                mode = "supervised" if supervised else "unsupervised"
                print(f"{mode:<13} {when:<28} {shown:>9}  {code:>4}  {lines:>5}  {' '.join(left) or '-'}")
                if supervised and latency is not None:
                    bad |= latency >= TARGET_S or code != 130 or lines != 1 or bool(left)
    print(f"# supervised: every signalled run stopped within {TARGET_S:.0f} s, exit 130, one line, nothing left: "
          f"{'no' if bad else 'yes'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
