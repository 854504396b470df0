"""How the reader follows the names a Python helper reaches its calls and paths through.

A helper names what it calls and where it writes through imports,
aliases (``copy = shutil.copy``), ``getattr`` of a spelled name,
``os.path.join`` / ``posixpath.join`` / ``Path``, ``sys.argv[N]`` and an
imported package's ``__file__``. Each is read as CPython resolves it; what
the reader cannot pin down (a package reached through a star import, a
file through a link, a flag it cannot evaluate) leaves the helper unread
or the copy unclassified rather than guessed. Chains of names are
followed a bounded number of steps, so that a hostile helper cannot keep
the reader busy forever.
"""

from __future__ import annotations

import posixpath

import pytest

from patcher.shipping.python_effects import ARGUMENT, PACKAGE, python_effects
from tests.shipping.conftest import in_dest, run_helper, run_script


def writes_of(source: str) -> tuple[str, ...]:
    effects = python_effects(source)
    assert effects is not None
    return effects.writes


# ---- what a call goes to -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("source", "writes"), [
    # builtins.getattr is getattr: the function it fetches is called.
    ("import builtins, shutil\nbuiltins.getattr(shutil, 'copy')('a.py', '/opt/b.py')\n", ("/opt/b.py",)),
    # A module name rebound to its own attribute: os is os.path from then on, os.join is posixpath.join.
    ("import os\nos = os.path\nopen(os.join('/opt', 'x.py'), 'w')\n", ("/opt/x.py",)),
    # A name rebound to a call of its own attribute: inside that value it is still the import.
    ("from os import path\npath = path.join('/opt', 'x.py')\nopen(path, 'w')\n", ("/opt/x.py",)),
    # A module fetched with getattr and bound over its own import name.
    ("import shutil\nshutil = getattr(shutil, 'copy')\nshutil('a.py', '/opt/b.py')\n", ("/opt/b.py",)),
    # getattr itself reached through another name.
    ("import os\nlook = getattr\nlook(os, 'replace')('/opt/x.tmp', '/opt/x.py')\n", ("/opt/x.py",)),
])
def test_a_call_is_followed_through_the_names_it_goes_by(source: str, writes: tuple[str, ...]) -> None:
    assert writes_of(source) == writes


@pytest.mark.parametrize("fallback", ["compat().shutil", "getattr(compat(), 'shutil')"])
def test_an_import_with_a_fallback_binding_is_still_the_module(fallback: str) -> None:
    # The import succeeds, so shutil is the module: the fallback the reader cannot follow does not hide the copy.
    source = (f"try:\n    import shutil\nexcept ImportError:\n    shutil = {fallback}\n"
              "shutil.copy('a.py', '/opt/b.py')\n")
    assert writes_of(source) == ("/opt/b.py",)


def name_chain(names: int, first: str, call: str) -> str:
    """A helper that binds N0 to ``first``, each next name to the one before, and then makes ``call``."""
    lines = ["import shutil", f"N0 = {first}", *(f"N{n} = N{n - 1}" for n in range(1, names + 1))]
    return "\n".join(lines) + "\n" + call.format(last=f"N{names}") + "\n"


CHAINS = {"to the function": ("shutil.copy", "{last}('a.py', 'b.py')"),
          "to getattr": ("getattr", "{last}(shutil, 'copy')('a.py', 'b.py')"),
          "to the module getattr looks into": ("shutil", "getattr({last}, 'copy')('a.py', 'b.py')")}


@pytest.mark.parametrize("chain", CHAINS)
def test_a_call_through_eighteen_more_names_is_followed(chain: str) -> None:
    first, call = CHAINS[chain]
    assert writes_of(name_chain(18, first, call)) == ("b.py",)


@pytest.mark.parametrize("chain", CHAINS)
@pytest.mark.parametrize("names", [19, 20])
def test_a_call_through_nineteen_more_names_leaves_the_helper_unread(chain: str, names: int) -> None:
    first, call = CHAINS[chain]
    assert python_effects(name_chain(names, first, call)) is None


# ---- paths joined and taken apart -----------------------------------------------------------------------------

def test_posixpath_join_builds_a_path_as_os_path_join_does() -> None:
    assert writes_of("import posixpath\nopen(posixpath.join('/opt', 'vllm', 'x.py'), 'w')\n") == ("/opt/vllm/x.py",)


