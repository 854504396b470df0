"""Whether ``grep`` finds a line, and whether ``diff``/``cmp`` find two files alike, as the build's files decide.

``if ! grep -q MARKER FILE; then ...`` is how an install script patches a
file once: the reader reads the branch the text decides when it knows the
text (a file the build placed, a here-document, what a pipe holds) and the
pattern is one GNU grep and Python's re read alike (test_grep_output.py).
Otherwise the base image decides, and the branch is read as such. ``diff -q``/``cmp -s`` of two placed files compare their
bytes. Each row was run under bash 5.2 and dash 0.5.12 (GNU grep 3.8).
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, run_script

BOTH = ["bash i.sh", "dash i.sh"]
FILES = {"s/paged_attn.py": "import torch\nHAS_TRITON = False\n", "s/patched.py": "# patched by patcher\nx = 1\n"}


BOTH_WAYS = "the base image decides whether this holds: the reader follows the branch for 'yes', then the one for 'no'"


@pytest.mark.parametrize(("script", "placed"), [
    ("grep -q HAS_TRITON paged_attn.py && cp x.py /dest/hit.py\n", ["/dest/hit.py"]),
    ("grep -q triton paged_attn.py || cp x.py /dest/case.py\n", ["/dest/case.py"]),  # case counts
    ("grep -qi triton paged_attn.py && cp x.py /dest/fold.py\n", ["/dest/fold.py"]),
    ("if ! grep -q 'patched by patcher' patched.py; then cp x.py /dest/again.py; fi\n", []),
    ("if ! grep -q 'patched by patcher' paged_attn.py; then cp x.py /dest/once.py; fi\n", ["/dest/once.py"]),
    ("grep -qxF 'HAS_TRITON = False' paged_attn.py && cp x.py /dest/line.py\n", ["/dest/line.py"]),
    ("grep -qw TRITON paged_attn.py || cp x.py /dest/word.py\n", ["/dest/word.py"]),  # HAS_TRITON is one word
    ("grep -qv torch paged_attn.py && cp x.py /dest/other.py\n", ["/dest/other.py"]),  # a line without it
    ("echo HAS_TRITON | grep -q TRITON && cp x.py /dest/piped.py\n", ["/dest/piped.py"]),
    ("grep -q abc <<EOF\nxabcx\nEOF\ncp x.py /dest/s$?.py\n", ["/dest/s0.py"]),
    ("grep -qe nothere -e HAS_TRITON paged_attn.py && cp x.py /dest/either.py\n", ["/dest/either.py"]),
    ("grep --quie --fixed-str 'x = 1' patched.py && cp x.py /dest/long.py\n", ["/dest/long.py"]),
    ("diff -q paged_attn.py paged_attn.py >/dev/null && cp x.py /dest/same.py\n", ["/dest/same.py"]),
    ("cmp -s paged_attn.py patched.py || cp x.py /dest/differ.py\n", ["/dest/differ.py"]),
    # -F: '.' is only a dot, so 'a.c' is not in 'abc' (as a regular expression it would match).
    ("grep -qF a.c <<EOF\nabc\nEOF\ncp x.py /dest/s$?.py\n", ["/dest/s1.py"]),
    # -w: the first '==' of 'a===' follows a letter; the one a character on is a word of its own.
    ("grep -qw == <<EOF\na===\nEOF\ncp x.py /dest/s$?.py\n", ["/dest/s0.py"]),
    # fgrep is grep -F, egrep grep -E: each still reads the text.
    ("fgrep -q a.c <<EOF\nabc\nEOF\ncp x.py /dest/s$?.py\n", ["/dest/s1.py"]),
    ("egrep -q abc <<EOF\nxyz\nEOF\ncp x.py /dest/s$?.py\n", ["/dest/s1.py"]),
    ("diff --brief paged_attn.py paged_attn.py >/dev/null && cp x.py /dest/same.py\n", ["/dest/same.py"]),
    ("diff -u paged_attn.py patched.py >/dev/null || cp x.py /dest/differ.py\n", ["/dest/differ.py"]),
    ("cmp --quiet paged_attn.py patched.py || cp x.py /dest/differ.py\n", ["/dest/differ.py"]),
    ("cmp --silent patched.py patched.py && cp x.py /dest/same.py\n", ["/dest/same.py"]),
    ("cmp paged_attn.py paged_attn.py && cp x.py /dest/same.py\n", ["/dest/same.py"]),
    ("cmp paged_attn.py patched.py >/dev/null || cp x.py /dest/differ.py\n", ["/dest/differ.py"]),
])
@pytest.mark.parametrize("run", BOTH)
def test_the_text_decides_the_status(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run, files=FILES)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize("script", [
    "grep -q 'HAS_[A-Z]*' paged_attn.py && cp x.py /dest/u.py\n",  # a range: the image's locale decides
    "grep -q torch /usr/lib/python3/dist-packages/vllm/envs.py && cp x.py /dest/u.py\n",  # a base-image file
    "grep -A2 -q torch paged_attn.py && cp x.py /dest/u.py\n",  # an option the reader does not follow
    "diff -r /opt/a /opt/b && cp x.py /dest/u.py\n",
    "diff -qi paged_attn.py lower.py && cp x.py /dest/u.py\n",  # -i: alike but for case, which bytes do not tell
    "diff paged_attn.py paged_attn.py patched.py && cp x.py /dest/u.py\n",  # not two files: a usage error
    'echo "$(uname -r)" | grep -q generic && cp x.py /dest/u.py\n',  # what the pipe holds is the image's
    "grep -q generic <<EOF && cp x.py /dest/u.py\n$(uname -r)\nEOF\n",  # and so is what this here-document holds
])
def test_what_the_reader_cannot_decide_is_the_images(script: str) -> None:
    plan = run_script(script, files={**FILES, "s/lower.py": "import torch\nhas_triton = false\n"})
    assert in_dest(plan) == ["/dest/u.py"]  # the copy is followed, and the line is noted as assumed
    assert [n.kind for n in plan.notes] == ["assumed"]


@pytest.mark.parametrize(("line", "status"), [
    ("a foo_ b", 1), ("a foo- b", 0), ("_foo b", 1), ("a foo", 0),
    ("foo b", 0),  # at the start of the line
    ("foo foox", 0), ("xfoo foo xfoo", 0),  # one of several places it stands is a word of its own
])
@pytest.mark.parametrize("run", BOTH)
def test_grep_w_takes_an_underscore_on_either_side_for_part_of_the_word(line: str, status: int, run: str) -> None:
    # GNU grep -w: letters, digits and '_' make up words, so 'foo_' holds no word 'foo'; '-' ends one.
    plan = run_script(f"grep -qw foo <<EOF\n{line}\nEOF\ncp x.py /dest/s$?.py\n", run)
    assert in_dest(plan) == [f"/dest/s{status}.py"] and plan.notes == ()


@pytest.mark.parametrize(("line", "status"), [
    ("", 0), (" ", 0), ("-", 0), ("-a", 0), ("a-", 0), ("a--b", 0),  # a place no word character touches
    ("abc", 1), ("a b", 1), ("a-b", 1),  # every place between characters touches a letter
])
@pytest.mark.parametrize("run", BOTH)
def test_grep_w_with_an_empty_pattern_finds_a_place_between_non_word_characters(line: str, status: int,
                                                                                  run: str) -> None:
    plan = run_script(f"grep -qw '' <<EOF\n{line}\nEOF\ncp x.py /dest/s$?.py\n", run)
    assert in_dest(plan) == [f"/dest/s{status}.py"] and plan.notes == ()


# grep with a pattern the reader cannot work out: its status is left to the image (checked under bash 5.2.15
# and dash 0.5.12 with GNU grep).
def test_grep_with_a_pattern_the_reader_cannot_work_out_is_left_to_the_image() -> None:
    # The real build: uname -m is x86_64, which a.txt does not hold: only /dest/no lands.
    plan = run_script('if grep -q "$(uname -m)" a.txt; then cp x.py /dest/yes; else cp x.py /dest/no; fi\n',
                      files={"s/a.txt": "a\n"})
    assert in_dest(plan) == ["/dest/no", "/dest/yes"]
    assert notes(plan) == [("assumed", 1, 'grep -q "$(uname -m)" a.txt', BOTH_WAYS)]
