"""Build a Dockerfile's stages against the model of the image, as BuildKit does.

Each ``FROM`` starts a stage with its own ``WORKDIR`` (``/``; an image's
own, unknown, is noted where a relative path depends on it) and variables; a stage ``FROM`` an earlier one inherits its files, ``ENV``,
``WORKDIR`` and ``SHELL``, and runs that stage's ``ONBUILD`` triggers before its own lines. ``ARG`` before the first ``FROM`` is seen by
``FROM`` lines only, unless a stage declares it again (``ARG NAME``);
``ENV`` overrides an ``ARG`` of the same name. Variables are substituted
in ``FROM``, ``COPY``/``ADD`` (not ``--from``: BuildKit refuses a ``$`` there), ``WORKDIR``, ``ENV``
and ``ARG``, never in ``RUN`` (its shell does that). ``COPY`` takes files
from the build context, from another stage (``--from=NAME`` or a
number: what that stage holds, context files followed), or from an image
(nothing of the context); ``--exclude`` and ``--parents`` change which files
land where as ``copy_flags`` says. ``RUN`` goes through the shell reader, with the
stage's ``SHELL`` and ``--mount=type=bind`` folders. Only the final stage
(or the ``--target`` one) is the image.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping
from urllib.parse import urlsplit

from ..errors import ShippingError
from .docker_syntax import HEREDOC, DockerLexer, Instruction, env_pairs, json_or_words, read_instructions
from .command_lookup import NO_PROGRAM
from .copy_flags import WILDCARD_MATCH_EXCLUDED, CopyFlags, parents_root, read_copy_flags
from .dockerignore import MAX_PATTERN_PAIRS, IgnoreRule, glob_regex, has_glob, is_ignored, pattern_rules
from .image_fs import ImageFS, Kind, Placement, Step, normalise
from .shell_commands import dispatch
from .shell_interpreter import Shell, shebang
from .shell_nodes import decimal
from .shell_records import MAX_STEPS, STEPS_PAST, Build, CommandContext, Exit, Stop
from .shell_words import is_known

DEFAULT_SHELL = ("/bin/sh", "-c")
_PLATFORM_ARGS = ("BUILDPLATFORM", "BUILDOS", "BUILDARCH", "BUILDVARIANT", "TARGETPLATFORM", "TARGETOS",
                  "TARGETARCH", "TARGETVARIANT")
_COPY_FLAGS = frozenset({"from", "chown", "chmod", "link", "parents", "exclude", "checksum", "keep-git-dir",
                         "unpack"})


@dataclass(frozen=True)
class ContextCopy:
    """A ``COPY``/``ADD``: its sources (context paths, or paths in another stage) and image destination."""

    sources: tuple[str, ...]  # context-relative, normalised ("." for the root); may hold globs
    destination: str  # absolute image path; ends with "/" when it names a folder
    line: int  # 1-based line in the Dockerfile
    instruction: str = "COPY"  # or "ADD"
    flags: tuple[str, ...] = ()  # e.g. ("--chown=1000:1000",), as written
    stage: int = 0
    origin: str = "context"  # "context", "stage NAME", or "image REF"
    exclude: tuple[IgnoreRule, ...] = ()  # its --exclude patterns, matched below each source


@dataclass(frozen=True)
class ScriptRun:
    """A context script that a ``RUN`` executes (directly, or through a script it runs)."""

    script: str  # absolute image path of the script
    cwd: str  # the directory it runs in
    line: int
    environment: Mapping[str, str] = field(default_factory=dict)  # the ENV and ARG values it sees


@dataclass(frozen=True)
class Workdir:
    """A ``WORKDIR``, resolved to the absolute image path later relative paths start from."""

    path: str
    line: int
    stage: int = 0


@dataclass(frozen=True)
class Stage:
    """A build stage: where it starts, what it is built FROM, and which stages it takes files from."""

    index: int
    name: str | None
    base: str
    line: int
    parent: int | None  # the earlier stage it is FROM, if any
    uses: tuple[int, ...] = ()  # the stages it copies or mounts from

    @property
    def label(self) -> str:
        """How messages name it."""
        return self.name or f"stage {self.index}"


@dataclass(frozen=True)
class Dockerfile:
    """The parts of a Dockerfile that decide what reaches the image."""

    copies: tuple[ContextCopy, ...]
    runs: tuple[ScriptRun, ...]
    workdirs: tuple[Workdir, ...] = ()
    stages: tuple[Stage, ...] = ()
    final: int = 0  # index of the stage that is the image

    def shipping_stages(self) -> set[int]:
        """The final stage and every stage it is built from or takes files from."""
        wanted, pending = set(), [self.final]
        while pending:
            index = pending.pop()
            if index in wanted or index >= len(self.stages):
                continue
            wanted.add(index)
            stage = self.stages[index]
            pending += [*stage.uses, *([stage.parent] if stage.parent is not None else [])]
        return wanted


def names_folder(path: str) -> bool:
    """Whether ``path`` ends in ``.`` or ``..`` (``COPY file .``, ``cp file .``), which is always a folder."""
    return posixpath.basename(path) in (".", "..")


@dataclass
class _StageState:
    stage: Stage
    fs: ImageFS
    env: dict[str, str]
    args: dict[str, str | None]
    workdir: str
    shell: tuple[str, ...]
    base_known: bool  # FROM scratch, or FROM a stage that is: no variable comes from elsewhere
    uses: set[int] = field(default_factory=set)
    workdir_set: bool = True  # False until an absolute WORKDIR: the base image's own WORKDIR stands, unknown
    onbuild: list[Instruction] = field(default_factory=list)  # its ONBUILD triggers, run by a stage FROM it
    user: str = "root"  # USER: whose HOME a RUN gets (the image's /etc/passwd says where, for any but root)


@dataclass
class Evaluated:
    """What building the Dockerfile left: the image, the notes, the scripts run, the files each COPY took."""

    dockerfile: Dockerfile
    build: Build
    image: ImageFS
    counts: dict[int, int]  # COPY/ADD line -> files it placed


def evaluate(text: str, context: list[str], read_context: Callable[[str], str | None], target: str | None = None,
             where: str = "Dockerfile", unpacks: Callable[[str], bool] = lambda path: False) -> Evaluated:
    """Build every stage of the Dockerfile ``text`` over the context files ``context``; ``unpacks``: whether ADD
    unpacks a context file (a tar archive by its bytes: ``add_archives``)."""
    return _Evaluator(context, read_context, where, unpacks).run(read_instructions(text, where), target)


class _Evaluator:
    def __init__(self, context: list[str], read_context: Callable[[str], str | None], where: str,
                 unpacks: Callable[[str], bool] = lambda path: False):
        self.unpacks = unpacks
        self.paths = context
        self.path_set = set(context)
        self.folders = {posixpath.dirname(p) for p in context}
        for folder in list(self.folders):
            while folder:
                folder = posixpath.dirname(folder)
                self.folders.add(folder)
        self.folders.discard("")
        self.where = where
        self.build = Build(ImageFS(), read_context)
        self.global_args: dict[str, str | None] = {
            name: self.build.unknowns.mark(f"${name}") for name in _PLATFORM_ARGS}
        self.stages: list[_StageState] = []
        self.copies: list[ContextCopy] = []
        self.workdirs: list[Workdir] = []
        self.counts: dict[int, int] = {}
        self.excluding = 0  # --exclude patterns times the context files they could be matched against, so far

    def run(self, instructions: list[Instruction], target: str | None) -> Evaluated:
        for instruction in instructions:
            if self.build.counter > MAX_STEPS:
                note = Shell(self.build, "Dockerfile", "/", {}, dockerfile=True)
                note.note(CommandContext(instruction.line, instruction.text), "stop", STEPS_PAST)
                break
            if instruction.keyword == "FROM":
                self._from(instruction)
            elif not self.stages:
                if instruction.keyword != "ARG":
                    raise self._error(instruction, f"{instruction.keyword} before the first FROM")
                self._arg(instruction, global_scope=True)
            else:
                self._instruction(instruction)
        if not self.stages:
            raise ShippingError("no FROM: nothing is built", where=self.where,
                                hint="'docker build' refuses it too; start the Dockerfile with FROM")
        final = len(self.stages) - 1
        if target is not None:
            named = [s.stage.index for s in self.stages if s.stage.name == target.lower()]
            if not named:
                names = ", ".join(s.stage.name for s in self.stages if s.stage.name) or "none"
                raise ShippingError(f"no build stage named {target!r} (named stages: {names})", where=self.where,
                                    hint="give --target one of the names after AS in the FROM lines")
            final = named[0]
        stages = tuple(s.stage if not s.uses else Stage(s.stage.index, s.stage.name, s.stage.base, s.stage.line,
                                                         s.stage.parent, tuple(sorted(s.uses)))
                       for s in self.stages)
        dockerfile = Dockerfile(tuple(self.copies), self._runs(), tuple(self.workdirs), stages, final)
        return Evaluated(dockerfile, self.build, self.stages[final].fs, self.counts)

    def _runs(self) -> tuple[ScriptRun, ...]:
        seen: dict[tuple[str, int], ScriptRun] = {}
        for record in self.build.scripts:
            seen.setdefault((record.image_path, record.run_line),
                            ScriptRun(record.image_path, record.cwd, record.run_line, dict(record.environment)))
        return tuple(seen.values())

    def _error(self, instruction: Instruction, what: str) -> ShippingError:
        return ShippingError(f"cannot be parsed: line {instruction.line}: {what}", where=self.where,
                             hint="'docker build' refuses it too; fix that line")

    # -- variables ----------------------------------------------------------

    def _lexer(self, state: _StageState | None) -> DockerLexer:
        if state is None:
            return DockerLexer(lambda name: self.global_args.get(name), lambda name: "")

        def lookup(name: str) -> str | None:
            if name in state.env:
                return state.env[name]
            return state.args.get(name)

        def missing(name: str) -> str:
            if name in state.args:
                # An ARG without a default is empty only until 'docker build --build-arg' gives it a value.
                return self.build.unknowns.mark(f"${name}")
            if state.base_known:
                return ""  # nothing else could set it: empty, as Docker gives it
            return self.build.unknowns.mark(f"${name}")  # the base image may set it

        return DockerLexer(lookup, missing)

    def _word(self, instruction: Instruction, lexer: DockerLexer, text: str) -> str:
        try:
            return lexer.word(text)
        except ValueError as error:
            raise self._error(instruction, f"{instruction.keyword} {text[:80]}: {error}") from None
        except RecursionError:
            raise self._error(instruction, f"{instruction.keyword}: variables nest too deeply") from None

    # -- instructions -------------------------------------------------------

    def _from(self, instruction: Instruction) -> None:
        words = instruction.arguments.split()
        if len(words) not in (1, 3) or (len(words) == 3 and words[1].upper() != "AS"):
            raise self._error(instruction, "FROM takes an image and, optionally, AS NAME")
        lexer = self._lexer(None)
        base = self._word(instruction, lexer, words[0])
        name = self._word(instruction, lexer, words[2]).lower() if len(words) == 3 else None
        parent = next((s for s in reversed(self.stages) if s.stage.name == base.lower()), None)
        index = len(self.stages)
        stage = Stage(index, name, base, instruction.line, parent.stage.index if parent else None)
        if parent is not None:
            state = _StageState(stage, parent.fs.copy(), dict(parent.env), {}, parent.workdir, parent.shell,
                                parent.base_known, workdir_set=parent.workdir_set, user=parent.user)
        else:
            state = _StageState(stage, ImageFS(), {}, {}, "/", DEFAULT_SHELL, base == "scratch",
                                workdir_set=base == "scratch")
        self.stages.append(state)
        self.build.fs, self.build.stage = state.fs, stage.label
        if parent is not None:
            # BuildKit runs the ONBUILD triggers written in the parent stage first, in this stage (those of
            # an image from a registry are the base image's, which the reader cannot see).
            for trigger in parent.onbuild:
                self.build.tick()  # a step: stages FROM a stage of many triggers stop at MAX_STEPS
                self._instruction(trigger)

    def _arg(self, instruction: Instruction, global_scope: bool = False) -> None:
        state = None if global_scope else self.stages[-1]
        for item in instruction.arguments.split():
            name, equals, default = item.partition("=")
            lexer = self._lexer(state)
            value = self._word(instruction, lexer, default) if equals else None
            if state is None:
                self.global_args[name] = value
            else:
                # A bare ARG inside a stage brings in the value declared before the first FROM.
                state.args[name] = value if equals else self.global_args.get(name)

    def _instruction(self, instruction: Instruction) -> None:
        state = self.stages[-1]
        keyword = instruction.keyword
        if keyword == "ARG":
            self._arg(instruction)
        elif keyword == "ENV":
            try:
                pairs = env_pairs(instruction.arguments, self._lexer(state))
            except ValueError as error:
                raise self._error(instruction, f"ENV {error}") from None
            if not pairs or not instruction.arguments.strip():
                raise self._error(instruction, "ENV needs a name and a value")
            state.env.update(pairs)  # every pair was read with the values from before this line
        elif keyword == "WORKDIR":
            path = self._word(instruction, self._lexer(state), instruction.arguments.strip())
            self._relative_to_base_workdir(instruction, state, path)
            state.workdir_set = state.workdir_set or path.startswith("/")
            state.workdir = normalise(posixpath.join(state.workdir, path))
            if is_known(state.workdir):
                state.fs.make_dir(state.workdir)
            self.workdirs.append(Workdir(self.build.unknowns.show(state.workdir), instruction.line, state.stage.index))
        elif keyword == "SHELL":
            argv = instruction.exec_form()
            if not argv:
                raise self._error(instruction, 'SHELL needs a JSON array, e.g. ["/bin/bash", "-c"]')
            state.shell = tuple(argv)
        elif keyword in ("COPY", "ADD"):
            self._copy(instruction, state)
        elif keyword == "RUN":
            self._run(instruction, state)
        elif keyword == "ONBUILD":
            state.onbuild.append(self._trigger(instruction))
        elif keyword == "USER":
            state.user = self._word(instruction, self._lexer(state), instruction.arguments.strip()).split(":")[0]

    def _trigger(self, instruction: Instruction) -> Instruction:
        """The instruction an ``ONBUILD`` line holds, numbered with that line."""
        try:
            (trigger,) = read_instructions(instruction.arguments + "\n", self.where)
        except (ShippingError, ValueError):
            raise self._error(instruction, "ONBUILD needs one instruction Docker knows after it") from None
        if trigger.keyword in ("ONBUILD", "FROM", "MAINTAINER"):
            raise self._error(instruction, f"{trigger.keyword} is not allowed as an ONBUILD trigger")
        return replace(trigger, line=instruction.line)

    # -- COPY and ADD -------------------------------------------------------

    def _copy(self, instruction: Instruction, state: _StageState) -> None:
        lexer = self._lexer(state)
        unknown_flags = [name for name, _ in instruction.flags if name not in _COPY_FLAGS]
        args, _ = json_or_words(instruction)
        heredoc_names = {h.name for h in instruction.heredocs}
        if len(args) < 2:
            raise self._error(instruction, f"{instruction.keyword} needs a source and a destination")
        words = [self._word(instruction, lexer, a) for a in args]
        *sources, destination = words
        self._relative_to_base_workdir(instruction, state, destination)
        written = posixpath.join(state.workdir, destination)
        dest = normalise(written)
        folder = destination.endswith("/") or len(sources) > 1 or names_folder(destination)
        origin_value = instruction.flag("from")
        origin = "context"
        source_stage: _StageState | None = None
        if origin_value is not None:
            # BuildKit reads --from with no variables at all and refuses a value that would change under them.
            reference = self._word(instruction, DockerLexer(lambda name: None, lambda name: ""), origin_value)
            if reference != origin_value:
                raise self._error(instruction, f"--from={origin_value}: variables are not expanded in --from "
                                               "(name a stage FROM the image, with an ARG before the first FROM)")
            source_stage = self._stage(reference)
            if source_stage is not None:
                origin = f"stage {source_stage.stage.label}"
                state.uses.add(source_stage.stage.index)
            else:
                origin = f"image {reference}"
        flags = read_copy_flags(instruction)
        shown = tuple(self.build.unknowns.show(s if origin != "context" or _is_url(instruction, s)
                                               else posixpath.normpath(s.lstrip("/"))) for s in sources)
        self.copies.append(ContextCopy(
            shown, self.build.unknowns.show(dest.rstrip("/") + ("/" if folder else "")), instruction.line,
            instruction.keyword, tuple(f"--{n}" + (f"={v}" if v is not None else "") for n, v in instruction.flags),
            state.stage.index, origin, flags.exclude if isinstance(flags, CopyFlags) else ()))
        ctx = CommandContext(instruction.line, instruction.text)
        note = Shell(self.build, "Dockerfile", state.workdir, {}, dockerfile=True)
        if unknown_flags:
            note.unread(ctx, f"{instruction.keyword} with --{', --'.join(unknown_flags)}, which the reader "
                             "does not follow", scope=(dest,) if is_known(dest) else None)
            return
        if isinstance(flags, str):
            note.unread(ctx, f"{instruction.keyword} with {flags}", scope=(dest,) if is_known(dest) else None)
            return
        self.excluding += len(flags.exclude) * len(self.paths)
        if flags.exclude and self.excluding > MAX_PATTERN_PAIRS:
            note.unread(ctx, f"its --exclude patterns, with the build's before them, are more than the reader "
                             f"matches ({MAX_PATTERN_PAIRS:,} pattern and file pairs)", scope=(dest,))
            return
        if not is_known(dest) or any(not is_known(s) for s in sources):
            note.unread(ctx, self._unknown_reason(state, [dest, *sources]))
            return
        step = Step("Dockerfile", instruction.line, instruction.keyword, stage=state.stage.label,
                    order=self.build.tick())
        placed = 0
        if origin.startswith("image "):
            if state.fs.below(dest) or dest in state.fs.files:
                note.unread(ctx, f"copies files of {origin}, which the reader cannot see, over what the build "
                                 f"placed in {dest}", scope=(dest,))
            return
        several = len(sources) > 1 or written.endswith("/") or names_folder(destination)
        for source in sources:
            if source in heredoc_names or source.lstrip("<-") in heredoc_names:
                target = posixpath.join(dest, source.lstrip("<-")) if several else dest
                state.fs.write_other(target)
                continue
            if source_stage is not None and flags.parents:
                note.unread(ctx, "COPY --from with --parents, which the reader does not follow", scope=(dest,))
            elif source_stage is not None:
                placed += self._copy_from_stage(source_stage, source, dest, several, flags, step, state, note, ctx)
            elif flags.parents and not _is_url(instruction, source):
                placed += self._copy_with_parents(source, dest, flags, step, state)
            else:
                placed += self._copy_from_context(instruction, source, dest, written.endswith("/") or names_folder(
                    destination), len(sources) > 1, flags, step, state, note, ctx)
        self.counts[instruction.line] = self.counts.get(instruction.line, 0) + placed

    def _relative_to_base_workdir(self, instruction: Instruction, state: _StageState, path: str) -> None:
        """Note a relative path read from ``/`` where the base image's own WORKDIR (unknown) is where it starts."""
        if state.workdir_set or path.startswith("/") or not is_known(path):
            return
        note = Shell(self.build, "Dockerfile", state.workdir, {}, dockerfile=True)
        note.note(CommandContext(instruction.line, instruction.text), "assumed",
                  f"{path} is relative and no absolute WORKDIR comes before it: the reader reads it from "
                  f"{state.workdir}, but it starts from the base image's own WORKDIR if that sets one")

    def _unknown_reason(self, state: _StageState, texts: list[str]) -> str:
        """Why paths with unknown values in them cannot be followed: a --build-arg, or the base image."""
        spelled = {spelling for text in texts for spelling in self.build.unknowns.spellings(text)}
        build_args = sorted(s for s in spelled if s[1:] in state.args and state.args[s[1:]] is None)
        if build_args:
            return (f"its paths depend on {', '.join(build_args)}, an ARG without a default: only "
                    "'docker build --build-arg' gives it a value")
        platform = sorted(s for s in spelled if s[1:] in _PLATFORM_ARGS)
        if platform:
            return (f"its paths depend on {', '.join(platform)}, which BuildKit sets from the platform built for "
                    "('docker build --platform'; the machine's own by default)")
        return "its paths depend on a variable only the base image could set"

    def _stage(self, reference: str) -> _StageState | None:
        index = decimal(reference)
        if index is not None:
            return self.stages[index] if index < len(self.stages) - 1 else None
        return next((s for s in self.stages[:-1] if s.stage.name == reference.lower()), None)

    def _copy_from_context(self, instruction: Instruction, source: str, dest: str, folder: bool, several: bool,
                           flags: CopyFlags, step: Step, state: _StageState, note: Shell, ctx: CommandContext) -> int:
        """Copy one source; ``folder``: DEST is written as a folder (``/``, ``.``); ``several``: other sources follow."""
        if _is_url(instruction, source) and _is_git(source):
            # BuildKit clones the repository and copies its files into DEST, which could cover any file there.
            note.unread(ctx, f"ADD clones {source}; the files in it are not followed", scope=(dest,))
            return 0
        if _is_url(instruction, source):
            # BuildKit names the download for the last element of the URL's path (its query and fragment are
            # not part of it, nor a trailing '/'), or __unnamed__ when the path names none.
            name = posixpath.basename((urlsplit(source).path if "://" in source else source).rstrip("/"))
            name = name if name not in ("", ".") else "__unnamed__"
            state.fs.write_other(posixpath.join(dest, name) if folder or several else dest)
            return 0
        relative = posixpath.normpath(source.lstrip("/"))
        matches = self._matches(relative)
        if matches is None:
            note.note(ctx, "fails", f"{source} is not in the build context, so 'docker build' stops here")
            return 0
        files, wildcard = matches
        if wildcard and any(not rel and flags.excludes_match(path) for path, rel in files):
            note.unread(ctx, f"{source} {WILDCARD_MATCH_EXCLUDED}", scope=(dest,))
        a_folder = any(rel for _, rel in files)  # its contents land inside DEST, even if all are left out
        files = [(path, rel) for path, rel in files if not flags.excluded(rel)]
        archives = {p for p, _ in files if self.unpacks(p)} if instruction.keyword == "ADD" else set()
        if archives:
            note.unread(ctx, "ADD unpacks the archive it names; the files in it are not followed", scope=(dest,))
            files = [(p, r) for p, r in files if p not in archives]
        inside = folder or a_folder
        for path, rel in files:
            if rel:
                image = posixpath.join(dest, rel)
            else:
                image = self._file_target(path, dest, folder, several or len(files) > 1, state, note, ctx)
                inside = inside or image != dest
            state.fs.place(image, Placement(path, (step,), self.build.tick()))
        if inside:
            state.fs.make_dir(dest)
        return len(files)

    @staticmethod
    def _file_target(path: str, dest: str, folder: bool, several: bool, state: _StageState, note: Shell,
                     ctx: CommandContext) -> str:
        """Where BuildKit puts one file: inside DEST if it is written as a folder or is one now, else as DEST.

        BuildKit copies each source in turn and checks no more (the classic
        builder refuses several sources without a trailing ``/``): over a
        path that is not a folder, each file replaces the one before.
        """
        name = posixpath.basename(path)
        inside = posixpath.join(dest, name)
        kind = state.fs.kind(dest)
        if folder or kind is Kind.DIR:
            return inside
        if kind is not Kind.UNKNOWN:
            if several:
                note.note(ctx, "fails", f"{dest} is not a folder and does not end with '/': BuildKit copies each "
                                        "source over the one before, so it holds only the last (the classic "
                                        "builder refuses the line)")
            return dest
        # The base image decides; read it the way the line evidently means it, as for cp.
        destination_name = posixpath.basename(dest)
        if several:
            note.note(ctx, "assumed", f"{dest} is taken to be a folder of the base image (else each source would "
                                      f"be copied over the one before, as {dest} itself)")
            return inside
        if "." not in destination_name and "." in name and destination_name != name:
            note.note(ctx, "assumed", f"{dest} is taken to be a folder of the base image (else {path} would be "
                                      f"copied as {dest} itself)")
            return inside
        return dest

    def _matches(self, source: str) -> tuple[list[tuple[str, str]], bool] | None:
        """The context files a COPY source names, each with its path under the destination ("" for a lone file)."""
        if has_glob(source):
            regex = glob_regex(source)
            found: list[tuple[str, str]] = []
            for match in sorted(m for m in [*self.paths, *self.folders] if regex.fullmatch(m)):
                if match in self.path_set:
                    found.append((match, ""))  # a file: it lands as a lone file would
                else:  # a folder that matches: its contents land in the destination
                    found += [(p, p[len(match) + 1:]) for p in self.paths if p.startswith(match + "/")]
            return (found, True) if found else None
        if source in ("", "."):
            return [(p, p) for p in self.paths], False
        if source in self.path_set:
            return [(source, "")], False
        prefix = source.rstrip("/") + "/"
        found = [(p, p[len(prefix):]) for p in self.paths if p.startswith(prefix)]
        return (found, False) if found or source in self.folders else None

    def _copy_with_parents(self, source: str, dest: str, flags: CopyFlags, step: Step, state: _StageState) -> int:
        """Copy one ``--parents`` source: the context files below its root that it matches, their folders kept."""
        root, pattern = parents_root(source)
        include = pattern_rules([pattern], "COPY --parents source") if pattern else ()
        prefix = root + "/" if root else ""
        placed = 0
        for path in self.paths:
            below = path[len(prefix):]
            if not path.startswith(prefix) or (include and not is_ignored(include, below)) or flags.excluded(below):
                continue
            state.fs.place(posixpath.join(dest, below), Placement(path, (step,), self.build.tick()))
            placed += 1
        state.fs.make_dir(dest)
        return placed

    def _copy_from_stage(self, origin: _StageState, source: str, dest: str, several: bool, flags: CopyFlags,
                         step: Step, state: _StageState, note: Shell, ctx: CommandContext) -> int:
        path = normalise(source)
        unknown: list[str] = []
        fs = origin.fs
        if has_glob(path):
            regex = glob_regex(path.lstrip("/"))
            roots = [n for n in fs.names() if regex.fullmatch(n.lstrip("/"))]
            several = several or len(roots) > 1
            if any(fs.kind(root) is not Kind.DIR and flags.excludes_match(root.lstrip("/")) for root in roots):
                note.unread(ctx, f"{source} {WILDCARD_MATCH_EXCLUDED}", scope=(dest,))
        else:
            roots = [path]
        placed = 0
        for root in roots:
            kind = fs.kind(root)
            if kind is Kind.DIR:
                state.fs.make_dir(dest)
                placed += self._carry(fs, root, state.fs, dest, step, flags.excluded)
                continue
            target = posixpath.join(dest, posixpath.basename(root)) if several or state.fs.kind(dest) is Kind.DIR \
                else dest
            if root in fs.files:
                held = fs.files[root]
                state.fs.place(target, Placement(held.source, held.steps + (step,), self.build.tick()))
                placed += 1
            elif kind is Kind.FILE:
                state.fs.write_other(target)  # a file of that stage that is not from the context
            else:
                unknown.append(root)
        if unknown:
            note.unread(ctx, f"copies {', '.join(unknown)} of {origin.stage.label}, which only its base image "
                             "holds: the reader cannot see what that is", scope=(dest,))
        return placed

    def _carry(self, origin: ImageFS, root: str, fs: ImageFS, dest: str, step: Step,
               excluded: Callable[[str], bool] = lambda below: False) -> int:
        """Lay what another stage holds in its folder ``root`` at ``dest``: the context files it placed there, the
        files it wrote itself (``RUN ... > /out/x``) and its folders. Returns how many context files."""
        inside = root.rstrip("/") + "/"
        for folder in sorted(d for d in origin.dirs if d.startswith(inside) and not excluded(d[len(inside):])):
            fs.make_dir(posixpath.join(dest, folder[len(inside):]))
        for other in sorted(p for p in origin.others if p.startswith(inside) and not excluded(p[len(inside):])):
            fs.write_other(posixpath.join(dest, other[len(inside):]))
        placed = 0
        for image, held in origin.below(root):
            below = image[len(root):].lstrip("/")
            if excluded(below):
                continue
            fs.place(posixpath.join(dest, below), Placement(held.source, held.steps + (step,), self.build.tick()))
            placed += 1
        return placed

    # -- RUN ----------------------------------------------------------------

    def _run(self, instruction: Instruction, state: _StageState) -> None:
        environment = {name: value for name, value in state.args.items() if value is not None}
        environment.update(state.env)
        if state.user not in ("root", "0") and "HOME" not in environment:
            environment["HOME"] = self.build.unknowns.mark("$HOME")  # the USER's home, from the image's passwd
        ctx = CommandContext(instruction.line, instruction.text, tail=True, stops_on_error=True)
        top = Shell(self.build, "Dockerfile", state.workdir, environment, run_line=instruction.line,
                    dockerfile=True)
        restore = self._mount(instruction, state, top, ctx)
        exec_form = instruction.exec_form()
        commands: list[tuple[list[str], CommandContext]] = []
        if exec_form and exec_form[0] in NO_PROGRAM:
            # The exec form runs a program found on PATH, with no shell: a shell's own command is none.
            top.note(ctx, "fails", f"{exec_form[0]} is a shell's own command, not a program the exec form can run, "
                                   "so 'docker build' stops here")
            restore()
            return
        if exec_form is not None:
            commands.append((exec_form, ctx))
        elif len(instruction.heredocs) == 1 and not _without_heredocs(instruction.arguments):
            # RUN <<EOF: the here-document is a script for the stage's shell. (Several with no command,
            # RUN <<A <<B, BuildKit hands to the shell as written: a command of redirections alone, which runs
            # nothing.)
            (heredoc,) = instruction.heredocs
            interpreter = shebang(heredoc.body)
            if interpreter is not None:
                # BuildKit writes a lone here-document that starts with '#!' to a file and runs that file,
                # so its '#!' line, not SHELL, names the program (bash -e, python3).
                program, options = interpreter
                argv = [program, *options, "-c", heredoc.body]
            else:
                argv = [*state.shell, heredoc.body]
            commands.append((argv, CommandContext(instruction.line + 1, ctx.text, tail=True)))
        else:
            commands.append(([*state.shell, instruction.shell_text], ctx))
        try:
            for argv, context in commands:
                if dispatch(top, argv, context) is False:
                    top.note(context, "fails", "this RUN fails as the reader follows it, so 'docker build' stops "
                                               "here (see the failures noted before it)")
                    break
        except Exit as end:
            if end.status is False:
                top.note(ctx, "fails", "this RUN fails, so 'docker build' stops here")
        except Stop:
            pass
        restore()

    def _mount(self, instruction: Instruction, state: _StageState, top: Shell,
               ctx: CommandContext) -> Callable[[], None]:
        """Lay out the RUN's ``--mount`` folders; return what puts the image back as it was under them."""
        undo: list[Callable[[], None]] = []
        for name, value in instruction.flags:
            if name != "mount" or value is None:
                continue
            options = dict(part.partition("=")[::2] for part in value.split(","))
            kind = options.get("type", "bind")
            target = options.get("target") or options.get("dst") or options.get("destination")
            if kind in ("secret", "ssh"):
                continue
            if target is None or kind not in ("bind", "cache", "tmpfs"):
                top.unread(ctx, f"--mount={value}, which the reader does not follow")
                continue
            where = normalise(posixpath.join(state.workdir, target))
            saved = _snapshot(state.fs, where)
            undo.append(_restorer(state.fs, where, saved))
            if kind != "bind":
                # What stood there is hidden during the RUN: a tmpfs starts empty, a cache holds what builds left.
                state.fs.remove(where)
                if kind == "tmpfs":
                    state.fs.make_dir(where, new=True)
                    continue
                state.fs.gone.discard(where)  # what earlier builds left there is unknown, not absent
                state.fs.make_dir(where)
                state.fs.owned.discard(where)
                # BuildKit keys a cache by its id (by default its target): a later RUN of this build that mounts
                # the same cache finds what an earlier one left in it.
                cache_id = options.get("id") or target
                kept = self.build.caches.get(cache_id, {})
                for relative, placed in kept.items():
                    state.fs.place(posixpath.join(where, relative), placed)
                if kept:
                    top.note(ctx, "assumed", f"the cache {cache_id} is taken to hold what this build's earlier RUNs "
                                             f"left in it ({', '.join(sorted(kept)[:3])}"
                                             f"{', ...' if len(kept) > 3 else ''})")
                undo.append(_cache_keeper(state.fs, where, self.build.caches, cache_id))
                continue
            step = Step("Dockerfile", instruction.line, "RUN --mount", stage=state.stage.label,
                        order=self.build.tick())
            source = options.get("source") or options.get("src") or "."
            origin = self._stage(options["from"]) if "from" in options else None
            if "from" in options and origin is None:
                top.unread(ctx, f"mounts files of the image {options['from']}, which the reader cannot see",
                           scope=(where,))
                continue
            state.fs.remove(where)  # the mounted files hide what stood there
            if origin is not None:
                state.uses.add(origin.stage.index)
                root = normalise(source)
                if origin.fs.kind(root) is Kind.FILE:
                    if root in origin.fs.files:
                        held = origin.fs.files[root]
                        state.fs.place(where, Placement(held.source, held.steps + (step,), self.build.tick()))
                    else:
                        state.fs.write_other(where)
                    continue
                # A folder the stage made holds only what the reader saw it write there; one of its base image
                # may hold more, which the mount shows too: unknown, not absent.
                state.fs.gone.discard(where)
                state.fs.make_dir(where, new=origin.fs.made(root))
                self._carry(origin.fs, root, state.fs, where, step)
                continue
            relative = posixpath.normpath(source.lstrip("/"))
            found = self._matches(relative)
            for path, rel in (found[0] if found else []):
                state.fs.place(posixpath.join(where, rel) if rel else where,
                               Placement(path, (step,), self.build.tick()))

        def restore() -> None:
            for step in reversed(undo):
                step()

        return restore


