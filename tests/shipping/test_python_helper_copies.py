"""A Python helper that copies or moves a file of the build context puts it where CPython would.

``python3 ./install.py`` doing ``shutil.copy("paged_attn.py", DEST)`` ships
that file at DEST as surely as ``cp`` would: the reader places it there
(``shutil.copy`` and ``move`` into a folder standing at DEST, ``copyfile``
and ``os.replace`` onto DEST itself, ``copytree`` making the folders above
it), with the paths built from ``__file__`` read as the helper's own
folder. What CPython refuses (a folder to ``shutil.copy``, a file over a
folder, ``copytree`` onto what exists) copies nothing. A call the program
may not reach (in a function, a loop, a condition) is placed and noted as
assumed; a copy into an installed package's folder, or with arguments the
reader does not follow (``ignore=``), is unread, scoped to where it lands.
Each expectation was held against CPython 3.11 running the same helper.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from tests.shipping.conftest import in_dest, run_helper, run_script


RUN_FAILS = ("fails", "this RUN fails as the reader follows it, so 'docker build' stops here (see the failures noted "
                     "before it)")


@pytest.mark.parametrize(("helper", "placed"), [
    ("import shutil\nshutil.copy('x.py', '/dest/x.py')\n", {"/dest/x.py": "s/x.py"}),
    ("import shutil\nshutil.copy2('x.py', '/dest')\n", {"/dest/x.py": "s/x.py"}),  # into the folder there
    ("import shutil\nshutil.copyfile('x.py', '/dest/q.py')\n", {"/dest/q.py": "s/x.py"}),
    ("import shutil\nshutil.copytree('sub', '/dest/a/sub')\n", {"/dest/a/sub/y.py": "s/sub/y.py"}),  # makedirs
    ("import shutil\nshutil.copytree('sub', '/dest', dirs_exist_ok=True)\n", {"/dest/y.py": "s/sub/y.py"}),
    ("import shutil\nshutil.copytree('sub', '/dest/a/s', dirs_exist_ok=True)\n",  # makes /dest/a as well
     {"/dest/a/s/y.py": "s/sub/y.py"}),
    ("import shutil\nshutil.move('x.py', '/dest/')\nshutil.move('sub/y.py', '/dest')\n",
     {"/dest/x.py": "s/x.py", "/dest/y.py": "s/sub/y.py"}),
    ("import os\nos.replace('x.py', '/dest/n.py')\n", {"/dest/n.py": "s/x.py"}),
    ("import os\nos.renames('x.py', '/dest/a/b/x.py')\n", {"/dest/a/b/x.py": "s/x.py"}),
    ("import os\nos.makedirs('/dest/sub')\nos.rename('sub', '/dest/sub')\n", {"/dest/sub/y.py": "s/sub/y.py"}),
    ("import os, shutil\nos.mkdir('/dest/a')\nshutil.copy('x.py', '/dest/a')\n", {"/dest/a/x.py": "s/x.py"}),
    ("from pathlib import Path\nPath('x.py').rename('/dest/r.py')\n", {"/dest/r.py": "s/x.py"}),
    ("from pathlib import Path\nPath('sub').replace(Path('/dest') / 'q')\n", {"/dest/q/y.py": "s/sub/y.py"}),
    # The helper's own folder, however it is asked for.
    ("import os, shutil\nshutil.copy(os.path.join(os.path.dirname(__file__), 'x.py'), '/dest/')\n",
     {"/dest/x.py": "s/x.py"}),
    ("import os, shutil\nHERE = os.path.dirname(os.path.abspath(__file__))\nshutil.copy(f'{HERE}/x.py', '/dest/a.py')\n",
     {"/dest/a.py": "s/x.py"}),
    ("import shutil\nfrom pathlib import Path\nshutil.copytree(Path(__file__).resolve().parent / 'sub', '/dest/s')\n",
     {"/dest/s/y.py": "s/sub/y.py"}),
    ("import shutil\nshutil.copy(__file__, '/dest/self.py')\n", {"/dest/self.py": "s/h.py"}),
])
def test_a_helpers_copy_of_a_context_file_lands_where_cpython_puts_it(helper: str, placed: dict[str, str]) -> None:
    plan = run_helper(helper)
    assert {path: plan.image[path].source for path in in_dest(plan)} == placed
    assert plan.notes == ()


def test_a_helper_run_from_another_folder_finds_its_files_by_its_own_path() -> None:
    # Relative paths are the process's working folder's (/); __file__ is the helper's.
    helper = "import os, shutil\nshutil.copy(os.path.join(os.path.dirname(__file__), 'x.py'), 'dest/')\n"
    plan = run_helper(helper, "cd /\npython3 /w/s/h.py\n")
    assert plan.image["/dest/x.py"].source == "s/x.py"


@pytest.mark.parametrize("helper", [
    "import shutil\nshutil.move('x.py', '/dest/r.py')\n",
    "import os\nos.rename('x.py', '/dest/r.py')\n",
    "from pathlib import Path\nPath('x.py').rename('/dest/r.py')\n",
    "from pathlib import Path\nPath('x.py').replace(Path('/dest/r.py'))\n",
])
def test_a_renamed_file_is_no_longer_where_it_was(helper: str) -> None:
    plan = run_helper(helper)
    assert plan.image["/dest/r.py"].source == "s/x.py" and "/w/s/x.py" not in plan.image


def test_a_helper_that_copies_over_its_own_file_replaces_it() -> None:
    # __file__ is the helper as it runs (/w/s/h.py): copying onto it writes that file, as CPython does.
    plan = run_helper("import shutil\nshutil.copy('x.py', __file__)\n")
    assert plan.image["/w/s/h.py"].source == "s/x.py" and plan.notes == ()


@pytest.mark.parametrize("helper", [
    "from pathlib import Path\nPath('/dest/a/b').mkdir(parents=True)\n",
    "import pathlib\nD = pathlib.Path('/dest/a') / 'b'\nD.mkdir(parents=True, exist_ok=True)\n",
])
def test_a_folder_a_helper_makes_with_path_mkdir_is_there_for_the_commands_after_it(helper: str) -> None:
    plan = run_helper(helper, "python3 h.py\ncp x.py /dest/a/b/\n")
    assert in_dest(plan) == ["/dest/a/b/x.py"] and plan.notes == ()


def test_a_moved_file_leaves_its_folder_and_the_copy_is_the_last_step() -> None:
    plan = run_helper("import shutil\nshutil.move('x.py', '/dest/x.py')\n")
    assert "/w/s/x.py" not in plan.image
    assert [(s.command, s.line, s.path) for s in plan.image["/dest/x.py"].steps][-1] == ("h.py", 1, "/dest/x.py")


def test_a_copy_over_a_placed_file_replaces_it_rather_than_leaving_it_unread() -> None:
    plan = run_helper("import shutil\nshutil.copy('sub/y.py', '/dest/x.py')\n", "cp x.py /dest/\npython3 h.py\n")
    assert plan.image["/dest/x.py"].source == "s/sub/y.py"
    assert plan.notes == ()


@pytest.mark.parametrize(("helper", "reason"), [
    ("import shutil\nshutil.copy('sub', '/dest/q')\n", "h.py cannot copy /w/s/sub: it is a folder"),
    ("import shutil\nshutil.copytree('x.py', '/dest/q')\n", "h.py cannot copytree /w/s/x.py: it is a file"),
    ("import shutil\nshutil.copytree('x.py', '/dest/q', dirs_exist_ok=True)\n",
     "h.py cannot merge /w/s/x.py: it is a file"),
    ("import shutil\nshutil.copyfile('x.py', '/dest')\n",
     "h.py cannot write the file /w/s/x.py over the folder /dest, so nothing is copied"),
    ("import shutil\nshutil.copytree('sub', '/dest/s')\nshutil.copytree('sub', '/dest/s')\n",
     "h.py cannot copytree to /dest/s: a folder or file stands there"),
    ("import os\nos.makedirs('/dest/sub/a')\nos.rename('sub', '/dest/sub')\n",
     "h.py cannot move the folder /w/s/sub over /dest/sub: that folder is not empty, so nothing is copied"),
    ("import shutil\nshutil.copy2('x.py', '/dest/nodir/')\n", "/dest/nodir/ is not a folder, so the copy fails"),
    # dirs_exist_ok=False spelled out is copytree's own refusal of a folder that stands there.
    ("import shutil\nshutil.copytree('sub', '/dest/s')\nshutil.copytree('sub', '/dest/s', dirs_exist_ok=False)\n",
     "h.py cannot copytree to /dest/s: a folder or file stands there"),
])
def test_a_copy_cpython_refuses_places_nothing_and_says_why(helper: str, reason: str) -> None:
    plan = run_helper(helper)
    # The call is a statement of the module: its exception ends the program with 1, and so the RUN.
    assert [(n.kind, n.reason) for n in plan.notes] == [("fails", reason), RUN_FAILS]
    assert in_dest(plan) == (["/dest/s/y.py"] if "'/dest/s')\nshutil" in helper else [])


@pytest.mark.parametrize("helper", [
    "import shutil\ndef install():\n    shutil.copy('x.py', '/dest')\ninstall()\n",
    "import shutil, os\nif os.path.isdir('/dest'):\n    shutil.copy('x.py', '/dest')\n",
    "import shutil\nfor name in ['x.py']:\n    shutil.copy('x.py', '/dest')\n",
])
def test_a_copy_the_program_may_not_reach_is_placed_and_noted_as_assumed(helper: str) -> None:
    plan = run_helper(helper)
    assert in_dest(plan) == ["/dest/x.py"]
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("assumed", "h.py copies /w/s/x.py to /dest in code that may not run (a function, a loop, a condition): "
                    "the reader takes it to run once")]


@pytest.mark.parametrize("helper", [
    "import shutil\nif __name__ == '__main__':\n    shutil.copy('x.py', '/dest')\n",
    "import shutil\nwith open('/dev/null') as f:\n    shutil.copy('x.py', '/dest')\n",
])
def test_a_copy_on_the_main_path_needs_no_assumption(helper: str) -> None:
    plan = run_helper(helper)
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


def test_a_copy_into_an_installed_packages_folder_is_unread_where_it_lands() -> None:
    helper = ("import os, shutil, vllm\n"
              "shutil.copy('x.py', os.path.join(os.path.dirname(vllm.__file__), 'attention/ops/paged_attn.py'))\n")
    plan = run_helper(helper)
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py copies /w/s/x.py to vllm/attention/ops/paged_attn.py of the installed package, wherever "
                   "the image has it", ("**/vllm/attention/ops/paged_attn.py",))]
    # verify-sync's question: nothing is known to land there, and the helper is named as what could place it.
    with pytest.raises(ShippingError, match=r"line 1 of s/i.sh .*could have placed it"):
        plan.shipped_copy("vllm/attention/ops/paged_attn.py")


@pytest.mark.parametrize("move", [
    "shutil.move(os.path.join(os.path.dirname(vllm.__file__), 'attention/ops/paged_attn.py'), '/tmp/p.py')",
    "os.rename(os.path.join(os.path.dirname(vllm.__file__), 'attention/ops/paged_attn.py'), '/tmp/p.py')",
    "(Path(vllm.__file__).parent / 'attention/ops/paged_attn.py').rename('/tmp/p.py')",
])
def test_a_move_out_of_an_installed_packages_folder_where_the_build_placed_files_is_unread_there(move: str) -> None:
    # CPython 3.11, with the build's copy at SITE/vllm/attention/ops/paged_attn.py: the move takes it away from
    # there. Which site-packages holds vllm only the image knows: the removal is unread wherever it is.
    site = "/usr/lib/python3/dist-packages/vllm/attention/ops"
    plan = run_helper(f"import os, shutil, vllm\nfrom pathlib import Path\n{move}\n",
                      script=f"mkdir -p {site}\ncp x.py {site}/paged_attn.py\npython3 h.py\n")
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py removes vllm/attention/ops/paged_attn.py of the installed package, where the build placed "
                   "files", ("**/vllm/attention/ops/paged_attn.py",))]


@pytest.mark.parametrize("helper", [
    "import shutil\nshutil.copytree('sub', '/dest/s', ignore=shutil.ignore_patterns('*.pyc'))\n",
    # the same ignore passed by position: copytree(src, dst, symlinks, ignore)
    "import shutil\nshutil.copytree('sub', '/dest/s', False, shutil.ignore_patterns('y.py'))\n",
    # whether it merges into a folder standing there is only known when it runs
    "import os, shutil\nshutil.copytree('sub', '/dest/s', dirs_exist_ok=os.path.isdir('/dest/s'))\n",
])
def test_a_copy_with_arguments_the_reader_does_not_follow_is_unread(helper: str) -> None:
    plan = run_helper(helper)
    assert in_dest(plan) == []
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py copies, with arguments the reader does not follow, /w/s/sub to /dest/s", ("/dest/s",))]


def test_a_program_without_a_file_has_no_dunder_file_to_read() -> None:
    plan = run_script("python3 -c \"import shutil; shutil.copy(__file__, '/dest/a')\"\n")
    assert [n.kind for n in plan.notes] == ["program"] and in_dest(plan) == []


def test_a_helper_that_only_makes_a_folder_makes_it_for_the_commands_after_it() -> None:
    plan = run_script("python3 -c \"import os; os.makedirs('/dest/a/b')\"\ncp x.py /dest/a/b/\n")
    assert in_dest(plan) == ["/dest/a/b/x.py"] and plan.notes == ()


@pytest.mark.parametrize(("script", "helper", "placed"), [
    ("python3 h.py /dest/a.py\n", "import sys, shutil\nshutil.copy('x.py', sys.argv[1])\n", "/dest/a.py"),
    ("D=/dest\npython3 h.py \"$D/b.py\"\n", "import sys, shutil\nshutil.copy('x.py', sys.argv[1])\n", "/dest/b.py"),
    ("python3 h.py sub /dest/t\n", "from sys import argv\nimport shutil\nshutil.copytree(argv[1], argv[2])\n",
     "/dest/t/y.py"),
    ("python3 h.py\n", "import sys, shutil\nshutil.copy(sys.argv[0], '/dest/self.py')\n",
     "/dest/self.py"),  # argv[0] is the program as the command line names it
    ("python3 -c \"import sys, shutil; shutil.copy('x.py', sys.argv[1])\" /dest/c.py\n", None, "/dest/c.py"),
    ("python3 h.py /dest/d.py\n", "import sys, shutil\nargv_seen = list(sys.argv)\nargv_seen.append('x')\n"
                                  "shutil.copy('x.py', sys.argv[1])\n", "/dest/d.py"),  # a copy changed, not argv
])
def test_a_path_the_helper_takes_from_its_command_line_is_the_argument_it_was_given(
        script: str, helper: str | None, placed: str) -> None:
    plan = run_script(script, files={"s/h.py": helper} if helper else None)
    assert in_dest(plan) == [placed] and plan.notes == ()


@pytest.mark.parametrize(("script", "helper"), [
    ("python3 h.py\n", "import sys, shutil\nshutil.copy('x.py', sys.argv[1])\n"),  # IndexError
    ("python3 h.py \"$UNSET_HERE\"\n", "import sys, shutil\nshutil.copy('x.py', sys.argv[1])\n"),
    ("python3 h.py /dest/a.py\n",
     "import sys, shutil\nsys.argv = ['h', '/dest/b.py']\nshutil.copy('x.py', sys.argv[1])\n"),
    ("python3 h.py /dest/a.py\n",
     "import sys, shutil\nsys.argv.insert(1, '/dest/b.py')\nshutil.copy('x.py', sys.argv[1])\n"),
    ("python3 h.py /dest/a.py\n", "import shutil\nsys = None\nshutil.copy('x.py', sys.argv[1])\n"),
    ("python3 h.py /dest/a.py /dest/b.py\n",
     "import sys, shutil\ndel sys.argv[1]\nshutil.copy('x.py', sys.argv[1])\n"),
    ("python3 h.py /dest/a.py\n",
     "import sys, shutil\nsys.argv[1:] = ['/dest/b.py']\nshutil.copy('x.py', sys.argv[1])\n"),
    ("python3 h.py /dest/a.py\n", "import sys, shutil\nshutil.copy('x.py', '/opt/' + sys.argv[1])\n"),
    # join drops what comes before an absolute argument: only an argument that starts the path is read
    ("python3 h.py a.py\n", "import os, sys, shutil\nshutil.copy('x.py', os.path.join('/dest', sys.argv[1]))\n"),
])
def test_a_command_line_path_the_reader_cannot_be_sure_of_leaves_the_helper_unread(script: str, helper: str) -> None:
    plan = run_script(script, files={"s/h.py": helper})
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


@pytest.mark.parametrize("helper", [
    "from pathlib import Path\nr = Path('x.py').rename\nr('/dest/r.py')\n",
    "from pathlib import Path\nr = Path('x.py').replace\nr('/dest/r.py')\n",
])
def test_a_move_through_a_stored_path_method_lands_where_cpython_puts_it(helper: str) -> None:
    # CPython moves x.py to /dest/r.py; a hostile or hurried helper spelling it so must not stop the reader.
    plan = run_helper(helper)
    assert in_dest(plan) == ["/dest/r.py"] and plan.notes == ()


# Each checked with CPython 3.11 running the helper after 'cp x.py /dest/a.py; cp -r sub /dest/t': the helper's
# removals, copies and folders happen in the order its code runs them.
@pytest.mark.parametrize(("helper", "placed"), [
    # a removal after a copy takes the copy away
    ("import os, shutil\nshutil.copy('x.py', '/dest/b.py')\nos.remove('/dest/b.py')\n",
     {"/dest/a.py": "s/x.py", "/dest/t/y.py": "s/sub/y.py"}),
    ("import shutil\nshutil.copytree('sub', '/dest/u')\nshutil.rmtree('/dest/u')\n",
     {"/dest/a.py": "s/x.py", "/dest/t/y.py": "s/sub/y.py"}),
    ("import os, shutil\nshutil.copy('/dest/a.py', '/dest/b.py')\nos.remove('/dest/a.py')\n",
     {"/dest/b.py": "s/x.py", "/dest/t/y.py": "s/sub/y.py"}),
    # a removal before a copy clears the way for it
    ("import os, shutil\nos.remove('/dest/a.py')\nshutil.copy('sub/y.py', '/dest/a.py')\n",
     {"/dest/a.py": "s/sub/y.py", "/dest/t/y.py": "s/sub/y.py"}),
    ("import shutil\nshutil.rmtree('/dest/t')\nshutil.copytree('sub', '/dest/t/')\n",
     {"/dest/a.py": "s/x.py", "/dest/t/y.py": "s/sub/y.py"}),
    # CPython refuses to remove a folder with os.remove or one that holds files with os.rmdir: it stays
    ("import os\nos.rmdir('/dest/t')\n", {"/dest/a.py": "s/x.py", "/dest/t/y.py": "s/sub/y.py"}),
    ("from pathlib import Path\nPath('/dest/t').unlink()\n", {"/dest/a.py": "s/x.py", "/dest/t/y.py": "s/sub/y.py"}),
])
def test_a_helpers_removals_and_copies_happen_in_the_order_it_runs_them(helper: str, placed: dict[str, str]) -> None:
    plan = run_helper(helper, "cp x.py /dest/a.py\ncp -r sub /dest/t\npython3 h.py\n")
    assert {path: plan.image[path].source for path in in_dest(plan)} == placed


@pytest.mark.parametrize("helper", [
    "import os\ndef clean():\n    os.remove('/dest/a.py')\n",
    "import os\nif os.environ.get('CLEAN'):\n    os.remove('/dest/a.py')\n",
    "from pathlib import Path\nfor _ in range(1):\n    Path('/dest/a.py').unlink()\n",
])
def test_a_removal_in_code_that_may_not_run_leaves_what_it_names_unread(helper: str) -> None:
    plan = run_helper(helper, "cp x.py /dest/a.py\npython3 h.py\n")
    assert in_dest(plan) == ["/dest/a.py"]
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py removes /dest/a.py in code that may not run (a function, a loop, a condition): what the "
                   "build placed there may stay", ("/dest/a.py",))]


def test_a_removal_in_code_that_may_not_run_of_what_a_later_copy_replaces_needs_no_note() -> None:
    helper = "import os, shutil\nif os.path.exists('/dest/a.py'):\n    os.remove('/dest/a.py')\n" \
             "shutil.copy('sub/y.py', '/dest/a.py')\n"
    plan = run_helper(helper, "cp x.py /dest/a.py\npython3 h.py\n")
    assert plan.image["/dest/a.py"].source == "s/sub/y.py" and plan.notes == ()


@pytest.mark.parametrize("write", ["open('/dest/b.py', 'w').write('z')", "Path('/dest/b.py').write_text('z')",
                                   "os.truncate('/dest/b.py', 0)"])
def test_a_write_over_what_the_helper_copied_makes_it_unread(write: str) -> None:
    plan = run_helper(f"import os, shutil\nfrom pathlib import Path\nshutil.copy('x.py', '/dest/b.py')\n{write}\n")
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py rewrites /dest/b.py, which the build placed there", ("/dest/b.py",))]


def test_a_path_rename_by_keyword_leaves_the_helper_unread() -> None:
    plan = run_helper("from pathlib import Path\nPath('x.py').rename(target='/dest/r.py')\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


# Each checked with CPython 3.11: a pathlib path has no '.' parts and no slash at its end, 'Path("x.py").parent'
# is '.', and 'str / str' or 'Path + str' is a TypeError (the helper is unread: it stops there).
@pytest.mark.parametrize(("helper", "placed"), [
    ("import shutil\nfrom pathlib import Path\nshutil.copy('x.py', Path('/dest/q/'))\n", {"/dest/q": "s/x.py"}),
    ("import shutil\nfrom pathlib import Path\nshutil.copy('x.py', Path('/dest') / 'nd/')\n", {"/dest/nd": "s/x.py"}),
    ("import shutil\nfrom pathlib import Path\nshutil.copy('x.py', Path('/dest/z/').parent / 'a.py')\n",
     {"/dest/a.py": "s/x.py"}),
    ("import shutil\nfrom pathlib import Path\nshutil.copy('x.py', Path('/dest/./c.py'))\n", {"/dest/c.py": "s/x.py"}),
    ("import shutil\nfrom pathlib import Path\nshutil.copy('x.py', f'{Path(\"x.py\").parent}/a.py')\n", {}),  # ./a.py
])
def test_a_pathlib_path_is_spelled_as_pathlib_spells_it(helper: str, placed: dict[str, str]) -> None:
    plan = run_helper(helper)
    assert {path: plan.image[path].source for path in in_dest(plan)} == placed and plan.notes == ()


@pytest.mark.parametrize("destination", ["'/dest' / 'a.py'", "Path('/dest') + '/a.py'"])
def test_a_path_python_refuses_to_build_leaves_the_helper_unread(destination: str) -> None:
    plan = run_helper(f"import shutil\nfrom pathlib import Path\nshutil.copy('x.py', {destination})\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


@pytest.mark.parametrize("end", ["sys.exit(0)", "raise SystemExit(0)", "raise SystemExit", "quit()", "os._exit(0)",
                                 "if __name__ == '__main__':\n    sys.exit(0)"])
def test_what_a_helper_does_after_it_ends_does_not_happen(end: str) -> None:
    # CPython stops at the statement that ends the program: the copy after it never runs.
    plan = run_helper(f"import os, sys, shutil\nshutil.copy('x.py', '/dest/a.py')\n{end}\n"
                      "shutil.copy('sub/y.py', '/dest/b.py')\n")
    assert in_dest(plan) == ["/dest/a.py"] and plan.notes == ()


@pytest.mark.parametrize("source", ["f", "os.path.join(os.getcwd(), 'x.py')"])
def test_a_copy_of_what_the_reader_cannot_work_out_is_unread_where_it_lands(source: str) -> None:
    plan = run_helper(f"import glob, os, shutil\nfor f in glob.glob('*.py'):\n    shutil.copy({source}, '/dest')\n")
    assert in_dest(plan) == []
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("unread", "h.py copies what the reader cannot work out to /dest", ("/dest",))]


def test_a_helper_that_changes_its_folder_is_unread() -> None:
    plan = run_helper("import os, shutil\nos.chdir('/dest')\nshutil.copy('/w/s/x.py', 'a.py')\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


# CPython 3.11 under 'set -e': a helper that always ends with a failure fails the script there.
@pytest.mark.parametrize(("helper", "fails_at"), [
    ("import sys\nsys.exit(3)\n", 2),
    ("raise SystemExit(2)\n", 1),
    ("raise SystemExit()\n", None),
    ("import sys\nx = 1\nraise RuntimeError('no')\n", 3),
    ("import sys\nif __name__ == '__main__':\n    sys.exit('bad')\n", 3),
    # a way out before it decides, or a success: the image decides (no failure is said)
    ("import sys\nsys.exit(0)\n", None),
    ("import sys\ndef f():\n    sys.exit(0)\nf()\nsys.exit(1)\n", None),
    ("import sys\ntry:\n    pass\nexcept Exception:\n    pass\nsys.exit(1)\n", None),
    ("import sys\nsys.exit(main())\n", None),
])
def test_a_helper_that_always_ends_with_a_failure_fails_its_command(helper: str, fails_at: int | None) -> None:
    plan = run_helper(helper, "set -e\npython3 h.py\ncp x.py /dest/after.py\n")
    assert in_dest(plan) == ([] if fails_at else ["/dest/after.py"])
    assert [n.reason for n in plan.notes if n.text == "python3 h.py"] == (
        [f"h.py ends with a failure at its line {fails_at}"] if fails_at else [])


def test_a_helper_that_changes_its_folder_through_a_descriptor_is_unread() -> None:
    # CPython 3.11: after os.fchdir to /dest's descriptor, 'a.py' is /dest/a.py, which the reader cannot place.
    plan = run_helper("import os, shutil\nos.fchdir(os.open('/dest', os.O_RDONLY))\n"
                      "shutil.copy('/w/s/x.py', 'a.py')\n")
    assert in_dest(plan) == [] and [n.kind for n in plan.notes] == ["program"]


def test_a_copy_the_reader_does_not_follow_to_an_empty_argument_raises() -> None:
    # CPython 3.11: copytree('sub', '') raises FileNotFoundError, whatever its ignore= says; the helper ends with 1.
    plan = run_helper("import shutil, sys\n"
                      "shutil.copytree('sub', sys.argv[1], ignore=shutil.ignore_patterns('*.pyc'))\n",
                      'python3 h.py ""\n')
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("fails", "h.py cannot copy to '': no such file or folder (FileNotFoundError)", None), (*RUN_FAILS, None)]


@pytest.mark.parametrize("call", ["os.symlink", "os.link"])
def test_a_link_to_an_empty_argument_raises_and_is_said_to_link(call: str) -> None:
    # CPython 3.11: os.symlink('x.py', '') and os.link('x.py', '') raise
    # "FileNotFoundError: [Errno 2] No such file or directory: 'x.py' -> ''"; the helper ends with 1.
    plan = run_helper(f"import os, sys\n{call}('x.py', sys.argv[1])\n", 'python3 h.py ""\n')
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [
        ("fails", "h.py cannot link to '': no such file or folder (FileNotFoundError)", None), (*RUN_FAILS, None)]


@pytest.mark.parametrize("helper", [
    "open('/dest/a.py', 'w').write(open('x.py').read())\n",
    "with open('x.py') as f:\n    text = f.read().replace('1', '2')\n"
    "with open('/dest/a.py', 'w') as f:\n    f.write(text)\n",
    "from pathlib import Path\nPath('/dest/a.py').write_text(Path('x.py').read_text())\n",
    "from pathlib import Path\nwith Path('x.py').open() as s, open('/dest/a.py', 'wb') as d:\n"
    "    d.write(s.read().encode())\n",
    "import os\nhere = os.path.dirname(os.path.abspath(__file__))\n"
    "open('/dest/a.py', 'w').write(open(os.path.join(here, 'x.py'), encoding='utf-8').read())\n",
    "import sys\nopen('/dest/a.py', 'w').write(open(input()).read())\n",  # a file it is told at run time
])
def test_a_file_written_after_reading_a_context_file_may_be_a_copy_by_hand_and_is_unread_there(helper: str) -> None:
    # CPython writes x.py's bytes (or a changed copy) at /dest/a.py: no copy call says so, the data does.
    plan = run_helper(helper)
    assert in_dest(plan) == []
    assert [(n.kind, n.line, n.scope) for n in plan.notes] == [("unread", 1, ("/dest/a.py",))]
    assert "writes /dest/a.py itself after reading " in plan.notes[0].reason


def test_a_hand_copy_into_an_installed_package_is_unread_wherever_the_image_has_it() -> None:
    helper = ("import os\nimport vllm\n"
              "dst = os.path.join(os.path.dirname(vllm.__file__), 'attention/ops/paged_attn.py')\n"
              "with open('x.py') as f:\n    src = f.read()\nwith open(dst, 'w') as f:\n    f.write(src)\n")
    plan = run_helper(helper)
    assert [(n.kind, n.reason, n.scope) for n in plan.notes] == [(
        "unread", "h.py writes vllm/attention/ops/paged_attn.py of the installed package itself after reading "
                  "s/x.py: it may hold a copy of it, changed or not", ("**/vllm/attention/ops/paged_attn.py",))]


@pytest.mark.parametrize("helper", [
    "open('/dest/os.txt', 'w').write(open('/etc/os-release').read())\n",  # the base image's file
    "open('/dev/null', 'w').write(open('x.py').read())\n",  # a device
    "import json\nopen('/dest/v.json', 'w').write(json.dumps({'v': 1}))\n",  # reads nothing
])
def test_a_write_after_reading_no_context_file_is_no_copy(helper: str) -> None:
    assert run_helper(helper).notes == ()


@pytest.mark.parametrize(("helper", "placed"), [
    ("import os\nos.symlink('/w/s/x.py', '/dest/l.py')\n", {"/dest/l.py": "s/x.py"}),
    ("import os\nos.symlink('../w/s/x.py', '/dest/l.py')\n", {"/dest/l.py": "s/x.py"}),  # read from /dest
    ("import os\nos.symlink('x.py', '/dest/l.py')\n", {}),  # /dest/x.py: nothing there, a dangling link
    ("import os\nos.symlink('x.py', '/dest/l.py')\nimport shutil\nshutil.copy('sub/y.py', '/dest/x.py')\n",
     {"/dest/l.py": "s/sub/y.py", "/dest/x.py": "s/sub/y.py"}),  # what later lands where it points shows there
    ("import os\nos.link('x.py', '/dest/h.py')\n", {"/dest/h.py": "s/x.py"}),  # a hard link: from here
    # Path(LINK).hardlink_to(TARGET) is os.link(TARGET, LINK): 'x.py' is /w/s/x.py, read from the folder it runs
    # in (CPython 3.11: /dest/h.py shares x.py's inode); as a symlink it would point at /dest/x.py and dangle.
    ("from pathlib import Path\nPath('/dest/h.py').hardlink_to('x.py')\n", {"/dest/h.py": "s/x.py"}),
    ("from pathlib import Path\nPath('/dest/p.py').symlink_to('/w/s/sub/y.py')\n", {"/dest/p.py": "s/sub/y.py"}),
    ("import os\nos.symlink('/w/s/sub', '/dest/d')\n", {"/dest/d/y.py": "s/sub/y.py"}),
])
def test_a_link_a_helper_makes_shows_what_it_points_at_as_ln_would(helper: str, placed: dict[str, str]) -> None:
    # CPython 3.11 run on the same tree: the files reached through /dest are these.
    plan = run_helper(helper)
    assert {p: v.source for p, v in plan.image.items() if p.startswith("/dest/")} == placed
    assert plan.notes == ()


def test_a_link_the_program_may_not_reach_is_made_and_noted_as_assumed() -> None:
    # CPython 3.11 runs f() and makes /dest/l.py -> /w/s/x.py; the reader cannot know the call runs, and says so.
    plan = run_helper("import os\ndef f():\n    os.symlink('/w/s/x.py', '/dest/l.py')\nf()\n")
    assert {p: v.source for p, v in plan.image.items() if p.startswith("/dest/")} == {"/dest/l.py": "s/x.py"}
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("assumed", "h.py links /dest/l.py to /w/s/x.py in code that may not run (a function, a loop, a condition): "
                    "the reader takes it to run once")]


def test_a_link_over_what_stands_there_is_refused_and_leaves_it() -> None:
    # os.symlink never replaces: FileExistsError, and /dest/e.py keeps x.py.
    plan = run_helper("import os, shutil\nshutil.copy('x.py', '/dest/e.py')\nos.symlink('/w/s/sub/y.py', '/dest/e.py')\n")
    assert plan.image["/dest/e.py"].source == "s/x.py"
    assert [(n.kind, n.reason) for n in plan.notes] == [
        ("fails", "h.py cannot make the link /dest/e.py: something stands there (FileExistsError)"), RUN_FAILS]


@pytest.mark.parametrize(("destination", "placed"), [
    ("'/dest/%s' % 'pct.py'", "/dest/pct.py"), ("'/dest/%s_%s.py' % ('a', 'b')", "/dest/a_b.py"),
    ("'/dest/100%%_%s.py' % 'p'", "/dest/100%_p.py"), ("'%s/%s' % (D, 'd.py')", "/dest/d.py"),
    ("'/dest/{}'.format('fmt.py')", "/dest/fmt.py"), ("'/dest/{0}{0}.py'.format('d')", "/dest/dd.py"),
    ("'/dest/{n}.py'.format(n='kw')", "/dest/kw.py"), ("'{}/{{b}}.py'.format(D)", "/dest/{b}.py"),
])
def test_a_destination_formatted_with_s_or_plain_fields_is_read(destination: str, placed: str) -> None:
    # CPython 3.11 puts x.py there.
    plan = run_helper(f"import shutil\nD = '/dest'\nshutil.copy('x.py', {destination})\n")
    assert {p: v.source for p, v in plan.image.items() if p.startswith("/dest/")} == {placed: "s/x.py"}
    assert plan.notes == ()


@pytest.mark.parametrize("destination", ["'/dest/%d.py' % 3", "'/dest/{!r}.py'.format('r')",
                                         "'/dest/{:>4}.py'.format('r')", "'/dest/%s_%s.py' % ('a',)",
                                         "'/dest/%(n)s.py' % {'n': 'x'}", "'/dest/{2}.py'.format('a')"])
def test_a_destination_formatted_in_a_way_the_reader_does_not_follow_leaves_the_helper_unread(
        destination: str) -> None:
    plan = run_helper(f"import shutil\nshutil.copy('x.py', {destination})\n")
    assert not any(p.startswith("/dest/") for p in plan.image)
    assert [n.kind for n in plan.notes] == ["program"]


@pytest.mark.parametrize("spelling", ["'{fields}'.format(A)", "'{percents}' % ({values})"])
def test_a_formatted_path_past_what_a_file_system_opens_leaves_the_helper_unread(spelling: str) -> None:
    # A hostile helper repeats one long name 3,000 times: no path that long can be opened (PATH_MAX 4096), so the
    # reader stops building it rather than hold megabytes for it.
    destination = spelling.format(fields="{0}" * 3000, percents="%s" * 3000, values="A, " * 3000)
    plan = run_helper(f"import shutil\nA = '{'a' * 2000}'\nshutil.copy('x.py', {destination})\n")
    assert [n.kind for n in plan.notes] == ["program"]
    assert not any(p.startswith("/dest/") for p in plan.image)


def test_a_formatted_path_up_to_that_length_is_read() -> None:
    plan = run_helper(f"import shutil\nshutil.copy('x.py', '/dest/{{}}.py'.format('{'a' * 200}'))\n")
    assert {p for p in plan.image if p.startswith("/dest/")} == {f"/dest/{'a' * 200}.py"}
