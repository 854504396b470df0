"""Count outcomes and turn them into report lines and the exit code, in one place."""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .pipeline import Build


class ExitCode(enum.IntEnum):
    """The exit codes of every command; ``--help`` documents them."""

    OK = 0
    DIFFERENCE = 1  # a check found a difference (drift, a non-empty diff)
    BAD_INPUT = 2  # bad input or usage, or a patch that does not apply; nothing written
    INTERNAL = 3  # a bug in patcher
    INTERRUPTED = 130  # Ctrl-C or SIGTERM; nothing written


EXIT_CODES_HELP = (
    "Exit codes: 0 done; 1 a check found a difference; 2 bad input or usage, "
    "or a patch does not apply (nothing is written); 3 internal error."
)

STALE_HINT = "the vendor file changed? run 'patcher diff' to see it"


@dataclass(frozen=True)
class ApplyReport:
    """What ``apply`` tells the user: per patch and file, the mirrors, the output."""

    build: "Build"
    output: str | None = None
    sha256: str | None = None

    @property
    def counts(self) -> Counter[str]:
        """How many patches ended in each status."""
        return Counter(o.status.value for f in self.build.files for o in f.outcomes)

    @property
    def exit_code(self) -> ExitCode:
        """2 when anything failed, else 0."""
        return ExitCode.BAD_INPUT if self.build.failed else ExitCode.OK

    def errors(self) -> list[str]:
        """One actionable line per failure."""
        lines = []
        for outcome in self.build.files:
            if outcome.parse_error:
                lines.append(f"{outcome.path}: does not parse: {outcome.parse_error}")
            for result in outcome.outcomes:
                if result.status.value == "failed":
                    lines.append(f"{outcome.path}: patch {result.patch.id}: {result.detail} ({STALE_HINT})")
        return lines

    def lines(self) -> list[str]:
        """The human report, for stderr."""
        out = []
        for outcome in self.build.files:
            out.append(f"{outcome.path}")
            for result in outcome.outcomes:
                out.append(f"  {result.status.value:<16} {result.patch.id:<22} {result.patch.summary}")
        for mirror in () if self.build.failed else self.build.mirrors:
            if mirror.differed:
                how = "differed only in line endings" if mirror.line_endings_only else "differed"
                out.append(f"mirror {mirror.path}: {how} from {mirror.shipped}; now identical to it")
            else:
                out.append(f"mirror {mirror.path}: identical to {mirror.shipped}")
        counts = self.counts
        summary = (f"{counts['applied']} applied, {counts['already applied']} already applied, "
                   f"{counts['failed']} failed")
        if not self.build.failed:
            summary += f"; {sum(m.differed for m in self.build.mirrors)} mirror(s) re-synced"
        out.append(summary)
        if self.output is not None:
            out.append(f"wrote {self.output}")
            out.append(f"sha256 {self.sha256}")
        elif self.build.failed:
            out.append("nothing written")
        return out
