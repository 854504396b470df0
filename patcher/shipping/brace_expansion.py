"""Brace expansion as bash does it, before any other expansion: ``cp {paged_attn,mamba_cache}.py $DEST/``.

``PRE{a,b}POST`` gives one word per alternative (nested braces and several
groups multiply), ``{1..3}``, ``{01..10..2}`` and ``{a..e}`` give sequences;
a group without a comma or a valid sequence (``{}``, ``{a}``, ``find -exec
... {} +``) stays as written, and quoted braces or commas never count. POSIX
sh (dash) does none of this: the caller decides by the shell that runs the
script. A group that would give more than ``MAX_WORDS`` words is not built.
"""

from __future__ import annotations

import re
from typing import Union

from .shell_nodes import Lit, Part, Word

MAX_WORDS = 10_000

_Item = Union[str, Part]  # one unquoted character, or a part braces cannot split (quoted text, $x, $(...))
# ASCII digits only: bash reads '{١..٣}' as it stands.
_NUMBERS = re.compile(r"(-?[0-9]+)\.\.(-?[0-9]+)(?:\.\.(-?[0-9]+))?")
_LETTERS = re.compile(r"([A-Za-z])\.\.([A-Za-z])(?:\.\.(-?[0-9]+))?")


class TooManyWords(Exception):
    """The expansion would give more than MAX_WORDS words."""


def has_braces(word: Word) -> bool:
    """Whether bash would expand a brace group in ``word``."""
    items = _items(word)
    return _group(items) is not None


def expand_braces(word: Word) -> list[Word]:
    """The words bash makes of ``word`` by brace expansion (``[word]`` when it has no group); TooManyWords past the limit."""
    return [_word(items) for items in _expand(_items(word))]


def _items(word: Word) -> list[_Item]:
    items: list[_Item] = []
    for part in word:
        if isinstance(part, Lit) and not part.quoted:
            items.extend(part.text)
        else:
            items.append(part)
    return items


def _word(items: list[_Item]) -> Word:
    parts: list[Part] = []
    text = ""
    for item in items:
        if isinstance(item, str):
            text += item
            continue
        if text:
            parts.append(Lit(text))
            text = ""
        parts.append(item)
    if text:
        parts.append(Lit(text))
    return tuple(parts)


def _expand(items: list[_Item]) -> list[list[_Item]]:
    found = _group(items)
    if found is None:
        return [items]
    start, end, group = found
    alternatives: list[list[_Item]] = [list(text) for text in _sequence(group)] if isinstance(group, str) else group
    suffixes = _expand(items[end + 1:])
    words: list[list[_Item]] = []
    for alternative in alternatives:
        for middle in _expand(alternative):
            for suffix in suffixes:
                words.append(items[:start] + middle + suffix)
                if len(words) > MAX_WORDS:
                    raise TooManyWords
    return words


def _group(items: list[_Item]) -> tuple[int, int, list[list[_Item]] | str] | None:
    """The first brace group bash expands: (its '{', its '}', its alternatives or its sequence's text), else None."""
    for start, item in enumerate(items):
        if item != "{":
            continue
        depth, commas, end = 0, [], None
        for index in range(start + 1, len(items)):
            if items[index] == "{":
                depth += 1
            elif items[index] == "}":
                if depth == 0:
                    end = index
                    break
                depth -= 1
            elif items[index] == "," and depth == 0:
                commas.append(index)
        if end is None:
            continue  # no '}' closes it at its depth: a later '{' may still open a group
        if commas:
            bounds = [start, *commas, end]
            return start, end, [items[a + 1:b] for a, b in zip(bounds, bounds[1:])]
        inside = items[start + 1:end]
        text = "".join(i for i in inside if isinstance(i, str))
        if len(text) == len(inside) and _is_sequence(text):
            return start, end, text
    return None


def _is_sequence(text: str) -> bool:
    """Whether bash expands ``text`` as a sequence: its numbers fit bash's 64-bit integers (the step's size too;
    '{1..3..9223372036854775808}' stays as written)."""
    match = _NUMBERS.fullmatch(text) or _LETTERS.fullmatch(text)
    if match is None:
        return False
    ends = [] if match.re is _LETTERS else [match.group(1), match.group(2)]
    return all(_fits(number) for number in ends) and (match.group(3) is None or _fits(match.group(3), step=True))


def _fits(number: str, step: bool = False) -> bool:
    """Whether ``number`` is a 64-bit integer (a step's size too: -9223372036854775808 is none); read by its
    length first, as CPython refuses int() of thousands of digits."""
    digits = number.lstrip("-").lstrip("0") or "0"
    if len(digits) > 19:
        return False
    value = int(digits)
    return value < 1 << 63 or value == 1 << 63 and number.startswith("-") and not step


def _sequence(text: str) -> list[str]:
    """The words of the sequence ``1..5``, ``05..1..2`` or ``a..e`` (``text`` is one)."""
    numbers, letters = _NUMBERS.fullmatch(text), _LETTERS.fullmatch(text)
    match = numbers or letters
    assert match is not None
    step = abs(int(match.group(3) or 1)) or 1  # each number fits 64 bits (_is_sequence)
    if letters:
        first, last = ord(match.group(1)), ord(match.group(2))
    else:
        first, last = int(match.group(1)), int(match.group(2))
    if abs(last - first) // step + 1 > MAX_WORDS:
        raise TooManyWords
    values = range(first, last + 1, step) if first <= last else range(first, last - 1, -step)
    if letters:
        return [chr(value) for value in values]
    # A leading zero on either end pads every number to the wider end's width (bash 4+).
    padded = any(len(n.lstrip("-")) > 1 and n.lstrip("-").startswith("0") for n in match.group(1, 2))
    width = max(len(match.group(1)), len(match.group(2))) if padded else 0
    return [f"{value:0{width}d}" for value in values]
