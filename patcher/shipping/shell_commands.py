"""What one simple command does: builtins, the file commands, scripts of the context, and other programs.

A script of the build context that a command runs (``./patch_ops.sh``,
``sh -ec "..."``, ``bash -x FILE``, ``. FILE``) is read too, in a child
shell (or this one, for ``.`` and ``eval``) that inherits the exported
variables and the directory. A Python program of the context is read
for the files it writes (``python_effects.py``). Any other program is
run by the image, not by the reader: it is noted (``program``) with what
it could change, never guessed.
"""

from __future__ import annotations

import operator
import posixpath
import re
from dataclasses import replace
from typing import Callable

from .file_commands import FILE_COMMANDS, folder_there, transfer
from .image_fs import Kind, normalise
from .shell_interpreter import (MAX_DEPTH, CommandContext, Exit, ScriptRecord, Shell, ShellSyntaxError, Stop,
                                _Loop, _Return, shebang)
from .shell_syntax import Redirect, Simple, heredoc_word, parse_script, plain_text, split_assignment
from .shell_words import MAX_WORD, Field, is_known
from .tool_options import TABLES, read_options

SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "zsh", "busybox-sh"})
# Commands that change no file of the image and no state of the shell; what they print is unknown.
PRINTING = frozenset({
    "ls", "cat", "head", "tail", "grep", "egrep", "fgrep", "wc", "sort", "uniq", "cut", "tr", "date", "printenv",
    "id", "whoami", "hostname", "uname", "nproc", "which", "type", "df", "du", "stat", "file", "md5sum",
    "sha256sum", "sha1sum", "sha512sum", "cmp", "diff", "nvidia-smi", "ixsmi", "lscpu", "free", "uptime", "ps",
    "getconf", "locale", "tty", "arch", "ldd", "nm", "od", "xxd", "hexdump", "jq", "column", "fold", "rev", "seq",
    "yes", "tac", "nl", "expr", "sleep", "sync", "chmod", "chown", "chgrp", "ldconfig", "umask", "ulimit", "trap",
    "wait", "hash", "alias", "unalias", "true", ":", "false", "sed", "awk", "find", "hostnamectl",
})
# Programs that install packages: they write where the package manager puts things.
PACKAGE_MANAGERS = frozenset({"apt-get", "apt", "yum", "dnf", "microdnf", "apk", "conda", "mamba", "micromamba",
                              "npm", "gem", "dpkg", "rpm", "git", "curl", "wget", "tar", "unzip", "make", "cmake"})


# Declaration utilities: an argument that reads as an assignment is expanded as one (POSIX 2024, bash, dash):
# not split, not globbed, a '~' after its '=' or a ':' expanded.
_DECLARATIONS = frozenset({"export", "readonly", "local", "declare", "typeset"})


def run_simple(shell: Shell, node: Simple, ctx: CommandContext) -> bool | None:
    """Expand and run one simple command."""
    declares = bool(node.words) and plain_text(node.words[0]) in _DECLARATIONS
    fields: list[Field] = []
    for word in node.words:
        assignment = split_assignment(word) if declares else None
        if assignment is None:
            fields += shell.expand_word(word)
        else:
            fields.append(Field(f"{assignment[0]}={shell.expand_one(assignment[1], assignment=True)}"))
    argv = shell.glob(fields, ctx)
    assignments = [(name, shell.expand_one(value, assignment=True)) for name, value in node.assignments]
    # bash arrays (NAME=(a b)) are not kept: the name's value is unknown from here (its elements still expanded,
    # as bash expands them, for what a $(...) among them does).
    assignments = [(name[:-2].rstrip("+"), shell.unknowns.mark(f"${name[:-2].rstrip('+')}")) if name.endswith("()")
                   else (name, value) for name, value in assignments]
    copy = _redirected_copy(shell, argv, node.redirects) if argv else None
    try:
        stdin = apply_redirects(shell, node.redirects, ctx)
    except RedirectFailed:
        return False
    if copy is not None:
        return transfer(shell, ctx, posixpath.basename(argv[0]), [copy[0]], copy[1], recursive=False, into=False)
    if not argv:
        for name, value in assignments:
            if name.endswith("+"):
                shell.assign(name[:-1], (shell.lookup(name[:-1]) or "") + value)
            else:
                shell.assign(name, value)
        return True
    return dispatch(shell, argv, ctx, dict(assignments), stdin, captured=not _stdout_redirected(node.redirects))


def _redirected_copy(shell: Shell, argv: list[str], redirects: tuple[Redirect, ...]) -> tuple[str, str] | None:
    """(source, destination) of ``cat SRC > DEST``, ``cat < SRC > DEST`` or ``tee DEST < SRC``, else None.

    DEST then holds SRC's bytes, as ``cp SRC DEST`` would give them: a common way to copy a file
    over another. Anything else (several files, an option, an append, a here-document) is not a copy.
    """
    program, operands = posixpath.basename(argv[0]), argv[1:]
    if operands[:1] == ["--"]:
        operands = operands[1:]
    if any(o.startswith("-") and o != "-" for o in operands) or any(r.body is not None for r in redirects):
        return None
    inputs = [r for r in redirects if r.op == "<" and r.fd in (None, 0)]
    outputs = [r for r in redirects if r.op in (">", ">|", ">>", "&>", "&>>") and r.fd in (None, 1)]
    if program == "cat" and len(outputs) == 1 and outputs[0].op in (">", ">|", "&>"):
        if operands in ([], ["-"]):
            if len(inputs) != 1:
                return None
            source = shell.expand_one(inputs[0].target)
        elif len(operands) == 1:
            source = operands[0]
        else:
            return None
        destination = shell.expand_one(outputs[0].target)
    elif program == "tee" and len(operands) == 1 and operands[0] != "-" and len(inputs) == 1:
        source, destination = shell.expand_one(inputs[0].target), operands[0]
    else:
        return None
    if not is_known(source) or not is_known(destination) or destination.startswith("/dev/"):
        return None
    return shell.path(source), shell.path(destination)


class RedirectFailed(Exception):
    """sh cannot open a redirection's file: the command does not run, and fails."""


