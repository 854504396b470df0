"""The builtins that change the shell's state: the directory stack, options, variables, functions, the flow.

``cd``/``pushd``/``popd``/``dirs``, ``set``/``shopt``, ``export``/``local``/``unset``,
``exit``/``return``/``break``/``shift``, ``.``/``source``/``eval``, ``let``, ``read``, ``mapfile``, ``getopts``.
Each takes (shell, argv, context, env, stdin) and returns the status: True, False, or None (unknown).
"""

from __future__ import annotations

import re
from typing import Callable

from .command_lookup import note_program, on_path
from .image_fs import Kind
from .shell_getopts import getopts
from .shell_interpreter import Shell
from .shell_lexer import NAME
from .shell_nodes import decimal, exit_status
from .shell_records import MAX_DEPTH, CommandContext, Exit, ReadOnly, Trap, _Loop, _Return
from .shell_words import ifs_separator, is_known

Builtin = Callable[[Shell, list[str], CommandContext, dict[str, str], "str | None"], "bool | None"]


def _cd(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    args = argv[1:]
    physical = False
    while args and args[0][:1] == "-" and args[0] != "-":  # cd [-L|-P [-e]] [-@] [--] DIR
        if args[0] == "--":
            args = args[1:]
            break
        # bash 5.2 on Linux takes -L, -P and -e (its -@ needs extended attributes Linux's build lacks); dash 0.5.12
        # -L and -P only.
        if not set(args[0][1:]) <= set("LP" if shell.program == "dash" else "LPe"):
            shell.note(ctx, "fails", f"cd has no option {args[0]}: it fails and the directory does not change")
            shell.ended_with(2)
            return False  # bash: "invalid option", dash: "Illegal option"; both fail with status 2
        for letter in args[0][1:]:  # the last of -L and -P counts
            physical = {"P": True, "L": False}.get(letter, physical)
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
    return shell.change_directory(target, ctx, physical)


def _pushd(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    args = [a for a in argv[1:] if a != "-n"]
    if args[:1] == ["--"]:
        args = args[1:]
    if args and args[0][:1] in "+-" and args[0][1:].isdigit():
        shell.unread(ctx, "rotates the directory stack, which the reader does not follow")
        return None
    previous = shell.here()  # the folder it keeps on the stack: where the reader cannot name it, it stops
    if not args:
        if not shell.stack:
            shell.note(ctx, "fails", "pushd: no other directory")
            return False
        shell.cwd, shell.stack[-1] = shell.stack[-1], previous
        shell.oldpwd = previous
        shell.emit_unknown()  # it prints the stack, as pushd DIR does
        return True
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
    shell.enter(shell.stack.pop())  # back in a folder the reader knows
    shell.emit_unknown()
    return True


def _dirs(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    if "-c" in argv[1:]:
        shell.stack.clear()
        return True  # dirs -c prints nothing
    if shell.lost is not None:
        shell.emit_unknown()
        return True
    shell.emit(" ".join([shell.cwd, *reversed(shell.stack)]) + "\n")
    return True


def _set(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    args = argv[1:]
    index = 0
    while index < len(args):
        word = args[index]
        if word == "--":
            _set_arguments(shell, args[index + 1:])
            return True
        if word in ("-o", "+o"):
            if index + 1 < len(args):
                if not _option_known(shell, args[index + 1], ctx):
                    return False
                _set_option(shell, args[index + 1], word == "-o", ctx)
            index += 2
            continue
        if word[:1] in "-+" and len(word) > 1:
            letters = word[1:]
            if not _letters_known(shell, word, ctx):
                return False
            if "e" in letters:
                shell.set_errexit(word[0] == "-")
            if "f" in letters:
                shell.noglob = word[0] == "-"
            if "u" in letters:
                shell.nounset = word[0] == "-"
            if "E" in letters and shell.program == "bash":
                shell.errtrace = word[0] == "-"
            if "a" in letters:
                shell.allexport = word[0] == "-"
            if "C" in letters:
                shell.noclobber = word[0] == "-"
            if "o" in letters and index + 1 < len(args):
                if not _option_known(shell, args[index + 1], ctx):
                    return False
                _set_option(shell, args[index + 1], word[0] == "-", ctx)
                index += 2
                continue
            index += 1
            continue
        _set_arguments(shell, args[index:])
        return True
    return True


def _set_arguments(shell: Shell, arguments: list[str]) -> None:
    """``set [--] ARG...`` replaces the positional parameters (bash marks that it did, outside a function)."""
    shell.positional, shell.positional_unknown = arguments, False
    shell.positional_set = shell.positional_set or not shell.frames


def _shopt(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """bash's ``shopt -s|-u NAME...``: the options that change what a pattern gives (nullglob, failglob, dotglob,
    globstar) and whether ``$(...)`` keeps set -e (inherit_errexit)."""
    if shell.program == "sh":
        # Only bash has shopt: under the base image's sh, dash fails the command and bash runs it.
        shell.unread(ctx, "shopt is bash's: under the base image's sh it may fail or change how patterns match")
        return None
    words = argv[1:]
    if shell.program != "bash":
        return note_program(shell, ctx, argv[0])
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
        return all(n in shell.shopts for n in names) if "o" not in letters and set(names) <= _FOLLOWED else None
    mode = letters.replace("q", "")
    if mode not in ("s", "u"):
        shell.unread(ctx, f"shopt {' '.join(words)}, which the reader does not follow")
        return None
    status = True
    for name in names:
        if is_known(name) and name not in BASH_SHOPTS:
            # bash 5.2: "shopt: NAME: invalid shell option name"; the others are set, the command fails (status 1).
            shell.note(ctx, "fails", f"shopt -{mode} {name}: bash has no such option; the command fails")
            shell.ended_with(1)
            status = False
        elif name in _FOLLOWED:
            (shell.shopts.add if mode == "s" else shell.shopts.discard)(name)
        elif name not in _HARMLESS_SHOPTS:
            shell.unread(ctx, f"shopt -{mode} {name}, which the reader does not follow")
    return status


# The shopt options the reader follows (what a pattern gives; whether $(...) keeps set -e; whether aliases
# are expanded), and those that change nothing it reads. nocasematch ('case' then matches in any case)
# changes what runs, so it is neither.
_FOLLOWED = frozenset({"nullglob", "failglob", "dotglob", "globstar", "inherit_errexit", "expand_aliases"})
_HARMLESS_SHOPTS = frozenset({"checkwinsize", "histappend", "cmdhist", "lithist", "progcomp", "promptvars",
                              "huponexit", "checkhash", "sourcepath", "extquote", "interactive_comments",
                              "login_shell", "mailwarn"})


# The names 'set -o' takes (bash 5.2's and dash 0.5.12's 'set -o' lists) and those of bash's shopt.
BASH_SET_OPTIONS = frozenset({
    "allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall", "histexpand", "history",
    "ignoreeof", "interactive-comments", "keyword", "monitor", "noclobber", "noexec", "noglob", "nolog", "notify",
    "nounset", "onecmd", "physical", "pipefail", "posix", "privileged", "verbose", "vi", "xtrace"})
DASH_SET_OPTIONS = frozenset({
    "errexit", "noglob", "ignoreeof", "interactive", "monitor", "noexec", "stdin", "xtrace", "verbose", "vi",
    "emacs", "noclobber", "allexport", "notify", "nounset", "privileged", "nolog", "debug",
    "pipefail"})  # dash 0.5.12 refuses pipefail, 0.5.13 takes it: set_pipefail says so
BASH_SHOPTS = frozenset({
    "autocd", "assoc_expand_once", "cdable_vars", "cdspell", "checkhash", "checkjobs", "checkwinsize", "cmdhist",
    "compat31", "compat32", "compat40", "compat41", "compat42", "compat43", "compat44", "complete_fullquote",
    "direxpand", "dirspell", "dotglob", "execfail", "expand_aliases", "extdebug", "extglob", "extquote",
    "failglob", "force_fignore", "globasciiranges", "globskipdots", "globstar", "gnu_errfmt", "histappend",
    "histreedit", "histverify", "hostcomplete", "huponexit", "inherit_errexit", "interactive_comments",
    "lastpipe", "lithist", "localvar_inherit", "localvar_unset", "login_shell", "mailwarn",
    "no_empty_cmd_completion", "nocaseglob", "nocasematch", "noexpand_translation", "nullglob",
    "patsub_replacement", "progcomp", "progcomp_alias", "promptvars", "restricted_shell", "shift_verbose",
    "sourcepath", "varredir_close", "xpg_echo"})


# The letters 'set' takes (bash 5.2's and dash 0.5.12's, each tried), besides -o.
_SET_LETTERS = {"bash": frozenset("abefhkmnprtuvxBCEHPTo"), "dash": frozenset("abefimnpsuvxCEIVo")}


def _letters_known(shell: Shell, word: str, ctx: CommandContext) -> bool:
    """Whether each letter of ``set -LETTERS`` is one of the shell's (none of the cluster is set where one is not).
    Under sh, only a letter neither bash nor dash has is refused."""
    known = _SET_LETTERS.get(shell.program, _SET_LETTERS["bash"] | _SET_LETTERS["dash"])
    bad = [letter for letter in word[1:] if letter not in known]
    return not bad or _set_refuses(shell, ctx, f"{word} (-{bad[0]})")


def _option_known(shell: Shell, name: str, ctx: CommandContext) -> bool:
    """Whether ``set -o NAME`` names an option of the shell. Under sh, only a name neither bash nor dash has is
    refused; a name only one has is left as the reader finds it."""
    valid = BASH_SET_OPTIONS if shell.program == "bash" else DASH_SET_OPTIONS if shell.program == "dash" else \
        BASH_SET_OPTIONS | DASH_SET_OPTIONS
    return not is_known(name) or name in valid or _set_refuses(shell, ctx, f"-o {name}")


def _set_refuses(shell: Shell, ctx: CommandContext, what: str) -> bool:
    """``set WHAT`` names an option the shell does not have: dash ends the script ("Illegal option", status 2);
    bash fails the command (status 2), sets nothing of it and reads on. bash in POSIX mode (set -o posix,
    bash --posix) ends the script too (status 2), but only where set -e would: where the status is tested
    (``set -Z || ...``, ``if set -Z``, ``!``, a function called so) it fails the command and reads on. Under
    sh, which of the two is the base image's. Through ``command`` every shell fails it and reads on. Returns
    False, the command's status."""
    if ctx.through_command:
        return _fails_through_command(shell, ctx, f"set {what}: no shell has that option")
    if shell.program == "sh":
        shell.unread(ctx, f"set {what}: neither bash nor dash has that option; under the base image's sh dash ends "
                          "the script, bash fails the command")
    elif shell.program == "dash":
        shell.note(ctx, "fails", f"set {what}: dash has no such option and ends the script")
        raise Exit(False, 2)
    elif _ends_in_posix_mode(shell, ctx):
        shell.note(ctx, "fails", f"set {what}: bash has no such option, and in POSIX mode it ends the script "
                                 "(status 2) where the status is not tested")
        raise Exit(False, 2)
    else:
        shell.note(ctx, "fails", f"set {what}: bash has no such option; the command fails (status 2)")
    shell.ended_with(2)
    return False


def _fails_through_command(shell: Shell, ctx: CommandContext, what: str) -> bool:
    """A special builtin's error, run through ``command``: the command fails (status 2) and the script reads on,
    where without ``command`` dash (or bash in POSIX mode) would end it. Checked with bash 5.2 and dash 0.5.12."""
    shell.note(ctx, "fails", f"{what}: through 'command' it fails (status 2) and the script reads on")
    shell.ended_with(2)
    return False


def _ends_in_posix_mode(shell: Shell, ctx: CommandContext) -> bool:
    """Whether a special builtin's usage error (an option it lacks: ``set -Z``, ``export -Z``, ``readonly -Z``)
    ends the script: bash in POSIX mode (set -o posix, bash --posix) ends it (status 2) where set -e would end
    it, not where the status is tested (``|| ...``, ``if``, ``!``, a function called so). Checked with bash
    5.2.15."""
    return shell.posix and not ctx.exempt and not shell.ignoring_errexit and not ctx.through_command


def _set_option(shell: Shell, name: str, on: bool, ctx: CommandContext) -> None:
    """``set -o NAME`` / ``set +o NAME`` for the options the reading depends on."""
    if name == "errexit":
        shell.set_errexit(on)
    elif name == "noglob":
        shell.noglob = on
    elif name == "nounset":
        shell.nounset = on
    elif name == "pipefail":
        shell.set_pipefail(on, ctx)
    elif name == "posix" and shell.program == "bash":
        shell.posix = on
    elif name == "errtrace" and shell.program == "bash":
        shell.errtrace = on
    elif name == "allexport":
        shell.allexport = on
    elif name == "noclobber":
        shell.noclobber = on


def _export(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``export``, ``readonly``, ``declare``/``typeset`` (``-r``: read-only, ``-x``: exported) NAME[=VALUE]...

    Options are the leading words that start with ``-`` (and ``+`` for declare), up to ``--``. bash refuses a
    letter its builtin lacks (status 2, nothing set) and fails a later word that is no name (status 1, the rest
    set). dash's export and readonly read one option letter: ``-p`` prints and sets nothing, any other ends the
    script, as does a word that is no name. Checked with bash 5.2 and dash 0.5.12.
    """
    declaring = argv[0] in ("declare", "typeset")
    words, lead = _leading_options(argv[1:], "-+" if declaring else "-")
    options = "".join(word[1:] for word in lead if word[0] == "-")
    removed = "".join(word[1:] for word in lead if word[0] == "+")
    if not declaring and shell.program != "bash":
        dash_prints = options[:1] == "p"
        if shell.program == "dash" and options and not dash_prints:
            if ctx.through_command:
                return _fails_through_command(shell, ctx, f"dash's {argv[0]} takes no option but -p: "
                                                          f"'-{options[0]}' is refused")
            shell.note(ctx, "fails", f"dash's {argv[0]} takes no option but -p: '-{options[0]}' is refused, and the "
                                     "script ends there")
            raise Exit(False, 2)
        if shell.program == "dash" and dash_prints:
            return True  # it prints the variables, and nothing after -p is read
        if options.strip("p") or dash_prints and words:
            shell.note(ctx, "assumed", f"under the base image's sh: dash's {argv[0]} takes no option but -p and ends "
                                       "the script here, bash's reads them; the reader reads on as bash does")
    bad = sorted(set(options + removed) - set(_OPTIONS[argv[0]]))
    if bad and shell.program != "dash":
        if not declaring and _ends_in_posix_mode(shell, ctx):  # declare and typeset are no special builtins
            shell.note(ctx, "fails", f"bash's {argv[0]} has no option -{bad[0]}, and in POSIX mode it ends the "
                                     "script (status 2) where the status is not tested")
            raise Exit(False, 2)
        shell.note(ctx, "fails", f"bash's {argv[0]} has no option -{bad[0]}: it fails (status 2) and sets nothing")
        shell.ended_with(2)
        return False
    if "f" in options:
        return True  # of functions: 'readonly -f f', 'export -f f'
    if "n" in options and declaring:
        return _nameref(shell, argv, ctx)
    status = True
    for word in words:
        name, equals, value = word.partition("=")
        if equals and name.endswith("+") and shell.program != "dash" and _NAMED.fullmatch(name[:-1]):
            name, value = name[:-1], shell.appended(name[:-1], value)  # bash's 'export PATH+=:/opt/bin'
        if not (NAME if shell.program == "dash" else _NAMED).fullmatch(name):
            if shell.program == "dash":
                if ctx.through_command:  # the names after it are not set either
                    return _fails_through_command(shell, ctx, f"{argv[0]} {word}: a bad variable name")
                shell.note(ctx, "fails", f"{argv[0]} {word}: a bad variable name; dash ends the script there")
                raise Exit(False, 2)
            shell.note(ctx, "fails", f"{argv[0]} {word}: not a valid identifier; bash fails it (status 1) and sets "
                                     "the other names")
            status = False
            continue
        if equals:
            shell.assign(name, value)
        if argv[0] == "export" and "n" in options or "x" in removed:
            shell.exported.discard(name)  # bash's export -n, declare +x: no longer passed to children
        elif argv[0] == "export" or "x" in options and argv[0] != "readonly":
            shell.exported.add(name)
        if argv[0] == "readonly" or "r" in options and argv[0] in ("declare", "typeset"):
            shell.readonly.add(name)
    return status


_NAMED = re.compile(rf"{NAME.pattern}(\[.*\])?", re.DOTALL)  # bash also sets an array's element: 'declare A[1]=x'

# The option letters bash 5.2's builtins take without "invalid option" (tried one by one: more than 'help' lists).
_OPTIONS = {"export": "afnpA", "readonly": "afnpA", "declare": "acfgilnprtuxAFGI", "typeset": "acfgilnprtuxAFGI"}


def _leading_options(words: list[str], signs: str) -> tuple[list[str], list[str]]:
    """The words after a builtin's options, and its option words: those before the first that is not one
    (a lone sign is not one) or after ``--``."""
    lead: list[str] = []
    while words and words[0][:1] in signs and len(words[0]) > 1:
        if words[0] == "--":
            return words[1:], lead
        lead.append(words[0])
        words = words[1:]
    return words, lead


def _nameref(shell: Shell, argv: list[str], ctx: CommandContext) -> bool | None:
    """bash's ``declare -n REF=NAME`` (``local -n`` in a function): REF stands for NAME from here on."""
    if shell.program != "bash":
        shell.unread(ctx, f"{argv[0]} -n is bash's: under the base image's sh it may not exist")
        return None
    for word in argv[1:]:
        name, equals, target = word.partition("=")
        if word.startswith("-") or not equals:
            continue
        if not NAME.fullmatch(target):
            shell.unread(ctx, f"{name} is a nameref to {shell.show(target)}, which the reader does not follow")
            shell.assign(name, shell.unknowns.mark(f"${name}"))
            continue
        shell.namerefs[name] = (target, len(shell.frames))
    return True


def _local(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``local NAME[=VALUE]``: in a function, NAME is its own until it returns (functions it calls see it too).

    ``local NAME`` without a value: bash leaves NAME unset, dash keeps the
    value it had; under sh, which of them the image has decides. Outside a
    function bash fails it and dash ends the script.
    """
    if not shell.frames:
        # Outside a function: bash fails it ("can only be used in a function") and reads on; dash ends the script.
        if shell.program == "dash":
            shell.note(ctx, "fails", "local outside a function: dash ends the script here")
            raise Exit(False, 2)
        shell.note(ctx, "fails", "local outside a function assigns nothing: bash fails it (and dash, under sh, "
                                 "ends the script)" if shell.program == "sh" else
                   "local outside a function assigns nothing: bash fails it")
        return False
    options = "".join(word[1:] for word in argv[1:] if word.startswith("-"))
    if options and shell.program == "dash":
        # dash's local takes no options: '-r' is a bad variable name, an error of a special builtin.
        shell.note(ctx, "fails", f"dash's local takes no options: '{next(w for w in argv[1:] if w.startswith('-'))}' "
                                 "is a bad variable name, and the script ends there")
        raise Exit(False, 2)
    if options and shell.program == "sh":
        shell.note(ctx, "assumed", "under the base image's sh: dash's local takes no options and ends the script "
                                   "here, bash's reads them; the reader reads on as bash does")
    if "n" in options and shell.frames:
        return _nameref(shell, argv, ctx)
    for word in argv[1:]:
        if word.startswith("-"):
            continue
        name, equals, value = word.partition("=")
        if name in shell.readonly:
            raise ReadOnly(name)  # bash refuses a local of it too
        shell.make_local(name)
        if equals:
            shell.assign(name, value)
        elif shell.frames and shell.program == "bash":
            shell.variables.pop(name, None)
            shell.unset.add(name)
        elif shell.frames and shell.program == "sh" and shell.variables.get(name):
            shell.assign(name, shell.unknowns.mark(f"${name}"))
        if "r" in options:
            shell.readonly.add(name)  # until the function returns
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
        if only != "f" and name in shell.readonly:
            raise ReadOnly(name)
        if only != "f":
            shell.variables.pop(name, None)
            shell.arrays.pop(name, None)
            shell.unset.add(name)
        if only == "f" or (not only and not had_variable and shell.program != "dash"):
            shell.functions.pop(name, None)
    return True


def _exit(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    raise Exit(*_status(shell, argv))


def _return(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``return [N]`` leaves the function or sourced file; in a subshell of one, it ends the subshell. Outside
    both, bash fails it (status 2) and reads on, while dash ends the script (or the subshell) with that status,
    as ``exit`` would."""
    if (len(shell.frames), shell.sourcing) != shell.began_within:
        raise _Return(*_status(shell, argv))  # a function or sourced file began in this shell
    if shell.frames or shell.sourcing or shell.program == "dash":
        raise Exit(*_status(shell, argv))
    if shell.program == "sh":
        shell.note(ctx, "assumed", "return outside a function or sourced file: under the base image's sh, bash "
                                   "fails it and reads on, dash ends the script; the reader reads on as bash does")
    else:
        shell.note(ctx, "fails", "return outside a function or sourced file: bash fails it (status 2) and reads on")
    shell.ended_with(2)
    return False


def _status(shell: Shell, argv: list[str]) -> tuple[bool | None, int | None]:
    """The status ``exit [N]`` and ``return [N]`` give, and its number: with no N, the last command's."""
    if len(argv) < 2:
        return shell.last_status, shell.status_code()
    code = exit_status(argv[1])  # N modulo 256: 'exit 256' succeeds
    return (None, None) if code is None else (code == 0, code)


def _loop_control(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    if not shell.loops:
        return True  # outside a loop: bash says so and goes on, dash says nothing
    # 'break 9' in two loops leaves both: N past the loops around it stops at the outermost.
    count = min((decimal(argv[1]) if len(argv) > 1 else None) or 1, shell.loops)
    raise _Loop(argv[0], count)


def _shift(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    number = argv[1] if len(argv) > 1 else "1"
    count = decimal(number)
    if shell.positional_unknown:
        shell.positional = [shell.unknowns.mark("$@")]  # still unknown, but no longer those a '.' gave
        return None  # how many were left, and so whether it fails, is unknown
    if count is None or count > len(shell.positional):
        # Past the last argument, or not a number, bash fails the command and keeps the arguments; dash ends
        # the shell.
        reason = (f"shift {count} with {len(shell.positional)} arguments left" if count is not None
                  else f"shift {number}: not a number")
        if shell.program == "bash":
            shell.note(ctx, "fails", f"{reason}: bash fails the command and the arguments stay")
            return False
        if shell.program == "dash":
            if ctx.through_command:
                return _fails_through_command(shell, ctx, f"{reason}: the arguments stay")
            shell.note(ctx, "fails", f"{reason}: dash ends the shell here")
            raise Exit(False)
        shell.unread(ctx, f"{reason}: the base image's sh decides (dash ends the shell, bash fails the command)")
        return None
    shell.positional = shell.positional[count:]
    return True


def _source(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``. FILE`` / ``source FILE``: FILE's commands run in this shell.

    A FILE without a ``/`` is looked for on PATH; only bash (not as ``sh``)
    then tries the current folder. Under sh (dash, or bash as sh) a ``.``
    that finds nothing ends the script, a ``source`` fails and the script
    reads on; dash has no ``source`` at all.

    With no FILE (a ``--`` before the file ends the options, in both
    shells), bash fails the command ("filename argument required", status 2)
    and reads on, in POSIX mode too; dash's ``.`` does nothing and succeeds.

    Words after FILE are its positional parameters in bash; dash 0.5.12 ignores them (see ``_give_arguments``).
    """
    if argv[1:2] == ["--"]:
        argv = [argv[0], *argv[2:]]
    if argv[0] == "source" and shell.program == "dash":
        shell.note(ctx, "fails", f"dash has no 'source' command: the script reads on without {argv[1]}"
                   if len(argv) > 1 else "dash has no 'source' command: it fails and the script reads on")
        shell.ended_with(127)  # "source: not found"
        return False
    if len(argv) < 2:
        if shell.program == "bash":
            shell.note(ctx, "fails", f"{argv[0]} with no file: bash fails it (\"filename argument required\", "
                                     "status 2) and reads on")
            shell.ended_with(2)
            return False
        if shell.program == "sh" and argv[0] == "source":
            shell.note(ctx, "fails", "source with no file: under the base image's sh it fails (dash has no "
                                     "'source', bash wants a file); the script reads on")
            shell.ended_with(None)
            return False
        if shell.program == "sh":
            shell.unread(ctx, ". with no file: under the base image's sh dash does nothing and succeeds, bash fails "
                              "it (status 2)")
            return None
        return True  # dash's '.' with no file does nothing
    command, name = argv[0], argv[1]
    if "/" in name or not is_known(name):
        path = shell.path(name)
    else:
        found = on_path(shell, name)
        later = None if found else on_path(shell, name, past_unknown=True)
        if later is not None:
            shell.note(ctx, "assumed", f"{name} is taken to be {later}, which the build put on PATH (a folder of "
                                       "the base image's PATH, searched first, could hold another)")
            found = later
        elif found is None and shell.program == "bash":
            found = shell.path(name)  # bash, not as sh, tries the current folder after PATH
        if found is None:
            unless = f"unless the base image has a {name} on its PATH"
            if command == "." and not ctx.through_command:
                shell.note(ctx, "fails", f"sh looks for {name} on PATH only, not in the current folder: the script "
                                         f"stops here ({unless})")
                raise Exit(False)
            shell.note(ctx, "fails", f"sh looks for {name} on PATH only, not in the current folder: the script "
                                     f"reads on without it ({unless})")
            shell.ended_with(2 if shell.program == "dash" else 1)
            return False
        path = found
    if command == "source" and shell.program == "sh":
        shell.note(ctx, "assumed", f"the base image's sh decides: bash reads {name}, dash has no 'source' and reads "
                                   "on without it; the reader reads it")
    if path not in shell.build.fs.files and is_known(path) and shell.build.fs.kind(path) is Kind.ABSENT:
        # bash 5.2: "No such file or directory", status 1, and reads on (in POSIX mode it ends there); dash
        # 0.5.12: "cannot open", the script ends (status 2).
        if (shell.program == "dash" or shell.posix) and not ctx.through_command:
            shell.note(ctx, "fails", f"{command} {name}: {path} does not exist at this point of the build, and "
                                     f"{shell.program} ends the script")
            raise Exit(False, 2 if shell.program == "dash" else 1)
        shell.note(ctx, "fails", f"{command} {name}: {path} does not exist at this point of the build")
        if shell.program == "sh" and not ctx.through_command:
            shell.note(ctx, "assumed", "the base image's sh decides: dash ends the script there, bash reads on, as "
                                       "the reader does")
        shell.ended_with(2 if shell.program == "dash" else 1)
        return False
    if path not in shell.build.fs.files:
        shell.unread(ctx, f"reads {shell.show(argv[1])} into the shell, and that is not a file of the build context")
        return None
    source = shell.build.fs.files[path].source
    text = shell.build.read_context(source)
    if text is None or shell.depth >= MAX_DEPTH:
        shell.unread(ctx, f"reads {argv[1]} into the shell, which the reader cannot follow")
        return None
    saved_file, saved_dockerfile = shell.file, shell.dockerfile
    shell.file, shell.dockerfile = source, False
    # dash 0.5.12 ignores the arguments after the file ('source' under sh is read as bash's, as above).
    bash = shell.program == "bash" or shell.program == "sh" and command == "source"
    given = _give_arguments(shell, argv[2:], bash) if len(argv) > 2 and shell.program != "dash" else None
    shell.depth += 1
    shell.sourcing += 1
    try:
        return shell.run_text(text, 1, CommandContext(1, ""))
    except _Return as back:
        return back.status
    finally:
        shell.file, shell.dockerfile = saved_file, saved_dockerfile
        if given is not None:
            _take_arguments_back(shell, *given, bash)
        shell.depth -= 1
        shell.sourcing -= 1


def _give_arguments(shell: Shell, arguments: list[str], bash: bool) -> tuple[list[str], bool, list[str]]:
    """``. FILE ARGS``: bash gives FILE ARGS as its positional parameters, dash 0.5.12 the shell's own (it
    ignores ARGS): under sh they are unknown where the two differ. Returns what they were, whether they were
    unknown, and what FILE starts with (which tells whether FILE changed them)."""
    saved = (shell.positional, shell.positional_unknown)
    if bash or arguments == shell.positional and not shell.positional_unknown:
        shell.positional, shell.positional_unknown = list(arguments), False
    else:
        shell.positional, shell.positional_unknown = [shell.unknowns.mark("$@")], True
    shell.positional_set = False
    return saved[0], saved[1], shell.positional


def _take_arguments_back(shell: Shell, saved: list[str], unknown: bool, given: list[str], bash: bool) -> None:
    """After ``. FILE ARGS``: bash 5.2 puts back the positional parameters FILE began with, unless FILE replaced
    them with ``set`` outside any function (the dot too); dash keeps what FILE left of the shell's own. Under
    sh, unknown where the two differ. Checked with bash 5.2.15 and dash 0.5.12."""
    kept = shell.positional_set and not shell.frames
    shell.positional_set = False
    if kept:
        return  # bash keeps what 'set' made of them; dash, too, keeps what FILE left
    untouched = shell.positional is given  # FILE neither set nor shifted them: dash, too, has the shell's own
    if bash or untouched or (shell.positional, shell.positional_unknown) == (saved, unknown) and not unknown:
        shell.positional, shell.positional_unknown = saved, unknown
    else:
        shell.positional, shell.positional_unknown = [shell.unknowns.mark("$@")], True


def _let(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """bash's ``let EXPRESSION...``: each argument is a ``((EXPRESSION))``; the last one's value decides."""
    if len(argv) < 2:
        shell.note(ctx, "fails", "let: expression expected")
        return False
    status: bool | None = None
    for expression in argv[1:]:
        status = shell.arithmetic(expression) if is_known(expression) else None
    return status


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


def _read(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``read``: see ``_read_line``. A read-only NAME fails the command; read is no special builtin, so even dash
    goes on."""
    try:
        return _read_line(shell, argv, ctx, env, stdin)
    except ReadOnly as error:
        shell.note(ctx, "fails", f"{error.name} is read-only: read fails")
        return False


def _read_line(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``read [-ers] [-a ARRAY] [-p PROMPT] [-i TEXT] [NAME...]``: one line of standard input split by IFS, the
    rest of it to the last NAME (REPLY without one); with -a, all of its fields to ARRAY, and bash 5.2 leaves
    each NAME as it was (set, unset or read-only). Only a known input's line is known (a here-document's,
    here-string's or file's, the input of a loop or pipe around it, each read taking the next line); any other
    input, another option (-d, -n, -N, -t, -u) or a usage error gives unknown values. Options are read as
    ``_read_options`` says."""
    options, names, problem = _read_options(argv[1:])
    raw = any(letter == "r" for letter, _ in options)
    array = next((value for letter, value in reversed(options) if letter == "a"), None)
    # -d, -n, -N, -t, -u: how much it takes, or from where, is not followed; nor is an option only known at build
    # time. -p's prompt and -e/-i's line editing are for a terminal, which a build's read never has; -s neither.
    # A usage error (bash: "invalid option", "option requires an argument"; dash: "Illegal option", "No arg")
    # fails read with status 2 and assigns nothing; the reader leaves the names unknown (as
    # test_read_splits_known_input pins it).
    other = problem is not None or any(letter in "dnNtu?" for letter, _ in options)
    if shell.program != "bash" and any(letter not in "pr" for letter, _ in options):
        other = True  # dash fails at them (status 2); under the base image's sh, bash may read them instead
    feed = shell.input if stdin is None else None  # the input of a loop or a pipe around it
    start = 0
    if feed is not None:
        stdin, start = feed.text, feed.at
        if other:
            shell.input = None  # what it leaves of the input is unknown
    ifs = env.get("IFS", shell.lookup("IFS"))  # 'IFS=, read a b' splits at commas
    ifs = " \t\n" if ifs is None else ifs  # unset (or never set: sh takes no IFS from the environment)
    if other or stdin is None or ifs is None or feed is None and not is_known(stdin) or not is_known(ifs):
        # With -a ARRAY the NAMEs are never set: bash ignores them, dash fails at -a and sets nothing.
        for name in [] if array else names or ["REPLY"]:
            shell.assign(name, shell.unknowns.mark(f"$({' '.join(argv)})"))
        if array:
            shell.assign_array(array, None)
        return None
    found = (_RAW_LINE if raw else _LINE).match(stdin, start)
    assert found is not None  # each part may be empty
    line, newline = found.group(1), found.group(3)
    if feed is not None:
        feed.at = found.end()
    if not raw:
        line = re.sub(r"\\(.)", r"\1", line.replace("\\\n", ""), flags=re.DOTALL)
    if array:
        shell.assign_array(array, split_fields(line, ifs, None))
    elif not names:
        shell.assign("REPLY", line)
    else:
        for name, value in zip(names, split_fields(line, ifs, len(names)) + [""] * len(names)):
            shell.assign(name, value)
    return bool(newline)  # read fails at the end of input without a newline


def _read_options(words: list[str]) -> tuple[list[tuple[str, str]], list[str], str | None]:
    """``read``'s options as bash 5.2's getopts-style parser takes them ("ersa:d:i:n:p:t:u:N:"): letters may be
    clustered (``-rs``); one that takes a value takes the rest of its word (``-d,``, ``-rd,``) or else the next
    word (``-d ,``, ``-d ''``). Options end at ``--`` (dropped), ``-`` or the first word not starting with ``-``.

    Returns the (letter, value) pairs in order, the words after the options, and a usage error (an unknown
    letter; a value missing at the end) or None. A word only known at build time gives the letter ``?``.
    dash 0.5.12's read takes ``-p PROMPT`` and ``-r`` alike (and fails at the other letters).
    """
    options: list[tuple[str, str]] = []
    while words and words[0][:1] == "-" and len(words[0]) > 1:
        word, words = words[0], words[1:]
        if word == "--":
            break
        if not is_known(word):
            options.append(("?", word))
            continue
        at = 1
        while at < len(word):
            letter, at = word[at], at + 1
            if letter in "ers":
                options.append((letter, ""))
            elif letter not in "adinptuN":
                return options, words, f"-{letter}: no such option"
            elif at < len(word):
                options.append((letter, word[at:]))
                at = len(word)
            elif words:
                options.append((letter, words[0]))
                words = words[1:]
            else:
                return options, words, f"-{letter}: the option wants a value"
    return options, words, None


# One line of read's input; without -r a backslash escapes the next character, and a backslash-newline joins
# the next line.
_LINE = re.compile(r"((?:[^\\\n]|\\.)*)(\\?)(\n?)", re.DOTALL)
_RAW_LINE = re.compile(r"([^\n]*)()(\n?)")


def split_fields(line: str, ifs: str, count: int | None) -> list[str]:
    """``read``'s split of LINE by IFS into at most ``count`` fields, the last holding the rest of the line.

    IFS white space around fields is dropped and any run of it separates;
    another IFS character separates once, with the white space around it.
    """
    white = "".join(c for c in ifs if c in " \t\n")
    other = "".join(c for c in ifs if c not in " \t\n")
    line = line.strip(white)
    if not ifs:
        return [line] if line else []  # an empty IFS splits nothing
    separator = ifs_separator(ifs)
    fields: list[str] = []
    while line and (count is None or len(fields) < count - 1):
        found = separator.search(line)
        if found is None:
            break
        fields.append(line[:found.start()])
        line = line[found.end():]
    if line and other and count is not None:
        # The last field loses a delimiter that ends the line when it holds no other ('a,b,' gives b; 'b,,'
        # and 'b,c,' stay whole).
        # Found by stripping, not by a search for '[white]*[other][white]*$': that began again at each character
        # of a long run of white space (a line of a million spaces took minutes).
        kept = line.rstrip(white)
        if kept and kept[-1] in other:
            start = len(kept[:-1].rstrip(white))
            if not any(c in other for c in line[:start]):
                line = line[:start]
    if line:
        fields.append(line)
    return fields


def _mapfile(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """bash's ``mapfile``/``readarray [-t] [-d D] [-n N] [-O I] [-s N] [-u FD] [-C CB] [-c Q] [NAME]``: NAME
    (MAPFILE) holds the lines of its input: known where the input is (a here-document, a here-string, a pipe
    or loop around it) and the options are ``-t`` alone; else unknown."""
    args = argv[1:]
    index = 0
    strip, other = False, False
    while index < len(args) and args[index][:1] == "-" and args[index] != "-":
        if args[index] == "--":
            index += 1
            break
        takes_value = args[index][-1] in "dnOsuCc" and len(args[index]) == 2
        strip = strip or args[index] == "-t"
        other = other or args[index] != "-t"
        index += 2 if takes_value else 1
    name = args[index] if index < len(args) else "MAPFILE"
    if shell.program != "bash":
        shell.unread(ctx, f"{argv[0]} is bash's: under the base image's sh it may not exist")
    text = None
    if stdin is not None:
        text = stdin if is_known(stdin) else None
    elif shell.input is not None:  # it reads what is left of the pipe's or loop's input, to its end
        text, shell.input.at = shell.input.text[shell.input.at:], len(shell.input.text)
    if other or text is None or shell.program != "bash":
        shell.assign_array(name, None)
        return None if shell.program != "bash" else True
    lines = re.findall(r"[^\n]*\n|[^\n]+$", text)
    shell.assign_array(name, [line[:-1] if strip and line.endswith("\n") else line for line in lines])
    return True


def _alias(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``alias NAME=VALUE``: kept, so that a command it would rename is noted (see ``Shell.expands_aliases``).

    ``alias`` alone or ``alias NAME`` prints (what, only the image's earlier aliases could tell).
    """
    status: bool | None = True
    for word in argv[1:]:
        if word == "-p" or word == "--":
            continue
        name, equals, value = word.partition("=")
        if equals:
            shell.aliases[name] = value
        elif name in shell.aliases:
            shell.emit_unknown()
        else:
            status = False  # a script's shell reads no startup file: no alias is there that it did not make
    if len(argv) == 1 or argv[1:] == ["-p"]:
        shell.emit_unknown()
    return status


def _unalias(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``unalias NAME...`` removes each alias; it fails when one of them was never made (bash and dash both say
    'not found'), the others removed all the same. ``unalias -a`` removes them all."""
    if "-a" in argv[1:]:
        shell.aliases.clear()
        return True
    status = True
    for name in argv[1:]:
        if name != "--" and shell.aliases.pop(name, None) is None:
            status = False  # a script's shell reads no startup file: no alias is there that it did not make
    return status


# Signals no build delivers to a RUN's shell (nobody presses ^C or sends a TERM): their traps never run.
_NEVER_DELIVERED = frozenset({"HUP", "INT", "QUIT", "TERM", "PIPE", "USR1", "USR2", "ALRM", "CHLD", "TSTP",
                              "TTIN", "TTOU", "WINCH", "CONT", "1", "2", "3", "13", "14", "15"})


def _trap(shell: Shell, argv: list[str], ctx: CommandContext, env: dict[str, str], stdin: str | None) -> bool | None:
    """``trap ACTION CONDITION...``: EXIT's action runs when the shell ends, bash's ERR's when a command fails.

    ``trap - COND...``, a lone ``trap COND`` and ``trap N COND...`` (a number first) reset; an empty ACTION
    ignores. Signal traps never run in a build. bash's DEBUG and RETURN run around every command or
    function, which the reader does not follow.
    """
    args = argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args or args[0] in ("-p", "-l"):
        shell.emit_unknown()  # it lists the traps or the signals
        return True
    action: str | None
    if args[0] == "-":
        action, conditions = None, args[1:]
    elif args[0].isdigit() or len(args) == 1:
        action, conditions = None, args
    else:
        action, conditions = args[0], args[1:]
    status: bool | None = True
    for condition in conditions:
        name = "EXIT" if condition == "0" else condition.upper()  # case does not matter, to bash or dash
        signal = name if shell.program == "dash" else name.removeprefix("SIG")  # dash knows no SIG prefix
        if signal in _NEVER_DELIVERED:
            continue
        if name not in ("EXIT", "ERR", "DEBUG", "RETURN") or name != "EXIT" and shell.program == "dash":
            shell.note(ctx, "fails", f"trap: {condition} is not a condition {shell.program} knows")
            status = False
            if shell.program == "dash":
                break  # dash 0.5.12 ("bad trap") sets none after it; bash sets the others
            continue
        if name in ("DEBUG", "RETURN") and action:
            shell.unread(ctx, f"a {name} trap runs its action around every command or function, which the reader "
                              "does not follow")
            continue
        if name == "ERR" and shell.program == "sh":
            shell.unread(ctx, "trap ... ERR under the base image's sh: dash refuses it, bash as sh runs it when a "
                              "command fails, as the reader does")
        if action is None:
            shell.traps.pop(name, None)
        else:
            shell.traps[name] = Trap(action, ctx.line, ctx.text)
    return status


STATE_BUILTINS: dict[str, Builtin] = {
    "trap": _trap,
    "alias": _alias, "unalias": _unalias,
    "cd": _cd, "pushd": _pushd, "popd": _popd, "dirs": _dirs, "set": _set, "shopt": _shopt, "export": _export,
    "readonly": _export, "local": _local, "declare": _export, "typeset": _export, "unset": _unset, "exit": _exit,
    "return": _return, "break": _loop_control, "continue": _loop_control, "shift": _shift, "source": _source,
    ".": _source, "eval": _eval, "let": _let, "read": _read, "getopts": getopts, "mapfile": _mapfile, "readarray": _mapfile,
}
