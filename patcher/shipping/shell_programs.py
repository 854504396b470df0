"""Programs the reader follows into: scripts of the context, ``sh -c``, a here-document fed to sh, Python, pip.

A script of the build context that a command runs (``./patch_ops.sh``,
``sh -ec "..."``, ``bash -x FILE``) is read in a child shell that
inherits the exported variables and the directory. A Python program of
the context is read for the files it writes (``python_effects.py``);
``pip install NAME`` replaces only those packages' folders.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from .command_lookup import note_program
from .shell_interpreter import Shell, shebang
from .shell_records import MAX_DEPTH, CommandContext, Exit, ScriptRecord, Stop, _Loop, _Return, covers
from .shell_syntax import parse_runnable
from .shell_words import is_known, is_unknown
from .tool_options import read_options

if TYPE_CHECKING:
    from .python_effects import Copy, Folder, PythonEffects, Removal

SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "zsh", "busybox-sh"})


def absent_program(shell: Shell, ctx: CommandContext, name: str, spelled: str, path: str, code: int | None) -> bool:
    """Whether the program file ``spelled`` (at image path ``path``) is one the build knows is not there; then
    ``name`` fails, with status ``code`` (None: which number, the base image's shell says), and a note says so."""
    from .image_fs import Kind
    if not is_known(spelled) or shell.build.fs.kind(path) is not Kind.ABSENT:
        return False
    status = f" (status {code})" if code is not None else ""
    shell.note(ctx, "fails", f"{name}: {path} does not exist at this point of the build{status}")
    shell.ended_with(code)
    return True


def run_context_file(shell: Shell, path: str, argv: list[str], ctx: CommandContext, env: dict[str, str]) -> bool | None:
    """Execute a context file placed at ``path`` as a program: by its ``#!`` line, else with the calling shell."""
    source = shell.build.fs.files[path].source
    text = shell.build.read_context(source)
    if text is None:
        return note_program(shell, ctx, f"{argv[0]} (not a text file)")
    interpreter = shebang(text)
    if interpreter is None:
        # The kernel cannot run it (ENOEXEC), so the shell that called it runs it itself: bash in bash, sh in sh.
        return run_script(shell, path, text, argv[0], argv[1:], ctx, env, flags=[], program=shell.program)
    program, arguments = interpreter
    base = posixpath.basename(program)
    if base in SHELLS:
        return run_script(shell, path, text, argv[0], argv[1:], ctx, env, flags=arguments, program=base)
    if base.startswith("python"):
        return _python_text(shell, ctx, text, f"{argv[0]}", script=path)
    return note_program(shell, ctx, argv[0])


def run_script(shell: Shell, path: str, text: str, argv0: str, args: list[str], ctx: CommandContext,
               env: dict[str, str], flags: list[str], program: str = "sh") -> bool | None:
    """Read a context script in a child shell, as ``PROGRAM FLAGS FILE ARGS`` would run it (``sh``, ``bash``...)."""
    if shell.depth >= MAX_DEPTH:
        shell.unread(ctx, f"scripts nest more than {MAX_DEPTH} deep; the reader does not follow this one")
        return None
    source = shell.build.fs.files[path].source
    cwd = shell.here()  # a child starts in this shell's folder: where the reader cannot name it, the reading stops
    record = ScriptRecord(source, path, shell.run_line, cwd, shell.environment(env))
    shell.build.scripts.append(record)
    options = _shell_flags(flags)
    child = Shell(shell.build, source, cwd, shell.environment(env), argv0=argv0, positional=args,
                  errexit="e" in options, propagates=shell.fails_build(ctx), inherited=shell.child_hides(ctx),
                  run_line=shell.run_line, record=record, depth=shell.depth + 1, program=program)
    record.errexit_first = child.errexit
    _start(shell, child, options, ctx)
    child.output = shell.output  # a $(...) around the command hears what the script prints
    if "\r\n" in text:
        # sh takes a carriage return for part of a word: each line's last word ends in it, so a cp writes to
        # 'NAME\r' and a cd fails. The reader reads the lines without it, so what it makes of them may not hold.
        child.unread(CommandContext(1, text.split("\n", 1)[0].strip()),
                     f"{source} has CRLF line endings: sh reads each line's last word with a carriage return on "
                     "it (cp writes to 'NAME\\r', cd fails), which the reader does not follow")
    try:
        # sh runs the lines before a syntax error
        parsed, error = parse_runnable(text, bash=program == "bash", dash=program == "dash")
    except RecursionError:
        child.note(CommandContext(1, text.split("\n", 1)[0].strip()), "stop",
                   f"nests too deeply to be read: {source} is not read")
        return None
    try:
        status = child.main(parsed)
        shell.ended_with(child.last_code)
    except Exit as end:
        shell.ended_with(end.code)
        return end.status
    except Stop:
        return None
    except (_Return, _Loop):
        return True
    except RecursionError:
        shell.note(ctx, "stop", f"{source} nests too deeply to be read; the reader stops there")
        return None
    if error is not None:
        lines = text.splitlines()
        child.note(CommandContext(error.line, lines[error.line - 1].strip() if 0 < error.line <= len(lines) else ""),
                   "stop", f"cannot be parsed as shell ({error.message}): {source} is not read from here on")
        return None
    return status


def _shell_flags(words: list[str]) -> set[str]:
    """The single-letter options of ``sh -e -x``, ``-ex``, ``-o errexit`` (as "e"), ``-o noglob`` (as "f"),
    ``-o nounset`` (as "u"); ``-o pipefail`` and ``-o posix``/``--posix`` by name."""
    found: set[str] = set()
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-o", "+o") and index + 1 < len(words):
            letter = {"errexit": "e", "noglob": "f", "nounset": "u", "pipefail": "pipefail",
                      "posix": "posix"}.get(words[index + 1])
            if letter is not None:
                found.discard(letter) if word == "+o" else found.add(letter)
            index += 2
            continue
        if word == "--posix":
            found.add("posix")
        elif word[:1] in "-+" and word not in ("-", "--"):
            for letter in word[1:]:
                found.discard(letter) if word[0] == "+" else found.add(letter)
        index += 1
    return found


def _refused_option(program: str, flags: list[str]) -> str | None:
    """The ``-o NAME`` or ``-O NAME`` of a shell's command line that the shell refuses before it runs anything
    (bash 5.2: "invalid option name", "invalid shell option name"; dash 0.5.12: "Illegal option"), else None.
    Under sh, only a name neither bash nor dash has."""
    from .shell_builtins import BASH_SET_OPTIONS, BASH_SHOPTS, DASH_SET_OPTIONS
    set_names = {"bash": BASH_SET_OPTIONS, "dash": DASH_SET_OPTIONS}.get(program, BASH_SET_OPTIONS | DASH_SET_OPTIONS)
    for flag, name in zip(flags, flags[1:]):
        if not is_known(name):
            continue
        if flag in ("-o", "+o") and name not in set_names:
            return f"{flag} {name}"
        if flag in ("-O", "+O") and (program == "dash" or program == "bash" and name not in BASH_SHOPTS):
            return f"{flag} {name}"
    return None


def _start(shell: Shell, child: Shell, options: set[str], ctx: CommandContext) -> None:
    """Give a new shell the options of its command line (``-e`` is given to its constructor).

    What the reader cannot follow there is noted where the command line is: in ``shell``, at ``ctx``.
    """
    child.noglob, child.nounset, child.allexport = "f" in options, "u" in options, "a" in options
    # A variable the caller unset is not in the environment it passes on (unless the command line sets it again);
    # one the base image's environment could hold still could.
    child.unset = set(shell.unset) - child.variables.keys()
    child.clean_environment = shell.clean_environment
    child.posix = "posix" in options and child.program == "bash"
    if "pipefail" in options:
        child.set_pipefail(True, ctx, given_by=shell)


def run_shell(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``sh [-eux] [-o opt] -c STRING [NAME ARGS]``, ``bash FLAGS FILE ARGS``, or ``sh`` reading a here-document.

    ``sh -s [--] ARGS``: the script is standard input and the operands are ``$1``... (``sh -s -- --prefix=/opt <<'EOF'``).
    """
    args = argv[1:]
    flags: list[str] = []
    command = False
    from_stdin = False
    index = 0
    while index < len(args):
        word = args[index]
        if word in ("-o", "+o", "-O", "+O") and index + 1 < len(args):
            flags += [word, args[index + 1]]
            index += 2
            continue
        if word == "--":
            index += 1
            break
        if word.startswith("--"):  # --login, --norc, --posix
            flags += [word] if word == "--posix" else []
            index += 1
            continue
        if word[:1] in "-+" and len(word) > 1:
            letters = word[1:]
            if "c" in letters:
                command = True
                letters = letters.replace("c", "")
            from_stdin = from_stdin or "s" in letters
            if "o" in letters and index + 1 < len(args):  # -euo pipefail: 'o' takes the next word
                flags += [word[0] + letters.replace("o", ""), "-o" if word[0] == "-" else "+o", args[index + 1]]
                index += 2
                continue
            flags.append(word[0] + letters)
            index += 1
            continue
        break
    rest = args[index:]
    refused = _refused_option(posixpath.basename(argv[0]), flags)
    if refused is not None:
        shell.note(ctx, "fails", f"{argv[0]} {refused}: no option of that shell, so it runs nothing (status 2)")
        shell.ended_with(2)
        return False
    options = _shell_flags(flags)
    if "n" in options:
        return True  # sh -n reads without running
    if command:
        if not rest:
            shell.note(ctx, "fails", f"{argv[0]} -c needs a command string")
            return False
        text, name, positional = rest[0], (rest[1] if len(rest) > 1 else argv[0]), rest[2:]
        if not is_known(text):
            shell.unread(ctx, f"runs the command string {shell.show(text)}, which the reader cannot work out")
            return None
        child = Shell(
            shell.build, shell.file, shell.here(), shell.environment(env), argv0=name, positional=positional,
            errexit="e" in options, propagates=shell.fails_build(ctx), inherited=shell.child_hides(ctx),
            run_line=shell.run_line, record=shell.record, depth=shell.depth + 1, dockerfile=shell.dockerfile,
            program=posixpath.basename(argv[0]))
        child.output = shell.output
        _start(shell, child, options, ctx)
        try:
            status = child.run_text(text, ctx.line, CommandContext(ctx.line, ctx.text, ctx.hides, ctx.stops_on_error,
                                                                   ctx.exempt, True), main=True)
            shell.ended_with(child.last_code)
            return status
        except Exit as end:
            shell.ended_with(end.code)
            return end.status
        except Stop:
            return None
    if from_stdin and stdin is None and rest and shell.input is None:
        return note_program(shell, ctx, " ".join(argv[:2]))  # a script piped in: what it does is not the context's
    if rest and not from_stdin:
        script = shell.path(rest[0])
        if script in shell.build.fs.files:
            body = shell.build.read_context(shell.build.fs.files[script].source)
            if body is None:
                return note_program(shell, ctx, rest[0])
            return run_script(shell, script, body, rest[0], rest[1:], ctx, env, flags,
                              program=posixpath.basename(argv[0]))
        # bash 5.2: "No such file or directory", status 127; dash 0.5.12: "cannot open", status 2.
        code = {"bash": 127, "dash": 2}.get(posixpath.basename(argv[0]))
        if absent_program(shell, ctx, argv[0], rest[0], script, code):
            return False
        return note_program(shell, ctx, " ".join(argv[:2]))
    if stdin is not None and is_unknown(stdin):
        return note_program(shell, ctx, f"{argv[0]} reading {shell.show(stdin)}")
    if stdin is None and shell.input is not None:
        # 'printf ... | sh': the script is what the pipe (or the loop's input) holds from here on; sh reads it all.
        stdin, shell.input.at = shell.input.text[shell.input.at:], len(shell.input.text)
    elif stdin is None and shell.piped_unknown:
        return note_program(shell, ctx, f"{argv[0]} reading what the pipe feeds it")
    if stdin is not None:
        child = Shell(shell.build, shell.file, shell.here(), shell.environment(env), argv0=argv[0], positional=rest,
                      errexit="e" in options, propagates=shell.fails_build(ctx), inherited=shell.child_hides(ctx),
                      run_line=shell.run_line, record=shell.record, depth=shell.depth + 1,
                      dockerfile=shell.dockerfile, program=posixpath.basename(argv[0]))
        child.output = shell.output
        _start(shell, child, options, ctx)
        try:
            status = child.run_text(stdin, ctx.line + 1, ctx, main=True)  # a here-document starts on the next line
            shell.ended_with(child.last_code)
            return status
        except Exit as end:
            shell.ended_with(end.code)
            return end.status
        except Stop:
            return None
    return True


def run_python(shell: Shell, argv: list[str], ctx: CommandContext, stdin: str | None) -> bool | None:
    """``python3 [-u -B ...] (-c CODE | -m MODULE | FILE) ARGS``: read the code for the files it writes."""
    args = argv[1:]
    index = 0
    while index < len(args) and args[index].startswith("-") and args[index] not in ("-c", "-m", "-"):
        if args[index] in ("-V", "--version", "-h", "--help"):
            shell.emit_unknown()
            return True
        index += 2 if args[index] in ("-W", "-X") else 1
    rest = args[index:]
    if not rest or rest[0] == "-":  # the program comes from standard input
        name = " ".join([argv[0], *rest[:1]])
        if stdin is not None:
            if is_unknown(stdin):
                return note_program(shell, ctx, f"{name} reading {shell.show(stdin)}")
            return _python_text(shell, ctx, stdin, name)
        return True if not rest else note_program(shell, ctx, name)
    if rest[0] in ("-c", "-m") and len(rest) == 1:
        # CPython 3.11: "Argument expected for the -c option", status 2, before anything runs.
        shell.note(ctx, "fails", f"{argv[0]} {rest[0]} needs its argument, so nothing runs (status 2)")
        shell.ended_with(2)
        return False
    if rest[0] == "-c" and len(rest) > 1:
        if not is_known(rest[1]):
            return note_program(shell, ctx, argv[0])
        return _python_text(shell, ctx, rest[1], f"{argv[0]} -c", arguments=["-c", *rest[2:]])
    if rest[0] == "-m" and len(rest) > 1:
        if rest[1] == "pip":
            return run_pip(shell, rest[2:], ctx)
        if rest[1] in ("compileall", "py_compile", "site", "platform", "sysconfig", "json.tool"):
            shell.emit_unknown()
            return True
        return note_program(shell, ctx, f"{argv[0]} -m {rest[1]}")
    path = shell.path(rest[0])
    if path in shell.build.fs.files:
        return _python_text(shell, ctx, shell.build.read_context(shell.build.fs.files[path].source), rest[0],
                            script=path, arguments=rest)
    if absent_program(shell, ctx, argv[0], rest[0], path, 2):  # CPython: "can't open file ...: [Errno 2]"
        return False
    return note_program(shell, ctx, f"{argv[0]} {rest[0]}")


def _python_text(shell: Shell, ctx: CommandContext, text: str | None, name: str, script: str | None = None,
                 arguments: list[str] | None = None) -> bool | None:
    """Read Python code for the files it writes; ``script``: the image path of the program's file, if any (what
    ``__file__`` holds; a program from ``-c`` or standard input has none); ``arguments``: its ``sys.argv``."""
    from .python_effects import PACKAGE, python_effects  # ast is loaded only for a build that runs Python
    effects = python_effects(text) if text is not None else None
    shell.emit_unknown()
    effects = _located(effects, script, arguments or []) if effects is not None else None
    if effects is None:
        return note_program(shell, ctx, name)
    fs = shell.build.fs
    done, raised = _python_copies(shell, ctx, effects, name)
    read = _context_reads(shell, effects.reads)
    for written in effects.own_writes:  # after the copies: a write to what a copy placed makes it unread
        if read and not written.startswith("/dev/"):
            _python_hand_copy(shell, ctx, name, written, read)
        else:
            _python_write(shell, ctx, name, written)
    removed_in_order = {r.path for r in effects.removals}
    for removed in effects.removes:
        if removed in done or removed in removed_in_order:
            continue
        if removed.startswith(PACKAGE):
            scope = _package_scope(removed)
            if any(covers(scope, p) for p in fs.files):
                shell.unread(ctx, f"{name} removes {scope[3:]} of the installed package, where the build placed "
                                  "files", scope=(scope,))
            continue
        fs.remove(shell.path(removed))
    if raised:
        shell.ended_with(1)  # an uncaught exception: CPython prints the traceback and ends with 1
        return False
    if effects.fails_at is not None:
        # It ends with 'sys.exit(1)' or a raise and nothing before can end it otherwise: it fails, whatever else.
        shell.note(ctx, "fails", f"{name} ends with a failure at its line {effects.fails_at}")
        shell.ended_with(None)  # its number (sys.exit(3): 3) is not worked out
        return False
    return None  # whether it succeeds (an import the image may lack, sys.exit, an exception) the image decides


def _context_reads(shell: Shell, reads: tuple[str, ...]) -> list[str]:
    """The files of the build context a Python helper reads, as placed (``qwen3_6_scripts/paged_attn.py``), and
    "a file the reader cannot work out" for a read whose path it cannot tell: it may be one of them."""
    from .python_effects import PACKAGE
    fs, found = shell.build.fs, []
    for spelled in reads:
        if not spelled or not is_known(spelled):
            found.append("a file the reader cannot work out")
        elif not spelled.startswith(PACKAGE) and (placed := fs.files.get(fs.resolve(shell.path(spelled)))):
            found.append(placed.source)
    return list(dict.fromkeys(found))


def _python_hand_copy(shell: Shell, ctx: CommandContext, name: str, written: str, read: list[str]) -> None:
    """A helper that reads a context file and writes ``written`` with its own bytes may be copying it by hand
    (``open(dst, "w").write(open(src).read())``, maybe with a ``.replace()`` between): what ``written`` holds
    then is that file, changed or not, which the reader does not follow. Unread, scoped to that path."""
    from .python_effects import PACKAGE
    where = _package_scope(written) if written.startswith(PACKAGE) else shell.path(written)
    shown = f"{where[3:]} of the installed package" if written.startswith(PACKAGE) else where
    shell.unread(ctx, f"{name} writes {shown} itself after reading {', '.join(read)}: it may hold a copy of it, "
                      "changed or not", scope=(where,))


def _python_write(shell: Shell, ctx: CommandContext, name: str, written: str) -> None:
    """A Python helper writes ``written`` (as its code spells it) with bytes of its own: what the build placed there
    is unread, scoped to that path (or, in an installed package, to wherever the image has it)."""
    from .python_effects import PACKAGE
    fs = shell.build.fs
    if written.startswith(PACKAGE):
        # A file of an installed package, wherever the image installed it: any placed file at that place.
        scope = _package_scope(written)
        hit = min((p for p in fs.files if covers(scope, p)), default=None)
        if hit is not None:
            shell.unread(ctx, f"{name} rewrites {scope[3:]} of the installed package, which the build placed "
                              f"at {hit}", scope=(scope,))
        return
    path = shell.path(written)
    if any(p == path or p.startswith(path.rstrip("/") + "/") for p in fs.files):
        shell.unread(ctx, f"{name} rewrites {path}, which the build placed there", scope=(path,))


def _python_removal(shell: Shell, ctx: CommandContext, name: str,
                    removal: "Removal") -> dict[str, tuple[str, object]]:
    """Remove what ``removal`` names, as CPython would at that point of the program: not a folder with
    ``os.remove``, not a folder that holds anything with ``os.rmdir``. One in code that may not run is not
    carried out: what the build had placed there (path -> the path removed, the placement) is returned, to be
    unread if it stays."""
    from .image_fs import Kind, under
    from .python_effects import PACKAGE
    fs = shell.build.fs
    if removal.path.startswith(PACKAGE):
        scope = _package_scope(removal.path)
        if any(covers(scope, p) for p in fs.files):
            shell.unread(ctx, f"{name} removes {scope[3:]} of the installed package, where the build placed files",
                         scope=(scope,))
        return {}
    path = shell.path(removal.path)
    kind = fs.kind(path)
    if not removal.certain:
        return {p: (path, placed) for p, placed in fs.files.items() if under(p, path)}
    if kind is Kind.ABSENT and removal.missing_ok is False and fs.resolve(path, last=False) not in fs.links:
        _fails(shell, ctx, removal, f"{name} cannot remove {path}: nothing is there (FileNotFoundError)")
    elif removal.how in ("folder", "tree") and kind is Kind.FILE and path not in fs.links:
        _fails(shell, ctx, removal, f"{name} cannot remove the file {path} as a folder (NotADirectoryError)")
    elif removal.how == "file" and kind is Kind.DIR and path not in fs.links:
        _fails(shell, ctx, removal, f"{name} cannot remove the folder {path} as a file (IsADirectoryError)")
    elif removal.how == "folder" and kind is Kind.DIR and any(
            under(p, path) and p != path for paths in (fs.files, fs.others, fs.dirs) for p in paths):
        _fails(shell, ctx, removal, f"{name} cannot remove {path}: the folder is not empty (OSError)")
    else:
        fs.remove(path)
    return {}


def _located(effects: "PythonEffects", script: str | None, arguments: list[str]) -> "PythonEffects | None":
    """``effects`` with the paths built from ``__file__`` and ``sys.argv[N]`` made paths of the image, or None where
    the program has no file (``__file__`` is then a NameError) or an argument the reader does not know."""
    import re
    from dataclasses import replace

    from .python_effects import ARGUMENT, SCRIPT, SCRIPT_NAME, Copy

    paths = [*effects.writes, *effects.removes, *(p for c in effects.copies for p in (c.source, c.destination)),
             *(f.path for f in effects.folders)]  # removals and own_writes: among removes and writes
    if not any(p.startswith((SCRIPT, ARGUMENT)) for p in [*paths, *effects.reads]):
        return effects
    used = [int(m.group(1)) for p in paths for m in [re.match(f"{ARGUMENT}([0-9]+){ARGUMENT}", p)] if m]
    if script is None and any(p.startswith(SCRIPT) for p in paths) or \
            any(n >= len(arguments) or not is_known(arguments[n]) for n in used):
        return None  # a NameError, an IndexError, or a value the reader does not know
    own, program = f"{SCRIPT}/{SCRIPT_NAME}", script or ""

    def place(path: str) -> str:
        given = re.match(f"{ARGUMENT}([0-9]+){ARGUMENT}", path)
        if given is not None:
            return arguments[int(given.group(1))] + path[given.end():]
        if not path.startswith(SCRIPT):
            return path
        return program + path[len(own):] if path.startswith(own) else posixpath.dirname(program) + path[1:]

    def place_read(path: str) -> str:
        # A read's path the reader cannot place (no __file__, an argument it does not know) is one it cannot
        # work out: no reason to give up on what the program writes.
        given = re.match(f"{ARGUMENT}([0-9]+){ARGUMENT}", path)
        index = int(given.group(1)) if given is not None else 0
        if given is not None and (index >= len(arguments) or not is_known(arguments[index])) \
                or path.startswith(SCRIPT) and script is None:
            return ""
        return place(path)

    return replace(effects, writes=tuple(map(place, effects.writes)), removes=tuple(map(place, effects.removes)),
                   copies=tuple(Copy(c.how, place(c.source), place(c.destination), c.certain, c.at)
                                for c in effects.copies),
                   folders=tuple(replace(f, path=place(f.path)) for f in effects.folders),
                   removals=tuple(replace(r, path=place(r.path)) for r in effects.removals),
                   own_writes=tuple(map(place, effects.own_writes)), reads=tuple(map(place_read, effects.reads)))


class _Raised(Exception):
    """A call the program certainly makes (a statement of its top level) raises: nothing after it runs."""


def _fails(shell: Shell, ctx: CommandContext, action: "Copy | Folder | Removal", reason: str) -> None:
    """Note that ``action`` raises; where the program certainly makes that call, it ends there."""
    shell.note(ctx, "fails", reason)
    if action.certain:
        raise _Raised(reason)


def _python_copies(shell: Shell, ctx: CommandContext, effects: "PythonEffects", name: str) -> tuple[set[str], bool]:
    """Carry out the copies and moves a Python helper makes of what the build placed, as CPython would make them,
    in the program's order with its folders and removals.

    Each goes where its call puts it (``shutil.copy`` into a folder standing at the destination, ``os.replace``
    onto the name itself, ``copytree`` making the folders above it...). A call the program may never reach (in a
    function, a loop, an ``if``) is placed all the same and noted as the reader's assumption. Gives the paths, as
    spelled, that these calls account for (their writes and removes need no other reading), and whether a call the
    program certainly makes raises (an uncaught exception: what comes after it never runs, and the program fails).
    """
    from .python_effects import PACKAGE, Folder, Removal
    fs = shell.build.fs
    done: set[str] = set()
    raised = False
    maybe_removed: dict[str, tuple[str, object]] = {}  # what a removal in code that may not run would take away
    actions: list[Copy | Folder | Removal] = [*effects.copies, *effects.folders, *effects.removals]
    try:
        for action in sorted(actions, key=lambda a: a.at):
            if isinstance(action, Folder):
                if not action.path.startswith(PACKAGE):
                    _python_folder(shell, ctx, name, action)
            elif isinstance(action, Removal):
                maybe_removed.update(_python_removal(shell, ctx, name, action))
            else:
                _python_copy(shell, ctx, name, action, done)
    except _Raised:
        raised = True
    # What such a removal would take and nothing after it replaced: the image holds it or not, as the code runs.
    for path in sorted({removed for p, (removed, placed) in maybe_removed.items() if fs.files.get(p) is placed}):
        shell.unread(ctx, f"{name} removes {path} in code that may not run (a function, a loop, a condition): "
                          "what the build placed there may stay", scope=(path,))
    return done, raised


def _python_folder(shell: Shell, ctx: CommandContext, name: str, folder: "Folder") -> None:
    """``os.mkdir``, ``os.makedirs`` or ``Path.mkdir`` as CPython makes the folder, or raises: FileExistsError where a
    file stands there, or the folder without ``exist_ok``; FileNotFoundError without ``parents`` where the folder
    above is not there. What the base image may hold the reader does not weigh against it."""
    from .image_fs import Kind, self_and_parents
    fs = shell.build.fs
    path = shell.path(folder.path)
    there = fs.kind(path)
    if there is Kind.FILE:
        _fails(shell, ctx, folder, f"{name} cannot make the folder {path}: a file stands there (FileExistsError)")
    elif there is Kind.DIR and folder.exist_ok is False:
        _fails(shell, ctx, folder, f"{name} cannot make the folder {path}: it exists (FileExistsError)")
    elif not folder.parents and fs.kind(posixpath.dirname(path)) in (Kind.ABSENT, Kind.FILE):
        _fails(shell, ctx, folder, f"{name} cannot make the folder {path}: the folder above it is not there "
                                   "(FileNotFoundError)")
    elif folder.parents and any(fs.kind(above) is Kind.FILE for above in self_and_parents(path)[1:]):
        _fails(shell, ctx, folder, f"{name} cannot make the folder {path}: a file stands on the way "
                                   "(NotADirectoryError)")
    else:
        fs.make_dir(path)


def _python_copy(shell: Shell, ctx: CommandContext, name: str, action: "Copy", done: set[str]) -> None:
    """One copy, move or link of a Python helper (see ``_python_copies``)."""
    from .file_commands import transfer
    from .image_fs import Kind
    from .python_effects import PACKAGE
    fs = shell.build.fs
    if not action.destination:  # '' names no file: CPython's open('') and rename(..., '') raise
        _fails(shell, ctx, action, f"{name} cannot {'link' if action.how in ('symlink', 'link') else 'copy'} to '': "
                                   "no such file or folder (FileNotFoundError)")
        return
    if not action.source:  # a source the code does not spell out: a loop's file, a listing's
        where = _package_scope(action.destination) if action.destination.startswith(PACKAGE) else \
            shell.path(action.destination)
        shell.unread(ctx, f"{name} copies what the reader cannot work out to "
                          f"{where[3:] if where.startswith('**/') else where}", scope=(where,))
        return
    if action.how in ("symlink", "link") and not action.destination.startswith(PACKAGE) \
            and not action.source.startswith(PACKAGE):
        _python_link(shell, ctx, name, action)
        done.update((action.source, action.destination))
        return
    if action.source.startswith(PACKAGE):  # a file of an installed package is the base image's: a plain write
        _python_write(shell, ctx, name, action.destination)
        return
    spelled = shell.path(action.source)
    source = fs.resolve(spelled, last=False)
    if fs.kind(spelled) is Kind.ABSENT and not (action.how in ("move", "rename", "renames") and source in fs.links):
        # Nothing there (a link is moved as itself, even one that leads nowhere): CPython raises FileNotFoundError.
        _fails(shell, ctx, action, f"{name} cannot copy {spelled}: nothing is there (FileNotFoundError)")
        return
    if source not in fs.files and not fs.below(source):  # nothing of the context: a write like any other
        _python_write(shell, ctx, name, action.destination)
        return
    done.update((action.source, action.destination))
    how = "copies" if action.how != "other" else "copies, with arguments the reader does not follow,"
    if action.destination.startswith(PACKAGE):
        scope = _package_scope(action.destination)
        shell.unread(ctx, f"{name} {how} {source} to {scope[3:]} of the installed package, wherever the image "
                          "has it", scope=(scope,))
        return
    if action.how == "other":
        shell.unread(ctx, f"{name} {how} {source} to {shell.show(action.destination)}",
                     scope=(shell.path(action.destination),))
        return
    destination = shell.path(action.destination)
    is_dir = fs.kind(source) is Kind.DIR
    if action.how in ("copy", "copyfile") and is_dir or action.how in ("copytree", "merge") and not is_dir:
        _fails(shell, ctx, action, f"{name} cannot {action.how} {source}: it is a {'folder' if is_dir else 'file'}")
        return
    there = fs.kind(destination)
    if action.how == "copytree" and there is not Kind.ABSENT:
        if there is not Kind.UNKNOWN:
            _fails(shell, ctx, action, f"{name} cannot copytree to {destination}: a folder or file stands there")
            return
        shell.unread(ctx, f"{name} copies {source} to {destination} only if nothing may stand there in the base "
                          "image", scope=(destination,))
    if action.how in ("copytree", "merge", "renames"):
        fs.make_dir(posixpath.dirname(destination))  # os.makedirs: the folders above it too
    if action.how in ("rename", "renames") and fs.resolve(destination, last=False) == source:
        return  # os.rename(P, P) does nothing, and succeeds (mv says "are the same file")
    if not transfer(shell, ctx, name, [source], destination, recursive=action.how != "copyfile",
                    into=None if action.how in ("copy", "move") else False,
                    move=action.how in ("move", "rename", "renames"), written=action.destination):
        if action.certain:
            raise _Raised(f"{name} cannot copy {source} to {destination}")  # transfer said why
    if not action.certain:
        shell.note(ctx, "assumed", f"{name} copies {source} to {destination} in code that may not run (a "
                                   "function, a loop, a condition): the reader takes it to run once")


def _python_link(shell: Shell, ctx: CommandContext, name: str, link: "Copy") -> None:
    """``os.symlink(TARGET, LINK)`` (or ``Path(LINK).symlink_to(TARGET)``) as ``ln -s`` makes it: a relative TARGET
    is read from LINK's folder, and may not exist yet. ``os.link`` as ``ln``: TARGET from the current folder, and it
    must exist. CPython makes LINK itself, never inside a folder there, and refuses a LINK that exists."""
    from .file_commands import keep_link, transfer
    from .image_fs import Kind, normalise
    fs = shell.build.fs
    at = shell.path(link.destination)
    if fs.kind(at) in (Kind.FILE, Kind.DIR) or fs.resolve(at, last=False) in fs.links:
        _fails(shell, ctx, link, f"{name} cannot make the link {at}: something stands there (FileExistsError)")
        return
    symbolic = link.how == "symlink"
    if symbolic and not link.source.startswith("/"):
        target = fs.physical(normalise(posixpath.join(posixpath.dirname(at), link.source)))
    else:
        target = shell.path(link.source)
    made = transfer(shell, ctx, name, [target], at, recursive=True, into=False, link=True,
                    written=link.destination, dangling=symbolic)
    if not made and link.certain:
        raise _Raised(f"{name} cannot make the link {at}")
    if symbolic and made:
        # As 'ln -s': the link shows whatever the build puts at its target later (a relative one keeps its text).
        keep_link(fs, fs.resolve(at, last=False), target, link.source)
    if not link.certain:
        shell.note(ctx, "assumed", f"{name} links {at} to {target} in code that may not run (a function, a loop, a "
                                   "condition): the reader takes it to run once")


def _package_scope(path: str) -> str:
    """The image paths a path inside an installed package's folder can be (``**/vllm/core/x.py``)."""
    from .python_effects import PACKAGE
    return f"**/{posixpath.normpath(path[len(PACKAGE):])}"


def run_pip(shell: Shell, args: list[str], ctx: CommandContext) -> bool | None:
    """``pip install NAME...`` replaces only those packages' folders; a path, URL or requirements file could be anything."""
    shell.emit_unknown()
    # pip reads its general options before the command too: 'pip --no-cache-dir install vllm'.
    o = read_options("pip", args)
    if not o.operands or o.operands[0] not in ("install", "uninstall"):
        return True
    command, *packages = o.operands
    if o.values.keys() & {"r", "requirement", "e", "editable", "c", "constraint", "t", "target", "prefix", "root"}:
        return note_program(shell, ctx, f"pip {command}")
    names = []
    for operand in packages:
        if "/" in operand or operand.startswith(".") or operand.endswith((".whl", ".tar.gz", ".zip")):
            return note_program(shell, ctx, f"pip {command} {operand}")
        names.append(operand.split("[")[0].split("=")[0].split("<")[0].split(">")[0].split("~")[0].split("!")[0])
    folders = [n.strip().lower().replace("-", "_").replace(".", "/") for n in names if n.strip()]
    scope = tuple(f"**/{site}/{folder}" for folder in folders for site in ("site-packages", "dist-packages"))
    if any(covers(s, p) for s in scope for p in shell.build.fs.files):
        shell.unread(ctx, f"pip {command} {' '.join(names)} replaces those packages' files", scope=scope)
    return True
