"""``.dockerignore`` and COPY patterns match as Docker's translation does, in time linear in the path.

A vendor zip holds both the patterns and the names they are matched
against: translated naively to a regular expression, eight stars against a
60-letter name took 76 s. Matching now goes component by component, with
atomic star segments; these tests pin that it means what Docker's
translation means (against that translation itself, on random patterns)
and that no pattern makes it slow.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from patcher.errors import ShippingError
from patcher.shipping.dockerignore import Glob, is_ignored, parse_dockerignore
from tests.fixtures_hostile_inputs import run_patcher, with_dockerignore, with_long_names


def docker_translation(pattern: str) -> re.Pattern[str]:
    """Docker's own reading (moby/patternmatcher): '**/' is (.*/)?, another '**' is .*, '*' and '?' stay in a name."""
    out, index = [], 0
    while index < len(pattern):
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        char = pattern[index]
        out.append("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char))
        index += 1
    return re.compile("".join(out), re.DOTALL)


PATTERNS = st.text(alphabet="ab/*?", min_size=1, max_size=9).map(lambda p: posixpath.normpath(p.strip("/") or "."))
PATHS = st.lists(st.text(alphabet="ab", min_size=1, max_size=3), min_size=1, max_size=4).map("/".join)


@settings(max_examples=3000, deadline=None)
@given(PATTERNS, PATHS)
def test_a_pattern_matches_exactly_what_dockers_translation_matches(pattern: str, path: str) -> None:
    try:
        glob = Glob(pattern)
    except ShippingError:
        return  # more '**' inside names than patcher reads: refused, tested below
    assert glob.fullmatch(path) == bool(docker_translation(pattern).fullmatch(path))


@pytest.mark.parametrize("pattern,path,matches", [
    ("**/*.pyc", "a/b/c.pyc", True),
    ("**/*.pyc", "c.pyc", True),
    ("vllm/**", "vllm/a/b.py", True),
    ("vllm/**", "vllm", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a**b", "ax/yb", True),
    ("*.md", "docs/x.md", False),
    ("[!a]*", "b1", True),
    ("[!a]*", "a1", False),
    ("\\*", "*", True),
])
def test_the_common_forms_mean_what_docker_says(pattern: str, path: str, matches: bool) -> None:
    assert Glob(pattern).fullmatch(path) is matches


def test_a_pattern_full_of_stars_matches_long_names_at_once() -> None:
    rules = parse_dockerignore("*a" * 30 + "*b\n" + "**/" * 30 + "x\n" + "a**b**c\n")
    assert not is_ignored(rules, "/".join(["a" * 200] * 50))  # polynomial in the stars, once: hours
    assert not is_ignored(rules, "a" * 10_000)
    assert is_ignored(rules, "a" * 10_000 + "b")


def test_a_backtracking_dockerignore_in_a_vendor_tree_costs_no_time(tmp_path: Path) -> None:
    tree = with_long_names(tmp_path)
    result = run_patcher("inspect", tree)  # a regression backtracks for hours: the child's limit fails it
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("pattern,problem", [
    ("[]", "cannot be read: unterminated character set"),
    ("[z-a]", "cannot be read: bad character range z-a"),
    ("a**b**c**d**e**f", "has more than 4 '**' inside names"),
])
def test_a_pattern_regex_cannot_read_is_a_shipping_error_naming_its_line(pattern: str, problem: str) -> None:
    with pytest.raises(ShippingError) as caught:
        parse_dockerignore("# ok\n*.md\n" + pattern + "\n")
    assert str(caught.value).startswith(f".dockerignore:3: pattern {pattern!r} {problem}")


def test_a_pattern_with_too_many_double_stars_inside_names_says_to_put_them_between_folders() -> None:
    with pytest.raises(ShippingError) as caught:
        parse_dockerignore("a**b**c**d**e**f\n")
    assert caught.value.hint == "write '**/' between folders instead"
    assert str(caught.value).endswith("(write '**/' between folders instead)")


def test_a_trailing_double_star_does_not_count_against_the_limit_of_those_inside_names() -> None:
    # '/**' takes whole folders: only a '**' inside a name doubles the patterns to try.
    rules = parse_dockerignore("a**b**c**d**e/**\n")
    assert is_ignored(rules, "aXbcYdZe/f/g.py") and not is_ignored(rules, "aXbcYdZe")


def test_a_bad_pattern_in_a_vendor_tree_is_exit_2_not_a_crash(tmp_path: Path) -> None:
    result = run_patcher("inspect", with_dockerignore(tmp_path, "[z-a]\n"))
    assert result.returncode == 2
    assert result.stderr.startswith("error: .dockerignore:1: pattern '[z-a]' cannot be read: bad character range")
