"""Expand shell words as sh does: parameters, command substitution, field splitting, quote removal, globs.

A value the reader cannot know (a variable only the base image could
set, the output of a program it does not run) is carried through as a
marker: ``Unknowns.mark`` returns a token that stands for it inside the
expanded text, ``Unknowns.show`` puts the original spelling back for
messages, and any path holding one is not a path the reader can place.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Protocol

from .shell_arithmetic import BLANKS, assigned_names, evaluate, expand_parameters, run_expanded
from .shell_nodes import Arith, Lit, Param, Part, Sub, Word

IFS = " \t\n"
# The longest word the reader keeps: 'A=$A$A' lines double a value each, and a
# vendor's words are paths and versions. A longer one is an unknown value.
MAX_WORD = 64 << 10
_MARK = re.compile("\x00(\\d+)\x01")


class Unbound(Exception):
    """An expansion error, which ends the shell: under ``set -u`` a parameter that is not set, or ``${NAME:?}``
    of one that is not set (or empty)."""

    def __init__(self, name: str, reason: str | None = None, code: int | None = None):
        super().__init__(name)
        self.name = name
        self.reason = reason or f"${name} is not set and set -u is on: the shell ends here"
        self.code = code  # the shell's exit status, where known (dash's "Bad substitution": 2)


class Unknowns:
    """The values the reader could not work out, each behind a marker."""

    def __init__(self) -> None:
        self.spelled: list[str] = []
        self.words: set[int] = set()  # markers whose value is known to be one word, not empty

    def mark(self, spelling: str, word: bool = False) -> str:
        """A marker standing for a value written as ``spelling`` (``$VLLM``, ``$(python3 -c ...)``).

        ``word``: the value, though unknown, is one word, not empty, without blanks or glob characters
        (``$BASH_VERSION`` under bash), so a test of whether it is empty is decided.
        """
        self.spelled.append(spelling)
        if word:
            self.words.add(len(self.spelled) - 1)
        return f"\x00{len(self.spelled) - 1}\x01"

    def nonempty(self, text: str) -> bool:
        """Whether ``text``, which holds unknown values, is surely not empty: each of them is known to be a word.

        Such a value splits and globs to nothing else, quoted or not, so ``text`` is the field sh sees.
        """
        marks = [int(m.group(1)) for m in _MARK.finditer(text)]
        return bool(marks) and all(index in self.words for index in marks)

    def show(self, text: str) -> str:
        """``text`` with each marker spelled as the script wrote it."""
        return _MARK.sub(lambda m: self.spelled[int(m.group(1))], text)

    def spellings(self, text: str) -> list[str]:
        """How each unknown value in ``text`` was written."""
        return [self.spelled[int(m.group(1))] for m in _MARK.finditer(text)]


def is_known(text: str) -> bool:
    """Whether ``text`` holds no unknown value."""
    return "\x00" not in text


def is_unknown(text: str) -> bool:
    """Whether ``text`` is one unknown value and nothing else (``$(< FILE)`` of a file the reader cannot read)."""
    return _MARK.fullmatch(text) is not None


class Scope(Protocol):
    """What expansion needs from the shell that runs it."""

    @property
    def unknowns(self) -> Unknowns:
        """Where unknown values are kept."""

    def lookup(self, name: str) -> str | None:
        """A variable's value, or None when unset (or set by nothing the reader saw)."""

    def missing(self, name: str) -> str:
        """What ``$NAME`` gives when ``lookup`` has no value: empty, or a marker when the base image could set it."""

    def assign(self, name: str, value: str) -> None:
        """``${NAME=word}``."""

    def arguments(self) -> list[str]:
        """``$1``... as the script was called."""

    def elements(self, name: str) -> list[str] | None:
        """bash's array NAME's elements, or None when the reader does not know them."""

    def substitute(self, sub: Sub) -> str:
        """Run ``$(...)`` and return what it prints (trailing newlines removed), or a marker."""

    def bash_only(self, spelled: str) -> None:
        """An expansion only bash has is expanded (``spelled``): raise Unbound where the shell refuses it."""

    @property
    def bash_arithmetic(self) -> bool:
        """Whether ``$((...))`` takes bash's ``++``, ``--`` and comma (dash has none of them)."""


