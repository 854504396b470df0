"""``.dockerignore`` keeps files out of the build context as Docker's pattern matcher does.

One pattern a line (``#`` comments and blank lines skipped, blanks around it
and a leading ``/`` ignored, the path cleaned); ``*`` and ``?`` stay within one
path component, ``**`` spans any number, ``[...]`` is a class (``[!...]`` or
``[^...]`` negated), ``\\`` escapes; a pattern that names a folder keeps
everything under it out; ``!`` takes back what earlier lines excluded, and
the last matching line decides.
"""

from __future__ import annotations

import pytest

from patcher.shipping.dockerignore import glob_regex, has_glob, is_ignored, parse_dockerignore
from tests.shipping.conftest import plan_of

RULES = parse_dockerignore(
    "# a comment\n\n  vllm  \n!vllm/keep.py\n/abs/*.pyc\n**/__pycache__\n*.md\ndocs/**\n!docs/**/*.txt\na?c\n[ab]x\n"
    "[!q]y\n[^r]z\nesc\\*ape\n./dot\nsub/../up\n!  spaced\nx[unclosed\r\nw\r\n")


def test_each_line_becomes_one_rule_in_order() -> None:
    assert [(r.pattern, r.exception) for r in RULES] == [
        ("vllm", False), ("vllm/keep.py", True), ("abs/*.pyc", False), ("**/__pycache__", False), ("*.md", False),
        ("docs/**", False), ("docs/**/*.txt", True), ("a?c", False), ("[ab]x", False), ("[!q]y", False),
        ("[^r]z", False), ("esc\\*ape", False), ("dot", False), ("up", False), ("spaced", True),
        ("x[unclosed", False), ("w", False)]


@pytest.mark.parametrize(("path", "ignored"), [
    ("vllm/a.py", True), ("vllm/keep.py", False), ("vllm", True), ("vllm2/a.py", False), ("a/vllm/x.py", False),
    ("abs/x.pyc", True), ("abs/d/x.pyc", False), ("abs/x.pyco", False),
    ("a/b/__pycache__/x", True), ("__pycache__/x", True), ("a/__pycache__", True), ("a/__pycache__x/y", False),
    ("README.md", True), ("sub/README.md", False), ("docs/README.md", True), ("docs/a/b.txt", False),
    ("docs/b.txt", False), ("docs/a/b.rst", True), ("abc", True), ("a/abc", False), ("ac", False), ("abbc", False),
    ("bx", True), ("cx", False), ("py", True), ("qy", False), ("rz", False), ("z", False),
    ("esc*ape", True), ("escXape", False), ("dot/x", True), ("up", True), ("spaced", False), ("x[unclosed", True),
    ("w", True), ("anything", False),
])
def test_a_path_is_ignored_when_the_last_rule_that_matches_it_or_a_folder_of_it_says_so(path: str,
                                                                                      ignored: bool) -> None:
    assert is_ignored(RULES, path) is ignored


def test_without_rules_nothing_is_ignored() -> None:
    assert not is_ignored((), "a/b.py") and parse_dockerignore("# only\n\n   \n") == ()


def test_a_later_exclusion_wins_over_an_earlier_exception() -> None:
    rules = parse_dockerignore("*.py\n!keep.py\nkeep.py\n")
    assert is_ignored(rules, "keep.py") and is_ignored(rules, "other.py") and not is_ignored(rules, "x.txt")


@pytest.mark.parametrize(("pattern", "matches", "misses"), [
    ("*.py", ["a.py", ".py"], ["d/a.py", "a.pyc"]),
    ("pkg/*", ["pkg/a", "pkg/b.py"], ["pkg", "pkg/a/b"]),
    ("p?g", ["pkg", "peg"], ["pg", "p/g"]),
    ("[mn]ain.py", ["main.py", "nain.py"], ["pain.py"]),
    ("**/x.py", ["x.py", "a/x.py", "a/b/x.py"], ["ax.py"]),
    ("a/**", ["a/b", "a/b/c"], ["ab"]),
])
def test_a_copy_glob_matches_whole_paths(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = glob_regex(pattern)
    assert all(regex.fullmatch(m) for m in matches) and not any(regex.fullmatch(m) for m in misses)


@pytest.mark.parametrize(("pattern", "glob"), [("a", False), ("a*", True), ("a?", True), ("a[b]", True),
                                              ("a]", False), ("", False)])
def test_has_glob(pattern: str, glob: bool) -> None:
    assert has_glob(pattern) is glob


def test_a_dockerignore_with_crlf_line_endings_reads_each_line_as_with_lf() -> None:
    # The vendor's files are often CRLF: a rule read with its '\r', or cut at it, would never match.
    rules = parse_dockerignore("# stale root copies\r\n/paged_attn.py\r\nvllm/\r\n!vllm/keep.py\r\n*.md")
    assert [(r.pattern, r.exception) for r in rules] == [
        ("paged_attn.py", False), ("vllm", False), ("vllm/keep.py", True), ("*.md", False)]
    assert is_ignored(rules, "paged_attn.py") and is_ignored(rules, "vllm/a.py") and is_ignored(rules, "README.md")
    assert not is_ignored(rules, "vllm/keep.py") and not is_ignored(rules, "qwen3_6_scripts/paged_attn.py")


@pytest.mark.parametrize("text", ["", "\n", "# nothing ignored yet\n"])
def test_an_empty_dockerignore_has_no_rules(text: str) -> None:
    # 'touch .dockerignore' is common: it keeps every file in the context.
    plan = plan_of({"Dockerfile": "FROM base\nCOPY . /app/\n", ".dockerignore": text, "main.py": ""})
    assert plan.ignore_rules == () and plan.image["/app/main.py"].source == "main.py"


def test_a_dockerignore_saved_with_a_byte_order_mark_keeps_its_first_pattern() -> None:
    # moby's reader drops the mark, so 'secret.py' on the first line is a pattern, not '\ufeffsecret.py'.
    plan = plan_of({"Dockerfile": "FROM base\nCOPY . /app/\n", "secret.py": "", "main.py": "",
                    ".dockerignore": "\ufeffsecret.py\n".encode()})
    assert "/app/secret.py" not in plan.image and "/app/main.py" in plan.image
