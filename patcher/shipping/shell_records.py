"""What the reading of one build records and signals: its notes, the scripts it ran and what they copied, where
a command runs, what a ``$(...)`` hears, and the jumps (``exit``, ``return``, ``break``, a stop) that unwind
the shells. Shared by the interpreter, the commands and the Dockerfile reader."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import ShippingError
from .image_fs import ImageFS, Placement
from .shell_words import Unknowns, is_known

MAX_DEPTH = 16  # scripts, functions, eval and source nested in one another
MAX_COMMANDS = 100_000  # commands one build may run before the reader gives up
# Steps (a file placed, a command's move) one build may take: a few KiB of COPY lines over a large
# context could place millions of files, and the reader takes about 10 µs a file.
MAX_STEPS = 200_000
STEPS_PAST = f"the build takes more than {MAX_STEPS:,} steps (a file placed, an ONBUILD trigger run); the reader stops here"
MAX_GLOBBED = 5_000_000  # paths pathname expansion may look at in one build (each glob looks at all placed)
MAX_ITERATIONS = 1_000  # turns of one loop whose condition stays true
QUIET = ("2>/dev/null", "&>/dev/null", ">/dev/null 2>&1")  # hide the message, not the failure


@dataclass(frozen=True)
class Note:
    """A command the reader did not follow, or followed with a caveat, and what it could change."""

    file: str  # "Dockerfile", or the context path of the script
    line: int
    text: str  # the command as written
    reason: str
    kind: str  # "unread", "stop" (nothing after it is read), "program", "fails", "assumed"
    scope: tuple[str, ...] | None = None  # image paths (or "**/site-packages/NAME") it could change; None: any
    order: int = 0
    stage: str = ""  # the build stage, filled in by the plan

    def could_change(self, image_path: str) -> bool:
        """Whether what this command does could change the file at ``image_path``."""
        if self.kind not in ("unread", "stop", "program"):
            return False
        if self.scope is None:
            return True
        return any(covers(scope, image_path) for scope in self.scope)


def covers(scope: str, image_path: str) -> bool:
    """Whether ``scope`` (an image path, or ``**/dist-packages/NAME``) holds ``image_path``, on component boundaries."""
    if scope.startswith("**/"):
        return f"/{scope[3:]}/" in image_path or image_path.endswith(f"/{scope[3:]}")
    return image_path == scope or image_path.startswith(scope.rstrip("/") + "/")


@dataclass
class ScriptCopy:
    """One file or folder a script copies, in image paths (kept for the callers of ``read_install_script``)."""

    source: str
    destination: str  # ends with "/" when it is certainly a folder
    recursive: bool
    line: int
    hides_failure: tuple[str, ...] = ()
    stops_on_error: bool = False


@dataclass
class ScriptRecord:
    """One run of a context script: where, with what, and what it copied."""

    path: str  # context path
    image_path: str
    run_line: int  # the Dockerfile line whose RUN started it
    cwd: str
    environment: dict[str, str]
    copies: list[ScriptCopy] = field(default_factory=list)
    errexit_first: bool = False
    unknown: set[str] = field(default_factory=set)


class Build:
    """What all the shells of one build share: the image, the notes, the scripts run."""

    def __init__(self, fs: ImageFS, read_context: Callable[[str], str | None]):
        self.fs = fs
        self.read_context = read_context  # the text of a context file, or None
        self.unknowns = Unknowns()
        self.notes: list[Note] = []
        self.noted: set[tuple[object, ...]] = set()
        self.noted_lines: set[tuple[str, int, str]] = set()  # (file, line, kind) of each note: what a line has
        self.scripts: list[ScriptRecord] = []
        self.counter = 0
        self.commands = 0
        self.globbed = 0
        self.stage = ""  # the stage being built, for the steps and notes made now
        self.caches: dict[str, dict[str, Placement]] = {}  # RUN --mount=type=cache: id -> what RUNs left in it
        self.bash_version = self.unknowns.mark("$BASH_VERSION", word=True)  # what bash sets: a version, not empty

    def tick(self) -> int:
        """The next point in the order the build runs."""
        self.counter += 1
        return self.counter

    def data_text(self, source: str) -> str | None:
        """A context file a command only reads as data (``cat FILE``, ``$(< FILE)``), or None past what the reader
        reads: a file too large to be a script is the image's business, not a reason to refuse the build."""
        try:
            return self.read_context(source)
        except ShippingError:
            return None


@dataclass(frozen=True)
class CommandContext:
    """Where a command runs, and what would become of a failure there."""

    line: int
    text: str
    hides: tuple[str, ...] = ()  # what hides its failure: this line's, then the callers'
    stops_on_error: bool = False  # a failure stops the script (set -e in force, or the RUN ends on it)
    exempt: bool = False  # set -e does not apply: a condition, left of && or ||, a pipe, '!'
    tail: bool = False  # its status is the shell's exit status (nothing runs after it)
    # Run through 'command': an error of a special builtin (set, export, '.', shift ...) fails it and the script
    # reads on, where it would end the script (POSIX; bash and dash).
    through_command: bool = False


@dataclass(frozen=True)
class Trap:
    """``trap ACTION CONDITION``: the text the shell runs then, and the command that set it."""

    action: str
    line: int
    text: str


@dataclass
class Input:
    """Standard input the reader knows, with no unknown value in it (a here-document's, a file's, what a pipe's
    part printed), and how far the ``read`` commands have taken it."""

    text: str
    at: int = 0

    @staticmethod
    def of(text: str) -> Input | None:
        """TEXT as known input; None (unknown input) when it holds an unknown value."""
        return Input(text) if is_known(text) else None


@dataclass
class Captured:
    """What a ``$(...)`` hears: the text printed, and whether some of what was printed cannot be known."""

    text: list[str] = field(default_factory=list)
    unknown: bool = False


class Exit(Exception):
    """``exit``, or ``set -e`` ending a shell: with its status (None when unknown), and its number when known."""

    def __init__(self, status: bool | None = True, code: int | None = None):
        super().__init__(status)
        self.status = status
        self.code = code


class ReadOnly(Exception):
    """An assignment to, or ``unset`` of, a read-only variable."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


class Stop(Exception):
    """The reader cannot go on: what follows is unknown (a Note says why)."""


class NoMatch(Exception):
    """bash drops the rest of the script's line, which fails: failglob's pattern matched nothing, or an assignment
    alone set a read-only variable."""

    def __init__(self, pattern: str):
        super().__init__(pattern)
        self.pattern = pattern


class _Return(Exception):
    """``return [N]``: leaves the function or sourced file with that status (and its number, when known)."""

    def __init__(self, status: bool | None = True, code: int | None = None):
        super().__init__()
        self.status = status
        self.code = code


class _Loop(Exception):
    """``break N`` or ``continue N``, unwinding to the Nth loop around it."""

    def __init__(self, kind: str, count: int):
        super().__init__(kind)
        self.kind, self.count = kind, count

    def reached(self) -> str:
        """For the loop that caught it: ``break`` or ``continue`` when it is the loop meant; for one further out,
        raised on out, one loop fewer to go."""
        if self.count > 1:
            raise _Loop(self.kind, self.count - 1) from None
        return self.kind