def path_chain(names: int, use: str) -> str:
    """A helper that binds P0 to a path, each next name to the one before, and writes to ``use`` of the last."""
    lines = ["import os", "from pathlib import Path", "P0 = '/opt/vllm/x.py'",
             *(f"P{n} = P{n - 1}" for n in range(1, names + 1))]
    return "\n".join(lines) + "\nopen(" + use.format(last=f"P{names}") + ", 'w')\n"


# The last name the path is followed through, for each way the call spells it (each wrapper is one more step).
USES = {"str({last})": (18, "/opt/vllm/x.py"),
        "os.path.abspath({last})": (18, "/opt/vllm/x.py"),
        "os.path.dirname({last})": (18, "/opt/vllm"),
        "Path({last}).parent": (17, "/opt/vllm")}


@pytest.mark.parametrize("use", USES)
def test_a_path_taken_apart_or_wrapped_is_followed_through_a_bounded_chain(use: str) -> None:
    last, path = USES[use]
    assert writes_of(path_chain(last, use)) == (path,)
    assert python_effects(path_chain(last + 1, use)) is None


# ---- sys.argv --------------------------------------------------------------------------------------------------

def test_a_command_line_argument_up_to_the_hundredth_is_a_path() -> None:
    assert writes_of("import sys\nopen(sys.argv[99], 'w')\n") == (f"{ARGUMENT}99{ARGUMENT}",)


def test_a_command_line_argument_past_the_hundredth_leaves_the_helper_unread() -> None:
    assert python_effects("import sys\nopen(sys.argv[100], 'w')\n") is None


# ---- an imported package's folder -------------------------------------------------------------------------------

@pytest.mark.parametrize(("folder", "package"), [
    ("os.path.dirname(vllm.__file__)", "vllm"),
    ("Path(vllm.__file__).parent", "vllm"),
    ("Path(vllm.__file__).absolute().parent", "vllm"),
    ("Path(vllm.__file__).resolve().parent", "vllm"),
    ("os.path.dirname(os.path.realpath(vllm.__file__))", "vllm"),
    ("os.path.dirname(vllm.model_executor.__file__)", "vllm/model_executor"),
    ("Path(vllm.model_executor.__file__).parent", "vllm/model_executor"),
])
def test_a_package_folder_is_read_from_its_file(folder: str, package: str) -> None:
    source = f"import os\nimport vllm.model_executor\nfrom pathlib import Path\nopen(os.path.join({folder}, 'x.py'), 'w')\n"
    assert writes_of(source) == (f"{PACKAGE}{package}/x.py",)


@pytest.mark.parametrize("folder", [
    "os.path.dirname(os.path.dirname(vllm.__file__))",
    "Path(vllm.__file__).parent.parent",
    "os.path.dirname(Path(vllm.__file__).parent)",
])
def test_the_folder_above_a_package_is_the_site_folder_not_the_working_folder(folder: str) -> None:
    # CPython writes <site-packages>/x.py: one folder above vllm's, never x.py beside the helper.
    source = f"import os\nimport vllm\nfrom pathlib import Path\nopen(os.path.join({folder}, 'x.py'), 'w')\n"
    (written,) = writes_of(source)
    assert written.startswith(PACKAGE) and posixpath.normpath(written[1:]) == "x.py"


def test_a_path_above_the_site_folder_leaves_the_helper_unread() -> None:
    up_three = "os.path.dirname(os.path.dirname(os.path.dirname(vllm.__file__)))"
    assert python_effects(f"import os, vllm\nopen(os.path.join({up_three}, 'x.py'), 'w')\n") is None


def test_a_helper_climbing_above_its_own_folder_copies_from_there() -> None:
    # CPython 3.9+ makes the script's __file__ absolute (/w/s/sub/h.py): three dirnames up is /w, not ''.
    helper = ("import os, shutil\n"
              "top = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))\n"
              "shutil.copy(os.path.join(top, 's', 'x.py'), '/dest/')\n")
    plan = run_script("python3 sub/h.py\n", files={"s/sub/h.py": helper})
    assert in_dest(plan) == ["/dest/x.py"] and plan.notes == ()