def apply_redirects(shell: Shell, redirects: tuple[Redirect, ...], ctx: CommandContext) -> str | None:
    """Write what output redirections write; return a here-document's text (standard input) if any."""
    stdin: str | None = None
    for redirect in redirects:
        if redirect.body is not None:
            stdin = redirect.body if redirect.body_quoted else shell.expand_one(heredoc_word(redirect.body))
            continue
        if redirect.op not in (">", ">>", ">|", "&>", "&>>") or redirect.fd not in (None, 1, 2):
            continue
        target = shell.expand_one(redirect.target)
        if target.startswith("/dev/") or target.isdigit():
            continue
        if not is_known(target):
            shell.unread(ctx, f"writes to {shell.show(target)}, which the reader cannot work out")
            continue
        path = shell.path(target)
        if not folder_there(shell, ctx, "the redirection", path):
            raise RedirectFailed(path)
        if redirect.op.endswith(">>") and path in shell.build.fs.files:
            held = shell.build.fs.files[path].source
            shell.unread(ctx, f"appends to {path}, which holds {held}: the image gets it changed", scope=(path,))
        elif not redirect.op.endswith(">>") or shell.build.fs.kind(path) is not Kind.FILE:
            shell.build.fs.write_other(path)
    return stdin


def _stdout_redirected(redirects: tuple[Redirect, ...]) -> bool:
    return any(r.op in (">", ">>", ">|", "&>", "&>>") and r.fd in (None, 1) for r in redirects)


def dispatch(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str] | None = None,
             stdin: str | None = None, captured: bool = True) -> bool | None:
    """Run ``argv`` (already expanded) as the shell would: function, builtin, script, file command, program.

    ``captured`` False: its standard output goes to a file, so a ``$(...)`` around it hears nothing.
    """
    saved = shell.output
    if not captured:
        shell.output = None
    try:
        return _dispatch(shell, argv, ctx, env or {}, stdin)
    finally:
        shell.output = saved


def _dispatch(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str],
              stdin: str | None) -> bool | None:
    name = argv[0]
    if not is_known(name):
        shell.unread(ctx, f"runs a command named by {shell.show(name)}, which the reader cannot work out")
        return None
    if name in shell.functions:
        return shell.call(shell.functions[name], argv[1:], ctx)
    builtin = BUILTINS.get(name)
    if builtin is not None:
        return builtin(shell, argv, ctx, env, stdin)
    base = posixpath.basename(name)
    if "/" in name:
        path = shell.path(name)
        if path in shell.build.fs.files:
            return run_context_file(shell, path, argv, ctx, env)
        if not path.startswith(("/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/")):
            return _program(shell, ctx, name)
    elif (found := _on_path(shell, name)) is not None:
        return run_context_file(shell, found, argv, ctx, env)
    if base in FILE_COMMANDS:
        unknown = [a for a in argv[1:] if not is_known(a)]
        if unknown:
            scopes = [_known_prefix(shell, a) for a in unknown]
            shell.unread(ctx, f"{base} {' '.join(shell.show(a) for a in unknown)}: a path that depends on a value "
                              "the reader cannot work out",
                         scope=None if any(s is None for s in scopes) else tuple(s for s in scopes if s))
            return None
        return FILE_COMMANDS[base](shell, ctx, argv[1:])
    if base in SHELLS:
        return run_shell(shell, argv, ctx, env, stdin)
    if base.startswith("python"):
        return run_python(shell, argv, ctx, stdin)
    if base in ("pip", "pip3") or base.startswith("pip3."):
        return run_pip(shell, argv[1:], ctx)
    if base in ("sudo", "nohup", "time", "nice", "stdbuf", "timeout", "exec", "command", "builtin", "env"):
        return _command(shell, argv, ctx, env, stdin)
    if base in PRINTING:
        return _printing(shell, base, argv, ctx)
    if base in PACKAGE_MANAGERS:
        return _program(shell, ctx, base)
    return _program(shell, ctx, name)


def _known_prefix(shell: Shell, word: str) -> str | None:
    """The folder a path with an unknown part certainly lies in (None: it could be anywhere)."""
    head = word[:word.index("\x00")]
    if "/" not in head:
        return None  # the unknown part could be an absolute path itself
    return shell.path(head[:head.rindex("/")] or "/")


def _on_path(shell: Shell, name: str, past_unknown: bool = False) -> str | None:
    """A context file placed in a folder of a PATH the build set, found as ``name``.

    The folders are tried in order up to the first the reader cannot know
    (``PATH=/opt/s:$PATH`` finds /opt/s/NAME, not what the base image's PATH
    holds), or past it with ``past_unknown`` (``PATH=$PATH:/opt/s``).
    """
    path = shell.variables.get("PATH")
    for folder in [] if path is None else path.split(":"):
        if not is_known(folder):
            if past_unknown:
                continue
            return None
        candidate = normalise(posixpath.join(folder or shell.cwd, name))
        if candidate in shell.build.fs.files:
            return candidate
    return None


def _program(shell: Shell, ctx: CommandContext, name: str, scope: tuple[str, ...] | None = None) -> bool | None:
    shell.emit_unknown()
    shell.note(ctx, "program", f"runs {name}, which the reader does not follow: it could change "
                               f"{'any file' if scope is None else ', '.join(scope)}", scope)
    return None


_FIND_RUNS = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITES = ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls")  # -delete the files walked, the others FILE
# Programs that, run by find on the files it lists, change nothing, or only the paths on their line.
_FIND_READS = frozenset({"echo", "printf", "true", "cat", "grep", "ls", "stat", "file", "test", "[", "head", "wc",
                         "md5sum", "sha256sum"})
_FIND_CHANGES = frozenset({"rm", "touch", "cp", "mv", "ln", "install", "mkdir", "sed", "chmod", "chown", "chgrp",
                           "dos2unix"})


