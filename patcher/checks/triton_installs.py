"""Find Triton installed by the image's install steps: the Dockerfile's ``RUN`` lines and the scripts it runs.

Each ``pip install`` operand (a requirement, a wheel, a URL to one; read
by ``pip_installs``) is judged by the project it names: a Triton build
(``triton``, ``triton-nightly``, ``pytorch-triton``), not a package that
only shares the word (``tritonclient``). ``-r FILE`` and ``-c FILE`` are
followed into the file, as the image will have it (a file of the context
that the Dockerfile or a script copies there), relative to the folder the
command runs in, and their own ``-r``/``-c`` relative to the file, at most
``MAX_DEPTH`` files deep and each file once. An operand whose name the
reader cannot know (a glob no shipped file matches, a variable set nowhere)
is a warning when it could name a Triton build; a glob is matched against
the files the build copies, which are then judged one by one.

Setting a ``TORCHINDUCTOR_*`` variable (``ENV``, ``export``, ``VAR=x cmd``)
configures TorchInductor, which generates Triton kernels: an error too.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from typing import Iterator, Mapping

from .base import BuildContext, Settings, Severity, Violation
from .dockerfile_lines import dockerfile_environment, dockerfile_run_starts, dockerfile_runs
from .pip_installs import Command, PipInstall, logical_lines, pip_commands, shell_commands
from .requirement_files import egg_name, project_name, requirement_lines, vcs_name
from .torch_compile import ENVIRONMENT_PREFIX, INDUCTOR
from .triton_names import TRITON

DOCKERFILE = "Dockerfile"
MAX_DEPTH = 10  # requirements files nested deeper than this are not read
HANGS = "in the image; Triton's kernels hang the BI-V100 (its runtime does not support the PTX Triton compiles)"
_GLOB = re.compile(r"[*?\[]")
# Names a Triton build's files and requirements take, to tell whether a pattern could name one.
_TRITON_NAMES = tuple(
    name
    for project in ("triton", "triton_nightly", "pytorch_triton", "pytorch_triton_rocm", "triton-nightly",
                    "pytorch-triton")
    for name in (project, f"{project}==2.1.0", f"{project}-2.1.0-cp310-cp310-linux_x86_64.whl",
                 f"{project}-2.1.0.tar.gz")
)
# Projects whose Linux x86_64 wheels require a Triton build: torch 2.0 and later (2.1.0 the very
# triton==2.1.0). Installed without --no-deps, pip brings that Triton with it unless the image's own torch
# build already meets the requirement. What needs torch in turn (vllm, xformers) pulls Triton only through
# a torch from the index, and is not judged here.
PULLS_TRITON = frozenset({"torch"})
_ENVIRONMENT_COMMANDS = frozenset({"export", "env", "declare", "typeset", "readonly", "local", "sudo"})


def is_triton_project(project: str) -> bool:
    """Tell whether a pip project is a Triton build: triton, triton-nightly, pytorch-triton (not tritonclient)."""
    return project == TRITON or project.startswith(TRITON + "-") or project.endswith("-" + TRITON) \
        or f"-{TRITON}-" in project


def triton_installs(build: BuildContext, settings: Settings) -> Iterator[Violation]:
    """Flag each pip install of a Triton project in the Dockerfile's ``RUN`` lines and the install scripts."""
    reader = _Installs(build, settings)
    text = build.text(DOCKERFILE)
    for line, name, written in dockerfile_environment(text):
        if name.startswith(ENVIRONMENT_PREFIX):
            yield settings.violation(DOCKERFILE, line, _inductor(name, written, "in the image's environment"))
    starts = dockerfile_run_starts(text)
    for line, command in dockerfile_runs(text):
        folder, variables = starts.get(line, ("", {}))
        yield from reader.commands(DOCKERFILE, shell_commands([(line, command)], variables, folder), variables)
    runs = {run.line: run for run in build.plan.dockerfile.runs}
    for script in build.plan.scripts:
        run = runs.get(script.run_line)
        environment = run.environment if run is not None else {}
        cwd = run.cwd if run is not None else ""
        lines = logical_lines(build.text(script.path))
        yield from reader.commands(script.path, shell_commands(lines, environment, cwd, script.image_path),
                                   environment)


