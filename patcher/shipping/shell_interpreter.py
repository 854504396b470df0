"""Run a parsed shell script against the model of the image: the state a shell keeps, and its control flow.

What one command does is ``shell_commands.py``'s business; this module
keeps what sh keeps between commands (variables and which are exported,
the working directory, ``OLDPWD`` and the ``pushd`` stack, functions,
positional parameters, ``set -e``) and walks lists, ``&&``/``||``,
pipelines, ``if``/``case`` (the branch a test decides, or every branch
when the image decides), loops and subshells. The reader follows the
build that succeeds: a command is taken to succeed unless it is known to
fail. A line it cannot follow becomes a ``Note``, never a guess.
"""

from __future__ import annotations

import posixpath
import re
from typing import Callable

from .brace_expansion import TooManyWords, expand_braces, has_braces
from .failure_hiding import and_or_hides, redirect_hides
from .image_fs import Kind, normalise
from .shell_arithmetic import run_arithmetic
from .shell_nodes import (AndOr, Arithmetic, ArithmeticFor, Case, Command, Conditional, For, FunctionDef, Group, If,
                          Lit, Loop, Param, Pipeline, Sequence, ShellSyntaxError, Simple, Sub, Word, decimal,
                          plain_text)
from .shell_records import (MAX_COMMANDS, MAX_DEPTH, MAX_GLOBBED, MAX_ITERATIONS, MAX_STEPS, QUIET, STEPS_PAST,
                            Build, Captured, CommandContext, Exit, Input, NoMatch, Note, ReadOnly, ScriptCopy,
                            ScriptRecord, Stop, Trap, _Loop, _Return)
from .shell_syntax import parse_runnable, parse_script
from .shell_words import Field, Unbound, Unknowns, expand, expand_one, is_known, pattern_regex, variable_text