def _find_scope(shell: Shell, args: list[str]) -> tuple[str, ...] | None:
    """What ``find ARGS`` could change: the trees it walks, a file its -fprint writes, the paths on an -exec line.

    Any other program (``sh -c``, ``python``, ``xargs``) could change anything: None. Under
    ``-execdir`` a relative path is in the folder of each file found, so inside the trees walked
    unless it climbs out with ``..``.
    """
    roots: list[str] = []  # the paths before the first test or action; none means "."
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        roots.append(arg)
    paths = roots or ["."]
    index = len(roots)
    while index < len(args):
        arg = args[index]
        index += 1
        if arg in _FIND_RUNS:
            end = next((i for i in range(index, len(args)) if args[i] in (";", "+")), len(args))
            command, index = args[index:end], end + 1
            program = posixpath.basename(command[0]) if command else ""
            if program not in _FIND_READS | _FIND_CHANGES:
                return None
            named = [a for a in _operands(program, command[1:]) if "{}" not in a]
            if arg in ("-execdir", "-okdir"):
                if any(".." in a.split("/") for a in named if not a.startswith("/")):
                    return None
                named = [a for a in named if a.startswith("/")]
            paths += named if program in _FIND_CHANGES else []
        elif arg in _FIND_WRITES[1:] and index < len(args):
            paths.append(args[index])
    if not all(is_known(path) for path in paths):
        return None
    return tuple(dict.fromkeys(shell.path(path) for path in paths))


def _operands(program: str, args: list[str]) -> list[str]:
    """The paths of a command line: its operands, less a mode, an owner or a sed script written before them."""
    if program in ("chmod", "chown", "chgrp"):
        operands = [a for a in args if not a.startswith("-")]
        return operands[1:]
    if program in TABLES:
        read = read_options(program, args)
        if program == "sed" and not read.values.keys() & {"e", "f", "expression", "file"}:
            return read.operands[1:]
        return read.operands + [v for k, v in read.values.items() if k in ("t", "target-directory")]
    return [a for a in args if not a.startswith("-")]


def _printing(shell: Shell, base: str, argv: list[str], ctx: CommandContext) -> bool | None:
    if base in ("true", ":"):
        return True
    if base == "false":
        return False
    if base == "sed":
        o = read_options("sed", argv[1:])
        if "i" in o.flags or "in-place" in o.flags or "in-place" in o.values:
            scripts_given = o.values.keys() & {"e", "f", "expression", "file"}
            files = o.operands if scripts_given else o.operands[1:]  # the first operand is the script
            shell.unread(ctx, "edits files in place (sed -i)", scope=tuple(shell.path(f) for f in files) or None)
        else:
            shell.emit_unknown()
        return True
    if base == "awk" and any(">" in a or "system" in a for a in argv[1:]):
        return _program(shell, ctx, "awk")
    if base == "find" and any(a in _FIND_RUNS or a in _FIND_WRITES for a in argv[1:]):
        shell.unread(ctx, "runs commands on the files find lists, which the reader does not follow",
                     scope=_find_scope(shell, argv[1:]))
        return None
    shell.emit_unknown()
    return True


# -- scripts and shells ----------------------------------------------------

def run_context_file(shell: Shell, path: str, argv: list[str], ctx: CommandContext, env: dict[str, str]) -> bool | None:
    """Execute a context file placed at ``path`` as a program: by its ``#!`` line, else with the calling shell."""
    source = shell.build.fs.files[path].source
    text = shell.build.read_context(source)
    if text is None:
        return _program(shell, ctx, f"{argv[0]} (not a text file)")
    interpreter = shebang(text)
    if interpreter is None:
        # The kernel cannot run it (ENOEXEC), so the shell that called it runs it itself: bash in bash, sh in sh.
        return run_script(shell, path, text, argv[0], argv[1:], ctx, env, flags=[], program=shell.program)
    program, arguments = interpreter
    base = posixpath.basename(program)
    if base in SHELLS:
        return run_script(shell, path, text, argv[0], argv[1:], ctx, env, flags=arguments, program=base)
    if base.startswith("python"):
        return _python_text(shell, ctx, text, f"{argv[0]}")
    return _program(shell, ctx, argv[0])


def run_script(shell: Shell, path: str, text: str, argv0: str, args: list[str], ctx: CommandContext,
               env: dict[str, str], flags: list[str], program: str = "sh") -> bool | None:
    """Read a context script in a child shell, as ``PROGRAM FLAGS FILE ARGS`` would run it (``sh``, ``bash``...)."""
    if shell.depth >= MAX_DEPTH:
        shell.unread(ctx, f"scripts nest more than {MAX_DEPTH} deep; the reader does not follow this one")
        return None
    source = shell.build.fs.files[path].source
    record = ScriptRecord(source, path, shell.run_line, shell.cwd, shell.environment(env))
    shell.build.scripts.append(record)
    options = _shell_flags(flags)
    child = Shell(shell.build, source, shell.cwd, shell.environment(env), argv0=argv0, positional=args,
                  errexit="e" in options, propagates=shell.fails_build(ctx), inherited=shell.child_hides(ctx),
                  run_line=shell.run_line, record=record, depth=shell.depth + 1, program=program)
    record.errexit_first = child.errexit
    child.noglob = "f" in options
    child.output = shell.output  # a $(...) around the command hears what the script prints
    if "\r\n" in text:
        # sh takes a carriage return for part of a word: each line's last word ends in it, so a cp writes to
        # 'NAME\r' and a cd fails. The reader reads the lines without it, so what it makes of them may not hold.
        child.unread(CommandContext(1, text.split("\n", 1)[0].strip()),
                     f"{source} has CRLF line endings: sh reads each line's last word with a carriage return on "
                     "it (cp writes to 'NAME\\r', cd fails), which the reader does not follow")
    try:
        parsed = parse_script(text, bash=program == "bash")
    except RecursionError:
        child.note(CommandContext(1, text.split("\n", 1)[0].strip()), "stop",
                   f"nests too deeply to be read: {source} is not read")
        return None
    except ShellSyntaxError as error:
        child.note(CommandContext(error.line, text.splitlines()[error.line - 1].strip() if 0 < error.line <= len(
            text.splitlines()) else ""), "stop", f"cannot be parsed as shell ({error.message}): {source} is not "
                                                 "read from here on")
        return None
    try:
        return child.run(parsed)
    except Exit as end:
        return end.status
    except Stop:
        return None
    except (_Return, _Loop):
        return True
    except RecursionError:
        shell.note(ctx, "stop", f"{source} nests too deeply to be read; the reader stops there")
        return None


