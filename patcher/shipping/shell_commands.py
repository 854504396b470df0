"""What one simple command does: its expansion and redirections, then which of builtin, function, script, file
command or program runs it.

The builtins are ``shell_builtins.py`` (the shell's state) and
``output_builtins.py`` (what they print); the programs the reader follows
into (scripts, ``sh -c``, Python, pip) are ``shell_programs.py``; the file
commands (``cp``, ``mv``, ``install``...) are ``file_commands.py``. Any other
program is run by the image, not by the reader: it is noted (``program``)
with what it could change, never guessed.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from .command_lookup import NO_PROGRAM, SOME_IMAGES_PROGRAM, SPECIAL_BUILTINS, finds_every, note_program, on_path
from .file_commands import FILE_COMMANDS, folder_there, transfer
from .image_fs import Kind
from .output_builtins import OUTPUT_BUILTINS
from .printing_programs import PRINTING, run_mktemp, run_printing
from .shell_builtins import STATE_BUILTINS, Builtin
from .shell_interpreter import Shell
from .shell_records import CommandContext, Exit, NoMatch, ReadOnly
from .shell_programs import SHELLS, absent_program, run_context_file, run_pip, run_python, run_shell
from .shell_nodes import DECLARATIONS, Lit, Redirect, Simple, Word, plain_text
from .shell_syntax import heredoc_word, split_assignment
from .shell_words import Field, is_known
from .tool_options import read_options
from .wrapper_programs import USAGE_STATUS, WRAPPERS, read_wrapper
from .xargs_program import run_xargs

# Programs that install packages: they write where the package manager puts things.
PACKAGE_MANAGERS = frozenset({"apt-get", "apt", "yum", "dnf", "microdnf", "apk", "conda", "mamba", "micromamba",
                              "npm", "gem", "dpkg", "rpm", "git", "curl", "wget", "tar", "unzip", "make", "cmake"})


def run_simple(shell: Shell, node: Simple, ctx: CommandContext) -> bool | None:
    """Expand and run one simple command."""
    head = plain_text(node.words[0]) if node.words else None
    if head in shell.aliases and shell.expands_aliases:
        # The shell replaces the name by the alias's text when it reads the line, before anything is expanded.
        shell.unread(ctx, f"{head} is an alias here ({shell.show(shell.aliases[head])}), which the reader does not "
                          "expand")
        return None
    declares = head in DECLARATIONS
    shell.substituted, shell.substituted_code = True, None
    fields: list[Field] = []
    for word in node.words:
        assignment = split_assignment(word) if declares else None
        if assignment is None:
            fields += shell.expand_word(word)
        else:
            fields.append(Field(f"{assignment[0]}={shell.expand_one(assignment[1], assignment=True)}"))
    argv = shell.glob(fields, ctx)
    assignments = [(name, shell.expand_one(value, assignment=True)) for name, value in node.assignments]
    # An array's elements are expanded as command words are: split, and globbed ('files=(*.py)').
    arrays = [(name, [item for element in elements for item in shell.glob(shell.expand_word(element), ctx)],
               any(isinstance(e[0], Lit) and e[0].text.startswith("[") for e in elements if e))
              for name, elements in node.arrays]
    copy = _redirected_copy(shell, argv, node.redirects) if argv else None
    try:
        stdin = apply_redirects(shell, node.redirects, ctx)
    except RedirectFailed:
        # dash and bash --posix end the script where a special builtin's redirection fails (': > /no/f');
        # otherwise the command fails: status 2 in dash, 1 in bash.
        if argv and argv[0] in SPECIAL_BUILTINS and (shell.program == "dash" or shell.program == "bash" and shell.posix):
            raise Exit(False, 2 if shell.program == "dash" else 1) from None
        shell.ended_with(2 if shell.program == "dash" else 1)
        return False
    if copy is not None:
        return all([transfer(shell, ctx, copy[2], [copy[0]], destination, recursive=False, into=False)
                    for destination in copy[1]])
    if not argv:
        try:
            for name, value in assignments:
                if name.endswith("+"):
                    shell.assign(name[:-1], shell.appended(name[:-1], value))
                else:
                    shell.assign(name, value)
            _assign_arrays(shell, arrays, associative=False)
        except ReadOnly as error:
            if shell.program != "bash":
                raise
            # bash (outside POSIX mode) drops the rest of the line, as for failglob.
            shell.note(ctx, "fails", f"{error.name} is read-only: bash drops the rest of the line")
            raise NoMatch(error.name) from None
        shell.ended_with(shell.substituted_code)
        return shell.substituted  # 'X=$(cat VERSION)' fails when cat does: under set -e, the script ends
    captured = not stdout_redirected(node.redirects)
    status = dispatch(shell, argv, ctx, dict(assignments), stdin, captured=captured)
    if not captured and argv == ["exec"]:
        shell.output = None  # 'exec >FILE': what this shell prints from here on goes there, not to a $(...)
    if arrays:  # a declaration's (declare -a NAME=(...)): after it made NAME local or read its options
        options = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
        _assign_arrays(shell, arrays, associative="A" in options)
    return status


def _assign_arrays(shell: Shell, arrays: list[tuple[str, list[str], bool]], associative: bool) -> None:
    """Keep each array's elements; one whose keys the reader does not follow ([KEY]=VALUE, declare -A) is unknown."""
    for name, values, keyed in arrays:
        if associative or keyed:
            shell.assign_array(name.rstrip("+"), None)
        else:
            shell.assign_array(name.rstrip("+"), values, append=name.endswith("+"))