@dataclass(frozen=True)
class Field:
    """One word after expansion: its text, and a regular expression when unquoted glob characters remain."""

    text: str
    glob: re.Pattern[str] | None = None
    globstar: re.Pattern[str] | None = None  # the pattern under bash's globstar, when a component is '**'


def expand(word: Word, scope: Scope) -> list[Field]:
    """Expand a command word into fields: split where unquoted expansions hold blanks, glob patterns kept."""
    word = tilde_expanded(word, scope)
    fields: list[list[tuple[str, bool]]] = []
    current: list[tuple[str, bool]] = []
    started = False  # the current field exists, even if empty (a quoted "")

    def end_field() -> None:
        nonlocal current, started
        if started:
            fields.append(current)
        current, started = [], False

    for part in word:
        if isinstance(part, Lit):
            current.append((part.text, part.quoted))
            started = True
            continue
        whole = _all_elements(part, scope)
        if whole is not None:
            name, values = whole
            if part.quoted and name == "@":
                for index, value in enumerate(values):  # "$@": one field per argument
                    if index:
                        end_field()
                    current.append((value, True))
                    started = True
                continue
            if part.quoted:  # "$*": the arguments joined by IFS's first character (none when IFS is empty)
                ifs = _ifs(scope)
                current.append(((ifs[:1] if is_known(ifs) else " ").join(values), True))
                started = True
                continue
            texts = values  # $@ and $* unquoted: each argument a field of its own, then split
        else:
            texts = [_value(part, scope)]
            if part.quoted:
                current.append((texts[0], True))
                started = True
                continue
        for number, text in enumerate(texts):
            if number:
                end_field()
            for piece, ends in _split(text, _ifs(scope), scope):  # field splitting on IFS
                if piece:
                    current.append((piece, False))
                    started = True
                if ends:
                    started = started or ends == "delimits"
                    end_field()
    end_field()
    if sum(len(t) for segments in fields for t, _ in segments) > MAX_WORD:
        return [Field(_too_long(fields, scope), None)]
    return [Field("".join(t for t, _ in segments), _glob(segments), _globstar(segments)) for segments in fields]


def _ifs(scope: Scope) -> str:
    """IFS as field splitting reads it: unset (or never set) is space, tab and newline."""
    value = scope.lookup("IFS")
    return IFS if value is None else value


def _split(text: str, ifs: str, scope: Scope) -> list[tuple[str, str]]:
    """``text`` cut where IFS says: each piece, and what ends it ("" nothing, "blank", "delimits").

    IFS white space (space, tab, newline) separates as a run and never
    makes an empty field; each other IFS character ends the field before it,
    even an empty one, together with the white space around it ("a,,b" is
    a, "" and b; "a," is a alone). Checked with bash 5.2 and dash 0.5.12.
    """
    if not ifs or not text:
        return [(text, "")]
    if not is_known(ifs):
        return [(scope.unknowns.mark("a value split by an IFS the reader cannot work out"), "")]
    separator = ifs_separator(ifs)
    pieces: list[tuple[str, str]] = []
    at = 0
    for found in separator.finditer(text):
        if found.end() == found.start():
            continue
        delimits = any(c not in " \t\n" for c in found.group())
        pieces.append((text[at:found.start()], "delimits" if delimits else "blank"))
        at = found.end()
    pieces.append((text[at:], ""))
    return pieces


_separators: dict[str, re.Pattern[str]] = {}


def ifs_separator(ifs: str) -> re.Pattern[str]:
    """What separates fields under a non-empty IFS: a run of its white space, or one other IFS character with the
    white space around it (field splitting and ``read`` alike)."""
    pattern = _separators.get(ifs)
    if pattern is None:
        white = re.escape("".join(c for c in ifs if c in " \t\n"))
        other = re.escape("".join(c for c in ifs if c not in " \t\n"))
        around = f"[{white}]*" if white else ""
        alternatives = ([f"{around}[{other}]{around}"] if other else []) + ([f"[{white}]+"] if white else [])
        pattern = _separators[ifs] = re.compile("|".join(alternatives))
        if len(_separators) > 64:  # IFS values a script sets are few; a hostile one cannot fill memory
            _separators.clear()
    return pattern