def _is_url(instruction: Instruction, source: str) -> bool:
    """Whether an ADD source is fetched from the network (a URL or a git remote), not taken from the context."""
    return instruction.keyword == "ADD" and ("://" in source or source.startswith("git@"))


def _is_git(source: str) -> bool:
    """Whether an ADD URL is a git repository BuildKit clones: ``git@...``, ``git://...``, or a path ending in .git."""
    return source.startswith(("git@", "git://")) or urlsplit(source).path.endswith(".git")


def _without_heredocs(arguments: str) -> str:
    return HEREDOC.sub("", arguments).strip()


_Snapshot = tuple[dict[str, Placement], set[str], set[str], set[str], set[str], dict[str, str]]


def _snapshot(fs: ImageFS, folder: str) -> _Snapshot:
    """What the image model holds at and under ``folder``: files, other files, folders, owned, removed, links."""
    inside = lambda path: path == folder or path.startswith(folder.rstrip("/") + "/")  # noqa: E731
    return ({p: v for p, v in fs.files.items() if inside(p)}, {p for p in fs.others if inside(p)},
            {d for d in fs.dirs if inside(d)}, {d for d in fs.owned if inside(d)}, {g for g in fs.gone if inside(g)},
            {k: v for k, v in fs.links.items() if inside(k)})


def _cache_keeper(fs: ImageFS, folder: str, caches: dict[str, dict[str, Placement]],
                  cache_id: str) -> Callable[[], None]:
    """What keeps, when the RUN ends, the files it left in a cache mount at ``folder``, for the next RUN that
    mounts the same cache."""
    prefix = folder.rstrip("/") + "/"

    def keep() -> None:
        caches[cache_id] = {path[len(prefix):]: placed for path, placed in fs.files.items() if path.startswith(prefix)}

    return keep


def _restorer(fs: ImageFS, folder: str, saved: _Snapshot) -> Callable[[], None]:
    """What puts back what stood under a mount point: what a RUN writes there is not kept, and what the build
    did not know there before (the base image's files) is unknown again, not removed."""
    def restore() -> None:
        files, others, dirs, owned, gone, links = saved
        fs.remove(folder)
        fs.gone.discard(folder)
        fs.files.update(files)
        fs.others |= others
        fs.dirs |= dirs
        fs.owned |= owned
        fs.gone |= gone
        fs.links.update(links)
        fs.make_dir(posixpath.dirname(folder))

    return restore
