"""bash's indexed arrays: ``NAME=(a b)``, ``NAME+=(c)``, ``declare -a``/``local -a NAME=(...)``, and their
expansions ``"${NAME[@]}"`` (a word per element), ``${NAME[*]}``, ``${NAME[I]}`` (I a number, a negative one
from the end, or a variable), ``${#NAME[@]}`` and ``$NAME`` (element 0).

The elements are expanded as command words are: split and globbed
(``files=(*.py)``). An array whose keys the reader does not follow
(``declare -A``, ``[KEY]=VALUE``) or whose elements it cannot know is an
unknown value, so a path built from it is unread, not guessed. For dash
(and so under the base image's ``sh``) the line is a syntax error, and the
script is not read on.
"""

from __future__ import annotations

import pytest

from patcher.shipping import ShipPlan
from tests.shipping.conftest import in_dest, notes, run_script

ARRAY = "files=(\n  x.py   # the fix\n  \"sub/y.py\"\n)\nfiles+=(more.py)\n"


def read(script: str, run: str = "bash i.sh") -> ShipPlan:
    return run_script(script, run, {"s/two words.py": ""})


def placed(plan: ShipPlan) -> dict[str, str]:
    return {path: plan.image[path].source for path in in_dest(plan)}


UNWORKED = "a path that depends on a value the reader cannot work out"


def test_a_bash_array_assignment_is_read_and_the_script_goes_on() -> None:
    plan = read(f"{ARRAY}cp x.py /dest/after.py\n")
    assert plan.image["/dest/after.py"].source == "s/x.py" and plan.notes == ()


# Each row's files are those bash 5.2 placed for the same script in a folder holding the same files.
@pytest.mark.parametrize(("script", "files"), [
    ('files=(x.py sub/y.py); for f in "${files[@]}"; do cp "$f" /dest/; done',
     {"/dest/x.py": "s/x.py", "/dest/y.py": "s/sub/y.py"}),
    ('files=(x.py); files+=(sub/y.py); cp "${files[1]}" /dest/one.py; cp "${files[0]}" /dest/zero.py',
     {"/dest/one.py": "s/sub/y.py", "/dest/zero.py": "s/x.py"}),
    ('files=(*.py); for f in "${files[@]}"; do cp "$f" /dest/; done',
     {"/dest/two words.py": "s/two words.py", "/dest/x.py": "s/x.py"}),
    ('files=("two words.py" x.py); cp "${files[0]}" /dest/; cp ${files[1]} /dest/',
     {"/dest/two words.py": "s/two words.py", "/dest/x.py": "s/x.py"}),
    ('files=("two words.py"); cp ${files[@]} /dest/ || true; cp x.py /dest/after.py',  # unquoted: split
     {"/dest/after.py": "s/x.py"}),
    ('files=(x.py sub/y.py); cp "${files[-1]}" /dest/last.py; n=${#files[@]}; cp x.py /dest/n$n.py',
     {"/dest/last.py": "s/sub/y.py", "/dest/n2.py": "s/x.py"}),
    ("files=(x.py sub/y.py); cp $files /dest/plain.py", {"/dest/plain.py": "s/x.py"}),
    ('declare -a files=(x.py sub/y.py); cp "${files[@]}" /dest/',
     {"/dest/x.py": "s/x.py", "/dest/y.py": "s/sub/y.py"}),
    ('f() { local -a a=(x.py); cp "${a[0]}" /dest/in.py; }; a=(sub/y.py); f; cp "${a[0]}" /dest/out.py',
     {"/dest/in.py": "s/x.py", "/dest/out.py": "s/sub/y.py"}),
    ('files=(x.py); files=sub/y.py; cp "${files[0]}" /dest/reassigned.py', {"/dest/reassigned.py": "s/sub/y.py"}),
    ('files=(); cp x.py /dest/n${#files[@]}.py; for f in "${files[@]}"; do cp x.py /dest/never.py; done',
     {"/dest/n0.py": "s/x.py"}),
    ('i=1; files=(x.py sub/y.py); cp "${files[$i]}" /dest/i.py; cp "${files[i]}" /dest/j.py',
     {"/dest/i.py": "s/sub/y.py", "/dest/j.py": "s/sub/y.py"}),
    ("files=(x.py sub/y.py); unset files; cp x.py /dest/n${#files[@]}.py", {"/dest/n0.py": "s/x.py"}),
    ('files=(x.py sub/y.py); cp "${files[*]}" /dest/ || cp x.py /dest/star.py', {"/dest/star.py": "s/x.py"}),
    ('files=(x.py sub/y.py a b); cp "${files[*]:1:1}" /dest/; cp x.py "/dest/${files[*]:2}.py"',  # a slice of them
     {"/dest/y.py": "s/sub/y.py", "/dest/a b.py": "s/x.py"}),
    (f'{ARRAY}cp "${{files[2]}}" /dest/ || cp x.py /dest/missing.py', {"/dest/missing.py": "s/x.py"}),
    ('files=(x.py sub/y.py); cp x.py "/dest/v${files[2]}.py"', {"/dest/v.py": "s/x.py"}),  # past the end: empty
    # One element set by its index: replaced, appended at the end, or made (element 0) where there was none.
    ('files=(x.py); files[1]=sub/y.py; cp "${files[1]}" /dest/', {"/dest/y.py": "s/sub/y.py"}),
    ('files=(x.py sub/y.py); i=0; files[$i]=sub/y.py; cp "${files[0]}" /dest/zero.py',
     {"/dest/zero.py": "s/sub/y.py"}),
    ('one[0]=x.py; cp $one /dest/one.py', {"/dest/one.py": "s/x.py"}),
    # A plain value is element 0 of an array of one, so the next index appends to it.
    ('py=x.py; py[1]=sub/y.py; cp "${py[@]}" /dest/', {"/dest/x.py": "s/x.py", "/dest/y.py": "s/sub/y.py"}),
    ('name=(x); name[0]+=.py; cp "${name[0]}" /dest/appended.py', {"/dest/appended.py": "s/x.py"}),
])
def test_an_arrays_elements_expand_as_bash_expands_them(script: str, files: dict[str, str]) -> None:
    plan = read(script + "\n")
    assert placed(plan) == files
    assert {n.kind for n in plan.notes} <= {"fails"}  # a cp bash fails too ('|| ...'), nothing unread