def _inductor(name: str, written: str, where: str) -> str:
    return (f"sets {name} {where} (`{written}`): it configures {INDUCTOR}, torch.compile's default backend, "
            f"which generates Triton kernels")


class _Installs:
    """Judge the commands of one build: what each ``pip install`` names, and the files it reads."""

    def __init__(self, build: BuildContext, settings: Settings):
        self.build = build
        self.settings = settings
        # Image path -> context file, for every file the Dockerfile or a script puts in the image.
        self.image: dict[str, str] = {image: path for path, image in build.plan.copied.items()}
        self.image.update((i.image_path, i.path) for i in build.plan.installed)
        # A plan that models the image file by file knows every place a file was copied to, not only one.
        for image, placement in getattr(build.plan, "image", {}).items():
            self.image.setdefault(image, getattr(placement, "source", ""))

    def commands(self, path: str, commands: list[Command],
                 environment: Mapping[str, str] | None = None) -> Iterator[Violation]:
        for command in commands:
            for name in _environment_names(command.words):
                if name.startswith(ENVIRONMENT_PREFIX):
                    yield self.settings.violation(path, command.line, _inductor(
                        name, " ".join(command.words), "for the commands the build runs"))
        for pip in pip_commands(commands):
            for operand in pip.operands:
                yield from self._operand(path, pip, operand)
            for editable in pip.editables:
                if is_triton_project(egg_name(editable)) or is_triton_project(project_name(editable)):
                    yield self.settings.violation(path, pip.line, f"installs Triton (`-e {editable}`) {HANGS}")
            seen: set[str] = set()  # one pip command reads each file once, however many -r name it
            for flag, given in pip.files:
                yield from self._file(path, pip, flag, given, pip.cwd, dict(environment or {}), 1, seen)

    def _operand(self, path: str, pip: PipInstall, operand: str) -> Iterator[Violation]:
        project = project_name(operand) or egg_name(operand) or vcs_name(operand)
        if is_triton_project(project):
            yield self.settings.violation(path, pip.line, f"installs Triton (`{operand}`) {HANGS}")
            return
        if project in PULLS_TRITON and not pip.no_deps:
            yield self._warning(path, pip.line, _pulls(operand))
            return
        if not _uncertain(operand, project):
            return
        if _GLOB.search(operand) and "$" not in operand:
            matched = self._matches(operand, pip.cwd)
            if matched:
                for image, context in matched:
                    if is_triton_project(project_name(image)):
                        yield self.settings.violation(path, pip.line, (
                            f"installs Triton (`{image}`, {context} in the context, matched by `{operand}`) {HANGS}"))
                return
        if _could_be_triton(operand):
            what = ("a variable set nowhere the build shows" if "$" in operand or "`" in operand
                    else "a pattern that matches no file the build copies")
            yield self._warning(path, pip.line, (
                f"pip installs `{operand}`, {what}: it could be a Triton build, whose kernels hang the BI-V100 "
                f"(name the package or wheel, or set the variable in the script or the Dockerfile)"))

    def _matches(self, pattern: str, cwd: str) -> list[tuple[str, str]]:
        """Return (image path, context path) of each copied file a shell glob matches, run in ``cwd``."""
        if not pattern.startswith("/") and not cwd:
            return []
        full = posixpath.normpath(posixpath.join(cwd, pattern))
        return sorted((image, context) for image, context in self.image.items()
                      if posixpath.dirname(image) == posixpath.dirname(full)
                      and fnmatch.fnmatchcase(posixpath.basename(image), posixpath.basename(full)))

    def _file(self, path: str, pip: PipInstall, flag: str, given: str, folder: str, environment: dict[str, str],
              depth: int, seen: set[str], command: str = "", at: tuple[str, int] | None = None
              ) -> Iterator[Violation]:
        """Follow ``pip install -r/-c given`` (read from ``folder``) into the file, and its own -r/-c.

        ``command`` says which ``pip install`` of which script led here, ``at``
        which line names the file (a nested one: the line of the file above).
        """
        command = command or f"`pip install {flag} {given}` at {path}:{pip.line}"
        where, line = at or (path, pip.line)
        if "://" in given or "$" in given or _GLOB.search(given) or (not folder and not given.startswith("/")):
            yield self._warning(where, line, (
                f"{command} reads {given}, which cannot be read before the build: whether it installs Triton, "
                f"whose kernels hang the BI-V100, is unknown (list the packages in a file the build copies)"))
            return
        image = posixpath.normpath(posixpath.join(folder, given))
        context = self.image.get(image)
        if context is None:
            yield self._warning(where, line, (
                f"{command} reads {image}, which the build does not copy from the context: whether it installs "
                f"Triton, whose kernels hang the BI-V100, is unknown (copy the file in, or list the packages)"))
            return
        if context in seen:
            return  # read already, through another -r (or a loop): pip installs the same again
        seen.add(context)
        via = f"read through {command}" + (f", {depth} files deep" if depth > 1 else "")
        for entry in requirement_lines(self.build.text(context), environment):
            if entry.kind in ("-r", "-c"):
                if depth >= MAX_DEPTH:
                    yield self._warning(context, entry.line, (
                        f"requirements files nest deeper than {MAX_DEPTH} here ({via}); `{entry.kind} {entry.value}` "
                        f"is not read, so whether it installs Triton, whose kernels hang the BI-V100, is unknown"))
                    continue
                # pip reads a nested file's name relative to the file that names it, not to where pip runs.
                inner = "/" if entry.value.startswith("/") else posixpath.dirname(image)
                yield from self._file(path, pip, entry.kind, entry.value, inner, environment, depth + 1, seen,
                                      command, (context, entry.line))
                continue
            project = project_name(entry.value) or egg_name(entry.value) or vcs_name(entry.value)
            if is_triton_project(project):
                if flag == "-c":
                    yield self.settings.violation(context, entry.line, (
                        f"pins Triton (`{entry.value}`, a constraint {via}): whatever needs Triton installs that "
                        f"build {HANGS}"))
                else:
                    yield self.settings.violation(context, entry.line,
                                                  f"installs Triton (`{entry.value}`, {via}) {HANGS}")
            elif flag == "-r" and project in PULLS_TRITON and not pip.no_deps:
                yield self._warning(context, entry.line, f"{_pulls(entry.value)} ({via})")
            elif flag == "-r" and _uncertain(entry.value, project) and _could_be_triton(entry.value):
                yield self._warning(context, entry.line, (
                    f"`{entry.value}` ({via}) names a package the reader cannot know: it could be a Triton build, "
                    f"whose kernels hang the BI-V100 (name the package, or set the variable)"))

    def _warning(self, path: str, line: int, message: str) -> Violation:
        """Return a warning of this rule: something that could be Triton, which the reader cannot tell."""
        return Violation(self.settings.rule, Severity.WARNING, path, line, message)


