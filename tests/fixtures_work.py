"""A measure of work that no clock or machine load changes, for the tests that bound how work grows.

``traced_lines`` counts the Python lines a call executes; the tests compare
the counts for a small and a large input (speed itself is measured in
``benchmarks/``, never asserted).
"""

from __future__ import annotations

import sys
from typing import Any, Callable


def traced_lines(run: Callable[[], object]) -> int:
    """Count the Python lines RUN executes: a measure of work that no clock or load changes."""
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    # Put back the tracer that was there (coverage's, a debugger's), or the rest of the run goes untraced.
    previous = sys.gettrace()
    sys.settrace(lambda frame, event, arg: local)
    try:
        run()
    finally:
        sys.settrace(previous)
    return count