def _redirected_copy(shell: Shell, argv: list[str],
                     redirects: tuple[Redirect, ...]) -> tuple[str, list[str], str] | None:
    """(source, destinations, cat or tee) of ``cat SRC > DEST``, ``cat < SRC > DEST`` or ``tee DEST... < SRC``,
    else None.

    Each DEST then holds SRC's bytes, as ``cp SRC DEST`` would give them: a common way to copy a file
    over another. An append (``>>``, ``tee -a``) copies too where the build knows nothing is at DEST yet.
    Anything else (several files to cat, another option, a here-document) is not a copy.
    """
    if posixpath.basename(argv[0]) in ("sudo", "command") and len(argv) > 1 and not argv[1].startswith("-"):
        argv = argv[1:]  # 'sudo cat SRC > DEST': the shell, not sudo, opens DEST; cat prints SRC's bytes into it
    program, operands = posixpath.basename(argv[0]), argv[1:]
    if operands[:1] == ["--"]:
        operands = operands[1:]
    append = program == "tee" and operands[:1] in (["-a"], ["--append"])
    if append:
        operands = operands[1:]
    if any(o.startswith("-") and o != "-" for o in operands) or any(r.body is not None for r in redirects):
        return None
    inputs = [r for r in redirects if r.op == "<" and r.fd in (None, 0)]
    outputs = [r for r in redirects if r.op in (">", ">|", ">>", "&>", "&>>") and r.fd in (None, 1)]
    if program == "cat" and len(outputs) == 1:
        if operands in ([], ["-"]):
            if len(inputs) != 1:
                return None
            source = shell.expand_one(inputs[0].target)
        elif len(operands) == 1:
            source = operands[0]
        else:
            return None
        destinations = [shell.expand_one(outputs[0].target)]
        append = outputs[0].op.endswith(">>")
    elif program == "tee" and operands and "-" not in operands and len(inputs) == 1:
        source, destinations = shell.expand_one(inputs[0].target), operands
    else:
        return None
    if not is_known(source) or not all(is_known(d) and not d.startswith("/dev/") for d in destinations):
        return None
    paths = [shell.path(d) for d in destinations]
    if append and any(shell.build.fs.kind(path) is not Kind.ABSENT for path in paths):
        return None  # what is there gets the bytes added: the append's own note says so
    return shell.path(source), paths, program


# Redirections bash reads and dash (Debian's and Ubuntu's sh) does not: what each makes of them.
_NOT_DASHS = {
    "&>": "bash sends both outputs to the file, dash runs the command in the background (its failure unseen) "
          "and empties the file",
    "&>>": "bash appends both outputs to the file, dash runs the command in the background (its failure unseen) "
           "and opens the file to append nothing",
    "<<<": "bash feeds the word to the command, dash refuses the script (a syntax error)",
}