@pytest.mark.parametrize("use", ['cp "${files[0]}" /dest/one.py', "cp $files /dest/one.py",
                                 'for f in "${files[@]}"; do cp "$f" /dest/one.py; done',
                                 'cp "${files[$U]}" /dest/one.py'])
@pytest.mark.parametrize("made", ["declare -A files=([a]=x.py)", "files=([0]=x.py)",
                                  "files=($(ls))", "files=(x.py)\nfiles+=($(ls))",
                                  "files=(a)\nfiles[5]=x.py", "n=$(nproc)\nfiles[$n]=x.py"])  # a gap, an unknown index
def test_an_array_the_reader_cannot_know_leaves_its_copies_unread(made: str, use: str) -> None:
    plan = read(f"{made}\n{use}\ncp x.py /dest/after.py\n")
    assert "/dest/one.py" not in plan.image and plan.image["/dest/after.py"].source == "s/x.py"
    assert [n.kind for n in plan.notes] == ["unread"]


# bash 5.2: 'declare -A m=(x.py sub/y.py)' gives one key and its value, not two elements ('declare -p m' prints
# declare -A m=([x.py]="sub/y.py" )): "$m" is m[0], empty, so the cp fails; 'local -A' alike.
@pytest.mark.parametrize("made", ["declare -A m=(x.py sub/y.py)",
                                  "f() { local -A m=(x.py sub/y.py); cp \"$m\" /dest/; }"])
def test_an_associative_array_of_plain_words_is_not_read_as_indexed_elements(made: str) -> None:
    script = f"{made}\nf\n" if made.startswith("f()") else f"{made}\ncp \"$m\" /dest/\n"
    plan = read(script)
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


# bash 5.2: v=sub/y.py; v+=(x.py) makes v an array whose element 0 is the old value ('declare -p v' prints
# declare -a v=([0]="sub/y.py" [1]="x.py")); of v=$(nproc), element 0 only the image knows.
def test_appending_to_a_plain_variable_keeps_its_value_as_element_zero() -> None:
    plan = read('v=sub/y.py\nv+=(x.py)\ncp "${v[@]}" /dest/\n')
    assert placed(plan) == {"/dest/x.py": "s/x.py", "/dest/y.py": "s/sub/y.py"} and plan.notes == ()
    plan = read('v=$(nproc)\nv+=(x.py)\ncp "${v[@]}" /dest/\ncp x.py /dest/after.py\n')
    assert placed(plan) == {"/dest/after.py": "s/x.py"}
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [("unread", 3, f"cp ${{v[@]}}: {UNWORKED}")]


def test_an_array_with_a_command_substitution_runs_it() -> None:
    plan = read("made=($(cp x.py /dest/sub.py && echo done))\ncp x.py /dest/after.py\n")
    assert sorted(p for p in plan.image if p.startswith("/dest/")) == ["/dest/after.py", "/dest/sub.py"]


