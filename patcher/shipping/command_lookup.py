"""Where sh finds a command of the context on PATH, and the note for a program the reader does not follow."""

from __future__ import annotations

import posixpath

from .image_fs import normalise
from .shell_interpreter import Shell
from .shell_records import CommandContext
from .shell_words import is_known


def on_path(shell: Shell, name: str, past_unknown: bool = False) -> str | None:
    """A context file placed in a folder of a PATH the build set, found as ``name``.

    The folders are tried in order up to the first the reader cannot know
    (``PATH=/opt/s:$PATH`` finds /opt/s/NAME, not what the base image's PATH
    holds), or past it with ``past_unknown`` (``PATH=$PATH:/opt/s``). A relative folder is read from the
    current one, as sh does; after a cd into a folder the reader cannot name, that stops the reading.
    """
    path = shell.variables.get("PATH")
    for folder in [] if path is None else path.split(":"):
        if not is_known(folder):
            if past_unknown:
                continue
            return None
        # A relative folder ('bin', or '' for '.') is read from the current folder when the command runs.
        candidate = normalise(posixpath.join(folder if folder.startswith("/") else shell.here(folder or "."),
                                             folder, name))
        if candidate in shell.build.fs.files:
            return candidate
    return None


def note_program(shell: Shell, ctx: CommandContext, name: str, scope: tuple[str, ...] | None = None) -> bool | None:
    shell.emit_unknown()
    shell.note(ctx, "program", f"runs {name}, which the reader does not follow: it could change "
                               f"{'any file' if scope is None else ', '.join(scope)}", scope)
    return None


# Shell builtins no image has as a program (RHEL-likes ship cd, read, getopts, alias... as scripts: not these).
NO_PROGRAM = frozenset({":", "exec", "times", "eval", "export", "set", "source", ".", "exit", "shift", "return",
                        "break", "continue", "local", "declare", "typeset", "readonly", "unset", "trap", "let", "pushd",
                        "popd", "dirs", "shopt", "mapfile", "readarray"})
# Shell builtins that RHEL-likes ship as programs too (/usr/bin/cd, a script that runs the builtin in a shell of its
# own, changing nothing), and Debian and Ubuntu do not: run by a program (env, nohup, the exec form), whether they
# are found is the image's to say.
SOME_IMAGES_PROGRAM = frozenset({"cd", "read", "getopts", "alias", "unalias", "umask", "wait", "hash", "type",
                                 "command", "fc", "fg", "bg", "jobs", "ulimit"})

# POSIX's special builtins: an error in one (a redirection it cannot open) ends a non-interactive POSIX shell.
SPECIAL_BUILTINS = frozenset({"break", ":", ".", "continue", "eval", "exec", "exit", "export", "readonly", "return",
                              "set", "shift", "times", "trap", "unset"})
# What bash 5.2 and dash 0.5.12 both find without looking at PATH: their builtins, special and regular.
SHELL_BUILTINS = SPECIAL_BUILTINS | {"[", "alias", "bg", "cd", "command", "echo", "false", "fg", "getopts", "hash",
                                     "jobs", "kill", "local", "printf", "pwd", "read", "test", "true", "type",
                                     "ulimit", "umask", "unalias", "wait"}


def finds_every(shell: Shell, names: list[str]) -> bool | None:
    """Whether ``command -v``, ``type`` or ``hash`` finds each of ``names``: True where each is a function the
    script defined or a builtin of the shell; otherwise whether the image has the program is its own to say."""
    if names and all(is_known(n) and (n in shell.functions or n in SHELL_BUILTINS) for n in names):
        return True
    return None