class RedirectFailed(Exception):
    """sh cannot open a redirection's file: the command does not run, and fails."""


def apply_redirects(shell: Shell, redirects: tuple[Redirect, ...], ctx: CommandContext) -> str | None:
    """Write what output redirections write; return what standard input is given (a here-document's, a
    here-string's or a file's text, or a marker for one the reader cannot know), if any."""
    stdin: str | None = None
    for redirect in redirects:
        if shell.program == "sh" and redirect.op in _NOT_DASHS:
            shell.note(ctx, "assumed", f"the base image's sh decides: {_NOT_DASHS[redirect.op]}; the reader reads "
                                       "it as bash does")
        if redirect.body is not None:
            stdin = redirect.body if redirect.body_quoted else shell.expand_one(heredoc_word(redirect.body))
            continue
        if redirect.op == "<<<":  # bash's here-string: the word, expanded, and a newline
            stdin = shell.expand_one(redirect.target) + "\n"
            continue
        if redirect.op == "<":
            target = shell.expand_one(redirect.target)
            _input_there(shell, ctx, target)
            if redirect.fd in (None, 0):
                stdin = _file_input(shell, target)
            continue
        if redirect.op == ">&":
            if not _writes_through_duplication(shell, redirect, ctx):
                continue
        elif redirect.op not in (">", ">>", ">|", "&>", "&>>", "<>"):
            continue  # any descriptor: 'exec 3>FILE' creates (or empties) FILE as '>FILE' does
        target = shell.expand_one(redirect.target)
        if target.startswith("/dev/"):
            continue  # a digits-only target is a file all the same: 'echo hi > 2' creates ./2
        if not target:
            shell.note(ctx, "fails", "the redirection names no file (an empty word), so the command does not run")
            raise RedirectFailed(target)
        if not is_known(target):
            shell.unread(ctx, f"writes to {shell.show(target)}, which the reader cannot work out")
            continue
        path = shell.path(target)
        if not folder_there(shell, ctx, "the redirection", path):
            raise RedirectFailed(path)
        if shell.noclobber and redirect.op in (">", "&>", ">&"):
            kind = shell.build.fs.kind(path)
            if kind is Kind.FILE:
                # bash 5.2 and dash 0.5.12: "cannot overwrite existing file"; the command does not run (status 1).
                shell.note(ctx, "fails", f"set -C: {path} exists, so the redirection does not empty it and the "
                                         "command does not run")
                raise RedirectFailed(path)
            if kind is Kind.UNKNOWN:
                shell.unread(ctx, f"set -C: writes to {path} only if the base image does not have it", scope=(path,))
                continue
        if redirect.op == "<>":
            stdin = _read_write(shell, ctx, redirect, path, stdin)
            continue
        if redirect.op.endswith(">>") and path in shell.build.fs.files:
            held = shell.build.fs.files[path].source
            shell.unread(ctx, f"appends to {path}, which holds {held}: the image gets it changed", scope=(path,))
        elif not redirect.op.endswith(">>") or shell.build.fs.kind(path) is not Kind.FILE:
            shell.build.fs.write_other(path)
    return stdin


def _input_there(shell: Shell, ctx: CommandContext, target: str) -> None:
    """Raise RedirectFailed where ``[N]< FILE`` cannot open FILE: the build knows nothing is there (bash and dash
    then do not run the command: 'cat < missing || fallback' takes the fallback)."""
    if not is_known(target) or target.startswith("/dev/"):
        return
    if not target:
        shell.note(ctx, "fails", "the redirection names no file (an empty word), so the command does not run")
        raise RedirectFailed(target)
    path = shell.path(target)
    if shell.build.fs.kind(path) is Kind.ABSENT:
        shell.note(ctx, "fails", f"the redirection cannot open {path}: nothing is there at this point of the build")
        raise RedirectFailed(path)


