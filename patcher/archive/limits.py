"""Bounds that keep a hostile zip from exhausting memory, disk or time."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1 << 20
GiB = 1 << 30

# Limits are there for untrusted input; a trusted archive may pass them.
RAISE_HINT = "if the archive is trusted, raise the limit with {}"


@dataclass(frozen=True)
class Limits:
    """Hold the most a vendor zip may declare or expand to.

    The real vendor zip (about 100 MB, 1,400 members) sits far below each
    bound; a zip bomb trips one of them from its central directory, and a
    zip whose headers lie about sizes trips them again while streaming.
    """

    max_members: int = 50_000
    max_total_size: int = 1 * GiB
    max_ratio: int = 100
    # Small files legitimately compress far better than 100:1 (a file of
    # blank lines, say); only members this large are ratio-checked.
    ratio_min_size: int = 1 * MiB
