"""Parse POSIX sh (and the bash forms install scripts use) into a tree, keeping each command's line.

The grammar is the shell's: lists with ``;``, ``&`` and newlines, ``&&``/``||``,
pipelines with ``!``, simple commands with assignments and redirections
(here-documents included), ``if``/``for``/``while``/``until``/``case``,
``{ ...; }``, ``( ... )``, function definitions, and bash's arrays and
``((...))``. The tree is ``shell_nodes.py``'s, the tokens ``shell_lexer.py``'s.
A script that does not parse raises ``ShellSyntaxError`` with the line where
the parser stopped.
"""

from __future__ import annotations

import re
from typing import Union

from .shell_lexer import NAME, Lexer, Token
from .shell_nodes import (DECLARATIONS, AndOr, Arithmetic, ArithmeticFor, Case, Command, Compound, Conditional, For,
                          FunctionDef, Group, If, Lit, Logic, Loop, Param, Part, Pipeline, Redirect, Sequence,
                          ShellSyntaxError, Simple, Sub, Test, Word, decimal, plain_text)

_REDIRECTS = ("<<-", "<<<", "<<", ">>", "<&", ">&", "<>", ">|", "&>>", "&>", "<", ">")
_RESERVED = frozenset({"if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until",
                       "for", "in", "{", "}", "!", "function"})


def heredoc_word(body: str) -> Word:
    """An unquoted here-document's body as one word: ``$`` and backquotes expand, ``\\`` escapes only ``$ ` \\``."""
    return tuple(Lexer(body)._double_quoted(heredoc=True))


# How many levels of $(...) inside $(...) a parse checks: sh parses them all with the command, but a hostile
# script's thousands would recurse past Python's limit; deeper ones are parsed when they run (an error there
# makes an unknown value, not a stop).
CHECKED_SUBSTITUTIONS = 16


def parse_script(text: str, first_line: int = 1, bash: bool = False, substitution: bool = False,
                 nested: int = 0, dash: bool = False) -> Sequence:
    """Parse a whole script (or a ``sh -c`` string, a RUN line, a command substitution).

    ``bash``: bash runs it, so ``NAME=(a b)`` is an array assignment (a syntax error for dash).
    ``substitution``: the text of a ``$(...)``, where a here-document must close before the ``)``.
    ``nested``: how many substitutions around it were checked with the command they are in.
    ``dash``: dash runs it (not the base image's sh, which may be bash): bash's ``$'...'``, ``&>``, ``|&``,
    ``<<<``, ``;&`` and ``function`` are not read as bash reads them.
    """
    text = text.replace("\r\n", "\n")  # a byte-order mark is read as sh reads it: part of the first word
    tokens = Lexer(text, first_line, bash, heredoc_to_end=not substitution, dash=dash).run()
    return _Parser(tokens, text, bash, nested, dash).program()


# bash's [[ ]] tests: those that take one word after them (in [[ ]], -a is a file test, not 'and'), and the
# operators between two words.
COND_UNARY = frozenset("-a -b -c -d -e -f -g -h -k -p -r -s -t -u -w -x -G -L -N -O -S -n -z -o -v -R".split())
COND_BINARY = frozenset({"==", "=", "!=", "=~", "-nt", "-ot", "-ef", "-eq", "-ne", "-lt", "-le", "-gt", "-ge",
                         "<", ">"})