def _read_write(shell: Shell, ctx: CommandContext, redirect: Redirect, path: str, stdin: str | None) -> str | None:
    """``[N]<>FILE`` opens FILE to read and write, making it when missing and never emptying it (bash, dash).

    On standard input (no N, or 0) the command reads the file; on any other descriptor what it writes there goes
    over the file's first bytes, so a file the build placed is changed in place. Returns the standard input.
    """
    kind = shell.build.fs.kind(path)
    if redirect.fd in (None, 0):
        stdin = "" if kind is Kind.ABSENT else _file_input(shell, path)
    elif path in shell.build.fs.files:
        held = shell.build.fs.files[path].source
        shell.unread(ctx, f"writes over the start of {path}, which holds {held}: the image gets it changed",
                     scope=(path,))
    if kind is not Kind.FILE:
        shell.build.fs.write_other(path)
    return stdin


def _writes_through_duplication(shell: Shell, redirect: Redirect, ctx: CommandContext) -> bool:
    """Whether ``>&WORD`` opens a file: only when WORD is neither digits nor ``-`` (those duplicate or close).

    bash then sends both outputs to the file, as ``&>WORD``, when no descriptor is named, and fails the command
    ("ambiguous redirect") when one is; dash ends the script ("Bad fd number"), whichever form.
    """
    target = shell.expand_one(redirect.target)
    if not is_known(target):
        return True  # a file, or a descriptor held in a variable ('>&$fd'): the reader cannot tell
    if target == "-" or target.isascii() and target.isdigit():  # ASCII: to sh, "٣" is a word
        return False
    if shell.program == "dash":
        shell.note(ctx, "fails", f"dash reads >&{shell.show(target)} as a bad descriptor number and ends the script")
        raise Exit(False, 2)
    if redirect.fd is not None:
        shell.note(ctx, "fails", f"{redirect.fd}>&{shell.show(target)}: bash finds it an ambiguous redirect, and the "
                                 "command does not run")
        raise RedirectFailed(target)
    if shell.program == "sh":
        shell.note(ctx, "assumed", f"the base image's sh decides: bash sends both outputs to {shell.show(target)}, "
                                   "dash ends the script (a bad descriptor number); the reader reads it as bash does")
    return True


def _file_input(shell: Shell, target: str) -> str:
    """What ``< FILE`` feeds: nothing from /dev/null, a text file the build placed, else a marker."""
    if target == "/dev/null":
        return ""
    text = shell.placed_text(target)
    return text if text is not None else shell.unknowns.mark(f"$(< {shell.show(target)})")


# bash's builtins that dash 0.5.12 does not have (its 'source' has its own note: sourced_file).
BASH_ONLY = frozenset({"pushd", "popd", "dirs", "shopt", "declare", "typeset", "mapfile", "readarray", "let",
                       "builtin", "caller", "enable", "disown"})
SAY_WHAT_SH_MAKES_OF_THEM = frozenset({"shopt", "mapfile", "readarray"})  # their own notes under sh


_STANDARD_OUTPUT = frozenset({"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"})


def _literal(word: Word) -> str | None:
    """A word's text where it is all literal (quoted or not), else None."""
    texts = [part.text for part in word if isinstance(part, Lit)]
    return "".join(texts) if len(texts) == len(word) else None


