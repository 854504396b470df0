"""Refuse vendor Python that nests too deeply to parse safely, before any parser sees it.

Parsers and tree walkers recurse once or twice per level of nesting.
libcst's native parser crashes the process (SIGSEGV) past about 1,000
nested brackets or 8,000 unary operators, and takes quadratic time on long
call chains (2,000 ``.f()`` take 10 s); CPython 3.10's ``ast.parse``
crashes on a few hundred thousand chained operators; libcst's code
generation, ``ast.NodeVisitor``, ``ast.unparse`` and ``ast.dump`` raise
RecursionError past about 490 levels. So every parse of a vendor file goes
through ``nesting_problem`` first: one pass of regular expressions over
the text that bounds, statement by statement, the depth of the tree a
parser would build. It counts

- brackets (``(``, ``[``, ``{``, f-string fields): ``BRACKET`` levels each,
  plus one for the call or subscript the bracket may be;
- operators, keywords and trailers that nest in a tree (``-``, ``not``,
  ``a.b``, ``and``, ``x if c else y``, ``lambda``, ``:=``, and for libcst
  adjacent strings): one level each, per comma-separated element, so a
  list of 1,000 ``-1`` is shallow and ``- - - ... 1`` is not;
- blocks: ``BLOCK`` levels per indentation level, plus one per ``elif``
  or ``else`` of an ``if`` chain (each ``elif`` is an ``if`` inside the
  ``else`` of the one before).

The count is an upper bound: what cannot be told apart without parsing
(a binary ``-`` from a unary one, a call from a parenthesis) counts, so no
arrangement of tokens builds a deeper tree than it says. Strings are read
as Python 3.12's tokenizer reads them (PEP 701: quotes nest inside
f-string fields), which is what libcst reads; where an older Python reads
a file otherwise, the file is a syntax error for it.

A short bracket (``SHORT`` characters at most, nesting at most three deep,
holding no f-string) is read in one step and counted as deep as it is
long: no tree in it can be deeper. Only when that estimate puts a
statement past the bound is the statement read again token by token.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from dataclasses import dataclass

from .errors import SourceError

# The deepest nesting accepted, in the levels counted above. CPython itself
# refuses 200 nested brackets and 100 indentation levels; 200 levels of
# operators is far past code written by hand, and under half the 490 levels
# where the first tree walker fails, which leaves room for the frames of
# the code that calls it.
MAX_NESTING = 200
BRACKET = 2  # the display or call, then the element or argument holding the value
BLOCK = 2  # the compound statement, then its indented block
STATEMENT = 2  # the statement line, then the statement
SHORT = 120  # the longest bracket read in one step
# A parse holds tens of times its source in memory: past this a vendor file is
# refused rather than risk the OOM killer (whose SIGKILL leaves no message).
MAX_SOURCE = 16 << 20
GROUP_SLACK = 3 * BRACKET  # a short bracket nests three deep at most, a trailer each

# Keywords that nest: boolean operators, tests, comparisons, comprehensions, awaits.
_KEYWORDS = r"(?:not|and|or|if|else|await|in|is|for|yield)"

# One token the scan acts on, after a run of those it skips. What it skips
# is skipped inside the regular expression, in one step (a lookahead and a
# backreference make the atomic group Python 3.10's ``re`` lacks): spaces,
# identifiers that are no keyword and start no string, plain numbers, '='.
_SKIPPED = r"""(?=(?P<skipped>(?:[ \t\f]+
    |(?!(?:lambda|not|and|or|if|else|await|in|is|for|yield)(?!\w))(?![rRbBuUfF]{1,2}['"])[^\W\d]\w*
    |\d[\d_]*(?:\.[\d_]*)?(?:[eE][-+]?[\d_]+)?(?![\w.])
    |=(?!=)
    COLON)*))(?P=skipped)"""

_TOKEN = r"""(?:
    (?P<newline>(?:\r\n|\r|\n)(?:[ \t\f]*(?:\#[^\r\n]*)?(?:\r\n|\r|\n))*(?P<indent>[ \t\f]*))
  | (?P<string>(?:(?<!\w)(?:[rRbBuU]|[bB][rR]|[rR][bB]))?
        (?:'''(?:[^'\\]|\\(?:\r\n|[\s\S])|'(?!''))*'''
          |\"\"\"(?:[^"\\]|\\(?:\r\n|[\s\S])|"(?!""))*\"\"\"
          |(?!''')'(?:[^'\\\r\n]|\\(?:\r\n|[\s\S]))*'
          |(?!\"\"\")"(?:[^"\\\r\n]|\\(?:\r\n|[\s\S]))*"))
  | (?P<fstring>(?<!\w)(?P<prefix>[fF][rR]?|[rR][fF])(?P<quote>'''|\"\"\"|'|"))
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<comma>[,;])
  | (?P<colon>:=?)
  | (?P<lambda>(?<![^\W\d])lambda(?!\w))
  | (?P<dotted>(?:\.[ \t\f]*[^\W\d]\w*[ \t\f]*)+)
  | (?P<chain>\*\*|//|<<|>>|<=|>=|==|!=|->|[-+*/%@&|^~<>]|\.(?!\.\.)
      # a keyword may follow a digit without a space (`1if x else 2`)
      |(?<![^\W\d])KEYWORDS(?!\w)
      # ... or a number ending in a letter (`0x1for`, `1jif`)
      |(?<![^\W\d])(?:0[xXoObB][0-9a-fA-F_]*?|\d[\d_]*(?:\.[\d_]*)?(?:[eE][-+]?[\d_]+)?[jJ])KEYWORDS(?!\w))
  | (?P<other>\#[^\r\n]*|\.\.\.|\\(?:\r\n|\r|\n)|['"]
      # any other character ('$', '?', the '0' of 0x1F, the '1' of 1j), and the end of the text: a token is found
      # right after what is skipped, so that a search never starts again inside it (each start skipped the rest of
      # the run again: a statement of 20,000 'a = ' then 1j, or no newline at the end, took minutes)
      |[\s\S])
  | (?P<end>\Z)
)""".replace("KEYWORDS", _KEYWORDS)

# A short bracket read in one step: plain code, comments, strings (no
# f-string) and brackets, three deep in all, each level written as
# "normal* (special normal*)*", which backtracks at most once a character.
_CHARS = r"""[^()\[\]{}'"\\\#]*"""
_STRINGS = r"""'''(?<![fF]''')(?<![fF][rR]''')(?:[^'\\]|\\[\s\S]|'(?!''))*'''
    |\"\"\"(?<![fF]\"\"\")(?<![fF][rR]\"\"\")(?:[^"\\]|\\[\s\S]|"(?!""))*\"\"\"
    |'(?<![fF]')(?<![fF][rR]')(?!'')(?:[^'\\\r\n]|\\[\s\S])*'
    |"(?<![fF]")(?<![fF][rR]")(?!"")(?:[^"\\\r\n]|\\[\s\S])*"
    |\#[^\r\n]*(?![^\r\n])|\\(?:\r\n|\r(?!\n)|\n)"""
_GROUP = _STRINGS
for _ in range(2):
    _GROUP = r"[(\[{]" + _CHARS + "(?:(?:" + _GROUP + ")" + _CHARS + r")*[)\]}]|" + _STRINGS
_TOKEN = _TOKEN.replace("(?P<open>", "(?P<group>[(\\[{]" + _CHARS + "(?:(?:" + _GROUP + ")" + _CHARS
                        + r")*[)\]}])" + "\n  | (?P<open>", 1)

# A whole statement read in one step: outside brackets no line end, and
# otherwise what a short bracket holds. Its length bounds its depth.
_STATEMENT = re.compile(
    r"(?P<body>[^()\[\]{}'" + '"' + r"\\\#\r\n]*(?:(?:" + _GROUP + r")[^()\[\]{}'" + '"' + r"\\\#\r\n]*)*)"
    + r"(?:(?P<newline>(?:\r\n|\r|\n)(?:[ \t\f]*(?:\#[^\r\n]*)?(?:\r\n|\r|\n))*(?P<indent>[ \t\f]*))|\Z)",
    re.VERBOSE)

# ':' matters only in an f-string field (a format spec starts there) or after
# a lambda (its parameters end there): elsewhere the scan skips it too.
_CODE = re.compile(_SKIPPED.replace("COLON", r"|:(?!=)") + _TOKEN, re.VERBOSE)
_CODE_COLONS = re.compile(_SKIPPED.replace("COLON", "") + _TOKEN, re.VERBOSE)


# Inside an f-string, outside its fields: what ends a stretch of literal text.
_LITERAL = {
    (quote, raw): re.compile(
        r"\{\{|\}\}|\{|\}"
        + ("" if raw else r"|\\N\{[^}\r\n]*\}")  # a named escape, not a field
        + r"|\\(?:\r\n|[^{}])"  # a backslash never escapes a brace
        + "|" + re.escape(quote)
        + ("" if len(quote) == 3 else r"|\r\n|\r|\n"))
    for quote in ("'", '"', "'''", '"""')
    for raw in (False, True)
}

_NEWLINE, _STRING, _FSTRING, _GROUP_TOKEN, _OPEN, _CLOSE, _COMMA, _COLON, _LAMBDA, _DOTTED, _CHAIN, _END = (
    _CODE.groupindex[name] for name in (
        "newline", "string", "fstring", "group", "open", "close", "comma", "colon", "lambda", "dotted", "chain",
        "end"))


@dataclass(frozen=True)
class TooDeep:
    """Why a vendor source is not handed to a parser: where, and what about it."""

    line: int  # 1-based; 0 for the file as a whole
    reason: str  # a predicate of the file: "nests deeper than 200 levels (...)"

    def __str__(self) -> str:
        return f"{self.reason} at line {self.line}" if self.line else self.reason


class TooDeepError(SourceError, SyntaxError):
    """A vendor file past the bounds: bad input (exit 2), and a SyntaxError to every parse's own error path."""

    def __init__(self, problem: TooDeep, where: str) -> None:
        super().__init__(f"cannot be parsed: {problem}", where=where, hint=HINT)
        self.problem = problem
        self.filename, self.lineno, self.msg = where, problem.line, f"cannot be parsed: {problem}"


HINT = (f"patcher parses Python files of at most {MAX_SOURCE >> 20} MiB nesting at most {MAX_NESTING} levels "
        "of brackets, operators and blocks; split what goes past that")


def parse_problem(source: str | bytes, *, strings_nest: bool = True) -> TooDeep | None:
    """Return why SOURCE should not be handed to a parser (too large, or nesting too deep), or None.

    ``strings_nest``: adjacent strings (``"a" "b"``) nest, as in libcst's
    tree; ``ast`` joins them into one constant, so a caller that parses
    with ``ast`` alone passes False.
    """
    if len(source) > MAX_SOURCE:  # characters or bytes: either way a parse holds far more in memory
        return TooDeep(0, f"is {len(source)} bytes, more than the {MAX_SOURCE} patcher parses")
    return nesting_problem(source, strings_nest=strings_nest)


def require_parseable(source: str | bytes, where: str, *, strings_nest: bool = True) -> None:
    """Raise TooDeepError when ``parse_problem`` finds one; call it before any parse of vendor Python."""
    problem = parse_problem(source, strings_nest=strings_nest)
    if problem is not None:
        raise TooDeepError(problem, where)


def source_text(data: bytes) -> str:
    """Decode a Python file as its parser will (its coding line, else UTF-8).

    Bytes no codec reads are read as Latin-1: the ASCII syntax that makes
    the structure survives, and the parser refuses the file anyway.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return codecs.decode(data, encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError, ValueError):
        return data.decode("latin-1")


def nesting_problem(source: str | bytes, limit: int = MAX_NESTING, *, strings_nest: bool = True) -> TooDeep | None:
    """Return where SOURCE first nests deeper than LIMIT levels, or None when it never does.

    ``strings_nest``: adjacent strings (``"a" "b"``) nest, as in libcst's
    tree; ``ast`` joins them into one constant, so a caller that parses
    with ``ast`` alone passes False.
    """
    text = source_text(source) if isinstance(source, bytes) else source
    found = _Scan(text, limit, strings_nest).run()
    if found is None:
        return None
    head = text[:found]
    line = head.count("\n") + head.count("\r") - head.count("\r\n") + 1
    return TooDeep(line, f"nests deeper than {limit} levels (brackets, operators, blocks)")


def nesting_count(source: str | bytes, *, strings_nest: bool = True) -> int:
    """Return the count ``nesting_problem`` gives SOURCE: the least limit it lets through (for measuring)."""
    low, high = -1, 1 << 16
    while high - low > 1:
        middle = (low + high) // 2
        if nesting_problem(source, middle, strings_nest=strings_nest) is None:
            high = middle
        else:
            low = middle
    return high


class _Frame:
    """A bracket, an f-string, one of its fields, or the statement itself, being scanned."""

    __slots__ = ("count", "inner", "best", "lambdas", "cost", "quote", "raw", "string", "field", "spec")

    def __init__(self, cost: int, quote: str = "", raw: bool = False, *, string: bool = False,
                 field: bool = False) -> None:
        self.count = 0  # levels the operators of the current element add
        self.inner = 0  # the deepest bracket closed in the current element, with its own levels
        self.best = 0  # the deepest element finished so far
        self.lambdas = 0  # lambdas whose ':' is still ahead (their commas separate parameters)
        self.cost = cost
        self.quote = quote  # the quote of the f-string this is, or whose field this is
        self.raw = raw
        self.string = string  # an f-string: read as literal text up to a field
        self.field = field
        self.spec = False  # a field in its format spec: literal text again

    def value(self) -> int:
        """The depth of the deepest element, this frame's own levels included."""
        return max(self.best, self.count + self.inner) + self.cost


class _Scan:
    """One pass over a file, a statement at a time: brackets on a stack, blocks from the indentation."""

    def __init__(self, text: str, limit: int, strings_nest: bool) -> None:
        self.text = text
        self.limit = limit
        self.strings = 1 if strings_nest else 0
        self.widths = [0]  # the indentation stack, as the tokenizer keeps it
        self.bases = [0]  # the depth where the statements of each indentation level start
        self.elifs = [0]  # how many elif/else the current if chain at each level has had
        self.indent = ""  # the indentation of the statement before
        self.line_base = 0

    def run(self) -> int | None:
        """Return the offset where the nesting first goes past the limit, or None."""
        text, limit, end = self.text, self.limit, len(self.text)
        whole = _STATEMENT.match
        pos, indent = 0, ""
        while True:
            if self._start_statement(pos, indent):
                return pos
            # A statement is read in one step where its length shows it shallow
            # enough; else with its short brackets read so; else token by token.
            found = whole(text, pos)
            if found is not None and self.line_base + STATEMENT + found.end("body") - pos + GROUP_SLACK <= limit:
                after, indent = found.end(), found.group("indent") or ""
            else:
                after, indent, deep = self._statement(pos, short=True)
                if deep is not None:
                    after, indent, deep = self._statement(pos, short=False)
                    if deep is not None:
                        return deep
            if after >= end:
                return None
            pos = after

    def _statement(self, pos: int, *, short: bool) -> tuple[int, str, int | None]:
        """Read the statement at POS; return where the next starts, its indentation, and where it went too deep."""
        text, limit, strings = self.text, self.limit, self.strings
        plain, colons = _CODE.search, _CODE_COLONS.search
        start = pos
        top = frame = _Frame(STATEMENT)
        stack = [top]
        running = self.line_base + STATEMENT  # the depth here, counted from the top down
        while True:
            if frame.string or frame.spec:
                # f-string text (or a format spec): look for a field, or the end
                pos, running = self._literal(stack, pos, running)
                if pos < 0:
                    return len(text), "", -pos - 1
                frame = stack[-1]
                continue
            found = (colons if frame.lambdas or frame.field else plain)(text, pos)
            if found is None or found.lastindex == _END:
                found = None
                break
            kind = found.lastindex or 0  # one token group always matches
            at, pos = found.span(kind)  # the token, after what the expression skipped
            if kind == _NEWLINE:
                if len(stack) == 1:
                    break
            elif kind == _GROUP_TOKEN and short and pos - at <= SHORT:
                frame.count += 1  # the call or subscript it may be
                frame.inner = max(frame.inner, pos - at + GROUP_SLACK)
                if running + 1 + frame.inner > limit:
                    return pos, "", at
            elif kind == _OPEN or kind == _GROUP_TOKEN or kind == _FSTRING:
                if kind == _FSTRING:
                    frame.count += 1  # the string it is
                    frame = _Frame(0, found.group("quote"), "r" in found.group("prefix").lower(), string=True)
                else:
                    pos = at + 1
                    frame.count += 1  # the call or subscript this bracket may be
                    frame = _Frame(BRACKET)
                stack.append(frame)
                running += 1 + frame.cost
                if running > limit:
                    return pos, "", at
            elif kind == _CLOSE:
                if len(stack) == 1:
                    continue  # a stray closer: the parser reports it
                running = _close(stack, running)
                frame = stack[-1]
                if running + frame.inner > limit:
                    return pos, "", at
            elif kind == _COMMA:
                if not frame.lambdas:
                    frame.best = max(frame.best, frame.count + frame.inner)
                    running -= frame.count
                    frame.count = frame.inner = 0
            elif kind == _CHAIN or kind == _LAMBDA or kind == _STRING or kind == _DOTTED:
                step = (found.group().count(".") if kind == _DOTTED  # a.b.c: a level per dot
                        else strings if kind == _STRING else 1)
                frame.count += step
                running += step
                if running > limit:
                    return pos, "", at
                if kind == _LAMBDA:
                    frame.lambdas += 1
            elif kind == _COLON:
                if frame.field:
                    frame.spec = True  # Python reads a format spec from a field's first ':'
                elif found.end() - at == 2:  # ':='
                    frame.count += 1
                    running += 1
                    if running > limit:
                        return pos, "", at
                elif frame.lambdas:
                    frame.lambdas -= 1
            # comments, ellipses, line continuations and stray quotes nest nothing
        while len(stack) > 1:  # brackets or strings left open: a syntax error, but count them
            running = _close(stack, running)
        deep = start if self.line_base + top.value() > limit else None
        if found is None:
            return len(text), "", deep
        return pos, found.group("indent"), deep

    def _literal(self, stack: list[_Frame], pos: int, running: int) -> tuple[int, int]:
        """Scan f-string text from POS up to a field or the string's end; return where to go on, and the depth there.

        The position is -1 - OFFSET when the nesting went too deep at OFFSET.
        """
        frame = stack[-1]
        found = _LITERAL[frame.quote, frame.raw].search(self.text, pos)
        if found is None:  # unterminated: the parser reports it
            return len(self.text), _close_string(stack, running)
        token = found.group()
        if token == "{":  # a field: the parts of an f-string sit side by side
            stack.append(_Frame(BRACKET, frame.quote, frame.raw, field=True))
            running += BRACKET
            if running > self.limit:
                return -1 - found.start(), running
            return found.end(), running
        if token == "}":
            if frame.spec:  # the end of the field this spec belongs to
                return found.end(), _close(stack, running)
            return found.end(), running  # a stray '}': the parser reports it
        if token == "{{" or token == "}}" or token[0] == "\\":
            return found.end(), running
        # the closing quote; or a line end, which a one-line string may not cross
        running = _close_string(stack, running)
        return (found.end() if token == frame.quote else found.start()), running

    def _start_statement(self, pos: int, indent: str) -> bool:
        """Follow indentation and if/elif chains as the tokenizer would; True when the blocks alone are too deep."""
        elifs = self.elifs
        chained = self.text.startswith(("elif", "else"), pos) and not self.text[pos + 4:pos + 5].isidentifier()
        if indent != self.indent:
            self.indent = indent
            width = len(indent.rsplit("\f", 1)[-1].expandtabs(8))
            widths, bases = self.widths, self.bases
            if width > widths[-1]:
                widths.append(width)
                bases.append(self.line_base + BLOCK)
                elifs.append(0)
            else:
                while len(widths) > 1 and width < widths[-1]:
                    widths.pop()
                    bases.pop()
                    elifs.pop()
        elifs[-1] = elifs[-1] + 1 if chained else 0
        self.line_base = self.bases[-1] + elifs[-1]
        return self.line_base + STATEMENT > self.limit


def _close(stack: list[_Frame], running: int) -> int:
    """Close the innermost frame into the one holding it; return the running depth after it."""
    closed = stack.pop()
    holder = stack[-1]
    holder.inner = max(holder.inner, closed.value())
    return running - closed.count - closed.cost


def _close_string(stack: list[_Frame], running: int) -> int:
    """Close the innermost f-string and every field still open in it."""
    while stack[-1].field:
        running = _close(stack, running)
    return _close(stack, running)


# JSON and TOML read from a vendor tree (a manifest, patcher.toml, a Dockerfile's
# exec form) are a few levels deep; json's decoder and tomllib recurse per level
# and give up past a few hundred with a RecursionError that names no line.
MAX_DATA_NESTING = 100
_JSON = re.compile(r'"(?:[^"\\\r\n]|\\.)*"|[\[{]|[\]}]|\n')
_TOML = re.compile(r'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""|' + r"'''[\s\S]*?'''|"
                   r'"(?:[^"\\\r\n]|\\.)*"|' + r"'[^'\r\n]*'|#[^\r\n]*|[\[{]|[\]}]|\n")


def data_nesting_problem(text: str, limit: int = MAX_DATA_NESTING, *, toml: bool = False) -> TooDeep | None:
    """Return where JSON (or, with TOML, TOML) TEXT first nests arrays and tables deeper than LIMIT, or None."""
    depth, line = 0, 1
    for found in (_TOML if toml else _JSON).finditer(text):
        token = found.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return TooDeep(line, f"nests deeper than {limit} levels of arrays and tables")
        elif token in "]}":
            depth -= 1
        else:
            line += token.count("\n")
    return None