def _pulls(operand: str) -> str:
    return (f"pip installs `{operand}` with its dependencies: from the index, torch's Linux wheels require a "
            f"Triton build (torch 2.1.0: triton 2.1.0), whose kernels hang the BI-V100, and whether pip pulls one "
            f"in depends on the image's own torch, which the build does not show (add --no-deps)")


def _uncertain(operand: str, project: str) -> bool:
    """Tell whether the project an operand names cannot be read from it: a glob or a variable stands in its name."""
    if "://" in operand and not project:
        return False  # a URL to an index page or a VCS repository: judged by its egg name, if any
    return not project or bool(_GLOB.search(project)) or "$" in project or "`" in operand and not project


def _could_be_triton(operand: str) -> bool:
    """Tell whether a glob or an unknown variable in ``operand`` could stand for a Triton build's name."""
    base = posixpath.basename(operand.split("#", 1)[0])
    # '${' runs to its '}' with no '{' on the way: each '${' of a long run of them starts one short match (with
    # any character but '}', the search began again at each, reading to the end: quadratic).
    pattern = re.sub(r"\$\{[^{}]*\}|\$\w+|\$\([^)]*\)?|`[^`]*`?", "*", base) or "*"
    return any(fnmatch.fnmatchcase(name, pattern) for name in _TRITON_NAMES)


def _environment_names(words: tuple[str, ...]) -> Iterator[str]:
    """Yield each variable a command sets for itself or exports: ``A=1 cmd``, ``export A=1``, ``env A=1 cmd``."""
    for word in words:
        name, equals, _ = word.partition("=")
        if equals and re.fullmatch(r"[A-Za-z_]\w*", name):
            yield name
        elif word in _ENVIRONMENT_COMMANDS or word.startswith("-"):
            continue
        else:
            break
