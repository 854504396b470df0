"""``find`` runs over what the build knows, as GNU find 4.9 walks it, so a cleanup is no caveat on what it spares.

``find $VLLM -name __pycache__ -exec rm -rf {} +`` beside a copied
``paged_attn.py`` removes bytecode, never the copy: the reader evaluates
the expression (names, paths, types, depths, ``!``, ``-o``, ``-prune``,
parentheses) over the paths it knows below each root and runs ``-delete``
and ``-exec`` on the matches. What a command run on the base image's own
files there writes elsewhere (``-exec cp {} DEST``) stays unread, scoped
to DEST. Each script was run under bash 5.2 and dash 0.5.12 (GNU findutils
4.9) with the same outcome.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, notes, notes_of, plan_of, run_script, script_context

SITE = "/usr/local/corex/lib/python3/dist-packages/vllm"


@pytest.mark.parametrize(("script", "placed"), [
    ("find . -name '*.py' -exec cp {} /dest \\;\n", ["/dest/x.py", "/dest/y.py"]),
    ("find sub -name '*.py' -exec cp -t /dest {} +\n", ["/dest/y.py"]),
    ("find . -maxdepth 1 -name '*.py' -exec cp {} /dest \\;\n", ["/dest/x.py"]),
    ("find . -path ./sub -prune -o -name '*.py' -exec cp {} /dest \\;\n", ["/dest/x.py"]),
    ("find . -type f -name 'y*' -exec cp {} /dest/z.py \\;\n", ["/dest/z.py"]),
    ("find . ! -name '*.sh' -type f -exec cp {} /dest \\;\n", ["/dest/x.py", "/dest/y.py"]),
    ("find . \\( -name 'x*' -o -name 'y*' \\) -exec cp {} /dest \\;\n", ["/dest/x.py", "/dest/y.py"]),
    ("find . -iname 'X.PY' -exec cp {} /dest/i.py \\;\n", ["/dest/i.py"]),
    ("find ./ -name y.py -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find -name x.py -exec cp {} /dest/ \\;\n", ["/dest/x.py"]),  # no path: '.'
    ("find sub/ -mindepth 1 -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("for f in $(find sub -name '*.py'); do cp $f /dest; done\n", ["/dest/y.py"]),  # one match: its name is known
    # find -P does not walk through a link: the y.py behind /dest/l is not found there.
    ("ln -s /w/s/sub /dest/l\nfind /dest -name y.py -exec cp {} /dest/found.py \\;\n", ["/dest/l/y.py"]),
    # A link is of -type l, not f, whatever it leads to; cp copies what it leads to.
    ("ln -s /w/s/x.py sub/l.py\nfind sub -type f -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("ln -s /w/s/x.py sub/l.py\nfind sub -type l -exec cp {} /dest/ \\;\n", ["/dest/l.py"]),
    ("cp x.py sub/Xy.py\nfind sub -name 'X*' -exec cp {} /dest/ \\;\n", ["/dest/Xy.py"]),
    ("find sub/ -path sub/y.py -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),  # find prints sub/y.py, one '/'
    ("find sub/y.py -path sub/y.py -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),  # a path is shown as written
])
@pytest.mark.parametrize("run", ["bash i.sh", "dash i.sh"])
def test_find_runs_its_command_on_the_paths_it_matches(script: str, placed: list[str], run: str) -> None:
    plan = run_script(script, run)
    assert in_dest(plan) == placed and plan.notes == ()


@pytest.mark.parametrize(("script", "placed"), [
    ("mkdir -p /dest/a/__pycache__\ncp x.py /dest/a/__pycache__/c.pyc\ncp x.py /dest/a/\n"
     "find /dest -name __pycache__ -type d -exec rm -rf {} +\n", ["/dest/a/x.py"]),
    ("cp x.py /dest/a.pyc\ncp x.py /dest/b.py\nfind /dest -name '*.pyc' -delete\n", ["/dest/b.py"]),
])
def test_find_removes_what_it_matches_and_nothing_beside_it(script: str, placed: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and plan.notes == ()


def test_delete_of_a_folder_that_still_holds_a_file_keeps_it_and_fails() -> None:
    # -delete removes a folder only once it is empty (rmdir): /dest/d keeps its x.py, and find fails
    # (find: cannot delete '/dest/d': Directory not empty; status 1).
    plan = run_script("mkdir /dest/d\ncp x.py /dest/d/\nfind /dest/d -type d -delete || cp x.py /dest/failed.py\n")
    assert in_dest(plan) == ["/dest/d/x.py", "/dest/failed.py"]
    assert (plan.notes[0].kind, plan.notes[0].reason) == (
        "fails", "find cannot delete /dest/d: it stays, and find fails")


def test_emptied_folders_deleted_depth_first_are_gone() -> None:
    plan = run_script("mkdir -p /dest/e/f\nfind /dest/e -type d -delete\nls /dest/e || cp x.py /dest/gone.py\n")
    assert in_dest(plan) == ["/dest/gone.py"]


@pytest.mark.parametrize("cleanup", [
    f"find {SITE} -name __pycache__ -type d -exec rm -rf {{}} +",
    f"find {SITE} -name '*.pyc' -delete",
    f"find {SITE}/attention -path '*/__pycache__/*' -exec rm -f {{}} \\;",
    f"find {SITE} \\( -name '*.pyc' -o -name '*.pyo' \\) -type f -print -delete",
])
def test_a_bytecode_cleanup_beside_the_shipped_file_is_no_caveat_on_it(cleanup: str) -> None:
    script = f"cp ./x.py {SITE}/attention/ops/paged_attn.py\n{cleanup}\n"
    plan = plan_of(script_context(script))
    assert plan.image[f"{SITE}/attention/ops/paged_attn.py"].source == "s/x.py"
    assert plan.caveats("s/x.py") == () and plan.notes == ()


def test_a_cleanup_that_matches_the_shipped_file_removes_it() -> None:
    script = f"cp ./x.py {SITE}/attention/ops/paged_attn.py\nfind {SITE} -name '*.py' -delete\n"
    plan = plan_of(script_context(script))
    assert f"{SITE}/attention/ops/paged_attn.py" not in plan.image


def test_a_copy_of_the_base_images_files_into_the_shipped_files_folder_stays_a_caveat() -> None:
    script = (f"cp ./x.py {SITE}/attention/ops/paged_attn.py\n"
              f"find /opt/extra -name '*.py' -exec cp {{}} {SITE}/attention/ops/ \\;\n")
    plan = plan_of(script_context(script))
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "runs cp on the files find lists that the base image holds, which the reader cannot see",
         (f"{SITE}/attention/ops",))]
    assert [n.line for n in plan.caveats("s/x.py")] == [2]


@pytest.mark.parametrize("line", [
    "find sub -name '*.py' -exec cp {} /dest/ +",  # '+' must follow '{}': "missing argument to `-exec'"
    "find sub -name",
    "find sub \\( -name y.py",
    "find sub -exec cp {} /dest/",
])
def test_a_line_find_refuses_walks_nothing_and_fails(line: str) -> None:
    plan = run_script(f"{line} || cp x.py /dest/refused.py\n")
    assert in_dest(plan) == ["/dest/refused.py"]
    assert [n.kind for n in plan.notes] == ["fails"] and plan.notes[0].reason.startswith("find refuses the line")


def test_a_root_that_is_not_there_fails_and_the_others_are_walked() -> None:
    plan = run_script("find nothere sub -name y.py -exec cp {} /dest/ \\; || cp x.py /dest/failed.py\n")
    assert in_dest(plan) == ["/dest/failed.py", "/dest/y.py"]


@pytest.mark.parametrize("line", [
    "find . -name '*.py'",  # two matches: find's order is the file system's
    "find /usr/lib -name y.py",  # the base image's tree: it could hold more
    "find . -name x.py -print0",
])
def test_what_find_prints_is_unknown_where_the_tree_or_the_order_is_the_images(line: str) -> None:
    plan = run_script(f"for f in $({line}); do cp x.py /dest/\"$f\"; done\n")
    assert [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize("line", [
    "find . -name x.py -execdir cp {} /dest/ \\;",  # in each file's folder
    "find -L . -name x.py -exec cp {} /dest/ \\;",  # through links
    "find . -newer x.py -exec cp {} /dest/ \\;",  # times the reader does not know
    "find . -exec sh -c 'cp \"$1\" /dest/' _ {} \\;",  # a program that could do anything
    "find . " + " -o ".join(["-name a"] * 150) + " -exec cp {} /dest/ \\;",  # past the words the reader evaluates
    "find . " + "\\( " * 3000 + "-name x.py" + " \\)" * 3000 + " -exec cp {} /dest/ \\;",
])
def test_a_find_line_the_reader_does_not_evaluate_is_unread(line: str) -> None:
    plan = run_script(line + "\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["unread"]


def test_two_matches_copied_to_one_place_leave_the_last_to_the_file_systems_order() -> None:
    plan = run_script("mkdir sub/deep\ncp x.py sub/deep/y.py\nfind . -name y.py -exec cp {} /dest/ \\;\n")
    assert in_dest(plan) == ["/dest/y.py"]
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("assumed", "find lists 2 files that cp puts at the same place in /dest: which is last is the file system's "
                    "order; the reader takes find's paths sorted")]


def test_a_find_that_would_run_its_command_past_a_thousand_times_is_unread_before_it_runs() -> None:
    files = {f"s/t/f{number}.py": "" for number in range(1_200)}
    each = run_script("find t -name '*.py' -exec cp {} /dest/ \\;\n", files=files)
    assert in_dest(each) == [] and [n.kind for n in each.notes] == ["unread"]
    batched = run_script("find t -name '*.py' -exec cp -t /dest {} +\n", files=files)  # one command
    assert len(in_dest(batched)) == 1_200 and batched.notes == ()


def test_a_copy_of_a_context_file_over_each_file_find_lists_in_the_base_image_is_unread_there() -> None:
    # 'install over whichever paged_attn.py the image has': where that is, only the image knows.
    plan = plan_of(script_context("find /usr/local/corex -name paged_attn.py -exec cp ./x.py {} \\;\n"))
    assert [(n.kind, n.scope) for n in plan.notes] == [("unread", ("/usr/local/corex", "/w/s/x.py"))]
    assert [n.line for n in plan.unread()] == [1]


@pytest.mark.parametrize(("line", "fails"), [
    ("ls /dest/none", True), ("ls -l --sort size /dest/none", True), ("ls -I size /dest", False),
    ("ls --sort size /dest", False),  # 'size' is --sort's value, no path
    ("ls --frobnicate /dest/none", False),  # an option ls's table does not hold: the image decides
    ("ls /usr/lib/none", False),  # the base image's: taken to be there
])
def test_ls_fails_on_a_path_the_build_knows_is_not_there(line: str, fails: bool) -> None:
    plan = run_script(f"{line} || cp x.py /dest/failed.py\n")
    assert (in_dest(plan) == ["/dest/failed.py"]) is fails



@pytest.mark.parametrize("test", ["-iwholename 'SUB/Y.PY'", "-ipath 'SUB/Y.PY'", "-wholename 'sub/y.py'"])
def test_find_matches_the_whole_path_under_its_spellings(test: str) -> None:
    plan = run_script(f"find sub {test} -exec cp {{}} /dest/ \\;\n")
    assert in_dest(plan) == ["/dest/y.py"]


def test_find_from_a_missing_folder_is_a_noted_failure() -> None:
    plan = run_script("find /dest/nothere -name x\n")
    assert notes_of(plan, "fails")[0] == ("s/i.sh", 1, "find /dest/nothere -name x")


@pytest.mark.parametrize(("script", "placed"), [
    # -O3, -P and -D LIST come before the paths; -D takes the word after it.
    ("find -O3 -D stat sub -name '*.py' -exec cp {} /dest/ \\; || cp x.py /dest/failed.py\n", ["/dest/y.py"]),
    ("find -D stat sub -name '*.py' -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find -P -O3 sub -name y.py -exec cp {} /dest/ \\;\n", ["/dest/y.py"]),
    ("find -P || cp x.py /dest/failed.py\n", []),  # only options: '.', and find succeeds
    # '-' alone is a path (find: '-': No such file or directory, status 1); the others are walked.
    ("find - sub -name y.py -exec cp {} /dest/ \\; || cp x.py /dest/failed.py\n", ["/dest/failed.py", "/dest/y.py"]),
    # '-a' and '-o' start the expression: with nothing before them find refuses the line.
    ("find sub -a -name y.py -exec cp {} /dest/ \\;\n", []),
    ("find sub -o -name y.py -exec cp {} /dest/ \\;\n", []),
    ("cp $(find sub/y.py) /dest/\n", ["/dest/y.py"]),  # no expression: the path itself is printed
])
def test_find_reads_its_options_and_paths_before_the_expression(script: str, placed: list[str]) -> None:
    assert in_dest(run_script(script)) == placed


@pytest.mark.parametrize(("script", "placed", "kinds"), [
    ("find sub/y.py || cp x.py /dest/failed.py\n", [], []),
    ("find nothere && cp x.py /dest/ok.py\n", [], ["fails", "fails"]),
    ("find nothere sub && cp x.py /dest/ok.py\n", [], ["fails", "fails"]),
    # /usr/lib is the base image's: whether find succeeds there the image decides, so both ways are followed.
    ("find /usr/lib || cp x.py /dest/failed.py\n", ["/dest/failed.py"], ["assumed"]),
    ("find sub /usr/lib || cp x.py /dest/failed.py\n", ["/dest/failed.py"], ["assumed"]),
])
def test_finds_status_is_known_where_its_paths_are_the_builds(script: str, placed: list[str],
                                                                kinds: list[str]) -> None:
    plan = run_script(script)
    assert in_dest(plan) == placed and [n.kind for n in plan.notes] == kinds


def test_find_from_a_symbolic_link_does_not_walk_what_it_leads_to() -> None:
    # find -P /dest/l lists the link alone: its y.py is not found, and nothing is copied to found.py.
    plan = run_script("ln -s /w/s/sub /dest/l\nfind /dest/l -name y.py -exec cp {} /dest/found.py \\;\n")
    assert in_dest(plan) == ["/dest/l/y.py"] and [n.kind for n in plan.notes] == ["unread"]


@pytest.mark.parametrize(("line", "reason"), [
    ("find sub -name y.py \\)", "find's ')' where the expression ends"),
    ("find sub -name", "a find expression that ends too soon (a test without its argument)"),
])
def test_a_line_find_refuses_is_noted_with_what_it_refuses(line: str, reason: str) -> None:
    plan = run_script(f"{line}\n")
    assert plan.notes[0].reason == f"find refuses the line: {reason}"


@pytest.mark.parametrize(("words", "placed"), [(200, ["/dest/y.py"]), (201, [])])
def test_find_evaluates_an_expression_of_at_most_two_hundred_words(words: int, placed: list[str]) -> None:
    padding = " -true" * (words - 7)  # '-name y.py -exec cp {} /dest/ ;' are the other 7
    plan = run_script(f"find sub{padding} -name y.py -exec cp {{}} /dest/ \\;\n")
    assert in_dest(plan) == placed


def test_a_find_that_runs_its_command_a_thousand_times_is_followed() -> None:
    plan = run_script("find t -name '*.py' -exec cp {} /dest/ \\;\n", files={f"s/t/f{n}.py": "" for n in range(1_000)})
    assert len(in_dest(plan)) == 1_000 and plan.notes == ()


@pytest.mark.parametrize(("line", "scope"), [
    # Copies of what find lists into one folder: only that folder can change.
    ("find /usr/local/corex -name '*.py' -exec cp -t /dest {} +", ("/dest",)),
    ("find /usr/local/corex -name '*.py' -exec cp --target-directory=/dest {} +", ("/dest",)),
    # A context file put over each file find lists: wherever under the root the image has one.
    ("find /usr/local/corex -name paged_attn.py -exec install ./x.py {} \\;", ("/usr/local/corex", "/w/s/x.py")),
    ("find /usr/local/corex -name paged_attn.py -exec ln -sf /w/s/x.py {} \\;", ("/usr/local/corex", "/w/s/x.py")),
    ("find /usr/local/corex -type d -name ops -exec cp ./x.py ./sub/y.py {} \\;",
     ("/usr/local/corex", "/w/s/x.py", "/w/s/sub/y.py")),
    # cp -t {}: the same copies into each folder find lists (GNU cp 9.1), whichever way -t is written
    ("find /usr/local/corex -type d -name ops -exec cp -t {} ./x.py \\;", ("/usr/local/corex", "/w/s/x.py")),
    ("find /usr/local/corex -type d -name ops -exec cp --target-directory={} ./x.py \\;",
     ("/usr/local/corex", "/w/s/x.py")),
])
def test_a_command_find_runs_on_the_base_images_files_is_unread_where_it_writes(line: str,
                                                                                 scope: tuple[str, ...]) -> None:
    plan = plan_of(script_context(line + "\n"))
    assert [(n.kind, n.scope) for n in plan.notes] == [("unread", scope)]


@pytest.mark.parametrize(("limit", "stops_at"), [(8, 2), (9, 3), (17, 3), (18, None)])
def test_each_find_counts_every_path_the_build_knows_toward_the_readers_limit(
        monkeypatch: pytest.MonkeyPatch, limit: int, stops_at: int | None) -> None:
    # The limit is 5,000,000 paths looked at; a smaller one keeps the test quick. Here the build knows 9 paths
    # when find runs: /, /w, /w/s, /w/s/sub and /dest; i.sh, x.py and sub/y.py; and /dest/o.txt, which it wrote.
    from patcher.shipping import shell_records
    monkeypatch.setattr(shell_records, "MAX_GLOBBED", limit)
    plan = run_script("echo hi > /dest/o.txt\nfind sub -name y.py\nfind sub -name y.py\ncp x.py /dest/after.py\n")
    reason = f"the build's patterns look at more than {limit} paths; the reader stops here"
    assert [(n.kind, n.line, n.reason) for n in plan.notes] == [("stop", stops_at, reason)] * (stops_at is not None)
    assert ("/dest/after.py" in plan.image) is (stops_at is None)


# find DIR -delete of a folder the build made with mkdir -p under a base-image folder succeeds (checked under
# bash 5.2.15 and dash 0.5.12 with GNU findutils 4.9).
def test_find_delete_of_a_folder_made_under_a_base_image_folder_succeeds() -> None:
    plan = run_script("mkdir -p /tmp/zz_a\nfind /tmp/zz_a -delete && cp x.py /dest/ok\n")
    assert in_dest(plan) == ["/dest/ok"]
    assert notes(plan) == []


def test_find_delete_removes_the_folder_it_starts_from() -> None:
    plan = run_script("mkdir -p /tmp/zz_a\nfind /tmp/zz_a -delete\n"
                      "if [ -d /tmp/zz_a ]; then cp x.py /dest/still; else cp x.py /dest/gone; fi\n")
    assert "/dest/still" not in in_dest(plan)