def stdout_redirected(redirects: tuple[Redirect, ...]) -> bool:
    """Whether standard output goes somewhere other than a ``$(...)`` around the command: into a file, or onto
    another descriptor (``>&2``, ``>&-``: a script's log lines, which the substitution does not hear)."""
    for redirect in redirects:
        if redirect.fd not in (None, 1):
            continue
        if redirect.op in (">", ">>", ">|", "&>", "&>>") or redirect.op == "<>" and redirect.fd == 1:
            if _literal(redirect.target) in _STANDARD_OUTPUT:
                continue  # '> /dev/stdout': the same output, opened again
            return True
        if redirect.op == ">&" and plain_text(redirect.target) not in ("1", None):
            return True
    return False


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
    if name.startswith("\ufeff"):
        # A script saved with a UTF-8 byte-order mark: bash and dash take it for part of the first word.
        shell.note(ctx, "fails", f"the script starts with a byte-order mark, which sh reads as part of the command "
                                 f"name, so {name[1:]!r} is not found (status 127)")
        shell.ended_with(127)
        return False
    if name in shell.functions:
        return shell.call(shell.functions[name], argv[1:], ctx)
    builtin = BUILTINS.get(name)
    if builtin is not None:
        if name in BASH_ONLY and shell.program == "dash":
            shell.note(ctx, "fails", f"dash has no '{name}' command: it is not found (status 127)")
            shell.ended_with(127)
            return False
        status = builtin(shell, argv, ctx, env, stdin)
        if name in BASH_ONLY - SAY_WHAT_SH_MAKES_OF_THEM and shell.program == "sh":
            shell.note(ctx, "assumed", f"the base image's sh decides: bash runs '{name}', dash has no such command "
                                       "(status 127); the reader runs it")
        return status
    base = posixpath.basename(name)
    if "/" in name:
        path = shell.path(name)
        if path in shell.build.fs.files:
            return run_context_file(shell, path, argv, ctx, env)
        if absent_program(shell, ctx, name, name, path, 127):  # bash and dash: "not found"
            return False
        if shell.build.fs.kind(path) is Kind.DIR:  # bash and dash: "Permission denied" / "Is a directory"
            shell.note(ctx, "fails", f"{name}: {path} is a folder (status 126)")
            shell.ended_with(126)
            return False
        if not path.startswith(("/bin/", "/usr/bin/", "/sbin/", "/usr/sbin/", "/usr/local/bin/")):
            return note_program(shell, ctx, name)
    elif (found := on_path(shell, name)) is not None:
        return run_context_file(shell, found, argv, ctx, env)
    if base in FILE_COMMANDS:
        unknown = [a for a in argv[1:] if not is_known(a)]
        if unknown:
            scopes = [_known_prefix(shell, a) for a in unknown]
            shell.unread(ctx, f"{base} {' '.join(shell.show(a) for a in unknown)}: a path that depends on a value "
                              "the reader cannot work out",
                         scope=None if any(s is None for s in scopes) else tuple(s for s in scopes if s))
            return None
        if _prints(base, argv[1:]):
            shell.emit_unknown()  # 'cp -v' lists what it copies: a $(...) or a pipe around it hears that
        return FILE_COMMANDS[base](shell, ctx, argv[1:], env)
    if base in SHELLS:
        return run_shell(shell, argv, ctx, env, stdin)
    if base.startswith("python"):
        return run_python(shell, argv, ctx, stdin)
    if base in ("pip", "pip3") or base.startswith("pip3."):
        return run_pip(shell, argv[1:], ctx)
    if base in WRAPPERS:
        return _wrapped(shell, base, argv, ctx, env, stdin)
    if base in ("sudo", "time", "exec", "command", "builtin"):
        return _command(shell, argv, ctx, env, stdin)
    if base == "mktemp":
        return run_mktemp(shell, argv, ctx, env)
    if base == "xargs":
        return run_xargs(shell, argv, ctx, stdin)
    if base in PRINTING:
        return run_printing(shell, base, argv, ctx, stdin)
    if base in PACKAGE_MANAGERS:
        return note_program(shell, ctx, base)
    return note_program(shell, ctx, name)


# rsync's options that print on standard output besides -v (touch has no verbose mode).
_RSYNC_PRINTS = frozenset({"progress", "P", "stats", "itemize-changes", "i", "info", "out-format"})


def _prints(program: str, args: list[str]) -> bool:
    """Whether a file command prints on standard output: its verbose options (and rsync's listings)."""
    if program == "touch":
        return False
    options = read_options(program, args)
    named = options.flags | options.values.keys()
    return bool(named & {"v", "verbose"}) or program == "rsync" and bool(named & _RSYNC_PRINTS)


def _known_prefix(shell: Shell, word: str) -> str | None:
    """The folder a path with an unknown part certainly lies in (None: it could be anywhere)."""
    head = word[:word.index("\x00")]
    if "/" not in head:
        return None  # the unknown part could be an absolute path itself
    return shell.path(head[:head.rindex("/")] or "/")