def expand_one(word: Word, scope: Scope, assignment: bool = False) -> str:
    """Expand a word without splitting or globbing (assignments, ``case`` words, redirection targets)."""
    word = tilde_expanded(word, scope, assignment)
    text = "".join(p.text if isinstance(p, Lit) else _value(p, scope, assignment) for p in word)
    return text if len(text) <= MAX_WORD else _too_long([[(text, True)]], scope)


_LOGIN = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def tilde_expanded(word: Word, scope: Scope, assignment: bool = False) -> Word:
    """WORD with its tilde-prefixes replaced by home folders, as sh does before the other expansions.

    A tilde-prefix is an unquoted ``~`` starting the word (in an assignment's
    value also one after an unquoted ``:``) up to the first ``/`` (or ``:``),
    or the end of the word: ``~`` is $HOME, ``~root`` /root, ``~+`` $PWD and
    ``~-`` $OLDPWD; another user's home is the image's to know. A prefix with
    a quoted or expanded character in it stays as written; the home is
    neither split nor globbed.
    """
    parts: list[Part] = []
    for index, part in enumerate(word):
        if not isinstance(part, Lit) or part.quoted or "~" not in part.text or (index and not assignment):
            parts.append(part)
            continue
        last = index == len(word) - 1
        pieces = part.text.split(":") if assignment else [part.text]
        for number, piece in enumerate(pieces):
            starts = number > 0 or index == 0  # the word's start, or just after a ':'
            if number:
                parts.append(Lit(":"))
            home = _home(piece, scope, ends_word=last or number < len(pieces) - 1) if starts else None
            if home is None:
                if piece:
                    parts.append(Lit(piece))
                continue
            parts.append(Lit(home, quoted=True))
            rest = piece[piece.find("/"):] if "/" in piece else ""
            if rest:
                parts.append(Lit(rest))
    return tuple(parts) if parts != list(word) else word


def _home(piece: str, scope: Scope, ends_word: bool) -> str | None:
    """The folder a tilde-prefix at the start of PIECE names, or None when it is not one."""
    if not piece.startswith("~") or ("/" not in piece and not ends_word):
        return None
    name = piece[1:].split("/", 1)[0]
    if name == "":
        home = scope.lookup("HOME")
        # With HOME unset, bash takes the user's home from the image's passwd file and dash leaves '~' as it is
        # written; neither stops under set -u. Which one runs, and what passwd says, the reader does not know.
        return home if home is not None else scope.unknowns.mark("~")
    if name == "root":
        return "/root"
    if name in ("+", "-"):
        return scope.lookup("PWD" if name == "+" else "OLDPWD")
    return scope.unknowns.mark(f"~{name}") if _LOGIN.fullmatch(name) else None


def _too_long(fields: list[list[tuple[str, bool]]], scope: Scope) -> str:
    """An unknown value in place of a word past ``MAX_WORD`` characters."""
    size = sum(len(t) for segments in fields for t, _ in segments)
    return scope.unknowns.mark(f"(a word of {size:,} characters, past the {MAX_WORD:,} the reader keeps)")


def _glob(segments: list[tuple[str, bool]]) -> re.Pattern[str] | None:
    # A '[' with no ']' after it is a letter ('[ -d x ]' is no pattern): only a real wildcard makes one.
    if not any(not quoted and _WILDCARD.search(text) for text, quoted in segments):
        return None
    regex = "".join(re.escape(text) if quoted else _glob_regex(text) for text, quoted in segments)
    return re.compile(regex)


_WILDCARD = re.compile(r"[*?]|\[.+\]", re.DOTALL)


def _globstar(segments: list[tuple[str, bool]]) -> re.Pattern[str] | None:
    """The pattern as bash reads it under ``shopt -s globstar``: an unquoted ``**`` that is a whole path
    component matches any number of folders (``sub/**/*.py`` finds sub/y.py and sub/deep/z.py); None when
    there is no such component."""
    text = "".join(t for t, _ in segments)
    quoted = [q for t, q in segments for _ in t]
    out: list[str] = []
    start = 0
    found = False
    components = text.split("/")
    for index, component in enumerate(components):
        last = index == len(components) - 1
        if component == "**" and not quoted[start] and not quoted[start + 1]:
            found = True
            out.append("(?:[^/]+/)*[^/]*" if last else "(?:[^/]+/)*")  # '**/' takes its '/' with it
        else:
            runs = [(quoted[i], text[i]) for i in range(start, start + len(component))]
            for is_quoted, group in itertools.groupby(runs, key=lambda run: run[0]):
                chunk = "".join(char for _, char in group)
                out.append(re.escape(chunk) if is_quoted else _glob_regex(chunk))
            out.append("" if last else "/")
        start += len(component) + 1
    return re.compile("".join(out)) if found else None