@pytest.mark.parametrize("folder", [
    # What a star import brings in is not known: ops need not be vllm's own ops.
    "os.path.dirname(ops.__file__)",
    # A module taken from a list, not from its import.
    "os.path.dirname(mods[0].__file__)",
    # The link's target lies wherever the image points it.
    "os.path.dirname(os.readlink(vllm.__file__))",
    "Path(vllm.__file__).readlink().parent",
    "os.path.dirname(where(vllm.__file__))",
    # A path under the package's __init__.py, not the package's folder: Path(f, 'ops').parent is f itself.
    "Path(vllm.__file__, 'ops').parent",
])
def test_a_path_only_like_a_package_folder_leaves_the_helper_unread(folder: str) -> None:
    source = ("import os\nimport vllm\nfrom vllm import *\nfrom pathlib import Path\n"
              "def where(path):\n    return path\nmods = [vllm]\n"
              f"open(os.path.join({folder}, 'x.py'), 'w')\n")
    assert python_effects(source) is None


def package_wrapped(wrappers: int, spelling: str) -> str:
    """A helper that writes into vllm's folder, its __file__ wrapped in that many calls."""
    inner = "vllm.__file__"
    if spelling == "str() in Path().parent":
        for _ in range(wrappers - 1):
            inner = f"str({inner})"
        folder = f"Path({inner}).parent"
    elif spelling == "Path().resolve() ... .parent":
        folder = f"Path({inner})" + ".resolve()" * (wrappers - 1) + ".parent"
    else:
        for _ in range(wrappers):
            inner = f"os.path.abspath({inner})"
        folder = f"os.path.dirname({inner})"
    return f"import os, vllm\nfrom pathlib import Path\nopen(os.path.join({folder}, 'x.py'), 'w')\n"


# The most calls around the package's __file__ the reader unwraps, for each spelling.
WRAPPINGS = {"str() in Path().parent": 19, "Path().resolve() ... .parent": 19, "abspath() in dirname()": 19}


@pytest.mark.parametrize("spelling", WRAPPINGS)
def test_a_package_folder_is_unwrapped_through_a_bounded_number_of_calls(spelling: str) -> None:
    most = WRAPPINGS[spelling]
    assert writes_of(package_wrapped(most, spelling)) == (f"{PACKAGE}vllm/x.py",)
    assert python_effects(package_wrapped(most + 1, spelling)) is None


# ---- copytree's dirs_exist_ok -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("flag", "how"), [
    ("True", "merge"),
    ("False", "copytree"),
    ("len(sys.argv) > 1", "other"),  # known only when it runs: what the copy does is not classified
    ("MERGE", "other"),
])
def test_copytree_merges_only_with_a_spelled_out_dirs_exist_ok(flag: str, how: str) -> None:
    source = f"import shutil, sys\nMERGE = input()\nshutil.copytree('onnx', '/opt/ONNX', dirs_exist_ok={flag})\n"
    effects = python_effects(source)
    assert effects is not None
    assert [(c.how, c.source, c.destination) for c in effects.copies] == [(how, "onnx", "/opt/ONNX")]


# ---- what is not a path -----------------------------------------------------------------------------------------

def test_opening_a_member_of_a_zip_archive_writes_nothing() -> None:
    # z.open('a.txt') reads the member a.txt: z is no pathlib path, and 'a.txt' is no mode.
    source = "import zipfile\nwith zipfile.ZipFile('/tmp/w.zip') as z:\n    data = z.open('a.txt').read()\n"
    assert python_effects(source) == python_effects("print('nothing written')\n")


@pytest.mark.parametrize(("helper", "placed", "kinds"), [
    # CPython 3.11: the helper's own 'copy' or 'class shutil' is what the call reaches, and copies nothing
    ("class shutil:\n    @staticmethod\n    def copy(a, b): pass\nshutil.copy('x.py', '/dest')\n", [], []),
    # imported and defined as well: which one the call reaches is the order's to say; the helper is unread
    ("from shutil import copy\ndef copy(a, b):\n    pass\ncopy('x.py', '/dest')\n", [], ["program"]),
    ("import shutil\nclass shutil:\n    pass\nshutil.copy('x.py', '/dest')\n", [], ["program"]),
])
def test_a_function_or_class_the_helper_defines_is_not_the_module_of_that_name(
        helper: str, placed: list[str], kinds: list[str]) -> None:
    plan = run_helper(helper)
    assert in_dest(plan) == placed and [n.kind for n in plan.notes] == kinds