class _ConditionParser:
    """The expression of ``[[ ITEMS ]]`` by bash's grammar (``!`` binds tightest, then ``&&``, then ``||``);
    a form bash refuses (``[[ -f == -f ]]``, ``[[ a b ]]``) is a ShellSyntaxError."""

    def __init__(self, items: list[Union[Word, str]], line: int):
        self.items, self.line, self.index = items, line, 0

    def parse(self) -> Union[Test, Logic]:
        expression = self._either()
        if self.index != len(self.items):
            raise ShellSyntaxError("syntax error in conditional expression", self.line)
        return expression

    def _name(self, offset: int = 0) -> str | None:
        """The item at the index + OFFSET as an operator or an unquoted word's text; None past the end."""
        item = self.items[self.index + offset] if self.index + offset < len(self.items) else None
        return item if isinstance(item, str) or item is None else plain_text(item)

    def _is_word(self, offset: int = 0) -> bool:
        return self.index + offset < len(self.items) and not isinstance(self.items[self.index + offset], str)

    def _word(self) -> Word:
        word = self.items[self.index]
        assert not isinstance(word, str)
        self.index += 1
        return word

    def _either(self) -> Union[Test, Logic]:
        parts = [self._both()]
        while self._name() == "||":
            self.index += 1
            parts.append(self._both())
        return parts[0] if len(parts) == 1 else Logic("||", tuple(parts))

    def _both(self) -> Union[Test, Logic]:
        parts = [self._negated()]
        while self._name() == "&&":
            self.index += 1
            parts.append(self._negated())
        return parts[0] if len(parts) == 1 else Logic("&&", tuple(parts))

    def _negated(self) -> Union[Test, Logic]:
        if self._name() == "!":
            self.index += 1
            return Logic("!", (self._negated(),))
        if self._name() == "(":
            self.index += 1
            inside = self._either()
            if self._name() != ")":
                raise ShellSyntaxError("syntax error in conditional expression", self.line)
            self.index += 1
            return inside
        if not self._is_word():
            raise ShellSyntaxError("syntax error in conditional expression", self.line)
        op = self._name()
        if op in COND_UNARY and self._is_word(1):  # bash reads a unary test first: '-f == -f' is -f of '=='
            self.index += 1
            return Test(op, (self._word(),))
        if self._name(1) in COND_BINARY and self._is_word(2):
            left = self._word()
            op = self._name()
            self.index += 1
            return Test(op or "", (left, self._word()))
        return Test("", (self._word(),))


def parse_runnable(text: str, first_line: int = 1, bash: bool = False,
                   dash: bool = False) -> tuple[Sequence, ShellSyntaxError | None]:
    """The commands sh runs before a syntax error stops it, and that error (None: the whole text parses).

    sh reads a script (a ``-c`` string, ``eval``'s text, a sourced file) a line at a time and runs each
    complete command as it is read: the commands on the lines before the one a syntax error is on run; the
    commands on that line, and a compound command still open around it, do not (nor a list of commands run on
    over lines inside quotes to the error's line).

    One lexing and one parse, each in time linear in the text, however far back the last complete command
    is (no retry line by line): the parser keeps the script's commands a newline ended before the error; a
    lexing error keeps the tokens read up to the last newline before it, and parses those.
    """
    text = text.replace("\r\n", "\n")  # as parse_script reads it
    lexer = Lexer(text, first_line, bash, heredoc_to_end=True, dash=dash)
    found: ShellSyntaxError | None = None
    try:
        tokens = lexer.run()
    except ShellSyntaxError as error:  # a quote (or a substitution) left open: the lines before its own
        found = error
        tokens = lexer.tokens
        last = next((at for at in range(len(tokens) - 1, -1, -1) if tokens[at].kind == "newline"), -1)
        ended = tokens[last] if last >= 0 else None
        tokens = tokens[:last + 1] + [Token("eof", "", ended.line + 1 if ended else first_line,
                                            ended.end if ended else 0, ended.end if ended else 0)]
    parser = _Parser(tokens, text, bash, 0, dash)
    try:
        return parser.program(), found
    except ShellSyntaxError as error:  # the commands on the lines before the one the error stops in run
        return Sequence(tuple(parser.top_items[:parser.complete])), found or error


