"""Scripts and Dockerfiles built to break the reader: it must end, without a traceback, and say where it stopped.

Each hostile input is built by a function here, at a size far past what a
real install script holds; the limits themselves are the reader's
(``shell_interpreter.MAX_*``) and Python's recursion limit.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from patcher.shipping.image_fs import ImageFS
from tests.shipping.conftest import in_dest, plan_of, run_script, script_context

SHIPPED = "/usr/lib/python3/dist-packages/vllm/x.py"


def nested_subshells(depth: int) -> str:
    return "(" * depth + f"cp x.py {SHIPPED}" + ")" * depth + "\n"


def nested_ifs(depth: int) -> str:
    return "if true; then\n" * depth + f"cp x.py {SHIPPED}\n" + "fi\n" * depth


def nested_defaults(depth: int) -> str:
    return "echo " + "${A:-" * depth + "x" + "}" * depth + "\n"


def nested_substitutions(depth: int) -> str:
    return "D=" + "$(echo " * depth + "/opt" + ")" * depth + f"\ncp x.py $D/\n"


def nested_conditions(depth: int) -> str:
    return "#!/bin/bash\n[[ " + "( " * depth + "! " * depth + "a" + " )" * depth + " ]]\n"


def long_script(lines: int) -> str:
    return "".join(f"cp x.py /opt/copy{n}.py\n" for n in range(lines))


@pytest.mark.parametrize("script", [nested_subshells(3000), nested_ifs(2000), nested_defaults(3000),
                                    nested_conditions(3000)], ids=["subshells", "ifs", "defaults", "conditions"])
def test_nesting_past_the_limit_is_noted_not_a_crash(script: str) -> None:
    plan = plan_of(script_context(script))
    (note,) = [n for n in plan.notes if n.kind == "stop"]
    assert "nests too deeply to be read" in note.reason and note.file == "s/i.sh"
    assert SHIPPED not in plan.image


def test_a_run_of_parentheses_never_closed_under_bash_stops_at_once() -> None:
    # bash reads '((' as arithmetic when it closes with '))': looking for that close from each '(' of a
    # megabyte-long run that never closes would not end; the first look says the script does not parse.
    plan = plan_of(script_context("#!/bin/bash\n" + "(" * 1_000_000 + "\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 2, "cannot be parsed as shell (a '(' is not closed): s/i.sh is not read from here on")]


def test_nesting_a_real_script_might_hold_is_read() -> None:
    plan = plan_of(script_context(nested_subshells(20) + nested_ifs(20)))
    assert plan.image[SHIPPED].source == "s/x.py" and not plan.notes


def test_deep_command_substitutions_end_as_an_unknown_value() -> None:
    plan = plan_of(script_context(nested_substitutions(2000)))
    assert not any(path.startswith("/opt/") for path in plan.image)
    assert [n.kind for n in plan.notes] == ["unread"] and len(plan.notes[0].reason) <= 300


def test_a_long_script_is_read_to_its_end() -> None:
    plan = plan_of(script_context(long_script(2000)))
    assert plan.image["/opt/copy1999.py"].source == "s/x.py"


def test_a_dockerfile_whose_variables_nest_too_deeply_is_refused_with_its_line() -> None:
    dockerfile = "FROM base\nCOPY x.py " + "${A:-" * 3000 + "/d" + "}" * 3000 + "/\n"
    with pytest.raises(ShippingError, match=r"cannot be parsed: line 2: COPY: variables nest too deeply"):
        plan_of({"Dockerfile": dockerfile, "x.py": ""})


@pytest.mark.parametrize("printed", ["$(printf '%99999999999s' x)", "$(printf '%65000s' x x x x x x x x x x)",
                                     "$(printf 'AAAAAAAAAAAAAAAA%s' " + "a " * 20000 + ")",
                                     "$(printf '%d' " + "9" * 5000 + ")",
                                     "$(printf '%65000s" + "\\n" * 600 + "' x)"])
def test_printf_asked_for_more_than_the_reader_keeps_prints_an_unknown_value(printed: str) -> None:
    # The copy's destination is unknown (past what the reader keeps of a word), so it is unread, not built.
    plan = plan_of(script_context(f"D={printed}\ncp x.py \"/opt/$D.py\"\ncp x.py /opt/after.py\n"))
    assert plan.image["/opt/after.py"].source == "s/x.py"
    assert not any(len(path) > 1000 for path in plan.image)


def test_printf_output_past_the_limit_within_one_use_of_its_format_is_not_built() -> None:
    # Each width is under the limit, the text between them is short: printf stops at the limit rather than
    # build the whole text, and the copy is unread as depending on that printf.
    printed = "$(printf '%60000s|%60000s|' a b)"
    plan = plan_of(script_context(f"D={printed}\ncp x.py \"/opt/$D.py\"\n"))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("unread", 2, f"cp /opt/{printed}.py: a path that depends on a value the reader cannot work out")]


def copies_of_a_folder(lines: int) -> str:
    """A Dockerfile of a few KiB that copies the same folder again and again."""
    return "FROM base\n" + "".join(f"COPY s /copy{n}/\n" for n in range(lines))


def test_a_build_that_places_more_files_than_the_reader_follows_stops_with_a_note(monkeypatch:
                                                                                 pytest.MonkeyPatch) -> None:
    # The limit is 200,000 steps; a smaller one keeps the test quick, the mechanism is the same.
    from patcher.shipping import dockerfile, shell_interpreter
    monkeypatch.setattr(dockerfile, "MAX_STEPS", 2_000)
    monkeypatch.setattr(shell_interpreter, "MAX_STEPS", 2_000)
    context = {"Dockerfile": copies_of_a_folder(40) + "RUN cp -r /copy0 /later\n",
               **{f"s/m{n}/f{n}.py": "" for n in range(100)}}
    plan = plan_of(context)
    # The reading stops at the line after the COPY that passed the limit: what each COPY before it placed is
    # kept, nothing after.
    ((file, kind, line, reason),) = [(n.file, n.kind, n.line, n.reason) for n in plan.notes]
    assert (file, kind, reason) == ("Dockerfile", "stop", shell_interpreter.STEPS_PAST) and line < 40
    assert len(plan.image) == (line - 2) * 100 and "/later/m0/f0.py" not in plan.image


def test_a_dockerignore_whose_patterns_times_the_files_pass_the_limit_is_refused_before_matching() -> None:
    context = {"Dockerfile": "FROM base\nCOPY s /s\n", ".dockerignore": "\n".join(f"*a{n}*b*" for n in range(1001)),
               **{f"s/f{n}.py": "" for n in range(1000)}}
    with pytest.raises(ShippingError, match=r"1,001 patterns against 1,00\d files are more than patcher matches") as raised:
        plan_of(context)
    assert raised.value.where == ".dockerignore"


def test_copy_exclude_patterns_past_the_limit_leave_the_copy_unread() -> None:
    excludes = " ".join(f"--exclude=*a{n}*b*" for n in range(1001))
    context = {"Dockerfile": f"FROM base\nCOPY {excludes} s /s\nCOPY s/f1.py /one.py\n",
               **{f"s/f{n}.py": "" for n in range(999)}}
    plan = plan_of(context)
    assert [(n.kind, n.line) for n in plan.notes] == [("unread", 2)]
    assert "are more than the reader matches" in plan.notes[0].reason
    assert {path: placed.source for path, placed in plan.image.items()} == {"/one.py": "s/f1.py"}


def test_patterns_that_look_at_more_paths_than_the_reader_follows_stop_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The limit is 5,000,000 paths looked at; a smaller one keeps the test quick.
    from patcher.shipping import shell_interpreter
    monkeypatch.setattr(shell_interpreter, "MAX_GLOBBED", 20_000)
    script = "i=0\nwhile [ $i -lt 500 ]; do\n  echo /w/s/*/*.py > /dev/null\n  i=$((i+1))\ndone\ncp x.py /after.py\n"
    plan = plan_of(script_context(script, files={f"s/m{n}/f{n}.py": "" for n in range(200)}))
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [
        ("stop", 3, "the build's patterns look at more than 20,000 paths; the reader stops here")]
    assert "/after.py" not in plan.image



def test_stages_that_rerun_many_onbuild_triggers_stop_at_the_step_limit() -> None:
    """3,000 triggers in a stage and 300 stages FROM it would run 900,000 instructions: each run is a step."""
    from patcher.shipping import shell_interpreter
    dockerfile = "FROM base AS s0\n" + "ONBUILD ENV X=1\n" * 3000 + "FROM s0\n" * 300
    plan = plan_of({"Dockerfile": dockerfile})
    ((kind, line, reason),) = [(n.kind, n.line, n.reason) for n in plan.notes]
    assert (kind, reason) == ("stop", shell_interpreter.STEPS_PAST) and line < 3000 + 300


HUGE = "9" * 5000  # past CPython's limit on int() of a decimal string (4,300 digits)


@pytest.mark.parametrize("script", [
    f"echo hi {HUGE}>/dev/null\n", "echo hi ²>/dev/null\n",  # a file descriptor: only ASCII digits make one
    f"set -- a\necho ${{{HUGE}}}\n", f"for i in 1; do break {HUGE}; done\n", f"set -- a\nshift {HUGE} || true\n",
    "shift ² || true\n", f"OPTIND={HUGE}\ngetopts a o || true\n", "OPTIND=²\ngetopts a o || true\n",
    "f() { return ²; }\nf || true\n", f"f() {{ return {HUGE}; }}\nf || true\n", "true || exit ²\n",
    f"true || exit {HUGE}\n",
])
def test_a_number_written_in_thousands_of_digits_or_in_other_digits_crashes_nothing(script: str) -> None:
    # sh reads '²' as no number and a long run of digits as a (large) number; the reader must read on either way.
    plan = plan_of(script_context(script + "cp x.py /after.py\n"))
    assert plan.image["/after.py"].source == "s/x.py"


@pytest.mark.parametrize("reference", ["²", "0" * 5000 + "1"])
def test_a_stage_named_by_other_digits_or_by_thousands_of_them_crashes_nothing(reference: str) -> None:
    plan = plan_of({"Dockerfile": f"FROM base AS one\nFROM base AS two\nFROM base\nCOPY --from={reference} a /a\n",
                    "a": ""})
    assert "/a" not in plan.image  # from a stage or an image, not from the build context


def test_a_path_of_thousands_of_names_and_dot_dots_follows_its_link_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # '..' after a link is walked from where the link leads (ImageFS.physical): one walk, not one per '..'
    # (a walk per '..' made this 40 KB line take minutes).
    followed: list[str] = []
    resolve = ImageFS.resolve

    def counted(fs: ImageFS, path: str, *, last: bool = True) -> str:
        followed.append(path)
        return resolve(fs, path, last=last)

    script = "mkdir -p /dest/a/b && ln -s /dest/a/b /dest/k\ncp x.py /dest/k/" + "a/" * 5_000 + "../" * 5_000 + "c.py\n"
    monkeypatch.setattr(ImageFS, "resolve", counted)
    assert in_dest(run_script(script)) == ["/dest/a/b/c.py", "/dest/k/c.py"]
    assert sum(len(path) > 10_000 for path in followed) == 0