def _shell_flags(words: list[str]) -> set[str]:
    """The single-letter options of ``sh -e -x``, ``-ex``, ``-o errexit`` (as "e"), ``-o noglob`` (as "f")."""
    found: set[str] = set()
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-o", "+o") and index + 1 < len(words):
            letter = {"errexit": "e", "noglob": "f"}.get(words[index + 1])
            if letter is not None:
                found.discard(letter) if word == "+o" else found.add(letter)
            index += 2
            continue
        if word[:1] in "-+" and word not in ("-", "--"):
            for letter in word[1:]:
                found.discard(letter) if word[0] == "+" else found.add(letter)
        index += 1
    return found


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
            shell.build, shell.file, shell.cwd, shell.environment(env), argv0=name, positional=positional,
            errexit="e" in options, propagates=shell.fails_build(ctx), inherited=shell.child_hides(ctx),
            run_line=shell.run_line, record=shell.record, depth=shell.depth + 1, dockerfile=shell.dockerfile,
            program=posixpath.basename(argv[0]))
        child.output, child.noglob = shell.output, "f" in options
        try:
            return child.run_text(text, ctx.line, CommandContext(ctx.line, ctx.text, ctx.hides, ctx.stops_on_error,
                                                                 ctx.exempt, True))
        except Exit as end:
            return end.status
        except Stop:
            return None
    if from_stdin and stdin is None and rest:
        return _program(shell, ctx, " ".join(argv[:2]))  # a script piped in: what it does is not the context's
    if rest and not from_stdin:
        script = shell.path(rest[0])
        if script in shell.build.fs.files:
            body = shell.build.read_context(shell.build.fs.files[script].source)
            if body is None:
                return _program(shell, ctx, rest[0])
            return run_script(shell, script, body, rest[0], rest[1:], ctx, env, flags,
                              program=posixpath.basename(argv[0]))
        return _program(shell, ctx, " ".join(argv[:2]))
    if stdin is not None:
        child = Shell(shell.build, shell.file, shell.cwd, shell.environment(env), argv0=argv[0], positional=rest,
                      errexit="e" in options, propagates=shell.fails_build(ctx), inherited=shell.child_hides(ctx),
                      run_line=shell.run_line, record=shell.record, depth=shell.depth + 1,
                      dockerfile=shell.dockerfile, program=posixpath.basename(argv[0]))
        child.output, child.noglob = shell.output, "f" in options
        try:
            return child.run_text(stdin, ctx.line + 1, ctx)  # the here-document starts on the next line
        except Exit as end:
            return end.status
        except Stop:
            return None
    return True


# -- Python and pip --------------------------------------------------------

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
            return _python_text(shell, ctx, stdin, name)
        return True if not rest else _program(shell, ctx, name)
    if rest[0] == "-c" and len(rest) > 1:
        return _python_text(shell, ctx, rest[1], f"{argv[0]} -c") if is_known(rest[1]) else _program(shell, ctx, argv[0])
    if rest[0] == "-m" and len(rest) > 1:
        if rest[1] == "pip":
            return run_pip(shell, rest[2:], ctx)
        if rest[1] in ("compileall", "py_compile", "site", "platform", "sysconfig", "json.tool"):
            shell.emit_unknown()
            return True
        return _program(shell, ctx, f"{argv[0]} -m {rest[1]}")
    path = shell.path(rest[0])
    if path in shell.build.fs.files:
        return _python_text(shell, ctx, shell.build.read_context(shell.build.fs.files[path].source), rest[0])
    return _program(shell, ctx, f"{argv[0]} {rest[0]}")


def _python_text(shell: Shell, ctx: CommandContext, text: str | None, name: str) -> bool | None:
    from .python_effects import python_effects  # ast is loaded only for a build that runs Python
    effects = python_effects(text) if text is not None else None
    shell.emit_unknown()
    if effects is None:
        return _program(shell, ctx, name)
    fs = shell.build.fs
    for written in effects.writes:
        path = shell.path(written)
        if any(p == path or p.startswith(path.rstrip("/") + "/") for p in fs.files):
            shell.unread(ctx, f"{name} rewrites {path}, which the build placed there", scope=(path,))
    for removed in effects.removes:
        fs.remove(shell.path(removed))
    return True


def run_pip(shell: Shell, args: list[str], ctx: CommandContext) -> bool | None:
    """``pip install NAME...`` replaces only those packages' folders; a path, URL or requirements file could be anything."""
    shell.emit_unknown()
    # pip reads its general options before the command too: 'pip --no-cache-dir install vllm'.
    o = read_options("pip", args)
    if not o.operands or o.operands[0] not in ("install", "uninstall"):
        return True
    command, *packages = o.operands
    if o.values.keys() & {"r", "requirement", "e", "editable", "c", "constraint", "t", "target", "prefix", "root"}:
        return _program(shell, ctx, f"pip {command}")
    names = []
    for operand in packages:
        if "/" in operand or operand.startswith(".") or operand.endswith((".whl", ".tar.gz", ".zip")):
            return _program(shell, ctx, f"pip {command} {operand}")
        names.append(operand.split("[")[0].split("=")[0].split("<")[0].split(">")[0].split("~")[0].split("!")[0])
    folders = [n.strip().lower().replace("-", "_").replace(".", "/") for n in names if n.strip()]
    scope = tuple(f"**/{site}/{folder}" for folder in folders for site in ("site-packages", "dist-packages"))
    from .shell_interpreter import covers
    if any(covers(s, p) for s in scope for p in shell.build.fs.files):
        shell.unread(ctx, f"pip {command} {' '.join(names)} replaces those packages' files", scope=scope)
    return True


# -- builtins --------------------------------------------------------------

Builtin = Callable[[Shell, list[str], CommandContext, dict[str, str], "str | None"], "bool | None"]