class Shell:
    """One shell process: its variables, directory, options and functions over the shared build."""

    def __init__(self, build: Build, file: str, cwd: str, variables: dict[str, str], *, argv0: str = "sh",
                 positional: list[str] | None = None, errexit: bool = False, propagates: bool = True,
                 inherited: tuple[str, ...] = (), run_line: int = 0, record: ScriptRecord | None = None,
                 depth: int = 0, dockerfile: bool = False, program: str = "sh"):
        self.build = build
        self.file = file
        self.cwd = normalise(cwd)
        self.oldpwd: str | None = None
        # A cd the reader took to succeed into a folder it cannot name (its command, how it was written): what a
        # relative path names from there, $PWD and pwd are unknown; cwd still holds the folder before it.
        self.lost: tuple[CommandContext, str] | None = None
        self.stack: list[str] = []
        self.variables = dict(variables)
        self.exported = set(variables)
        self.unset: set[str] = set()
        self.argv0 = argv0
        self.positional = list(positional or [])
        # The positional parameters are not known, nor how many there are (positional then holds one unknown
        # value): under the base image's sh, '. FILE ARGS' gives FILE ARGS in bash and the script's own in dash.
        self.positional_unknown = False
        # bash's 'set' replaced the positional parameters outside any function: a sourced file given its own
        # arguments that does so leaves them set when it ends (bash restores them otherwise).
        self.positional_set = False
        self.functions: dict[str, Command] = {}
        # bash's indexed arrays the reader knows every element of; element 0 is also the name's value in variables.
        self.arrays: dict[str, list[str]] = {}
        # One frame per running function: each name 'local' made, with what it held outside (value, exported,
        # unset, array elements).
        self.frames: list[dict[str, tuple[str | None, bool, bool, list[str] | None]]] = []
        self.errexit = errexit
        self.propagates = propagates  # whether this shell's failure fails the build
        self.inherited = inherited
        self.run_line = run_line
        self.record = record
        self.depth = depth
        self.sourcing = 0  # how many files '.' or 'source' is reading: 'return' leaves the innermost
        # (functions running, files sourcing) when this (sub)shell began: a 'return' with no more of either
        # than that ends the subshell itself, as 'exit' would
        self.began_within = (0, 0)
        self.dockerfile = dockerfile  # a RUN's own shell: its lines are the Dockerfile's
        self.program = program  # the shell that runs it: "sh" (the base image's /bin/sh), "bash", "dash"...
        self.output: Captured | None = None  # what a $(...) around this shell hears; shared with its children
        self.noglob = False  # set -f: no pathname expansion
        self.nounset = False  # set -u: expanding a parameter that is not set ends the shell
        self.pipefail = False  # set -o pipefail: a pipe fails when any part of it fails, not only its last
        self.posix = False  # bash's POSIX mode (set -o posix, bash --posix): $(...) keeps set -e, as in sh
        self.aliases: dict[str, str] = {}  # alias NAME=VALUE, by name
        self.readonly: set[str] = set()  # readonly NAME, declare -r NAME: assigning or unsetting it is an error
        self.allexport = False  # set -a: every variable assigned is exported
        self.noclobber = False  # set -C: '>' does not empty a regular file that exists ('>|' does)
        # bash's namerefs (declare -n REF=NAME): REF -> (NAME, how many functions ran when local -n made it)
        self.namerefs: dict[str, tuple[str, int]] = {}
        self.traps: dict[str, Trap] = {}  # "EXIT" (run when the shell ends) and bash's "ERR" (when a command fails)
        self.errtrace = False  # bash's set -E: functions and subshells keep the ERR trap
        self.trapping = False  # a trap's action is running
        self.substituted: bool | None = True  # the status of the last $(...) run
        self.substituted_code: int | None = None  # and its number, where known ('V=$(exit 3)': $? is 3)
        self.bash_forms: list[str] = []  # bash's expansions the command running now made under sh (noted once done)
        self.running = 0  # lists being run now: 1 is the script's own top level
        self.shopts: set[str] = set()  # bash's shopt -s options the reading follows (nullglob, failglob, dotglob)
        self.ignoring_errexit = 0  # commands running where sh ignores set -e (a condition, left of || ...), nested
        self.is_subshell = False  # a copy made by subshell(): its exit status is not the script's or the RUN's
        self.last_status: bool | None = True  # of the last pipeline run: what a bare 'exit' repeats
        # Its number, where a command said which (exit 3, return 2, a child shell's): else 0 or 1 is taken.
        self.last_code: int | None = None
        self.next_code: int | None = None  # the number the command running now ends with, once it says
        self.piped_file: str | None = None  # a pipe's part after 'cat FILE': the file its standard input holds
        self.input: Input | None = None  # standard input, where the reader knows it (None: unknown)
        self.loops = 0  # loops around the command running now, in this function: what break and continue reach
        self.piped_unknown = False  # a pipe's part whose input is what an earlier part printed, not known
        self.getopts_at: tuple[str, int, int] | None = None  # getopts: OPTIND as left, the word and letter next
        # The command that just ran is an if, loop, case or { ...; } whose status is its body's: a failure in the
        # body that set -e did not end the shell on was exempt there, and so is the compound (bash and dash).
        self.body_failed = False
        # Started by 'env -i' (or from a shell that was): no variable comes from the base image's environment, so
        # one the reader did not see set is not set.
        self.clean_environment = False

    @property
    def unknowns(self) -> Unknowns:
        """The build's unknown values."""
        return self.build.unknowns

    # -- the expansion scope ------------------------------------------------

    def referred(self, name: str) -> str:
        """The variable ``name`` stands for: itself, or what a nameref (``declare -n``) points at, hop by hop."""
        # bash follows at most 8 hops (NAMEREF_MAX): a longer chain, or one that loops, gives it an empty value
        # (a loop with a warning); the reader ends on a name that is still a nameref, whose value it does not know.
        for _ in range(8):
            if name not in self.namerefs:
                break
            name = self.namerefs[name][0]
        return name

    def lookup(self, name: str) -> str | None:
        """A variable's value, or None when unset (or only the base image could tell)."""
        if self.namerefs:
            name = self.referred(name)
        if name == "PWD":
            return self.cwd if self.lost is None else self.unknowns.mark(f"$PWD (in {self.lost[1]})")
        if name == "OLDPWD":
            return self.oldpwd
        if name in ("0", "BASH_SOURCE", "BASH_SOURCE[0]"):
            return self.argv0
        if name.endswith("]") and "[" in name:
            return self._element(*name[:-1].split("[", 1))
        if (name.isdigit() or name == "#") and self.positional_unknown:
            return self.unknowns.mark(f"${name}")
        if name.isdigit():
            index = decimal(name) or 0
            return self.positional[index - 1] if 0 < index <= len(self.positional) else None
        if name == "#":
            return str(len(self.positional))
        if name == "?":
            # A command the reader cannot run is taken to succeed (as after '||'); a failure reads as 1, which is
            # what false, cp, test and grep give.
            if self.last_status is None:
                return self.unknowns.mark("$?")
            return str(self.status_code())
        if name == "-":
            return ("e" if self.errexit else "") + ("f" if self.noglob else "")
        if name == "HOME" and name not in self.variables and name not in self.unset and not self.clean_environment:
            return "/root"  # Docker sets HOME for the user RUN runs as; root's unless USER said otherwise
        if name == "IFS" and name not in self.variables and name not in self.unset:
            return " \t\n"  # sh sets it at startup: bash and dash take no IFS from the environment
        if name == "BASH_VERSION" and self.program == "bash" and name not in self.variables and name not in self.unset:
            return self.build.bash_version  # bash sets it (not exported): which version, only the image knows
        return self.variables.get(name)

    def elements(self, name: str) -> list[str] | None:
        """An array's elements (a set variable is an array of one), or None when the reader does not know them."""
        if name in self.arrays:
            return self.arrays[name]
        value = self.lookup(name)
        if value is None:
            return [] if name in self.unset else None
        return [value] if is_known(value) else None

    def _element(self, name: str, subscript: str) -> str | None:
        """``${NAME[SUBSCRIPT]}``: one element, or all of them joined for ``@`` and ``*``."""
        values = self.elements(name)
        if values is None:
            value = self.lookup(name)
            return None if value is None else self.unknowns.mark(f"${{{name}[{subscript}]}}")
        if subscript in ("@", "*"):
            return " ".join(values)
        number = self._index(subscript)
        if number is None:
            return self.unknowns.mark(f"${{{name}[{subscript}]}}")
        return values[number] if -len(values) <= number < len(values) else ""  # past the end: empty

    def _assign_element(self, name: str, subscript: str, value: str) -> None:
        """``NAME[I]=value``: element I set, or appended when I is the length; a gap it would leave, an index
        the reader cannot know, or an array it does not know makes the whole array unknown."""
        index = self._index(subscript)
        held = self.arrays.get(name)
        if held is None:
            # A scalar (or nothing) is an array of one at most; what the image's environment may hold is a
            # scalar, so setting element 0 replaces whatever it was.
            scalar = self.elements(name)
            held = [""] if index == 0 else scalar
            if held is None or index is None or not -len(held) <= index <= len(held):
                self.assign_array(name, None)
                return
            self.arrays[name] = held = list(held)
        if index is None or not -len(held) <= index <= len(held) or not is_known(value):
            self.assign_array(name, None)
            return
        # In place: a loop that sets elements one by one costs each of them once, not the whole array again.
        if index == len(held):
            held.append(value)
        else:
            held[index] = value
        self.variables[name] = held[0]
        self.unset.discard(name)

    def _index(self, subscript: str) -> int | None:
        """An indexed array's subscript as a number: written, or a variable holding one (``$i``, ``i``)."""
        index = subscript.strip()
        if not re.fullmatch(r"-?[0-9]{1,9}", index):
            held = self.lookup(index.lstrip("$").strip("{}")) if re.fullmatch(r"\$?\{?[A-Za-z_]\w*\}?", index) else None
            if held is None or not re.fullmatch(r"\s*-?[0-9]{1,9}\s*", held):
                return None
            index = held
        return int(index)

    def assign_array(self, name: str, values: list[str] | None, append: bool = False) -> None:
        """``NAME=(...)`` (``NAME+=(...)`` with ``append``); None: elements the reader cannot know."""
        if name in self.readonly:
            raise ReadOnly(name)
        if values is not None and not all(is_known(v) for v in values):
            values = None
        if values is not None and append:
            if name in self.arrays:  # in place: appending in a loop costs each new element once
                self.arrays[name].extend(values)
                if self.arrays[name]:
                    self.variables[name] = self.arrays[name][0]
                    self.unset.discard(name)
                return
            held = self.elements(name)
            values = None if held is None else held + values
        if values is None:
            self.arrays.pop(name, None)
            self.assign(name, self.unknowns.mark(f"${{{name}[@]}}"))
            return
        self.arrays[name] = values
        if values:
            self.variables[name] = values[0]
            self.unset.discard(name)
        else:
            self.variables.pop(name, None)
            self.unset.add(name)

    def appended(self, name: str, value: str) -> str:
        """``NAME+=VALUE`` (bash): NAME's value with VALUE after it. Unset, NAME is empty, even under ``set -u``;
        one only the base image could set makes the whole value unknown, as ``NAME=$NAME...`` would."""
        held = self.lookup(name)
        return (held if held is not None else self.missing(name, nounset=False)) + value

    def missing(self, name: str, nounset: bool = True) -> str:
        """What ``$NAME`` gives when nothing the reader saw set it: empty if unset on purpose, else unknown."""
        unset = name in self.unset or self.clean_environment and name != "BASH_VERSION"
        if nounset and self.nounset and (unset or name.isdigit()):
            raise Unbound(name)  # a name the base image could set is not known to be unset: read on
        if unset or name.isdigit() or name in "@*#?-!$":
            return "" if name not in "$!" else self.unknowns.mark(f"${name}")
        if name == "BASH_VERSION":
            # dash, ash, ksh... do not set it. Under sh it is set if the base image's /bin/sh is bash (RHEL-likes),
            # not if it is dash (Debian, Ubuntu): no variable the build forgot to set, so not listed as unresolved.
            return "" if self.program != "sh" else self.unknowns.mark("$BASH_VERSION")
        if self.record is not None:
            self.record.unknown.add(name)
        return self.unknowns.mark(f"${name}")

    def status_code(self) -> int:
        """``$?`` as a number: the one the last command ended with where known, else 0 or 1 (what false, cp, test
        and grep give)."""
        if self.last_code is not None and (self.last_code == 0) == (self.last_status is True):
            return self.last_code
        return 0 if self.last_status else 1

    @property
    def bash_arithmetic(self) -> bool:
        """Whether ``$((...))`` takes bash's ``++``, ``--`` and comma: under bash only."""
        return self.program == "bash"

    def bash_only(self, spelled: str) -> None:
        """An expansion only bash has (``${V:1}``, ``${V^^}``, ``${V/a/b}``, ``${!V}``, ``${A[0]}``): dash 0.5.12
        says "Bad substitution" and ends (status 2), only where it is expanded; under sh the base image's shell
        decides, and the reader expands it as bash does."""
        if self.program == "dash":
            raise Unbound(spelled, f"{spelled} is bash's: dash says \"Bad substitution\" and ends here", 2)
        if self.program == "sh":
            self.bash_forms.append(spelled)

    def ended_with(self, code: int | None) -> None:
        """The command running now ends with status number ``code`` (None: only whether it failed is known)."""
        self.next_code = code

    def arguments(self) -> list[str]:
        """The positional parameters."""
        return self.positional

    def assign(self, name: str, value: str) -> None:
        """Set a shell variable (of an array, its element 0, as bash does; ``NAME[I]``, element I)."""
        if self.namerefs:
            name = self.referred(name)
        variable = name.split("[", 1)[0]  # NAME of NAME[I]
        if variable in self.readonly:
            raise ReadOnly(variable)
        if self.allexport:
            self.exported.add(variable)
        if name.endswith("]") and "[" in name:
            base, subscript = name[:-1].split("[", 1)
            self._assign_element(base, subscript, value)
            return
        self.variables[name] = value
        self.unset.discard(name)
        if name in self.arrays:
            self.arrays[name][:1] = [value]

    def substitute(self, sub: Sub) -> str:
        """Run ``$(...)`` in a subshell and return what it prints, or a marker for what cannot be known."""
        child = self.subshell()
        if self.program == "bash" and not sub.process and not self.posix and "inherit_errexit" not in self.shopts:
            child.errexit = False  # bash outside POSIX mode clears set -e in a $(...) (not in a <(...))
        child.output = heard = Captured()
        if sub.process == ">":
            child.output = self.output  # >(...) reads the pipe; what it prints goes where this shell's output goes
        status: bool | None = None
        code: int | None = None
        try:
            dialect = (self.program == "bash", self.program == "dash")
            parsed = sub.parsed[1] if sub.parsed and sub.parsed[0] == dialect else \
                parse_script(sub.text, sub.line, bash=dialect[0], substitution=True, dash=dialect[1])
            read = self._file_read(parsed) if not sub.process else None
            if read is not None:
                self.substituted = True
                return read
            status = child.main(parsed)
            code = child.last_code
        except (ShellSyntaxError, RecursionError):
            heard.unknown = True
        except Exit as end:
            status, code = end.status, end.code
        except NoMatch:  # bash's failglob ends the $(...) where it is
            status = False
        except Stop:
            heard.unknown = True  # what it prints past where the reader stopped is not known
        if not sub.process:
            self.substituted, self.substituted_code = status, code  # an assignment alone has its last $(...)'s
        if sub.process:
            return "/dev/fd/63"  # what bash names the pipe (Linux)
        if heard.unknown:
            return self.unknowns.mark(f"$({' '.join(sub.text.split())})")
        return "".join(heard.text).rstrip("\n")

    def _file_read(self, parsed: Sequence) -> str | None:
        """bash's ``$(< FILE)``: FILE's text (a context file's, trailing newlines removed), else a marker.

        dash runs the lone redirection as a command that prints nothing; under sh the base image's decides.
        None: the substitution is not of that form.
        """
        items = parsed.items
        node = items[0].first.commands[0].node if len(items) == 1 and not items[0].rest else None
        if not isinstance(node, Simple) or node.words or node.assignments or node.arrays or \
                len(items[0].first.commands) != 1 or [r.op for r in node.redirects] != ["<"]:
            return None
        if self.program == "dash":
            return ""
        target = self.expand_one(node.redirects[0].target)
        text = self.placed_text(target) if self.program == "bash" else None
        return text.rstrip("\n") if text is not None else self.unknowns.mark(f"$(< {self.show(target)})")

    def placed_text(self, word: str) -> str | None:
        """The text of the context file the build placed at ``word`` (a path), else None (unknown, not text)."""
        placed = self.build.fs.files.get(self.path(word)) if is_known(word) else None
        return self.build.data_text(placed.source) if placed is not None else None

    def expand_word(self, word: Word) -> list[Field]:
        """Fields of a word, globs matched against what the build placed; bash expands its braces first."""
        if self.program in ("bash", "sh") and has_braces(word):
            # Under sh the base image's /bin/sh decides: dash leaves '{a,b}' as written, bash expands it.
            try:
                words = expand_braces(word) if self.program == "bash" else None
            except TooManyWords:
                words = None
            if words is None:
                shown = "".join(p.text if isinstance(p, Lit) else "$..." for p in word)
                return [Field(self.unknowns.mark(shown))]
            return [field for one in words for field in expand(one, self)]
        return expand(word, self)

    def expand_one(self, word: Word, assignment: bool = False) -> str:
        """A word as one string (assignments, case words, redirection targets)."""
        return expand_one(word, self, assignment)

    def path(self, text: str, keep_slash: bool = False) -> str:
        """An image path for ``text`` as a command names it, relative to the current directory.

        The current directory is the shell's logical one (``$PWD``, maybe through a link); the kernel walks a
        program's path from where that link leads, so ``..`` goes up from there (``ImageFS.physical``).
        """
        joined = text if text.startswith("/") else posixpath.join(self.here(text or "."), text)
        if keep_slash:
            return joined
        return self.build.fs.physical(joined)

    def here(self, text: str = ".") -> str:
        """The current folder, where ``text`` (a relative path) is read from; after a cd into a folder the reader
        cannot name, the reading stops here instead."""
        if self.lost is not None:
            self.stop(self.lost[0], f"cd into {self.lost[1]}, which the reader cannot work out, was taken to "
                                    f"succeed: what {text} names from there is not known, and the rest of "
                                    f"{self._what()} is not read")
        return self.cwd

    def enter(self, folder: str) -> None:
        """Make the known ``folder`` the current one; the one left is ``$OLDPWD`` (unknown where it was lost)."""
        self.oldpwd, self.cwd = self._left(), folder
        self.lost = None

    def _left(self) -> str:
        """The folder a cd leaves, for ``$OLDPWD`` and ``cd -``: unknown where it was a folder the reader cannot
        name (it is set all the same)."""
        return self.cwd if self.lost is None else self.unknowns.mark(f"$OLDPWD (the folder {self.lost[1]})")

    def show(self, text: str) -> str:
        """``text`` with unknown values spelled as written."""
        return self.unknowns.show(text)

    def emit(self, text: str) -> None:
        """Write to standard output (only a ``$(...)`` listens)."""
        if self.output is not None:
            self.output.text.append(text)

    def emit_unknown(self) -> None:
        """Standard output the reader cannot know."""
        if self.output is not None:
            self.output.unknown = True

    # -- notes --------------------------------------------------------------

    def note(self, ctx: CommandContext, kind: str, reason: str, scope: tuple[str, ...] | None = None) -> None:
        """Record what the reader could not follow here."""
        note = Note(self.file, ctx.line, _clip(self.show(ctx.text), 120), _clip(self.show(reason), 300), kind, scope,
                    self.build.tick(), self.build.stage)
        key = (note.file, note.line, note.text, note.reason, note.kind, note.scope, note.stage)
        if key not in self.build.noted:  # a loop or a script run twice says it once
            self.build.noted.add(key)
            self.build.noted_lines.add((note.file, note.line, note.kind))
            self.build.notes.append(note)

    def unread(self, ctx: CommandContext, reason: str, scope: tuple[str, ...] | None = None) -> None:
        """Record a command the reader does not understand (what it prints is unknown too)."""
        self.emit_unknown()
        self.note(ctx, "unread", reason, scope)

    def stop(self, ctx: CommandContext, reason: str) -> None:
        """Record why the reader cannot go on, and stop reading."""
        self.note(ctx, "stop", reason)
        raise Stop(reason)

    def record_copy(self, ctx: CommandContext, sources: list[str], written: str, recursive: bool) -> None:
        """Keep the copy as ``read_install_script`` reports it."""
        if self.record is None or self.dockerfile:
            return
        destination = written if written.endswith("/") else normalise(written)
        for source in sources:
            self.record.copies.append(ScriptCopy(normalise(source), self.show(destination), recursive, ctx.line,
                                                 ctx.hides, ctx.stops_on_error))

    @property
    def expands_aliases(self) -> bool:
        """Whether a command named by an alias runs the alias: dash always, bash in POSIX mode or when told."""
        return self.program != "bash" or self.posix or "expand_aliases" in self.shopts

    def set_pipefail(self, on: bool, ctx: CommandContext, given_by: Shell | None = None) -> None:
        """``set -o pipefail`` (or ``sh -o pipefail``, noted in ``given_by``, the shell whose line gave it): bash
        follows it; dash follows it from 0.5.13 and refuses it before."""
        if on and self.program != "bash":
            which = "the base image's sh" if self.program == "sh" else self.program
            (given_by or self).unread(ctx, f"pipefail under {which}: dash 0.5.12 (Debian 12, Ubuntu 24.04) refuses "
                                           "it and ends the script, bash and later dash follow it, as the reader does")
        self.pipefail = on

    def set_errexit(self, on: bool) -> None:
        """``set -e`` / ``set +e``."""
        self.errexit = on
        if self.record is not None and not self.record.copies and not self.dockerfile:
            self.record.errexit_first = on  # what counts is set -e as it stands at the first copy

    # -- state for children -------------------------------------------------

    def subshell(self) -> Shell:
        """A copy of this shell (``( ... )``, ``$(...)``, a pipeline's parts): same image, its own state."""
        child = Shell(self.build, self.file, self.cwd, {}, argv0=self.argv0, positional=self.positional,
                      errexit=self.errexit, propagates=self.propagates, inherited=self.inherited,
                      run_line=self.run_line, record=self.record, depth=self.depth, dockerfile=self.dockerfile,
                      program=self.program)
        child.variables, child.exported, child.unset = dict(self.variables), set(self.exported), set(self.unset)
        child.clean_environment = self.clean_environment
        child.arrays = {name: list(values) for name, values in self.arrays.items()}
        child.oldpwd, child.stack, child.functions = self.oldpwd, list(self.stack), dict(self.functions)
        child.lost = self.lost
        child.frames, child.sourcing = [dict(frame) for frame in self.frames], self.sourcing
        child.began_within = (len(self.frames), self.sourcing)
        child.ignoring_errexit, child.output = self.ignoring_errexit, self.output
        child.input = self.input  # the same open input: what a subshell reads, the shell no longer reads
        child.is_subshell, child.last_status, child.noglob = True, self.last_status, self.noglob
        child.last_code = self.last_code
        child.nounset, child.pipefail, child.posix = self.nounset, self.pipefail, self.posix
        child.positional_unknown, child.positional_set = self.positional_unknown, self.positional_set
        child.shopts, child.aliases, child.readonly = set(self.shopts), dict(self.aliases), set(self.readonly)
        child.allexport, child.namerefs, child.noclobber = self.allexport, dict(self.namerefs), self.noclobber
        # A subshell starts without the traps (sh resets them), but bash's set -E keeps ERR.
        child.errtrace = self.errtrace
        if self.errtrace and "ERR" in self.traps:
            child.traps["ERR"] = self.traps["ERR"]
        return child

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """What a child process inherits: the exported variables."""
        env = {name: value for name, value in self.variables.items() if name in self.exported}
        env.update(extra or {})
        return env

    def fails_build(self, ctx: CommandContext) -> bool:
        """Whether a failure of the command at ``ctx`` fails the image build."""
        return self.propagates and ((self.errexit and not ctx.exempt and not self.ignoring_errexit) or ctx.tail)

    def child_hides(self, ctx: CommandContext) -> tuple[str, ...]:
        """What hides a failure inside a script this command runs: this line's hiding, then why it is ignored."""
        hides = ctx.hides
        if not self.fails_build(ctx) and self.propagates and not any(h not in QUIET for h in ctx.hides):
            where = f"the RUN at Dockerfile line {self.run_line}" if self.dockerfile else self.file
            hides = (*hides, f"{where} goes on after it fails")
        return hides

    # -- control flow -------------------------------------------------------

    def main(self, sequence: Sequence, tail: bool = True) -> bool | None:
        """Run ``sequence`` as this shell's whole program: then its EXIT trap runs, however the shell ends.

        The shell's status is the program's, unless the trap exits (``exit N``, or a failure under set -e).
        """
        try:
            status = self.run(sequence, tail)
        except Exit as end:
            code = end.code
            if code is None and end.status is False and self.last_status is False:
                code = self.last_code  # set -e ends the shell with the failed command's number: $? in the trap
            self._run_trap("EXIT", end.status, code)
            raise
        self._run_trap("EXIT", status, self.last_code)
        return status

    def _run_trap(self, condition: str, status: bool | None, code: int | None = None) -> None:
        """Run the trap set for ``condition``, with ``$?`` the status the shell ends with (or the failed
        command's): its number where known (``exit 2``: 2), else 0 or 1."""
        trap = self.traps.get(condition)
        if condition == "EXIT":
            self.traps.pop(condition, None)  # it runs once: an exit inside it ends the shell there
        if trap is None or not trap.action.strip() or self.trapping:
            return  # a trap's own failures run no ERR trap (bash), and an EXIT trap's exit runs none again
        self.last_status, self.last_code = status, code  # what $? says inside the trap
        self.trapping = True
        try:
            self.run_text(trap.action, trap.line, CommandContext(trap.line, trap.text))
        finally:
            self.trapping = False

    def run(self, sequence: Sequence, tail: bool = True) -> bool | None:
        """Run a list of commands; return the status of the last (None: unknown)."""
        status: bool | None = True
        dropped = 0  # the line bash dropped the rest of
        self.running += 1
        try:
            for index, item in enumerate(sequence.items):
                if self.running > 1 or self.is_subshell:
                    status = self.and_or(item, tail and index == len(sequence.items) - 1)
                    continue
                if index and dropped == item.first.commands[0].line:
                    continue
                try:
                    status = self.and_or(item, tail and index == len(sequence.items) - 1)
                except NoMatch:
                    # bash drops the rest of the script's line it happened in, whatever '||' or ';' follows; it
                    # fails, and under set -e ends the script.
                    status = self.last_status = False
                    self.last_code = None
                    dropped = item.first.commands[0].line
                    if self.errexit:
                        raise Exit(False) from None
        finally:
            self.running -= 1
        return status

    def and_or(self, item: AndOr, tail: bool) -> bool | None:
        """``A && B || C``: a known status decides what runs; an unknown one runs both ways."""
        if item.background:
            return self._background(item)
        pipes = [item.first, *(p for _, p in item.rest)]
        ops = [op for op, _ in item.rest]
        hides = and_or_hides(pipes, ops)
        noted = len(self.build.notes)
        unknown = 0  # 1 + the index of the first pipeline whose status only the image knows
        status = self.pipeline(pipes[0], hides[0], exempt=bool(ops), tail=tail and "||" not in ops)
        for index, (op, pipe) in enumerate(item.rest, 1):
            runs = status is not False if op == "&&" else status is not True
            if not runs:
                continue
            if status is None and not unknown:
                unknown = index  # from here on every command of the list runs
            last = index == len(pipes) - 1
            exempt, pipe_tail = not last, tail and "||" not in ops[index:]
            if status is None:
                result = self.either(lambda pipe=pipe, index=index: self.pipeline(  # type: ignore[misc]
                    pipe, hides[index], exempt=exempt, tail=pipe_tail), pipe.commands[0])
            else:
                result = self.pipeline(pipe, hides[index], exempt=exempt, tail=pipe_tail)
            status = result if status is not None else None
        if unknown and not all(_harmless(p) for p in pipes[unknown:]):
            self._assume_both_ways(pipes[unknown - 1], noted, {p.commands[0].line for p in pipes})
        return status

    def _background(self, item: AndOr) -> bool:
        """``LIST &``: a subshell the shell does not wait for. Its status is 0 whatever the list gives, so set -e
        does not end the shell on it, and what it assigns or where it cd's stays in it; the files it writes land,
        and the reader takes them to land before the commands after it run, which only a ``wait`` makes sure."""
        first = item.first.commands[0]
        self.note(CommandContext(first.line, first.text), "assumed",
                  "runs in the background: the reader takes what it does to be done before the commands after it")
        child = self.subshell()
        try:
            child.main(Sequence((AndOr(item.first, item.rest),)), tail=False)
        except (Exit, NoMatch):
            pass  # it ends the background subshell only
        self.ended_with(0)
        return True

    def _assume_both_ways(self, pipe: Pipeline, noted: int, lines: set[int]) -> None:
        """Say that only the base image decides whether ``pipe`` succeeds, as an ``if`` on it says; unless the
        list (on ``lines``) noted already why: a program the reader does not read, a jump only one outcome takes
        (noted once, also when a loop runs the list again)."""
        if any(n.kind in ("unread", "program", "stop") for n in self.build.notes[noted:]) or any(
                (self.file, line, "assumed") in self.build.noted_lines for line in lines):
            return
        test = pipe.commands[0]
        self.note(CommandContext(test.line, test.text), "assumed",
                  "the base image decides whether this succeeds: the reader runs each command after it in the "
                  "list, as if each ran")

    def either(self, run: Callable[[], "bool | None"], where: Command) -> bool | None:
        """Run what only the base image decides runs; if it leaves (exit, return, break, continue), read on.

        The reader follows the build that does its work: a jump that only
        one outcome of an unknown test takes is noted, not taken.
        """
        try:
            return run()
        except (Exit, _Return, _Loop) as jump:
            word = "exit" if isinstance(jump, Exit) else "return" if isinstance(jump, _Return) else jump.kind
            self.note(CommandContext(where.line, where.text), "assumed",
                      f"the base image decides whether this {word} runs; the reader reads on as if it does not")
            return None

    def pipeline(self, pipe: Pipeline, hides: list[str], exempt: bool, tail: bool) -> bool | None:
        """``[!] A | B``: each part runs; the last one's status counts, or under pipefail any part's failure."""
        statuses: list[bool | None] = []
        piped = Captured()
        count = len(pipe.commands)
        pipefail = self.pipefail and count > 1
        for index, command in enumerate(pipe.commands):
            # Under pipefail every part's failure fails the pipe, so none is hidden by the pipe.
            counts = index == count - 1 or pipefail
            own = [*hides, *([] if counts else ["| ..."])]
            ctx = self.context(command, own, exempt=exempt or not counts or pipe.negated, tail=tail and counts)
            shell = self if count == 1 else self.subshell()
            if index:
                shell.piped_file = self._catted(pipe.commands[index - 1])
                # What the part before printed into the pipe is this part's standard input.
                shell.input = None if piped.unknown else Input.of("".join(piped.text))
                shell.piped_unknown = shell.input is None
            if index < count - 1:
                shell.output = piped = Captured()  # it prints into the pipe, not to what a $(...) hears
            shell.next_code = None
            if shell is self:
                statuses.append(shell.command(command, ctx))
                continue
            # A part before the last fails without ending this shell, but inside its own subshell set -e
            # still holds (bash and dash), unless the whole pipe is exempt (&&, ||, if, !).
            statuses.append(shell.part(command, ctx, keep_errexit=not exempt and not pipe.negated))
        status = statuses[-1]
        if pipefail:
            status = False if False in statuses else None if None in statuses else True
        if pipe.negated and status is not None:
            status = not status
        self.last_status = status
        # The number of the last part's status (under pipefail, of whichever part failed last: not kept).
        self.last_code = shell.next_code if not pipe.negated and not pipefail else None
        body_failed, self.body_failed = self.body_failed and count == 1, False
        if status is False and not self.ignoring_errexit and not exempt and not pipe.negated and not body_failed:
            if "ERR" in self.traps and (not self.frames or self.errtrace):
                # bash runs its ERR trap where set -e would end the shell (in a function only under set -E)
                self._run_trap("ERR", status)
                self.last_status = status
            if self.errexit:
                raise Exit(False)  # set -e: a command known to fail ends the shell here
        return status

    def part(self, command: Command, ctx: CommandContext, keep_errexit: bool) -> bool | None:
        """Run a pipe's part as this subshell's whole program: an exit ends the part only, then its EXIT trap runs."""
        try:
            code = None
            try:
                status = self.command(command, ctx, keep_errexit=keep_errexit)
                code = self.next_code  # $? in the trap: the part's number, where known
            except Exit as end:
                status, code = end.status, end.code
                self.ended_with(end.code)
            ended = self.next_code
            self._run_trap("EXIT", status, code)
            self.next_code = ended  # a trap that does not exit leaves the part's status as it was
            return status
        except Exit as end:
            self.ended_with(end.code)  # the trap's own exit: its number is the part's ('exit 3': 3)
            return end.status
        except NoMatch:
            return False  # bash's failglob ends that part of the pipe, which fails

    def _catted(self, command: Command) -> str | None:
        """The context file ``cat FILE`` prints into a pipe (``cat x.py | tee DEST``), else None.

        Only a word of text and plain parameters counts, expanded in a copy of this shell: expanding it again
        here must run nothing twice, assign nothing (``${F:=x}`` assigns in the pipe's subshell only) and end
        nothing (``set -u`` ends that subshell, not this shell).
        """
        node = command.node
        if not isinstance(node, Simple) or node.assignments or node.redirects or command.redirects \
                or len(node.words) != 2 or plain_text(node.words[0]) != "cat" \
                or not all(isinstance(part, Lit) or isinstance(part, Param) and part.op == ""
                           for part in node.words[1]):
            return None
        try:
            fields = self.subshell().expand_word(node.words[1])
        except Unbound:
            return None
        if len(fields) != 1 or fields[0].glob is not None or not is_known(fields[0].text) \
                or fields[0].text.startswith("-"):
            return None
        path = self.path(fields[0].text)
        return path if path in self.build.fs.files else None

    def context(self, command: Command, hides: list[str], exempt: bool, tail: bool) -> CommandContext:
        """The context of ``command``: its line, what hides its failure, whether that failure stops the build."""
        redirects = command.redirects + (command.node.redirects if isinstance(command.node, Simple) else ())
        own = tuple(dict.fromkeys([*redirect_hides(redirects), *hides]))
        line, text = command.line, command.text
        probe = CommandContext(line, text, own, exempt=exempt, tail=tail)
        stops = self.fails_build(probe) if self.dockerfile else self.errexit and not self.ignoring_errexit
        return CommandContext(line, text, (*own, *self.inherited), stops, exempt, tail)

    def command(self, command: Command, ctx: CommandContext, keep_errexit: bool = False) -> bool | None:
        """Run one command in ``ctx``; where sh exempts it from set -e, so is everything it runs in this shell.

        ``keep_errexit``: its failure is exempt, but set -e still holds inside it (a pipe's part before the last).
        """
        self.build.commands += 1
        if self.build.commands > MAX_COMMANDS:
            self.stop(ctx, f"the build runs more than {MAX_COMMANDS:,} commands; the reader stops here")
        if self.build.counter > MAX_STEPS:
            self.stop(ctx, STEPS_PAST)
        try:
            if not ctx.exempt or keep_errexit:
                return self._command(command, ctx)
            self.ignoring_errexit += 1  # 'f || true', 'if f': set -e is off inside f's body too
            try:
                return self._command(command, ctx)
            finally:
                self.ignoring_errexit -= 1
        except Unbound as unbound:
            # An expansion error ends the shell, whatever set -e, '||' or 'if' around it say (bash and dash).
            self.note(ctx, "fails", unbound.reason)
            # dash ends with 2; bash with 1 (127 at the top of a 'bash -c' string): left to $?'s guess of 1.
            raise Exit(False, unbound.code if unbound.code is not None or self.program != "dash" else 2) from None
        except ReadOnly as error:
            # sh ends on it, whatever '||' or 'if' say; bash fails the command (export, unset, local, read, for)
            # and goes on.
            if self.program != "bash":
                self.note(ctx, "fails", f"{error.name} is read-only: sh ends here")
                raise Exit(False) from None
            self.note(ctx, "fails", f"{error.name} is read-only: the command fails")
            return False
        finally:
            if self.bash_forms:
                forms, self.bash_forms = ", ".join(dict.fromkeys(self.bash_forms)), []
                self.note(ctx, "assumed", f"the base image's sh decides: bash expands {forms}, dash says \"Bad "
                                          "substitution\" and ends; the reader expands it as bash does")

    def _command(self, command: Command, ctx: CommandContext) -> bool | None:
        node = command.node
        if isinstance(node, Simple):
            from .shell_commands import run_simple
            status = run_simple(self, node, ctx)
            self.body_failed = False  # a function's status is the call's: set -e applies to it
            return status
        if command.redirects:
            from .shell_commands import RedirectFailed, apply_redirects, stdout_redirected
            try:
                given = apply_redirects(self, command.redirects, ctx)
            except RedirectFailed:
                # sh does not run the command whose file it cannot open: status 2 in dash, 1 in bash
                self.ended_with(2 if self.program == "dash" else 1)
                return False
            saved_input, saved_output = self.input, self.output
            if given is not None:  # 'while read f; do ...; done <<EOF': each read takes a line of it
                self.input = Input.of(given)
            if stdout_redirected(command.redirects):
                self.output = None  # '{ ...; } >&2' or '> FILE': a $(...) around it hears nothing of the body
            try:
                return self._body_status(command, ctx)
            finally:
                self.output = saved_output
                if given is not None:
                    self.input = saved_input
        return self._body_status(command, ctx)

    def _body_status(self, command: Command, ctx: CommandContext) -> bool | None:
        """Run a compound command; where its status is its body's, say so for set -e (``body_failed``)."""
        status = self._compound(command, ctx)
        node = command.node
        self.body_failed = isinstance(node, (If, For, Loop, Case, ArithmeticFor)) or \
            isinstance(node, Group) and not node.subshell
        return status

    def _compound(self, command: Command, ctx: CommandContext) -> bool | None:
        node = command.node
        if isinstance(node, FunctionDef):
            self.functions[node.name] = node.body
            return True
        if isinstance(node, If):
            return self._if(node, ctx)
        if isinstance(node, For):
            return self._for(node, ctx)
        if isinstance(node, Loop):
            return self._loop(node, ctx)
        if isinstance(node, Arithmetic):
            return self.arithmetic(node.expression)
        if isinstance(node, ArithmeticFor):
            return self._arithmetic_for(node, ctx)
        if isinstance(node, Case):
            return self._case(node, ctx)
        if isinstance(node, Conditional):
            from .bash_conditional import conditional
            return conditional(self, node)
        if isinstance(node, Group):
            if node.subshell:
                child = self.subshell()
                try:
                    status = child.main(node.body, ctx.tail)
                    self.ended_with(child.last_code)
                    return status
                except Exit as end:
                    self.ended_with(end.code)
                    return end.status
                except NoMatch:
                    return False  # bash's failglob ends the subshell, which fails
            return self.run(node.body, ctx.tail)
        raise AssertionError(f"unknown node {node!r}")  # pragma: no cover - the parser makes no other

    def condition(self, sequence: Sequence) -> bool | None:
        """Run a test list (``if``/``while`` conditions): set -e does not apply inside."""
        status: bool | None = True
        for item in sequence.items:
            pipes = [item.first, *(p for _, p in item.rest)]
            hides = and_or_hides(pipes, [op for op, _ in item.rest])
            status = self.pipeline(pipes[0], hides[0], exempt=True, tail=False)
            for index, (op, pipe) in enumerate(item.rest, 1):
                if (status is not False) if op == "&&" else (status is not True):
                    result = self.pipeline(pipe, hides[index], exempt=True, tail=False)
                    status = result if status is not None else None
        return status

    def _if(self, node: If, ctx: CommandContext) -> bool | None:
        for index, (condition, body) in enumerate(node.branches):
            status = self.condition(condition)
            if status is True:
                return self.run(body, ctx.tail)
            if status is None:
                # The image decides: follow this branch, then what would run otherwise.
                test = condition.items[0].first.commands[0] if condition.items else None
                if test is not None:
                    self.note(CommandContext(test.line, test.text), "assumed",
                              "the base image decides whether this holds: the reader follows the branch for "
                              "'yes', then the one for 'no'")
                first = body.items[0].first.commands[0] if body.items else None
                failed = self.last_code if self.last_code else None  # the condition's number, where known
                if first is not None:
                    self.last_status, self.last_code = True, 0  # $? in the branch for 'yes'
                    self.either(lambda: self.run(body, ctx.tail), first)
                # In what runs for 'no', $? is the condition's failure, not what the branch for 'yes' left.
                self.last_status, self.last_code = False, failed
                rest = If(node.branches[index + 1:], node.orelse, node.line, node.text)
                otherwise = rest.orelse.items[0].first.commands[0] if rest.orelse and rest.orelse.items else None
                if rest.branches or otherwise is not None:
                    self.either(lambda: self._if(rest, ctx), otherwise or rest.branches[0][0].items[0].first.commands[0])
                return None
        if node.orelse is not None:
            return self.run(node.orelse, ctx.tail)
        return True

    def _for(self, node: For, ctx: CommandContext) -> bool | None:
        values = self.positional if node.words is None else [
            text for word in node.words for text in self.glob(self.expand_word(word), ctx)]
        status: bool | None = True  # a loop that never turns succeeds
        for value in values:
            self.assign(node.name, value)
            try:
                status = self.in_loop(node.body)
            except _Loop as signal:
                status = True  # the loop's status is that of its last command: break or continue, which succeed
                if signal.reached() == "break":
                    break
        return status

    def in_loop(self, body: Sequence) -> bool | None:
        """Run a loop's body: inside it, break and continue reach one loop more."""
        return self._one_loop_deeper(lambda: self.run(body, False))

    def _one_loop_deeper(self, run: Callable[[], bool | None]) -> bool | None:
        self.loops += 1
        try:
            return run()
        finally:
            self.loops -= 1

    def _loop(self, node: Loop, ctx: CommandContext) -> bool | None:
        return self._turns(lambda: self.condition(node.condition), node.until, node.body, lambda: None, ctx)

    def _arithmetic_for(self, node: ArithmeticFor, ctx: CommandContext) -> bool | None:
        """``for ((INIT; CONDITION; STEP))``: an empty CONDITION holds."""
        if node.init.strip():
            self.arithmetic(node.init)
        return self._turns(lambda: self.arithmetic(node.condition) if node.condition.strip() else True, False,
                           node.body, lambda: self.arithmetic(node.step), ctx)

    def _turns(self, holds: Callable[[], bool | None], until: bool, body: Sequence, step: Callable[[], object],
               ctx: CommandContext) -> bool | None:
        """Run BODY while ``holds()`` (until it, for ``until``), then ``step()``, after each turn."""
        last: bool | None = True  # the status of the body's last run; a loop whose body never runs succeeds
        for turn in range(MAX_ITERATIONS + 1):  # the last check only: a loop of exactly the limit ends there
            try:
                # The condition is inside its loop (bash, dash): 'while break' leaves this loop, not the one
                # around it, and 'continue' there checks the condition again.
                status = self._one_loop_deeper(holds)
            except _Loop as signal:
                if signal.reached() == "break":
                    return True
                continue
            if status is not None and status == until:
                return last
            if turn == MAX_ITERATIONS:
                break
            try:
                last = self.in_loop(body)
            except _Loop as signal:
                last = True  # break and continue succeed
                if signal.reached() == "break":
                    return True
            if status is None:
                return None  # how often it turns depends on the image: its body is read once
            step()
        self.stop(ctx, f"a loop turns more than {MAX_ITERATIONS:,} times; the reader stops here")
        return None

    def arithmetic(self, expression: str) -> bool | None:
        """bash's ``((EXPRESSION))``: its assignments made; it succeeds when the value is not 0."""
        def assign(name: str, value: int | None) -> None:
            self.assign(name, str(value) if value is not None else self.unknowns.mark(f"${name}"))

        value = run_arithmetic(expression, lambda name: variable_text(name, self), assign)
        return None if value is None else value != 0

    def _case(self, node: Case, ctx: CommandContext) -> bool | None:
        subject = self.expand_one(node.subject)
        status: bool | None = True
        falling = False  # the item before ended ';&': this body runs without its patterns being tried
        for patterns, body, ending in node.items:
            if not falling:
                # A pattern's quoted characters match as written ('"*")' only a star), its others as a pattern.
                regexes = [pattern_regex(p, self, len(subject)) for p in patterns] if is_known(subject) else [None]
                if not all(regexes):
                    self.note(CommandContext(node.line, node.text), "assumed",
                              "the base image decides which branch runs: the reader reads every one")
                    first = body.items[0].first.commands[0] if body.items else None
                    if first is not None:
                        self.either(lambda body=body: self.run(body, ctx.tail), first)  # type: ignore[misc]
                    continue
                if not any(regex.fullmatch(subject) for regex in regexes if regex):
                    continue
            status = self.run(body, ctx.tail)
            if ending == ";;":
                return status
            falling = ending == ";&"
        return status

    def glob(self, fields: list[Field], ctx: CommandContext) -> list[str]:
        """Pathname expansion against what the build placed; a pattern that matches nothing stays as written."""
        out: list[str] = []
        for item in fields:
            if item.glob is None or not is_known(item.text) or self.noglob:
                out.append(item.text)
                continue
            self.build.globbed += len(self.build.fs.files) + len(self.build.fs.dirs) + len(self.build.fs.others)
            if self.build.globbed > MAX_GLOBBED:
                self.stop(ctx, f"the build's patterns look at more than {MAX_GLOBBED:,} paths; the reader stops "
                               "here")
            # The folders before the first component with a wildcard are taken as written (./, ../, /w/s/);
            # each match is spelled with them, as sh spells it.
            parts = item.text.split("/")
            wild = next(i for i, part in enumerate(parts) if any(c in part for c in "*?["))
            prefix = "/".join(parts[:wild]) + "/" if wild else ""
            base = normalise(posixpath.join(self.cwd, prefix)).rstrip("/") + "/"
            pattern = item.globstar if item.globstar is not None and "globstar" in self.shopts else item.glob
            matches = []
            for name in self.build.fs.unsorted_names():
                if not name.startswith(base):
                    continue
                rest = name[len(base):]
                # A leading '.' is matched only by a leading '.' of the pattern (bash's dotglob: by any, but
                # never '.' and '..' themselves).
                hidden = any(n.startswith(".") and not p.startswith(".") and ("dotglob" not in self.shopts or
                                                                                n in (".", ".."))
                             for n, p in zip(rest.split("/"), parts[wild:]))
                if pattern is item.globstar and "dotglob" not in self.shopts:
                    # The folders '**' walks through are not aligned with the pattern's components: a hidden
                    # one is matched only by a pattern component that starts with '.' itself.
                    hidden = hidden or any(n.startswith(".") for n in rest.split("/")) and not any(
                        p.startswith(".") for p in parts[wild:])
                if rest and not hidden and pattern.fullmatch(prefix + rest):
                    matches.append(prefix + rest)
            if not matches and "failglob" in self.shopts:
                self.note(ctx, "fails", f"no file matches {self.show(item.text)}, and bash's failglob is set: bash "
                                        "drops the whole command")
                raise NoMatch(item.text)
            out.extend(sorted(set(matches)) or ([] if "nullglob" in self.shopts else [item.text]))
        return out

    def change_directory(self, target: str, ctx: CommandContext, physical: bool = False) -> bool:
        """``cd``: into a folder that is not there, the rest of the script is unknown (unless a test handles it).

        As bash and dash do by default (``-L``), ``..`` drops the name before it, link or not, and ``$PWD`` keeps
        the links it went through; ``-P`` goes where the links lead, and ``$PWD`` names that folder.
        """
        if not is_known(target):
            if ctx.exempt:
                # Taken to succeed (a test of it reads on), into a folder the reader cannot name: from here what a
                # relative path names is unknown, not the old folder's.
                self.oldpwd, self.lost = self._left(), (ctx, self.show(target))
                return True
            self.stop(ctx, f"cd into {self.show(target)}, which the reader cannot work out: the rest of "
                           f"{self._what()} is not read")
        joined = self.path(target, keep_slash=True)
        path = self.build.fs.resolve(self.build.fs.physical(joined)) if physical else normalise(joined)
        kind = self.build.fs.kind(path)
        if kind in (Kind.ABSENT, Kind.FILE):
            if ctx.exempt:
                return False
            self.stop(ctx, f"cd into {path}, which is not a folder at this point of the build: the rest of "
                           f"{self._what()} is not read")
        self.enter(path)
        return True

    def _what(self) -> str:
        return f"this RUN (Dockerfile line {self.run_line})" if self.dockerfile else self.file

    def call(self, body: Command, args: list[str], ctx: CommandContext) -> bool | None:
        """Run a shell function with ``args`` as its positional parameters."""
        if self.depth >= MAX_DEPTH:
            self.unread(ctx, f"calls nest more than {MAX_DEPTH} deep; the reader does not follow this one")
            return None
        saved, options, loops, unknown = self.positional, self.getopts_at, self.loops, self.positional_unknown
        self.positional, self.loops = args, 0  # a function's break reaches no loop of its caller (bash, dash)
        self.positional_unknown = False
        if self.program == "dash":
            # dash keeps getopts' place with the positional parameters: a function's loop starts at its first
            # argument whatever OPTIND says, and the caller's place comes back when it returns.
            self.getopts_at = (self.lookup("OPTIND") or "1", 0, 1)
        self.depth += 1
        self.frames.append({})
        try:
            status = self.command(body, ctx)
            self.ended_with(self.last_code)  # a function's status is its last command's
            return status
        except _Return as back:
            self.ended_with(back.code)
            return back.status
        finally:
            self.positional, self.loops, self.positional_unknown = saved, loops, unknown
            if self.program == "dash":
                self.getopts_at = options
            self.depth -= 1
            self._restore(self.frames.pop())
            if self.namerefs:  # a local -n ends with its function
                self.namerefs = {k: v for k, v in self.namerefs.items() if v[1] <= len(self.frames)}

    def make_local(self, name: str) -> None:
        """``local NAME`` in the running function: what NAME holds now comes back when the function returns."""
        if self.frames and name not in self.frames[-1]:
            held = self.arrays.pop(name, None)  # inside, NAME is a variable of its own until an array is made
            self.frames[-1][name] = (self.variables.get(name), name in self.exported, name in self.unset, held)

    def _restore(self, frame: dict[str, tuple[str | None, bool, bool, list[str] | None]]) -> None:
        for name, (value, exported, unset, held) in frame.items():
            if value is None:
                self.variables.pop(name, None)
            else:
                self.variables[name] = value
            if held is None:
                self.arrays.pop(name, None)
            else:
                self.arrays[name] = held
            (self.exported.add if exported else self.exported.discard)(name)
            (self.unset.add if unset else self.unset.discard)(name)
            # A local cannot be made of a read-only name: one read-only now was made so in the function (local
            # -r, readonly), and goes with it.
            self.readonly.discard(name)

    def run_text(self, text: str, line: int, ctx: CommandContext, main: bool = False) -> bool | None:
        """Run shell text in this shell (``eval``, a sourced file read in place; ``main``: as its whole program)."""
        try:
            # the lines before an error run
            program, error = parse_runnable(text, line, bash=self.program == "bash", dash=self.program == "dash")
        except RecursionError:
            self.stop(ctx, f"nests too deeply to be read: the rest of {self._what()} is not read")
            return None
        try:
            status = self.main(program, ctx.tail) if main else self.run(program, ctx.tail)
        except RecursionError:
            self.stop(ctx, f"nests too deeply to be read: the rest of {self._what()} is not read")
            return None
        if error is not None:
            self.stop(ctx, f"cannot be parsed as shell ({error.message}, line {error.line}): the rest of "
                           f"{self._what()} is not read")
        return status


def _harmless(pipe: Pipeline) -> bool:
    """Whether ``pipe`` only prints or does nothing (``|| true``, ``|| echo "no GPU"``): running it or not changes
    no file and no variable."""
    return all(isinstance(c.node, Simple) and c.node.words and not c.node.assignments and not c.node.redirects
               and not c.redirects and plain_text(c.node.words[0]) in ("true", ":", "echo", "printf")
               and all(isinstance(part, Lit) for word in c.node.words for part in word) for c in pipe.commands)


def _clip(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shebang(text: str) -> tuple[str, list[str]] | None:
    """The interpreter a script's ``#!`` line names (``env`` looked through) and its arguments."""
    first = text.split("\n", 1)[0].rstrip("\r")  # the kernel looks at the first two bytes: a BOM hides it
    if not first.startswith("#!"):
        return None
    words = first[2:].split()
    if not words:
        return None
    if posixpath.basename(words[0]) == "env":
        words = words[1:]
        while words and words[0].startswith("-"):  # env -S, env -i, env -u NAME
            words = words[2:] if words[0] == "-u" else words[1:]
        if not words:
            return None
    return words[0], words[1:]