def _glob_regex(pattern: str, paths: bool = True) -> str:
    """A shell pattern as a regular expression: for ``paths``, ``*`` and ``?`` stay inside one path component."""
    out = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            out.append("[^/]*" if paths else ".*")
        elif char == "?":
            out.append("[^/]" if paths else ".")
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[index + 1:end]
                body = "^" + body[1:] if body[:1] in "!^" else body
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _value(part: Part, scope: Scope, assignment: bool = False) -> str:
    if isinstance(part, Lit):
        return part.text
    if isinstance(part, Sub):
        return scope.substitute(part)
    if isinstance(part, Arith):
        return _arithmetic(part.text, scope)
    return _parameter(part, scope, assignment)


def _all_elements(part: Part, scope: Scope) -> tuple[str, list[str]] | None:
    """For ``$@``, ``$*``, ``${NAME[@]}``, ``${NAME[*]}`` and ``${!NAME[@]}``: "@" or "*", and the values;
    bash's ``${@:OFFSET:LENGTH}`` (counted from ``$0``) and ``${NAME[@]:OFFSET:LENGTH}`` give a slice of them."""
    if isinstance(part, Param) and part.op == ":" and (part.name in ("@", "*") or part.name.endswith(("[@]", "[*]"))):
        spelled = f"${{{part.name}:...}}"
        scope.bash_only(spelled)  # dash ends the shell here
        whole = _all_elements(Param(part.name, "", None, part.quoted), scope)
        if whole is None:
            return None
        kind, listed = whole
        listed = [variable_text("0", scope), *listed] if part.name in ("@", "*") else listed
        bounds = _slice(expand_one(part.arg or (), scope), len(listed), scope, elements=True)
        return (kind, listed[bounds[0]:bounds[1]]) if bounds is not None else (kind, [scope.unknowns.mark(spelled)])
    if not isinstance(part, Param) or part.op not in ("", "indices"):
        return None
    if part.op == "indices":  # ${!NAME[@]}: the array's indices
        values = scope.elements(part.name[:-3])
        return None if values is None else (part.name[-2], [str(i) for i in range(len(values))])
    if part.name in ("@", "*"):
        return part.name, scope.arguments()
    if part.name.endswith(("[@]", "[*]")):
        values = scope.elements(part.name[:-3])
        return None if values is None else (part.name[-2], values)
    return None


# ${NAME:OFFSET}, case changes, ${NAME/PATTERN/STRING} and ${!NAME}...: bash's, not POSIX sh's.
_BASH_ONLY_OPS = frozenset({":", "^", "^^", ",", ",,", "/", "//", "/#", "/%", "indirect", "names", "indices"})


