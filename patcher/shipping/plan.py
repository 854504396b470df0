"""Work out which context file lands where in the image, from the Dockerfile and the scripts it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from ..archive.tree import SourceTree
from ..errors import ShippingError
from .add_archives import unpacks
from .dockerfile import Dockerfile, evaluate
from .dockerignore import (DOCKERIGNORE, MAX_PATTERN_PAIRS, IgnoreRule, glob_regex, has_glob, is_ignored,
                           parse_dockerignore)
from .image_fs import Placement
from .install_script import InstallScript
from .shell_records import Note

DOCKERFILE = "Dockerfile"
_MOVED_BY_DOCKER = ("COPY", "ADD", "RUN --mount")


@dataclass(frozen=True)
class Installed:
    """A context file and where a command of the build (an install script, a RUN line) puts it in the image."""

    path: str
    image_path: str
    script: str  # context path of the install script ("Dockerfile" for a RUN line's own command)
    line: int
    hides_failure: tuple[str, ...]
    stops_on_error: bool = True  # False when a failed copy would not stop the image build


@dataclass(frozen=True)
class Script:
    """An install script the Dockerfile runs, and what it does."""

    path: str  # context path
    image_path: str
    run_line: int  # the Dockerfile line that runs it
    body: InstallScript


@dataclass(frozen=True)
class ShipPlan:
    """Everything the Docker build takes from the context, and where it goes."""

    dockerfile: Dockerfile
    copied: dict[str, str]  # context path -> an image path it has in the image, for every file that ships
    scripts: tuple[Script, ...]
    installed: tuple[Installed, ...]
    ignored: tuple[str, ...] = ()  # context files .dockerignore keeps out of the build context
    copied_by: dict[str, int] = field(default_factory=dict)  # context path -> line of the COPY/ADD that brought it
    ignore_rules: tuple[IgnoreRule, ...] = ()  # the .dockerignore, for files a run adds
    notes: tuple[Note, ...] = ()  # what the reader did not read or follow, in the order the build runs
    image: Mapping[str, Placement] = field(default_factory=dict)  # image path -> the context file there
    copy_counts: Mapping[int, int] = field(default_factory=dict)  # COPY/ADD line -> files it placed

    def ships(self, path: str) -> bool:
        """Whether a context file reaches the image at all."""
        return path in self.copied

    def would_ship(self, path: str) -> bool:
        """Whether a file added to the context at ``path`` would be copied into the image."""
        if is_ignored(self.ignore_rules, path):
            return False
        stages = self.dockerfile.shipping_stages()
        for copy in self.dockerfile.copies:
            if copy.origin != "context" or copy.stage not in stages:
                continue
            for source in copy.sources:
                # What --exclude matches is the path below the source (see copy_flags).
                if source in ("", "."):
                    below: str | None = path
                elif path == source or path.startswith(source.rstrip("/") + "/"):
                    below = path[len(source.rstrip("/")) + 1:]
                else:
                    below = _below_glob(source, path) if has_glob(source) else None
                if below is not None and not (below and is_ignored(copy.exclude, below)):
                    return True
        return False

    def find(self, target: str) -> list[Installed]:
        """Every install whose image path is ``target`` or ends with ``/target`` (e.g. vllm/attention/ops/paged_attn.py)."""
        suffix = "/" + target.strip("/")
        found = [i for i in self.installed if i.image_path.endswith(suffix)]
        found += [
            Installed(path, image, DOCKERFILE, 0, ())  # line 0: where COPY alone puts it (upgrade compares these)
            for image, placed in sorted(self.image.items())
            if image.endswith(suffix) and not any(i.image_path == image for i in found)
            for path in [placed.source]
        ]
        return found

    def shipped_copy(self, target: str) -> str:
        """The one context file the image runs as ``target``, or raise ShippingError."""
        found = self.find(target)
        sources = sorted({i.path for i in found})
        if not sources:
            scripts = ", ".join(dict.fromkeys(s.path for s in self.scripts)) or "none"
            unread = self.unread()
            caveat = f"; {describe(unread)} could have placed it" if unread else ""
            raise ShippingError(
                f"nothing the image ships lands at .../{target} (install scripts run: {scripts}){caveat}",
                where=DOCKERFILE,
                hint="run {command} to see what the build copies where", command="inspect",
            )
        if len(sources) > 1:
            raise ShippingError(
                f"several files are installed as .../{target}: {', '.join(sources)}",
                where=DOCKERFILE,
                hint="the image would end up with whichever is copied last; remove the extra copy",
            )
        return sources[0]

    def unread(self) -> tuple[Note, ...]:
        """The commands of the stages that make the image that the reader did not read or follow."""
        labels = {self.dockerfile.stages[i].label for i in self.dockerfile.shipping_stages()
                  if i < len(self.dockerfile.stages)}
        return tuple(n for n in self.notes if n.kind in ("unread", "stop", "program") and (n.stage in labels or
                                                                                         not n.stage))

    def caveats(self, path: str, image_paths: tuple[str, ...] | None = None) -> tuple[Note, ...]:
        """The unread commands that could change what the image holds of context file ``path`` (at ``image_paths``)."""
        found: dict[tuple[str, int, str], Note] = {}
        for image_path, placed in self.image.items():
            if placed.source != path or (image_paths is not None and image_path not in image_paths):
                continue
            for note in self.unread():
                if _could_change(note, placed, image_path):
                    found.setdefault((note.file, note.line, note.reason), note)
        return tuple(sorted(found.values(), key=lambda n: n.order))


def _could_change(note: Note, placed: Placement, image_path: str) -> bool:
    """Whether ``note`` ran where and when it could change what the image holds at ``image_path``.

    The file travels by steps (COPY, cp, COPY --from...): a command could
    change it while it sat at one step's path, after that step and before
    the next took it on, in that step's stage. A command that could change
    the shell's own state (an unread ``eval``, a command named by an unknown
    variable) counts before a step of its stage too: it could send the copy
    elsewhere.
    """
    if note.kind not in ("unread", "stop", "program"):
        return False
    steps = placed.steps
    for index, step in enumerate(steps):
        if step.stage != note.stage:
            continue
        if note.kind == "unread" and note.scope is None and note.order < step.order:
            return True
        following = steps[index + 1].order if index + 1 < len(steps) else None
        if step.order < note.order and (following is None or note.order < following):
            if note.could_change(step.path or image_path):
                return True
    return False


def describe(notes: tuple[Note, ...]) -> str:
    """``line 12 of patch_ops.sh (`eval "$CMD"`)``, or ``lines 8 and 34 of patch_ops.sh (`a`, `b`)``."""
    by_file: dict[str, list[Note]] = {}
    for note in notes:
        by_file.setdefault(note.file, []).append(note)
    parts = []
    for file, found in by_file.items():
        shown = found[:3]
        numbers = [str(n.line) for n in shown]
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        if len(shown) == 1:
            where = f"line {numbers[0]}"
        elif more:
            where = f"lines {', '.join(numbers)}{more}"
        else:
            where = f"lines {', '.join(numbers[:-1])} and {numbers[-1]}"
        texts = ", ".join(f"`{n.text}`" for n in shown)
        parts.append(f"{where} of {file} ({texts})")
    return "; ".join(parts)


def plan_shipping(tree: SourceTree, target: str | None = None) -> ShipPlan:
    """Read the Dockerfile and the install scripts it runs; ``target`` names the stage that is the image."""
    if not tree.exists(DOCKERFILE):
        raise ShippingError("no Dockerfile at the context root", where=tree.label)
    _check_size(tree, DOCKERFILE)
    try:
        text = tree.read(DOCKERFILE).decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ShippingError("not UTF-8 text", where=DOCKERFILE) from None
    # moby's .dockerignore reader drops a UTF-8 byte-order mark, as BuildKit does the Dockerfile's.
    rules = parse_dockerignore((_script_text(tree, DOCKERIGNORE) or "").removeprefix("\ufeff")) \
        if tree.exists(DOCKERIGNORE) else ()
    all_paths = [f.path for f in tree.files()]
    if len(rules) * len(all_paths) > MAX_PATTERN_PAIRS:
        raise ShippingError(f"{len(rules):,} patterns against {len(all_paths):,} files are more than patcher "
                            f"matches ({MAX_PATTERN_PAIRS:,} pattern and file pairs)", where=DOCKERIGNORE,
                            hint="a .dockerignore this long is not the vendor's: check the input")
    ignored = tuple(p for p in all_paths if is_ignored(rules, p))
    skipped = set(ignored)
    paths = [p for p in all_paths if p not in skipped]
    evaluated = evaluate(text, paths, lambda path: _script_text(tree, path), target,
                         unpacks=lambda path: _unpacks(tree, path))
    image = evaluated.image.files
    copied: dict[str, str] = {}
    copied_by: dict[str, int] = {}
    installed: list[Installed] = []
    for image_path, placed in sorted(image.items(), key=lambda item: item[1].order):
        moves = [s for s in placed.steps if s.command not in _MOVED_BY_DOCKER]
        copies = [s for s in placed.steps if s.command in ("COPY", "ADD")]
        if copies:
            copied_by.setdefault(placed.source, copies[-1].line if not moves else copies[0].line)
        if not moves:
            copied.setdefault(placed.source, image_path)
            continue
        last = moves[-1]
        hides = tuple(dict.fromkeys(h for step in moves for h in step.hides_failure))
        installed.append(Installed(placed.source, image_path, last.file, last.line, hides,
                                   all(step.stops_on_error for step in moves)))
    for item in installed:
        copied.setdefault(item.path, item.image_path)  # reached the image only through a command
    scripts: dict[tuple[str, int], Script] = {}
    for record in evaluated.build.scripts:
        key = (record.path, record.run_line)
        body = InstallScript(tuple(record.copies), record.errexit_first, tuple(sorted(record.unknown)))
        if key in scripts:
            earlier = scripts[key].body
            body = InstallScript(earlier.copies + body.copies, earlier.stops_on_error,
                                 tuple(sorted({*earlier.unknown, *body.unknown})))
        scripts[key] = Script(record.path, record.image_path, record.run_line, body)
    return ShipPlan(evaluated.dockerfile, copied, tuple(scripts.values()), tuple(installed), ignored, copied_by,
                    rules, tuple(evaluated.build.notes), dict(image), dict(evaluated.counts))


# A Dockerfile is a few lines and an install script a few hundred; both are read
# whole and followed line by line, so a hostile one is refused by size first.
MAX_SCRIPT = 1 << 20


def _check_size(tree: SourceTree, path: str) -> None:
    """Refuse a Dockerfile or script past ``MAX_SCRIPT`` bytes before it is read."""
    size = next((f.size for f in tree.files() if f.path == path), 0)
    if size > MAX_SCRIPT:
        raise ShippingError(f"is {size} bytes; patcher follows scripts of at most {MAX_SCRIPT}", where=path,
                            hint="a Dockerfile or install script this large is not the vendor's: check the input")


def _unpacks(tree: SourceTree, path: str) -> bool:
    """Whether ADD unpacks the context file at ``path`` (a tar archive, by its first bytes)."""
    with tree.open(path) as stream:
        return unpacks(stream)


def _script_text(tree: SourceTree, path: str) -> str | None:
    """A context file as text (sh and Python read bytes; a file that is not UTF-8 is read as Latin-1).

    A UTF-8 byte-order mark stays: the kernel then finds no ``#!`` and sh reads it as part of the first word.
    """
    _check_size(tree, path)
    try:
        data = tree.read(path)
    except KeyError:
        return None
    if b"\0" in data[:8192]:
        return None  # a binary, not a script
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def parent_folders(path: str) -> list[str]:
    """The folders holding the context path ``path``, outermost first."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _below_glob(source: str, path: str) -> str | None:
    """PATH's path below the match of a wildcard source (the match itself, or a folder it matches), or None."""
    regex = glob_regex(source)
    parts = path.split("/")
    for n in range(1, len(parts) + 1):
        if regex.fullmatch("/".join(parts[:n])):
            return "/".join(parts[n:])
    return None


__all__ = ["DOCKERFILE", "Installed", "Script", "ShipPlan", "describe", "parent_folders", "plan_shipping"]