def _wrapped(shell: Shell, head: str, argv: list[str], ctx: CommandContext, env: dict[str, str],
             stdin: str | None) -> bool | None:
    """``env``, ``timeout``, ``nice``, ``flock``...: run the command after their options, as they would run it."""
    wrapped = read_wrapper(head, argv[1:])
    if wrapped.problem is not None:
        return note_program(shell, ctx, wrapped.problem)
    if wrapped.fails is not None:
        code = USAGE_STATUS.get(head, 125)
        shell.note(ctx, "fails", f"{wrapped.fails}, so it runs nothing (status {code})")
        shell.ended_with(code)
        return False
    if wrapped.shell_string is not None:
        return run_shell(shell, ["sh", "-c", wrapped.shell_string], ctx, env, stdin)
    if not wrapped.command:
        shell.emit_unknown()  # env, nice or ionice alone print what they would change
        return True
    name = wrapped.command[0]
    if name in NO_PROGRAM:
        shell.note(ctx, "fails", f"{head} runs programs, and {name} is a shell's own command, not a program: it is "
                                 "not found (status 127)")
        shell.ended_with(127)
        return False
    if name in SOME_IMAGES_PROGRAM:
        shell.note(ctx, "assumed", f"{head} runs programs, and {name} is one only in some images (RHEL-likes ship it, "
                                   "Debian and Ubuntu do not): the base image decides whether it is found; it changes "
                                   "nothing either way")
        return None
    extra = {**({} if wrapped.clear else env), **wrapped.assignments}
    # The wrapper execs a program of its own: not the shell's functions, and nothing it runs changes the shell's
    # state (its folder, its variables), which stays in a copy.
    child = shell.subshell()
    child.functions = {}
    if wrapped.clear:
        child.exported, child.clean_environment = set(), True
    for name in wrapped.unset:
        child.variables.pop(name, None)
        child.unset.add(name)
        extra.pop(name, None)
    if wrapped.chdir is not None:
        folder = child.path(wrapped.chdir)
        if child.build.fs.kind(folder) in (Kind.ABSENT, Kind.FILE):
            shell.note(ctx, "fails", f"env cannot change to {folder}: no folder is there at this point of the build, "
                                     "so it runs nothing (status 125)")
            shell.ended_with(125)
            return False
        child.cwd = folder
    child.next_code = None
    status = dispatch(child, wrapped.command, ctx, extra, stdin)
    shell.ended_with(child.next_code)
    return status


def _command(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``sudo``, ``time``, ``exec``, ``command``, ``builtin``: run what follows their own options."""
    head = posixpath.basename(argv[0])
    rest = argv[1:]
    extra = dict(env)
    if head in ("command", "builtin"):
        # command takes -p, -v and -V (bash 5.2, dash 0.5.12), builtin none: any other option is refused (status 2)
        # and nothing runs.
        options = []
        while rest and rest[0].startswith("-") and rest[0] != "-":
            option = rest.pop(0)
            if option == "--":
                break
            options.append(option)
        wrong = next((o for o in options if head == "builtin" or set(o[1:]) - set("pvV")), None)
        if wrong is not None:
            shell.note(ctx, "fails", f"{head} refuses the option {wrong} (status 2), so it runs nothing")
            shell.ended_with(2)
            return False
        if any(set(o) & set("vV") for o in options):
            shell.emit_unknown()  # command -v NAME: what it finds, or nothing
            return finds_every(shell, rest)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if head == "sudo" and option.startswith(("-D", "--chdir")):
            # sudo refuses -D unless sudoers grants runcwd (CWD=*); where it does, the command runs in that folder
            return note_program(shell, ctx, "sudo -D")
        if head == "sudo" and option in ("-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U"):
            rest = rest[1:]
        elif option == "--":
            break
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
        shell.traps.pop("EXIT", None)  # the program replaces the shell, and its traps with it
        raise Exit(dispatch(shell, rest, ended, extra, stdin))
    return dispatch(shell, rest, replace(ctx, through_command=True) if head == "command" else ctx, extra, stdin)


BUILTINS: dict[str, Builtin] = {
    **STATE_BUILTINS, **OUTPUT_BUILTINS,
    # They run what follows their options, which only this module can dispatch.
    "exec": _command, "command": _command, "builtin": _command,
}