def _parameter(part: Param, scope: Scope, assignment: bool = False) -> str:
    """One parameter expansion; in an assignment's value (``assignment``) a default's ``~`` after ``:`` is a home
    too (``Y=${X:-a:~/b}``), as dash and bash expand it."""
    name, op = part.name, part.op
    spelled = f"${{{name}}}" if op == "" else f"${{{name}{op}...}}"
    if op in _BASH_ONLY_OPS or "[" in name:
        shown = {"indirect": f"${{!{name}}}", "names": f"${{!{name}*}}", "indices": f"${{!{name}}}",
                 "len": f"${{#{name}}}", "": f"${{{name}}}"}.get(op, spelled)
        scope.bash_only(shown)  # dash ends the shell here
    value = scope.lookup(name)
    if op == "":
        return value if value is not None else scope.missing(name)
    if op == "indirect":  # ${!NAME}: the variable NAME's value names
        target = value if value is not None else scope.missing(name)
        if not is_known(target) or not re.fullmatch(r"[A-Za-z_]\w*|[0-9]+", target):
            return scope.unknowns.mark(f"${{!{name}}}")
        return variable_text(target, scope)
    if op in ("names", "indices"):  # ${!PREFIX*}: which variables the image has is its to say
        return scope.unknowns.mark(f"${{!{name}*}}")
    if op == "len":
        if name.endswith(("[@]", "[*]")):  # ${#NAME[@]}: how many elements
            values = scope.elements(name[:-3])
            return str(len(values)) if values is not None else scope.unknowns.mark(f"${{#{name}}}")
        return str(len(value)) if value is not None and "\x00" not in value else scope.unknowns.mark(f"${{#{name}}}")
    if name.endswith(("[@]", "[*]")):
        return scope.unknowns.mark(spelled)  # an operator applied to each element: not followed
    word = part.arg or ()
    colon = op.startswith(":") and len(op) == 2
    unset = value is None or (colon and value == "")
    kind = op[-1] if op[0] == ":" and len(op) == 2 else op
    if colon and kind in "-=+?" and value is not None and not is_known(value) and _MARK.sub("", value) == "" \
            and not scope.unknowns.nonempty(value):
        # NAME holds only values the reader cannot work out ($(cat FILE) of a file the base image may lack): it
        # may be empty, and then ':-', ':=', ':+' and ':?' take the other way.
        return scope.unknowns.mark(spelled)
    if kind in "-=":
        if not unset:
            return value or ""
        default = expand_one(word, scope, assignment)
        if kind == "=":
            scope.assign(name, default)
        return default
    if kind == "+":
        return "" if unset else expand_one(word, scope, assignment)
    if kind == "?":
        if not unset and value is not None:
            return value
        if value is not None or scope.missing(name) == "":  # known empty (with ':'), or known not to be set
            state = "empty" if value == "" else "not set"
            raise Unbound(name, f"${name} is {state}, so ${{{name}{op}}} ends the shell here")
        return scope.unknowns.mark(spelled)  # the base image could set it: read on as the build that succeeds
    if value is None:
        return ""
    if "\x00" in value:
        return scope.unknowns.mark(spelled)
    if op in ("^", "^^", ",", ",,"):
        # bash's case changes; one with a pattern (${NAME^^[a-m]}) or a letter past ASCII (the locale's) is not
        # followed.
        if word or not value.isascii():
            return scope.unknowns.mark(spelled)
        change = str.upper if op[0] == "^" else str.lower
        return change(value) if len(op) == 2 else change(value[:1]) + value[1:]
    if op in ("#", "##", "%", "%%", "/", "//", "/#", "/%"):
        regex = pattern_regex(word, scope, len(value))
        if regex is None:
            return scope.unknowns.mark(spelled)
        if op[0] == "/":
            return _replaced(value, op, regex, part.replacement, scope, spelled)
        if op in ("#", "##"):
            cuts = [i for i in range(len(value) + 1) if regex.fullmatch(value, 0, i)]
            return value[(max(cuts) if op == "##" else min(cuts)):] if cuts else value
        cuts = [i for i in range(len(value) + 1) if regex.fullmatch(value, i)]
        return value[:(min(cuts) if op == "%%" else max(cuts))] if cuts else value
    pattern = expand_one(word, scope)
    if op == ":":
        bounds = _slice(pattern, len(value), scope, elements=False)
        return value[bounds[0]:bounds[1]] if bounds is not None else scope.unknowns.mark(spelled)
    return scope.unknowns.mark(spelled)


def _slice(text: str, size: int, scope: Scope, elements: bool) -> tuple[int, int] | None:
    """Where bash's ``${NAME:OFFSET[:LENGTH]}`` starts and ends in a value of ``size`` characters (``elements``:
    in ``$@`` or an array's elements). Both are arithmetic; a negative OFFSET counts from the end, a negative
    LENGTH (not for elements) stops that far from it. None where bash refuses it or a part is unknown."""
    offset_text, colon, length_text = text.partition(":")
    read = lambda part: evaluate(part, lambda name: variable_text(name, scope)) if part.strip() else 0  # noqa: E731
    offset = read(offset_text)
    length = read(length_text) if colon else size
    if offset is None or length is None:
        return None
    if offset < 0:
        offset += size
        if offset < 0:
            return 0, 0  # before the start: nothing
    offset = min(offset, size)
    if length >= 0:
        return offset, min(offset + length, size)
    if elements or size + length < offset:
        return None  # "substring expression < 0"
    return offset, size + length


