"""A progress bar on stderr for writes long enough to watch.

The core reports bytes through a callback; this turns them into a bar.
Nothing is drawn when stderr is not a terminal (CI logs, pipes, tests),
nor for a write that finishes within DELAY seconds, so small archives
print exactly what they did before.
"""

from __future__ import annotations

import sys

import time
from typing import Callable, TextIO


DELAY = 1.0  # seconds of writing before the bar appears
_REFRESH = 0.1
_WIDTH = 30


class ProgressBar:
    """Draw ``writing NAME [#####.....]  45%  46/102 MB`` on one line of STREAM.

    ``unit`` and ``scale`` name what is counted: bytes shown as MB by
    default, or e.g. ``unit="cases", scale=1`` for ``70/158 cases``.
    """

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        delay: float = DELAY,
        clock: Callable[[], float] = time.monotonic,
        unit: str = "MB",
        scale: float = 1e6,
    ) -> None:
        self.label = label
        self.unit = unit
        self.scale = scale
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.delay = delay
        self.clock = clock
        self._start: float | None = None
        self._drawn_at: float | None = None

    def update(self, done: int, total: int) -> None:
        """Take the amount done so far (bytes by default); redraw at most ten times a second."""
        if not self.enabled:
            return
        now = self.clock()
        if self._start is None:
            self._start = now
        if now - self._start < self.delay:
            return
        if self._drawn_at is not None and now - self._drawn_at < _REFRESH and done < total:
            return
        self._drawn_at = now
        share = done / total if total else 1.0
        filled = int(share * _WIDTH)
        bar = "#" * filled + "." * (_WIDTH - filled)
        amount = f"{done / self.scale:.0f}/{total / self.scale:.0f} {self.unit}"
        self.stream.write(f"\r{self.label} [{bar}] {share:4.0%}  {amount}")
        self.stream.flush()

    def close(self) -> None:
        """Erase the bar, so the report starts on a clean line."""
        if self._drawn_at is not None:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn_at = None

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class StageLine:
    """Say which stage a slow command is in, ``upgrade: patching NEW (3/5)``, on one line of STREAM.

    For work that comes in steps rather than bytes. As with ``ProgressBar``,
    nothing is drawn off a terminal, nor before DELAY seconds have passed
    since the first stage: a quick run prints exactly what it printed before.
    """

    def __init__(self, label: str, stages: int, *, stream: TextIO | None = None, enabled: bool | None = None,
                 delay: float = DELAY, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.stages = stages
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = _is_terminal(self.stream) if enabled is None else enabled
        self.delay = delay
        self.clock = clock
        self._start: float | None = None
        self._count = 0
        self._drawn = False

    def __call__(self, stage: str) -> None:
        """Enter ``stage``; draw it once the run has taken longer than DELAY."""
        self._count += 1
        if not self.enabled:
            return
        now = self.clock()
        if self._start is None:
            self._start = now
        if now - self._start < self.delay:
            return
        self.stream.write(f"\r\x1b[K{self.label}: {stage} ({min(self._count, self.stages)}/{self.stages})")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Erase the line, so the report starts on a clean one."""
        if self._drawn:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> StageLine:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