def _cd(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    args = argv[1:]
    while args and args[0][:1] == "-" and args[0] != "-":  # cd [-L|-P [-e]] [-@] [--] DIR
        if args[0] == "--":
            args = args[1:]
            break
        if not set(args[0][1:]) <= set("LPe@"):
            break
        args = args[1:]
    if not args:
        target = shell.lookup("HOME") or "/root"
    elif args[0] == "-":
        if shell.oldpwd is None:
            shell.note(ctx, "fails", "cd - before any cd: OLDPWD is not set")
            return False
        target = shell.oldpwd
        shell.emit(target + "\n")
    else:
        target = args[0]
    return shell.change_directory(target, ctx)


def _pushd(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    args = [a for a in argv[1:] if a != "-n"]
    if args[:1] == ["--"]:
        args = args[1:]
    if args and args[0][:1] in "+-" and args[0][1:].isdigit():
        shell.unread(ctx, "rotates the directory stack, which the reader does not follow")
        return None
    if not args:
        if not shell.stack:
            shell.note(ctx, "fails", "pushd: no other directory")
            return False
        previous = shell.cwd
        shell.cwd, shell.stack[-1] = shell.stack[-1], previous
        shell.oldpwd = previous
        shell.emit_unknown()  # it prints the stack, as pushd DIR does
        return True
    previous = shell.cwd
    if not shell.change_directory(args[0], ctx):
        return False
    shell.stack.append(previous)
    shell.emit_unknown()
    return True


def _popd(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    if any(a[:1] in "+-" and a[1:].isdigit() for a in argv[1:]):
        shell.unread(ctx, "removes an entry inside the directory stack, which the reader does not follow")
        return None
    if not shell.stack:
        shell.note(ctx, "fails", "popd: the directory stack is empty, so the directory does not change")
        return False
    shell.oldpwd, shell.cwd = shell.cwd, shell.stack.pop()
    shell.emit_unknown()
    return True


def _dirs(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    if "-c" in argv[1:]:
        shell.stack.clear()
        return True  # dirs -c prints nothing
    shell.emit(" ".join([shell.cwd, *reversed(shell.stack)]) + "\n")
    return True


def _set(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    args = argv[1:]
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            shell.positional = args[index + 1:]
            return True
        if word in ("-o", "+o"):
            if index + 1 < len(args):
                _set_option(shell, args[index + 1], word == "-o")
            index += 2
            continue
        if word[:1] in "-+" and len(word) > 1:
            letters = word[1:]
            if "e" in letters:
                shell.set_errexit(word[0] == "-")
            if "f" in letters:
                shell.noglob = word[0] == "-"
            if "o" in letters and index + 1 < len(args):
                _set_option(shell, args[index + 1], word[0] == "-")
                index += 2
                continue
            index += 1
            continue
        shell.positional = args[index:]
        return True
    return True


def _shopt(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """bash's ``shopt -s|-u NAME...``: the options that change what a pattern gives (nullglob, failglob, dotglob)."""
    if shell.program == "sh":
        # Only bash has shopt: under the base image's sh, dash fails the command and bash runs it.
        shell.unread(ctx, "shopt is bash's: under the base image's sh it may fail or change how patterns match")
        return None
    words = argv[1:]
    if shell.program != "bash":
        return _program(shell, ctx, argv[0])
    letters, names = "", words
    while names and names[0][:1] == "-" and names[0] != "-":
        if names[0] == "--":
            names = names[1:]
            break
        letters, names = letters + names[0][1:], names[1:]
    if set(letters) <= {"p", "q", "o"}:
        # 'shopt [-p] [-q] [-o] [NAME...]' lists the options (-q: silently); it succeeds when each NAME is on,
        # which the reader knows of the options it follows only (bash's defaults for the others are the image's).
        if "q" not in letters:
            shell.emit_unknown()
        if not names:
            return True
        return all(n in shell.shopts for n in names) if "o" not in letters and set(names) <= _GLOB_OPTIONS else None
    mode = letters.replace("q", "")
    if mode not in ("s", "u"):
        shell.unread(ctx, f"shopt {' '.join(words)}, which the reader does not follow")
        return None
    for name in names:
        if name in _GLOB_OPTIONS:
            (shell.shopts.add if mode == "s" else shell.shopts.discard)(name)
        elif name not in _HARMLESS_SHOPTS:
            shell.unread(ctx, f"shopt -{mode} {name}, which the reader does not follow")
    return True


# The shopt options the reader follows, and those that change nothing it reads.
_GLOB_OPTIONS = frozenset({"nullglob", "failglob", "dotglob"})
_HARMLESS_SHOPTS = frozenset({"checkwinsize", "histappend", "cmdhist", "lithist", "progcomp", "promptvars",
                              "expand_aliases", "nocasematch", "inherit_errexit", "huponexit", "checkhash",
                              "sourcepath", "extquote", "interactive_comments", "login_shell", "mailwarn"})


def _set_option(shell: Shell, name: str, on: bool) -> None:
    """``set -o NAME`` / ``set +o NAME`` for the options the reading depends on."""
    if name == "errexit":
        shell.set_errexit(on)
    elif name == "noglob":
        shell.noglob = on


def _export(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    for word in argv[1:]:
        if word.startswith("-"):
            continue
        name, equals, value = word.partition("=")
        if equals:
            shell.assign(name, value)
        if argv[0] == "export":
            shell.exported.add(name)
    return True


def _local(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``local NAME[=VALUE]``: in a function, NAME is its own until it returns (functions it calls see it too).

    ``local NAME`` without a value: bash leaves NAME unset, dash keeps the
    value it had; under sh, which of them the image has decides. Outside a
    function it is read as ``declare``.
    """
    for word in argv[1:]:
        if word.startswith("-"):
            continue
        name, equals, value = word.partition("=")
        shell.make_local(name)
        if equals:
            shell.assign(name, value)
        elif shell.frames and shell.program == "bash":
            shell.variables.pop(name, None)
            shell.unset.add(name)
        elif shell.frames and shell.program == "sh" and shell.variables.get(name):
            shell.assign(name, shell.unknowns.mark(f"${name}"))
    return True


def _unset(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``unset -f NAME`` removes the function only, ``unset -v NAME`` the variable only; ``unset NAME`` the
    variable, and (bash, not dash) the function when there was no such variable."""
    names = argv[1:]
    only = ""
    while names and names[0][:1] == "-" and len(names[0]) > 1:
        option = names.pop(0)
        if option == "--":
            break
        for letter in option[1:]:
            only = letter if letter in "fv" else only  # dash: the last one counts
    for name in names:
        had_variable = name in shell.variables
        if only != "f":
            shell.variables.pop(name, None)
            shell.unset.add(name)
        if only == "f" or (not only and not had_variable and shell.program != "dash"):
            shell.functions.pop(name, None)
    return True


def _exit(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    if len(argv) < 2:
        raise Exit(shell.last_status)  # sh: the status of the last command run
    code = argv[1]
    # The status is N modulo 256 ('exit 256' succeeds), which N's last eight digits decide (10**8 % 256 == 0).
    raise Exit(int(code[-8:]) % 256 == 0 if code.isdigit() else None)


def _return(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    raise _Return()


def _loop_control(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() and int(argv[1]) > 0 else 1
    raise _Loop(argv[0], count)


def _shift(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    count = int(argv[1]) if len(argv) > 1 and argv[1].isdigit() else 1
    shell.positional = shell.positional[count:]
    return True


def _source(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``. FILE`` / ``source FILE``: FILE's commands run in this shell.

    A FILE without a ``/`` is looked for on PATH; only bash (not as ``sh``)
    then tries the current folder. Under sh (dash, or bash as sh) a ``.``
    that finds nothing ends the script, a ``source`` fails and the script
    reads on; dash has no ``source`` at all.
    """
    if len(argv) < 2:
        return True
    command, name = argv[0], argv[1]
    if command == "source" and shell.program == "dash":
        shell.note(ctx, "fails", f"dash has no 'source' command: the script reads on without {name}")
        return False
    if "/" in name or not is_known(name):
        path = shell.path(name)
    else:
        found = _on_path(shell, name)
        later = None if found else _on_path(shell, name, past_unknown=True)
        if later is not None:
            shell.note(ctx, "assumed", f"{name} is taken to be {later}, which the build put on PATH (a folder of "
                                       "the base image's PATH, searched first, could hold another)")
            found = later
        elif found is None and shell.program == "bash":
            found = shell.path(name)  # bash, not as sh, tries the current folder after PATH
        if found is None:
            unless = f"unless the base image has a {name} on its PATH"
            if command == ".":
                shell.note(ctx, "fails", f"sh looks for {name} on PATH only, not in the current folder: the script "
                                         f"stops here ({unless})")
                raise Exit(False)
            shell.note(ctx, "fails", f"sh looks for {name} on PATH only, not in the current folder: the script "
                                     f"reads on without it ({unless})")
            return False
        path = found
    if command == "source" and shell.program == "sh":
        shell.note(ctx, "assumed", f"the base image's sh decides: bash reads {name}, dash has no 'source' and reads "
                                   "on without it; the reader reads it")
    if path not in shell.build.fs.files:
        shell.unread(ctx, f"reads {shell.show(argv[1])} into the shell, and that is not a file of the build context")
        return None
    source = shell.build.fs.files[path].source
    text = shell.build.read_context(source)
    if text is None or shell.depth >= MAX_DEPTH:
        shell.unread(ctx, f"reads {argv[1]} into the shell, which the reader cannot follow")
        return None
    saved_file, saved_positional, saved_dockerfile = shell.file, shell.positional, shell.dockerfile
    shell.file, shell.dockerfile = source, False
    if len(argv) > 2:
        shell.positional = argv[2:]
    shell.depth += 1
    try:
        return shell.run_text(text, 1, CommandContext(1, ""))
    except _Return:
        return True
    finally:
        shell.file, shell.positional, shell.dockerfile = saved_file, saved_positional, saved_dockerfile
        shell.depth -= 1


def _eval(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    text = " ".join(argv[1:])
    if not is_known(text):
        shell.unread(ctx, f"evaluates {shell.show(text)}, which the reader cannot work out")
        return None
    if shell.depth >= MAX_DEPTH:
        shell.unread(ctx, f"eval nests more than {MAX_DEPTH} deep; the reader does not follow this one")
        return None
    shell.depth += 1
    try:
        return shell.run_text(text, ctx.line, ctx)
    finally:
        shell.depth -= 1


def _command(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``sudo``, ``env``, ``nohup``, ``exec``, ``command``...: run what follows their own options."""
    head = posixpath.basename(argv[0])
    rest = argv[1:]
    extra = dict(env)
    if head == "command" and rest[:1] in (["-v"], ["-V"]):
        shell.emit_unknown()
        return None
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if head == "sudo" and option.startswith(("-D", "--chdir")):
            # sudo refuses -D unless sudoers grants runcwd (CWD=*); where it does, the command runs in that folder
            return _program(shell, ctx, "sudo -D")
        if head == "sudo" and option in ("-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U"):
            rest = rest[1:]
        elif head in ("env",) and option == "-u":
            rest = rest[1:]
        elif head in ("nice", "timeout", "stdbuf") and option in ("-n", "-s", "-k", "-i", "-o", "-e"):
            rest = rest[1:]
        elif option == "--":
            break
    if head == "env":
        while rest and "=" in rest[0] and not rest[0].startswith("="):
            name, _, value = rest.pop(0).partition("=")
            extra[name] = value
    if head == "timeout" and rest:
        rest = rest[1:]  # the duration
    if not rest:
        if head == "exec":
            return True  # exec with redirections only
        shell.emit_unknown()
        return True
    if head == "exec":
        # exec never returns: what it runs ends this shell, so its status is the shell's and nothing runs after
        # it. In a subshell that is the subshell's status only, which its own context already says.
        ended = replace(ctx, tail=ctx.tail or not shell.is_subshell)
        if shell.dockerfile:
            ended = replace(ended, stops_on_error=shell.fails_build(ended))  # a RUN's shell: stops if the RUN does
        raise Exit(dispatch(shell, rest, ended, extra, stdin))
    return dispatch(shell, rest, ctx, extra, stdin)


def _echo(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``echo`` as the shell that runs it prints: bash's and dash's differ (options, backslashes).

    Under sh, or another shell, the base image decides: what they print alike is known, the rest is not.
    """
    printed = {"bash": _bash_echo, "dash": _dash_echo}.get(shell.program)
    if printed is not None:
        text = printed(argv[1:])
    else:
        text = _bash_echo(argv[1:])
        text = text if text == _dash_echo(argv[1:]) else None
    if text is None:
        shell.emit_unknown()
    else:
        shell.emit(text)  # an unknown part travels as its marker
    return True


def _bash_echo(args: list[str]) -> str | None:
    """bash's echo: leading words of -n, -e and -E letters are options; escapes are read only after -e."""
    newline, escapes = True, False
    while args and len(args[0]) > 1 and args[0][0] == "-" and set(args[0][1:]) <= set("neE"):
        newline = newline and "n" not in args[0]
        for letter in args[0][1:]:
            escapes = {"e": True, "E": False}.get(letter, escapes)
        args = args[1:]
    text = " ".join(args)
    if escapes and "\\" in text:
        return None  # bash's own escapes (\e, \x41, \u00e9; \101 is not octal there): not printed here
    return text + ("\n" if newline else "")


def _dash_echo(args: list[str]) -> str | None:
    """dash's echo: only a first ``-n`` is an option; backslash escapes are always read, as printf's %b reads them."""
    newline = args[:1] != ["-n"]
    try:
        text, stopped = _escapes(" ".join(args if newline else args[1:]))
    except _Unsure:
        return None
    return text if stopped or not newline else text + "\n"


def _printf(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``printf FORMAT [ARG...]`` as POSIX printf: what it cannot work out exactly is unknown output, never a guess."""
    args = argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        return True
    if args[0].startswith("-") and args[0] != "-":
        if args[0] == "-v" and len(args) > 1 and is_known(args[1]):
            shell.assign(args[1], shell.unknowns.mark(f"$({' '.join(argv)})"))  # bash's printf -v NAME
        shell.emit_unknown()
        return True
    text = printf_output(args[0], args[1:])
    if text is None:
        shell.emit_unknown()  # the reader follows the build that succeeds: printf is taken to succeed
    else:
        shell.emit(text)
    return True


class _Unsure(Exception):
    """printf would print what the reader cannot work out exactly (an error, a shell-dependent form)."""


class _Stop(Exception):
    """``\\c`` in a ``%b`` argument: printf prints nothing more."""


_FORMAT_ESCAPES = {"\\": "\\", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_DIRECTIVE = re.compile(r"%([-+ 0]*)(\d*)(?:\.(\d*))?([sbcdiouxX%])")
_NUMBER = re.compile(r"\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


def printf_output(fmt: str, args: list[str]) -> str | None:
    """What ``printf FMT ARGS...`` prints, or None when the reader cannot say exactly.

    Only FMT is a format: ``%`` and ``\\`` in an argument are data (``%b`` reads escapes in its argument). FMT
    is used again while arguments remain; a conversion with none left gets "" (0 for numbers). Escapes in FMT:
    ``\\ \\a \\b \\f \\n \\r \\t \\v`` and octal ``\\NNN``; conversions ``%s %b %c %d %i %o %u %x %X %%``
    with ``-``, ``+``, space and ``0`` flags, a width and a precision. Anything else (``\\x41``, ``%*d``, ``%q``,
    an argument %d cannot read, a byte past ASCII or a NUL) is not guessed.
    """
    if not is_known(fmt):
        return None
    out: list[str] = []
    remaining = list(args)
    try:
        while True:
            used = _format_once(fmt, remaining, out)
            if not remaining or not used:
                return "".join(out)
    except _Stop as stop:
        return "".join(out) + str(stop)
    except _Unsure:
        return None


def _format_once(fmt: str, remaining: list[str], out: list[str]) -> int:
    """Print ``fmt`` once into ``out``, taking its arguments from ``remaining``; return how many it took."""
    used = 0
    index = 0
    size = sum(map(len, out))  # what earlier uses of the format printed
    while index < len(fmt):
        if size > MAX_WORD:
            raise _Unsure("output past the reader's limit")
        char = fmt[index]
        if char == "\\":
            text, index = _escape(fmt, index + 1, in_argument=False)
            out.append(text)
            size += len(text)
            continue
        if char != "%":
            out.append(char)
            size += 1
            index += 1
            continue
        match = _DIRECTIVE.match(fmt, index)
        if match is None:
            raise _Unsure("a conversion the reader does not follow")
        index = match.end()
        flags, width, precision, conversion = match.groups()
        if conversion == "%":
            if flags or width or precision is not None:
                raise _Unsure("%% with flags")
            out.append("%")
            size += 1
            continue
        # A width or precision past what the reader keeps of a word is not built (a script's
        # '%9999999999s' would take gigabytes); neither is output past it, the format used again.
        if int(width or 0) > MAX_WORD or int(precision or 0) > MAX_WORD:
            raise _Unsure("a width past the reader's limit")
        arg = remaining.pop(0) if remaining else None
        used += arg is not None
        out.append(_convert(conversion, flags, width, precision, arg))
        size += len(out[-1])
    if size > MAX_WORD:
        raise _Unsure("output past the reader's limit")
    return used


def _convert(conversion: str, flags: str, width: str, precision: str | None, arg: str | None) -> str:
    """One conversion of one argument (None: none was left)."""
    dot = "" if precision is None else "." + (precision or "0")
    if conversion in "sbc":
        if set(flags) - {"-"}:
            raise _Unsure("a flag C leaves undefined for strings")
        text = arg or ""
        if conversion == "b":
            if not is_known(text):
                raise _Unsure("escapes in an unknown value")
            text, stopped = _escapes(text)
            if stopped:
                if width or dot:
                    raise _Unsure("\\c in a %b with a width")
                raise _Stop(text)
        elif conversion == "c":
            if not text or not is_known(text[:1]):
                raise _Unsure("%c of nothing (a NUL) or of an unknown value")
            text = text[:1]
        if (width or dot) and not is_known(text):
            raise _Unsure("the width of an unknown value")
        return f"%{flags}{width}{dot}s" % text
    number = _integer(arg)
    if conversion in "ouxX" and number < 0:
        raise _Unsure("a negative number printed unsigned")
    if dot:
        if number == 0 and dot == ".0":
            raise _Unsure("a zero printed with no digits")
        flags = flags.replace("0", "")  # C ignores the 0 flag when a precision is given
    return f"%{flags}{width}{dot}{'d' if conversion in 'iu' else conversion}" % number


def _integer(arg: str | None) -> int:
    """An argument of ``%d`` as printf reads it: decimal, ``0`` octal, ``0x`` hex, or ``'C`` (C's code)."""
    if arg is None or arg == "":
        return 0
    if not is_known(arg):
        raise _Unsure("a number the reader cannot know")
    if arg[:1] in ("'", '"'):
        if len(arg) < 2 or not arg[1].isascii():
            raise _Unsure("the code of a character past ASCII")
        return ord(arg[1])
    match = _NUMBER.fullmatch(arg)
    if match is None:
        raise _Unsure(f"{arg} is not a number: printf fails")
    sign, digits = match.groups()
    if len(digits) > 24:  # past 64 bits in any base; int() also refuses thousands of decimal digits
        raise _Unsure("a number out of range")
    value = int(digits, 16 if digits[:2] in ("0x", "0X") else 8 if digits.startswith("0") else 10)
    value = -value if sign == "-" else value
    if not -(1 << 63) <= value < 1 << 63:
        raise _Unsure("a number out of range")
    return value


def _escapes(text: str) -> tuple[str, bool]:
    """The argument of ``%b`` with its escapes read (``\\0NNN`` octal), and whether a ``\\c`` ends all output there."""
    out: list[str] = []
    index = 0
    while index < len(text):
        if text[index] != "\\":
            out.append(text[index])
            index += 1
            continue
        if text[index + 1:index + 2] == "c":
            return "".join(out), True
        piece, index = _escape(text, index + 1, in_argument=True)
        out.append(piece)
    return "".join(out), False


def _escape(text: str, index: int, in_argument: bool) -> tuple[str, int]:
    """The escape whose letter is at ``text[index]``: its character and where the text goes on."""
    letter = text[index:index + 1]
    if letter in _FORMAT_ESCAPES:
        return _FORMAT_ESCAPES[letter], index + 1
    if letter.isdigit() and letter < "8":
        # In the format \\NNN is octal (1-3 digits); in a %b argument \\0NNN is (0-3 after the 0), and dash and
        # bash read \\NNN there as well.
        start = index + 1 if in_argument and letter == "0" else index
        end = start
        while end < len(text) and end < start + 3 and "0" <= text[end] <= "7":
            end += 1
        code = int(text[start:end] or "0", 8)
        if not 0 < code < 128:
            raise _Unsure("a NUL or a byte past ASCII")
        return chr(code), end
    raise _Unsure(f"the escape \\{letter}, which shells print differently")


def _path_tool(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``pwd``, ``dirname``, ``basename``, ``realpath``, ``readlink -f``: what they print is a path the reader knows."""
    head = argv[0]
    operands = [a for a in argv[1:] if not a.startswith("-")]
    if head == "pwd":
        shell.emit(shell.cwd + "\n")
    elif head == "dirname" and operands:
        shell.emit("\n".join(_dirname(o) for o in operands) + "\n")
    elif head == "basename" and operands:
        name = posixpath.basename(operands[0].rstrip("/")) or "/"
        if len(operands) > 1 and name.endswith(operands[1]) and name != operands[1]:
            name = name[:-len(operands[1])]
        shell.emit(name + "\n")
    elif head in ("realpath", "readlink") and operands and (head == "realpath" or {"-f", "-m", "-e"} & set(argv)):
        shell.emit(shell.path(operands[0]) + "\n" if is_known(operands[0]) else operands[0] + "\n")
    else:
        shell.emit_unknown()
    return True


def _dirname(path: str) -> str:
    stripped = path.rstrip("/")
    if not stripped:
        return "/" if path else "."
    parent = posixpath.dirname(stripped)
    return parent.rstrip("/") or ("/" if parent else ".")


def _test(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``test``/``[``/``[[``: decided where the build's own files or known values decide it, else unknown."""
    args = argv[1:]
    if argv[0] == "[" and args[-1:] == ["]"] or argv[0] == "[[" and args[-1:] == ["]]"]:
        args = args[:-1]
    negate = False
    while args and args[0] == "!":
        negate, args = not negate, args[1:]
    result = _decide(shell, args)
    return None if result is None else result != negate


def _decide(shell: Shell, args: list[str]) -> bool | None:
    if len(args) in (1, 2) and is_known(args[0]) and not is_known(args[-1]) and shell.unknowns.nonempty(args[-1]):
        # An unknown value known not to be empty ($BASH_VERSION under bash): [ X ], [ -n X ] and [ -z X ] are known.
        if len(args) == 1:
            return True
        return {"-n": True, "-z": False}.get(args[0])
    if any(not is_known(a) for a in args):
        return None
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2 and args[0] in ("-n", "-z"):
        return (args[1] != "") == (args[0] == "-n")
    if len(args) == 2 and args[0] in ("-d", "-f", "-e", "-a"):
        kind = shell.build.fs.kind(shell.path(args[1]))
        if kind is Kind.UNKNOWN:
            return None
        if args[0] == "-d":
            return kind is Kind.DIR
        if args[0] == "-f":
            return kind is Kind.FILE
        return kind is not Kind.ABSENT
    if len(args) == 3 and args[1] in ("=", "==", "!="):
        return (args[0] == args[2]) == (args[1] != "!=")
    if len(args) == 3 and args[1] in _INTEGER_TESTS and all(_INTEGER.fullmatch(a) for a in args[::2]):
        return _INTEGER_TESTS[args[1]](int(args[0]), int(args[2]))
    return None


# test's integer comparisons; an operand that is not an integer (or past 64 bits) is an error (status 2), left
# undecided here.
_INTEGER = re.compile(r"\s*[+-]?[0-9]{1,18}\s*")
_INTEGER_TESTS: dict[str, Callable[[int, int], bool]] = {
    "-eq": operator.eq, "-ne": operator.ne, "-lt": operator.lt, "-le": operator.le, "-gt": operator.gt,
    "-ge": operator.ge}


def _read(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    for name in argv[1:]:
        if not name.startswith("-"):
            shell.assign(name, shell.unknowns.mark(f"$({' '.join(argv)})"))
    return None


def _tee(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    append = any(a in ("-a", "--append") for a in argv[1:])
    for operand in (a for a in argv[1:] if not a.startswith("-")):
        path = shell.path(operand)
        if path in shell.build.fs.files and append:
            shell.unread(ctx, f"appends to {path}, which the build placed there", scope=(path,))
        elif not append:
            shell.build.fs.write_other(path)
    shell.emit_unknown()
    return True


def _getopts(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    return False  # the image runs the script without options: the option loop ends at once


BUILTINS: dict[str, Builtin] = {
    "cd": _cd, "pushd": _pushd, "popd": _popd, "dirs": _dirs, "set": _set, "shopt": _shopt, "export": _export, "readonly": _export,
    "local": _local, "declare": _export, "typeset": _export, "unset": _unset, "exit": _exit, "return": _return,
    "break": _loop_control, "continue": _loop_control, "shift": _shift, "source": _source, ".": _source,
    "eval": _eval, "exec": _command, "command": _command, "builtin": _command, "echo": _echo, "printf": _printf,
    "pwd": _path_tool, "dirname": _path_tool, "basename": _path_tool, "realpath": _path_tool,
    "readlink": _path_tool, "test": _test, "[": _test, "[[": _test, "read": _read, "tee": _tee,
    "getopts": _getopts,
}