def pattern_regex(word: Word, scope: Scope, size: int) -> re.Pattern[str] | None:
    """The pattern of ``${NAME#WORD}``, ``${NAME/WORD/...}`` or a ``case`` item as a regular expression, for a
    value of ``size`` characters. What WORD quotes, or a backslash escapes, is matched as written; ``*`` and
    ``?`` match any character, ``/`` included.

    None when a value in WORD is unknown, or when matching could take too long: each ``*`` multiplies the
    work by the value's length (a script's ``${X//*a*a*a*b/}`` on a long X would not end).
    """
    pieces = []
    stars = 0
    for part in tilde_expanded(word, scope):
        text = part.text if isinstance(part, Lit) else _value(part, scope)
        if not is_known(text):
            return None
        if not part.quoted:
            stars += len(re.findall(r"\*+", text))
        pieces.append(re.escape(text) if part.quoted else _glob_regex(re.sub(r"\*+", "*", text), paths=False))
    if stars and (size + 1) ** (stars + 2) > _MATCH_BUDGET:
        return None
    return re.compile("".join(pieces), re.DOTALL)


_MATCH_BUDGET = 1 << 26  # steps of the regular expression engine a pattern may take on one value


def _replaced(value: str, op: str, regex: re.Pattern[str], replacement: Word, scope: Scope, spelled: str) -> str:
    """bash's ``${NAME/PATTERN/STRING}``: the longest match of PATTERN (the first one, every one for ``//``,
    one at the start for ``/#``, at the end for ``/%``) becomes STRING. An empty PATTERN changes nothing,
    unless anchored (``${NAME/#/PREFIX}``)."""
    # bash 5.2 (patsub_replacement, on by default) puts the match where STRING has an unquoted '&'; bash 5.1
    # does not: which bash the image has decides.
    if any(isinstance(p, Lit) and not p.quoted and "&" in p.text for p in replacement):
        return scope.unknowns.mark(spelled)
    new = expand_one(replacement, scope)
    if op == "/#":
        ends = [i for i in range(len(value), -1, -1) if regex.fullmatch(value, 0, i)]
        return new + value[ends[0]:] if ends else value
    if op == "/%":
        starts = [i for i in range(len(value) + 1) if regex.fullmatch(value, i)]
        return value[:starts[0]] + new if starts else value
    if not regex.pattern:
        return value
    out: list[str] = []
    start = 0
    while start <= len(value):
        found = _longest_match(regex, value, start)
        if found is None:
            break
        begin, end = found
        out += [value[start:begin], new]
        start = end
        if op == "/" or begin == end:
            break
    return "".join(out) + value[start:]


def _longest_match(regex: re.Pattern[str], value: str, start: int) -> tuple[int, int] | None:
    """The leftmost match of ``regex`` in ``value`` from ``start``, as long as it can be (as the shell takes it).

    A pattern's regular expression holds literals, classes, ``.`` and greedy ``.*`` only, so the first match
    the engine finds at the leftmost start is the longest there.
    """
    found = regex.search(value, start)
    return None if found is None else found.span()


def _arithmetic(text: str, scope: Scope) -> str:
    """``$((...))`` over integers and variables holding integers, its assignments made (``$((x += 2))``, in
    bash and dash alike); anything else is unknown. Its ``$`` parameters are expanded first, then the text is
    evaluated (``$((1 + $#))``), as both shells do."""
    def assign(name: str, value: int | None) -> None:
        scope.assign(name, str(value) if value is not None else scope.unknowns.mark(f"${name}"))

    if not scope.bash_arithmetic and ("++" in text or "--" in text or "," in text):
        # dash: '++i' is +(+i), 'i++' and 'a, b' are errors; the base image's sh may be either: not followed, and
        # what bash would assign is unknown.
        for name in assigned_names(text):
            assign(name, None)
        return scope.unknowns.mark(f"$(({text}))")
    def variable(name: str) -> str:
        return variable_text(name, scope)

    expanded = expand_parameters(text, variable)
    if scope.bash_arithmetic and not expanded.strip(BLANKS):
        return "0"  # bash: $(( )) and $(($x)) with x empty are 0; dash refuses an empty expression (status 2)
    value = run_expanded(expanded, variable, assign)
    return str(value) if value is not None else scope.unknowns.mark(f"$(({text}))")


def variable_text(name: str, scope: Scope) -> str:
    """``$NAME`` as one string: its value, or what ``missing`` gives (empty, or a marker)."""
    value = scope.lookup(name)
    return value if value is not None else scope.missing(name)