class _Parser:
    def __init__(self, tokens: list[Token], text: str, bash: bool = False, nested: int = 0, dash: bool = False):
        self.tokens = tokens
        self.text = text
        self.bash = bash
        self.nested = nested
        self.dash = dash
        self.index = 0
        self.top_line = tokens[0].line  # where the script's command being read starts
        # The script's own commands parsed so far, and how many of them a newline has ended: those sh has run
        # when a syntax error stops it further on.
        self.top_items: list[AndOr] = []
        self.complete = 0

    @property
    def token(self) -> Token:
        return self.tokens[self.index]

    def _advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        if token.kind == "word":
            self._check_substitutions(token.word)
        elif token.kind == "heredoc" and not self.bash and token.redirect_body:
            # dash reads an unquoted here-document's $(...) and backquotes with the command; bash when it runs.
            self._check_substitutions(heredoc_word("\n".join(token.redirect_body) + "\n"))
        return token

    def _check_substitutions(self, word: Word) -> None:
        """A ``$(...)`` (and ``<(...)``) is parsed with the command it is in, by bash and dash alike (dash's
        backquotes too): a syntax error there is the command's, and sh runs none of it (bash 5.2, dash 0.5.12)."""
        if self.nested >= CHECKED_SUBSTITUTIONS:
            return
        for part in word:
            if isinstance(part, Sub) and not (part.backquoted and self.bash):
                parsed = parse_script(part.text, part.line, self.bash, substitution=True, nested=self.nested + 1,
                                      dash=self.dash)
                object.__setattr__(part, "parsed", ((self.bash, self.dash), parsed))  # frozen for users; set once
            elif isinstance(part, Param):
                self._check_substitutions(part.arg or ())
                self._check_substitutions(part.replacement)

    def _is_word(self, *values: str) -> bool:
        token = self.token
        return token.kind == "word" and plain_text(token.word) in values

    def _is_op(self, *values: str) -> bool:
        return self.token.kind == "op" and self.token.value in values

    def _expect_word(self, value: str) -> None:
        if not self._is_word(value):
            found = self.token.value.strip() or "the end"
            raise ShellSyntaxError(f"expected '{value}', found '{found}'", self.token.line)
        self._advance()

    def _linebreak(self) -> None:
        while self.token.kind == "newline":
            self._advance()

    def _text(self, start: int, end: int) -> str:
        text = " ".join(self.text[start:end].replace("\\\n", "").split())  # continued lines joined, as sh reads them
        return text if len(text) <= 120 else text[:117] + "..."

    def program(self) -> Sequence:
        try:
            sequence = self.sequence(())
            if self.token.kind != "eof":
                raise ShellSyntaxError(f"unexpected '{self.token.value.strip()}'", self.token.line)
        except ShellSyntaxError as error:
            error.start = min(error.start, self.top_line)
            raise
        return sequence

    def compound_list(self, ends: tuple[str, ...]) -> Sequence:
        """The commands of an ``if``, a loop or a group, up to ``ends``: bash and dash refuse an empty one
        (``if true; then fi``, ``{ }``, ``while false; do done``) as a syntax error at the word that ends it."""
        body = self.sequence(ends)
        if not body.items and self.token.kind != "eof":  # at the end, the caller says what is not closed
            found = self.token.value.strip() or "the end"
            raise ShellSyntaxError(f"unexpected '{found}': nothing to run before it", self.token.line)
        return body

    def sequence(self, ends: tuple[str, ...]) -> Sequence:
        """Commands until one of the reserved words (or operators) ``ends`` starts a token."""
        items: list[AndOr] = []
        if not ends:
            self.top_items = items
        while True:
            read = self.index
            self._linebreak()
            if not ends:  # the script's own list: where each of its commands starts
                self.top_line = self.token.line
                if self.index > read:  # a newline ends the commands before it: sh runs them before reading on
                    self.complete = len(items)
            if self.token.kind == "eof" or self._is_word(*ends) or self._is_op(*ends):
                return Sequence(tuple(items))
            if self._is_op(";;", ";&", ";;&"):
                return Sequence(tuple(items))
            item = self.and_or()
            if self._is_op("&"):
                self._advance()
                item = AndOr(item.first, item.rest, True)
            elif self._is_op(";"):
                self._advance()
            elif self.token.kind not in ("newline", "eof") and not self._is_word(*ends) and not self._is_op(*ends, ";;", ";&", ";;&"):
                raise ShellSyntaxError(f"unexpected '{self.token.value.strip()}'", self.token.line)
            items.append(item)

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self._is_op("&&", "||"):
            operator = self._advance().value
            self._linebreak()
            rest.append((operator, self.pipeline()))
        return AndOr(first, tuple(rest))

    def pipeline(self) -> Pipeline:
        negated = False
        if self._is_word("!"):
            bang = self._advance()
            negated = True
            while self.bash and self._is_word("!"):  # bash: '! ! cmd' negates twice (dash: a syntax error)
                self._advance()
                negated = not negated
            if self.bash and (self.token.kind in ("newline", "eof") or self._is_op(";")):
                # bash: '!' with no command after it runs nothing and fails (status 1); dash refuses it.
                return Pipeline((Command(Simple((), (), (), bang.line, "!")),), negated)
        commands = [self.command()]
        while self._is_op("|", "|&"):
            self._advance()
            self._linebreak()
            commands.append(self.command())
        return Pipeline(tuple(commands), negated)

    def command(self) -> Command:
        token = self.token
        start = token.start
        if token.kind == "word":
            keyword = plain_text(token.word)
            if keyword == "if":
                node: Union[Simple, Compound, FunctionDef] = self._if(start)
            elif keyword == "for":
                node = self._for(start)
            elif keyword in ("while", "until"):
                node = self._loop(start, keyword == "until")
            elif keyword == "case":
                node = self._case(start)
            elif keyword == "{":
                self._advance()
                body = self.compound_list(("}",))
                self._expect_word("}")
                node = Group(body, False, token.line, self._text(start, self.tokens[self.index - 1].end))
            elif keyword == "[[" and self.bash:
                node = self._conditional(start)
            elif keyword == "function" and not self.dash:  # dash: a command named 'function'
                return self._function(start, keyword=True)
            elif (keyword is not None and NAME.fullmatch(keyword) and self.tokens[self.index + 1].kind == "op"
                  and self.tokens[self.index + 1].value == "(" and self.tokens[self.index + 2].kind == "op"
                  and self.tokens[self.index + 2].value == ")"):
                return self._function(start, keyword=False)
            elif keyword in _RESERVED and not (keyword == "function" and self.dash):  # '!' only starts a pipeline
                raise ShellSyntaxError(f"unexpected '{keyword}'", token.line)
            else:
                return Command(self._simple())
            return Command(node, self._redirects())
        if token.kind == "arith":
            self._advance()
            return Command(Arithmetic(token.value, token.line, self._text(start, token.end)), self._redirects())
        if self._is_op("("):
            self._advance()
            body = self.compound_list((")",))
            if not self._is_op(")"):
                raise ShellSyntaxError("a '(' is not closed", token.line)
            self._advance()
            group = Group(body, True, token.line, self._text(start, self.tokens[self.index - 1].end))
            return Command(group, self._redirects())
        if token.kind in ("io",) or (token.kind == "op" and token.value in _REDIRECTS):
            return Command(self._simple())
        found = token.value.strip() or "the end"
        raise ShellSyntaxError(f"expected a command, found '{found}'", token.line)

    def _conditional(self, start: int) -> Conditional:
        """bash's ``[[ ... ]]``: up to the word ``]]``; inside, ``&&``, ``||``, parentheses, ``<`` and ``>`` are the
        expression's, and a newline may follow any of them."""
        line = self.token.line
        self._advance()
        items: list[Union[Word, str]] = []
        while not (self.token.kind == "word" and plain_text(self.token.word) == "]]"):
            token = self.token
            if token.kind == "eof":
                raise ShellSyntaxError("a '[[' is not closed", line)
            if token.kind == "word" and plain_text(token.word) == "=~" and items:
                items.append(token.word)
                self._advance()
                items.append(self._regex_word(line, items.count("(") > items.count(")")))
                continue
            if token.kind == "word":
                items.append(token.word)
            elif token.kind == "op" and token.value in ("&&", "||", "(", ")", "<", ">"):
                items.append(token.value)
            elif token.kind != "newline":
                raise ShellSyntaxError(f"unexpected '{token.value.strip()}' in [[ ]]", token.line)
            self._advance()
        self._advance()
        if not items:
            raise ShellSyntaxError("syntax error in conditional expression", line)
        expression = _ConditionParser(items, line).parse()
        return Conditional(expression, line, self._text(start, self.tokens[self.index - 1].end))

    def _regex_word(self, line: int, grouped: bool = False) -> Word:
        """The right side of ``=~``: one word running on through ``(``, ``)``, ``|``, ``<`` and ``>`` written
        against it, and through blanks inside parentheses, as bash reads a regular expression. ``grouped``: the
        test is inside a ``( ... )`` of the ``[[ ]]``, whose ``)`` ends the regex (``[[ ( ab =~ a) ]]``) where
        it closes no ``(`` of the regex."""
        parts: list[Part] = []
        depth, end = 0, None
        while self.token.kind in ("word", "op"):
            token = self.token
            glued = end is None or token.start == end or depth > 0
            if not glued:  # a ']]' glued to it is the regex's too: bash reads '[[ ab =~ a(b)]] ]]' as the regex 'a(b)]]'
                break
            if token.kind == "op" and token.value not in ("(", ")", "|", "<", ">"):
                break
            if token.kind == "op":
                if token.value == ")" and not depth and grouped:  # closes the group around the test
                    break
                depth += {"(": 1, ")": -1}.get(token.value, 0)
                if depth < 0:
                    break
                parts.append(Lit(token.value))
            else:
                if end is not None and token.start > end:
                    parts.append(Lit(self.text[end:token.start]))  # blanks inside parentheses are the pattern's
                parts.extend(token.word)
            end = token.end
            self._advance()
        if not parts or depth:
            raise ShellSyntaxError("unexpected argument to conditional binary operator", line)
        return tuple(parts)

    def _redirect(self) -> Redirect:
        fd = None
        if self.token.kind == "io":
            fd = decimal(self._advance().value)
        operator = self._advance().value
        target = self.token
        if target.kind not in ("word", "heredoc", "heredoc-quoted"):
            raise ShellSyntaxError(f"'{operator}' needs a target", target.line)
        self._advance()
        if target.kind.startswith("heredoc"):
            body = "\n".join(target.redirect_body or []) + ("\n" if target.redirect_body else "")
            return Redirect(operator, target.word, fd, body, target.kind == "heredoc-quoted")
        return Redirect(operator, target.word, fd)

    def _redirects(self) -> tuple[Redirect, ...]:
        found = []
        while self.token.kind == "io" or (self.token.kind == "op" and self.token.value in _REDIRECTS):
            found.append(self._redirect())
        return tuple(found)

    def _simple(self) -> Simple:
        first = self.token
        assignments: list[tuple[str, Word]] = []
        arrays: list[tuple[str, tuple[Word, ...]]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        end = first.end
        testing = False  # inside [[ ... ]]: && || ( ) < > are operands of the test, up to the closing ]]
        while True:
            token = self.token
            if testing and token.kind == "op" and token.value in ("&&", "||", "(", ")", "<", ">"):
                words.append((Lit(token.value, True),))
                self._advance()
                end = token.end
            elif token.kind == "io" or (token.kind == "op" and token.value in _REDIRECTS):
                redirects.append(self._redirect())
                end = self.tokens[self.index - 1].end
            elif token.kind == "word":
                declaring = len(words) > 0 and plain_text(words[0]) in DECLARATIONS
                assignment = split_assignment(token.word) if not words or declaring else None
                following = self.tokens[self.index + 1]
                if self.bash and assignment is not None and not assignment[1] and following.kind == "op" and \
                        following.value == "(" and following.start == token.end:
                    # bash's array assignment, NAME=(a b c), also as a declaration's argument (local -a NAME=(...)).
                    self._advance()
                    arrays.append((assignment[0], self._array_elements()))
                    if declaring:
                        words.append((Lit(assignment[0].rstrip("+")),))
                    end = self.tokens[self.index - 1].end
                    continue
                if declaring:
                    assignment = None  # a declaration's NAME=VALUE argument is a word (run_simple expands it)
                element = split_element_assignment(token.word) if self.bash and not words and not assignment \
                    else None
                if element is not None:  # bash's NAME[SUBSCRIPT]=value: one element of an array
                    name, subscript, value = element
                    assignment = (f"{name.rstrip('+')}[{subscript}]{'+' if name.endswith('+') else ''}", value)
                if assignment is not None:
                    assignments.append(assignment)
                else:
                    words.append(token.word)
                    keyword = plain_text(token.word)
                    # dash has no [[: there it is a command like any other, and '&&' ends it.
                    testing = keyword == "[[" and not self.dash if len(words) == 1 else testing and keyword != "]]"
                self._advance()
                end = token.end
            else:
                break
        if not assignments and not words and not redirects and not arrays:
            raise ShellSyntaxError(f"expected a command, found '{self.token.value.strip() or 'the end'}'", first.line)
        return Simple(tuple(assignments), tuple(words), tuple(redirects), first.line, self._text(first.start, end),
                      tuple(arrays))

    def _array_elements(self) -> tuple[Word, ...]:
        """The words of ``(a b c)`` after ``NAME=``, up to its ``)`` (lines between them allowed)."""
        opened = self._advance().line  # the '('
        elements: list[Word] = []
        while not self._is_op(")"):
            token = self.token
            if token.kind == "newline":
                self._advance()
                continue
            if token.kind == "eof":  # bash names the line the '(' opened on
                raise ShellSyntaxError("unexpected 'end of file' in an array", opened)
            if token.kind != "word":
                raise ShellSyntaxError(f"unexpected '{token.value.strip()}' in an array", token.line)
            elements.append(token.word)
            self._advance()
        self._advance()  # the ')'
        return tuple(elements)

    def _if(self, start: int) -> If:
        line = self.token.line
        self._advance()
        branches = []
        condition = self.compound_list(("then",))
        self._expect_word("then")
        body = self.compound_list(("elif", "else", "fi"))
        branches.append((condition, body))
        orelse = None
        while True:
            if self._is_word("elif"):
                self._advance()
                condition = self.compound_list(("then",))
                self._expect_word("then")
                branches.append((condition, self.compound_list(("elif", "else", "fi"))))
            elif self._is_word("else"):
                self._advance()
                orelse = self.compound_list(("fi",))
            else:
                self._expect_word("fi")
                break
        return If(tuple(branches), orelse, line, self._text(start, self.tokens[self.index - 1].end))

    def _for(self, start: int) -> For | ArithmeticFor:
        line = self.token.line
        self._advance()
        if self.token.kind == "arith":
            clauses = self._advance().value.split(";")
            if len(clauses) != 3:
                raise ShellSyntaxError("'for ((' needs three expressions", line)
            body = self._do_group()
            init, condition, step = clauses
            return ArithmeticFor(init, condition, step, body, line, self._text(start, self.tokens[self.index - 1].end))
        name = plain_text(self.token.word) if self.token.kind == "word" else None
        if name is None or not NAME.fullmatch(name):
            raise ShellSyntaxError("'for' needs a variable name", line)
        self._advance()
        words: list[Word] | None = None
        self._linebreak()
        if self._is_word("in"):
            self._advance()
            words = []
            while self.token.kind == "word":
                words.append(self._advance().word)
        body = self._do_group()
        return For(name, None if words is None else tuple(words), body, line,
                   self._text(start, self.tokens[self.index - 1].end))

    def _do_group(self) -> Sequence:
        """A for loop's ``[;] do BODY done``."""
        if self._is_op(";"):
            self._advance()
        self._linebreak()
        self._expect_word("do")
        body = self.compound_list(("done",))
        self._expect_word("done")
        return body

    def _loop(self, start: int, until: bool) -> Loop:
        line = self.token.line
        self._advance()
        condition = self.compound_list(("do",))
        self._expect_word("do")
        body = self.compound_list(("done",))
        self._expect_word("done")
        return Loop(until, condition, body, line, self._text(start, self.tokens[self.index - 1].end))

    def _case(self, start: int) -> Case:
        line = self.token.line
        self._advance()
        if self.token.kind != "word":
            raise ShellSyntaxError("'case' needs a word", line)
        subject = self._advance().word
        self._linebreak()
        self._expect_word("in")
        items = []
        while True:
            self._linebreak()
            if self._is_word("esac"):
                self._advance()
                break
            if self._is_op("("):
                self._advance()
            patterns = []
            while True:
                if self.token.kind != "word":
                    raise ShellSyntaxError("a case pattern is missing", self.token.line)
                patterns.append(self._advance().word)
                if self._is_op("|"):
                    self._advance()
                    continue
                break
            if not self._is_op(")"):
                raise ShellSyntaxError("a case pattern needs ')'", self.token.line)
            self._advance()
            body = self.sequence(("esac",))
            ending = self.token.value if self._is_op(";;", ";&", ";;&") else ";;"
            items.append((tuple(patterns), body, ending))
            if self._is_op(";;", ";&", ";;&"):
                self._advance()
            elif not self._is_word("esac"):
                raise ShellSyntaxError("expected ';;' or 'esac'", self.token.line)
        return Case(subject, tuple(items), line, self._text(start, self.tokens[self.index - 1].end))

    def _function(self, start: int, keyword: bool) -> Command:
        line = self.token.line
        if keyword:
            self._advance()
        name = plain_text(self._advance().word) or ""
        if self._is_op("("):
            self._advance()
            if not self._is_op(")"):
                raise ShellSyntaxError("expected ')' after '('", line)
            self._advance()
        self._linebreak()
        body = self.command()
        return Command(FunctionDef(name, body, line, self._text(start, self.tokens[self.index - 1].end)))


def split_element_assignment(word: Word) -> tuple[str, str, Word] | None:
    """bash's ``NAME[SUBSCRIPT]=value``: the name (with a ``+`` for ``+=``), the subscript as written (``$i``
    kept), the value's parts."""
    head = ""
    for index, part in enumerate(word):
        if isinstance(part, Param) and part.op == "" and not part.quoted and head:
            head += f"${part.name}"
            continue
        if not isinstance(part, Lit) or part.quoted:
            return None
        match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\[([^\]]*)\](\+?)=", head + part.text)
        if match:
            rest = (head + part.text)[match.end():]
            value: list[Part] = [Lit(rest, False)] if rest else []
            return match.group(1) + match.group(3), match.group(2), tuple(value) + word[index + 1:]
        head += part.text
        if not _ELEMENT_HEAD.fullmatch(head):  # past NAME[ and its subscript's start: not NAME[SUBSCRIPT]=
            return None
    return None


# What may come before the end of NAME[SUBSCRIPT]=: the name, then the subscript read so far, which may hold
# '=' (bash's arr[x=$i]=v sets x to $i, then arr's element $i to v).
_ELEMENT_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*)?")


def split_assignment(word: Word) -> tuple[str, Word] | None:
    """``NAME=value`` as a command prefix: the name, and the value's parts."""
    if not word or not isinstance(word[0], Lit) or word[0].quoted:
        return None
    head = word[0].text
    match = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=", head)
    if not match:
        return None
    rest = head[match.end():]
    value: list[Part] = [Lit(rest, False)] if rest else []
    value.extend(word[1:])
    return match.group(1) + match.group(2), tuple(value)