def test_a_subshell_changes_its_own_copy_of_an_array() -> None:
    plan = read('a=(x.py)\n(a=(sub/y.py))\ncp "${a[0]}" /dest/kept.py\n')
    assert placed(plan) == {"/dest/kept.py": "s/x.py"}


def test_under_dash_an_array_is_a_syntax_error() -> None:
    plan = read(f"{ARRAY}cp x.py /dest/after.py\n", run="dash i.sh")
    assert "/dest/after.py" not in plan.image
    assert [(n.kind, n.line) for n in plan.notes][:1] == [("stop", 1)]


def test_an_element_of_a_value_the_reader_cannot_know_is_named_in_the_note() -> None:
    plan = read('P=$(nproc)\ncp x.py "/dest/${P[1]}.py"\n')
    assert placed(plan) == {}
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("unread", "cp /dest/${P[1]}.py: a path that depends on a value the reader cannot work out")]


def test_an_array_the_reader_cannot_know_is_spelled_as_its_elements_in_a_note() -> None:
    # ($(cat FILE)) of a file the image holds: what eval then runs is only known as ${a[@]}.
    plan = read('a=($(cat /etc/vendor.list))\neval "$a"\ncp x.py /dest/after.py\n')
    assert placed(plan) == {"/dest/after.py": "s/x.py"}
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 2, "evaluates ${a[@]}, which the reader cannot work out")]


def test_an_array_inside_a_command_substitution_is_read_as_bash_reads_it() -> None:
    plan = read('v=$(a=(x y); echo "${a[1]}")\ncp x.py "/dest/$v.py"\n')  # bash prints y
    assert placed(plan) == {"/dest/y.py": "s/x.py"} and plan.notes == ()


def test_a_negative_length_in_a_slice_of_array_elements_is_no_slice() -> None:
    # bash 5.2: "${A[*]:1:-1}" fails ("-1: substring expression < 0"), that command is not run, the next line is
    # (a negative length counts from the end only for a string: ${B:1:-1} of abcd is bc).
    plan = read('A=(a b c d)\ncp x.py "/dest/${A[*]:1:-1}.py"\nB=abcd\ncp x.py "/dest/${B:1:-1}.py"\n')
    assert "/dest/b c.py" not in placed(plan) and "/dest/bc.py" in placed(plan)


def test_an_arguments_slice_offset_may_name_a_variable_in_its_arithmetic() -> None:
    # bash 5.2: "${@:n}" with n=2 is "$2" on ("$0" counts as 0): x.py and sub/y.py, not a.
    plan = run_script('set -- a x.py sub/y.py\nn=2\ncp "${@:n}" /dest/\n')
    assert in_dest(plan) == ["/dest/x.py", "/dest/y.py"] and plan.notes == ()


def test_a_subscript_may_be_a_variable_whose_name_starts_with_a_capital() -> None:
    # bash 5.2: ${a[I]} with I=1 is the second element.
    plan = run_script('a=(sub/y.py x.py)\nI=1\ncp "${a[I]}" /dest/\n')
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


@pytest.mark.parametrize("subscript", ["b[0]", "${b[0]}", "$((b[0]+1))", "b[1]-1"])
def test_a_subscript_with_brackets_in_it_ends_at_its_matching_bracket(subscript: str) -> None:
    """bash 5.2 reads ${a[b[0]]} as a[1] ('y'): the subscript runs to the ']' that matches its '['. The reader
    does not work such a subscript out, so the path is unread; it is neither a stop nor a '+' operator's
    alternative ('${a[$((b[0]' then '+1))]}')."""
    plan = read(f"b=(1 2)\na=(x y z)\ncp x.py \"/dest/${{a[{subscript}]}}.py\"\ncp x.py /dest/after.py\n")
    assert in_dest(plan) == ["/dest/after.py"]
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 3)]


# ${arr[@]:N} of an array whose elements the reader does not know is unknown (checked under bash 5.2.15).
def test_a_slice_of_an_array_the_reader_does_not_know_is_unknown() -> None:
    # bash: arr=(x86_64 b), so ${arr[@]:1} is b (/dest/b).
    plan = run_script('arr=($(uname -m) b)\ncp x.py "/dest/${arr[@]:1}"\n')
    assert in_dest(plan) == []
    assert notes(plan) == [("unread", 2, 'cp x.py "/dest/${arr[@]:1}"', f"cp /dest/${{arr[@]:...}}: {UNWORKED}")]


def test_an_element_assignment_with_an_assignment_in_its_subscript() -> None:
    plan = run_script('i=2\narr[x=$i]=v\ncp x.py "/dest/${arr[2]}-$x"\n')
    assert all(n.kind != "program" for n in plan.notes)
