"""A Python helper the install script runs is read for the files it writes, as CPython would run it.

The vendor's own helpers (``patch_scheduler.py``, ``patch_registry.py``)
rewrite one named file each: read, not reported. A helper that writes a
shipped file, runs other programs, or writes where its code does not spell
out is reported with what it could change.
"""

from __future__ import annotations

import pytest

from patcher.shipping.python_effects import PACKAGE, python_effects
from tests.fixtures_vendor import VENDOR_TREE
from tests.shipping.conftest import notes_of, plan_of, script_context

SHIPPED = "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py"


@pytest.mark.parametrize("helper", ["patch_scheduler.py", "patch_registry.py"])
def test_the_vendors_helpers_write_one_file_each(helper: str) -> None:
    effects = python_effects((VENDOR_TREE / "qwen3_6_scripts" / helper).read_text())
    assert effects is not None and len(effects.writes) == 1 and not effects.removes
    assert effects.writes[0].startswith("/usr/local/corex/lib/python3/dist-packages/vllm/")


@pytest.mark.parametrize(("source", "writes", "removes"), [
    ("print('hello')\n", (), ()),
    ("import vllm.model_executor\nprint(vllm.model_executor.__name__)\n", (), ()),  # names no writing call
    ("import vllm\nprint(vllm.__version__)\n", (), ()),
    ("P = '/a/b.py'\nwith open(P) as f:\n    t = f.read()\nwith open(P, 'w') as f:\n    f.write(t)\n", ("/a/b.py",), ()),
    ("import os\nD = '/opt'\nopen(os.path.join(D, 'x.py'), mode='a').write('')\n", ("/opt/x.py",), ()),
    ("from pathlib import Path\nP = Path('/srv') / 'y.py'\nP.write_text('y')\ns = 'abc'.replace('a', 'b')\n",
     ("/srv/y.py",), ()),
    ("import shutil as sh\nsh.copy('a.py', f'/opt/{\"b\"}.py')\nsh.rmtree('/tmp/build')\n", ("/opt/b.py",),
     ("/tmp/build",)),
    ("import os\nos.replace('/a.tmp', '/a.py')\n", ("/a.py",), ("/a.tmp",)),
    # Paths handed on as str(path) or os.fspath(path), renamed into place, opened with mode= spelled out.
    ("import os, shutil\nfrom pathlib import Path\nD = Path('/opt/vllm')\n"
     "shutil.copy(str(Path('x.py')), str(D / 'x.py'))\nshutil.copyfile('y.py', os.fspath(D / 'y.py'))\n",
     ("/opt/vllm/x.py", "/opt/vllm/y.py"), ()),
    ("from pathlib import Path\nT = Path('/opt/x.py.tmp')\nT.write_text('x')\nT.replace(Path('/opt/x.py'))\n",
     ("/opt/x.py.tmp", "/opt/x.py"), ("/opt/x.py.tmp",)),
    ("P = '/opt/x.py'\nwith open(P, mode='w', encoding='utf-8') as f:\n    f.write('')\n", ("/opt/x.py",), ()),
    ("P = '/opt/x.py'\nwith open(P, encoding='utf-8', mode='r') as f:\n    f.read()\n", (), ()),
    ("\ufeffopen('/opt/x.py', 'w')\n", ("/opt/x.py",), ()),  # CPython skips a byte-order mark
])
def test_what_a_helper_writes(source: str, writes: tuple[str, ...], removes: tuple[str, ...]) -> None:
    effects = python_effects(source)
    assert effects is not None and (effects.writes, effects.removes) == (writes, removes)


@pytest.mark.parametrize("source", [
    "import subprocess\nsubprocess.run(['cp', 'a', 'b'])\n",
    "import os\nos.system('cp a b')\n",
    "exec(open('other.py').read())\n",
    "import importlib\nimportlib.import_module('setup_hook')\n",
    "import os\nfor name in os.listdir('.'):\n    open(name, 'w').write('')\n",  # a path it computes
    "MODE = input()\nopen('/a.py', MODE)\n",  # a mode it computes
    "import tarfile\ntarfile.open('x.tar').extractall('/opt')\n",
    "def broken(:\n    open('/x', 'w')\n",  # does not parse: what it would write is not read
])
def test_a_helper_whose_writes_cannot_be_read_gives_none(source: str) -> None:
    assert python_effects(source) is None


def test_a_helper_that_rewrites_the_shipped_file_is_a_caveat() -> None:
    helper = f"P = '{SHIPPED}'\nt = open(P).read()\nopen(P, 'w').write(t.replace('a', 'b'))\n"
    plan = plan_of(script_context(f"cp x.py {SHIPPED}\npython3 ./fix.py\n", files={"s/fix.py": helper}))
    assert notes_of(plan, "unread") == [("s/i.sh", 2, "python3 ./fix.py")]
    assert [n.line for n in plan.caveats("s/x.py", (SHIPPED,))] == [2]


def test_a_helper_that_rewrites_a_folder_the_build_filled_is_a_caveat() -> None:
    # copytree over /opt/ONNX replaces what the build placed under it: the folder counts, not only a file. (The
    # source is the base image's: one in /w/s, which the build made, would be known to be missing, and raise.)
    helper = "import shutil\nshutil.copytree('/usr/share/onnx', '/opt/ONNX', dirs_exist_ok=True)\n"
    plan = plan_of(script_context("mkdir -p /opt/ONNX\ncp x.py /opt/ONNX/ops.py\npython3 fix.py\n",
                                  files={"s/fix.py": helper}))
    assert [(n.kind, n.line, n.reason, n.scope) for n in plan.notes] == [
        ("unread", 3, "fix.py rewrites /opt/ONNX, which the build placed there", ("/opt/ONNX",))]


def test_options_before_the_helper_are_skipped_with_the_values_they_take() -> None:
    # 'python3 -W ignore -u fix.py': -W takes the next word as its warning filter and -u none, so the program
    # CPython runs is fix.py, and what it writes is read.
    helper = f"open('{SHIPPED}', 'w').write('')\n"
    plan = plan_of(script_context(f"cp x.py {SHIPPED}\npython3 -W ignore -u fix.py\n", files={"s/fix.py": helper}))
    assert notes_of(plan, "unread") == [("s/i.sh", 2, "python3 -W ignore -u fix.py")]
    assert [n.line for n in plan.caveats("s/x.py", (SHIPPED,))] == [2]


def test_a_function_that_rewrites_the_file_it_is_given_is_unread() -> None:
    # Its parameter shadows the module's 'path': each call hands it a file, so which files it writes is not the
    # one string the module binds, and the helper is unread rather than read as writing that one.
    helper = (f"path = '{SHIPPED}'\n\n\ndef patch(path, old, new):\n    with open(path) as f:\n"
              "        text = f.read()\n    with open(path, 'w') as f:\n        f.write(text.replace(old, new))\n\n\n"
              "patch(path, 'block_size = 16', 'block_size = 32')\n"
              "patch('/usr/lib/python3/dist-packages/vllm/envs.py', 'False', 'True')\n")
    assert python_effects(helper) is None


def test_a_helper_that_writes_another_file_is_not_a_caveat() -> None:
    helper = "open('/usr/lib/python3/dist-packages/vllm/core/scheduler.py', 'w').write('')\n"
    plan = plan_of(script_context(f"cp x.py {SHIPPED}\npython3 -u fix.py\npython3 -c 'print(1)'\n",
                                  files={"s/fix.py": helper}))
    assert plan.notes == () and plan.caveats("s/x.py", (SHIPPED,)) == ()


def test_a_helper_that_runs_programs_is_a_program_the_reader_does_not_follow() -> None:
    helper = "import subprocess\nsubprocess.check_call(['sh', '-c', 'cp x y'])\n"
    plan = plan_of(script_context(f"cp x.py {SHIPPED}\npython3 fix.py\n", files={"s/fix.py": helper}))
    assert notes_of(plan, "program") == [("s/i.sh", 2, "python3 fix.py")]
    assert [n.line for n in plan.caveats("s/x.py", (SHIPPED,))] == [2]


@pytest.mark.parametrize(("helper", "run"), [
    (f"import os\nos.remove('{SHIPPED}')\n", "python3 fix.py"),
    ("import os, sys\nos.remove(sys.argv[1])\n", f"python3 fix.py {SHIPPED}"),  # the path it is given
])
def test_a_helper_that_removes_the_shipped_file_takes_it_out_of_the_image(helper: str, run: str) -> None:
    plan = plan_of(script_context(f"cp x.py {SHIPPED}\n{run}\n", files={"s/fix.py": helper}))
    assert SHIPPED not in plan.image
    assert plan.notes == ()


@pytest.mark.parametrize("command", ["python3 -m", "python3 -u -c", "python3 missing.py", "python3 ./sub/none.py a"])
def test_python_without_a_program_to_run_fails_with_status_2_and_the_script_goes_on(command: str) -> None:
    # CPython 3.11: "Argument expected for the -m option" / "can't open file ...: [Errno 2]", status 2; the
    # script (no set -e) reads on.
    plan = plan_of(script_context(f"{command}\ncp x.py /opt/a$?.py\n"))
    assert plan.image["/opt/a2.py"].source == "s/x.py"
    assert [(n.kind, n.line, n.text) for n in plan.notes] == [("fails", 1, command)]


@pytest.mark.parametrize(("source", "writes", "removes"), [
    ("import os\nos.remove('/a')\nos.unlink('/b')\nos.rmdir('/c')\nos.removedirs('/d')\n", (), ("/a", "/b", "/c", "/d")),
    ("import os\nos.rename('/a','/b')\nos.renames('/c','/d')\nos.symlink('/e','/f')\nos.link('/g','/h')\n"
     "os.truncate('/i', 0)\nos.open('/j', 0)\nos.mknod('/k')\nos.mkfifo('/l')\n",
     ("/b", "/d", "/f", "/h", "/i", "/j", "/k", "/l"), ("/a", "/c")),
    ("import shutil\nshutil.copy2('a','/b')\nshutil.copyfile('a','/c')\nshutil.copytree('a','/d')\n"
     "shutil.move('/e','/f')\nshutil.unpack_archive('x.zip','/g')\nshutil.copyfileobj(a, b)\n",
     ("/b", "/c", "/d", "/f", "/g"), ("/e",)),
    ("from pathlib import Path\nPath('/a').write_bytes(b'')\nPath('/b').touch()\nPath('/c').symlink_to('/x')\n"
     "Path('/d').hardlink_to('/y')\nPath('/e').unlink()\nPath('/f').rmdir()\n", ("/a", "/b", "/c", "/d"), ("/e", "/f")),
    ("from pathlib import Path\nPath('/a').open('w')\nPath('/b').open()\nPath('/c').rename('/d')\n"
     "Path('/e').replace('/f')\n", ("/a", "/d", "/f"), ("/c", "/e")),
    ("import pathlib\np = pathlib.Path('/a') / 'b'\np.write_text('')\n", ("/a/b",), ()),
    ("from pathlib import Path\n(Path('/a') / 'b' / 'c').write_text('x')\n", ("/a/b/c",), ()),
    ("from pathlib import PurePosixPath as P\nP('/a', 'b').touch()\n", ("/a/b",), ()),
    ("import io, codecs, builtins\nio.open('/a', 'wb')\ncodecs.open('/b', 'a')\nbuiltins.open('/c', 'x')\n"
     "open('/d', 'r+')\nopen('/e', 'r')\nopen(file='/f', mode='w')\nopen('/g')\n", ("/a", "/b", "/c", "/d", "/f"), ()),
    ("import os\nos.fdopen(3, 'w')\n", (), ()),
    ("import os\nopen(os.path.join('/a', 'b', 'c'), 'w')\n", ("/a/b/c",), ()),
    # The folder of a constant path is a constant too (os.path.dirname('/opt/app/setup.py') is '/opt/app').
    ("import os\nD = '/opt/app/setup.py'\nopen(os.path.join(os.path.dirname(D), 'patched.py'), 'w')\n",
     ("/opt/app/patched.py",), ()),
    ("import posixpath\nopen(posixpath.dirname('/opt/app/setup.py') + '/b.py', 'w')\n", ("/opt/app/b.py",), ()),
    ("D='/a'\nopen(f'{D}/b', 'w')\nopen(f'{D!s}/c', 'w')\nopen(D + '/d', 'w')\nopen(str(D), 'w')\n",
     ("/a/b", "/a/c", "/a/d", "/a"), ()),
    ("import os\nD='/a'\nopen(os.fspath(D), 'w')\nE: str = '/e'\nopen(E, 'a')\n", ("/a", "/e"), ()),
    ("D = '/a'\nE = D\nF = E\nopen(F, 'w')\nopen(F, 'w')\n", ("/a",), ()),
    ("import fileinput\nfor l in fileinput.input('/a'): print(l)\n", (), ()),
    ("x = getattr(os, 'path')\n", (), ()),
    ("import os.path\nos.remove('/a')\n", (), ("/a",)),
    ("from os import remove as rm\nrm('/a')\n", (), ("/a",)),
    ("import os\nrm = os.remove\nrm('/a')\n", (), ("/a",)),  # a name bound to the function
    ("import os\nx = getattr(os, 'remove')\nx('/a')\n", (), ("/a",)),
    ("import shutil as sh\ncp = sh.copy\ncp('a', '/b')\nr = open\nr('/c', 'w')\n", ("/b", "/c"), ()),
    ("from . import x\nx.remove('/a')\n", (), ()),  # calls into other modules are taken not to write
    ("import a.b as c\nc.remove('/a')\nimport a.b\na.b.remove('/z')\n", (), ()),
    ("s = 'x'.replace('a', 'b')\nname.rename('x')\nf.unlink()\n", (), ()),
    ("x = 1\n", (), ()),
    # Each call is read, whichever comes first: a stored method's call or a read-only fileinput loop before it
    # does not end the reading.
    ("from pathlib import Path\nsave = Path('/a').write_text\nsave('')\nopen('/b', 'w')\n", ("/a", "/b"), ()),
    ("import fileinput\nfor l in fileinput.input('/a'): print(l)\nopen('/b', 'w')\n", ("/b",), ()),
    ("open('/a', 'X')\n", (), ()),  # no such mode: CPython raises ValueError and creates nothing
    ("import os\nx = getattr(os)\n", (), ()),  # TypeError before anything is looked up
    # 'import vllm.attention' binds vllm, whose folder is the installed package's.
    ("import os, vllm.attention\nopen(os.path.join(os.path.dirname(vllm.__file__), 'envs.py'), 'w')\n",
     (PACKAGE + "vllm/envs.py",), ()),
])
def test_what_each_writing_call_writes(source: str, writes: tuple[str, ...], removes: tuple[str, ...]) -> None:
    effects = python_effects(source)
    assert effects is not None and (effects.writes, effects.removes) == (writes, removes)


@pytest.mark.parametrize("source", [
    "open('/a', mode=M)\n", "import posixpath\nopen(posixpath.join('/a', x), 'w')\n",
    "D='/a'\nopen(f'{D!r}/b', 'w')\n", "D='/a'\nopen(f'{D:>5}/b', 'w')\n", "D='/a'\nD='/b'\nopen(D, 'w')\n",
    "for D in ['/a']:\n    open(D, 'w')\n", "def f(D):\n    open(D, 'w')\n", "D += '/a'\nopen(D, 'w')\n",
    "with open('/a') as D:\n    pass\nopen(D, 'w')\n", "import os\nos.remove(p)\n", "import shutil\nshutil.copy('a')\n",
    "import fileinput\nfor l in fileinput.input('/a', inplace=True): print(l)\n",
    "import fileinput\nfileinput.FileInput('/a', inplace=1)\n",
    "x = getattr(os, name)\nx()\n", "vars()['x']\nopen('/a')\n", "globals()['open']('/a', 'w')\n", "locals()\nopen\n",
    "import zipfile\nzipfile.ZipFile('a').extract('x')\n", "import subprocess as sp\nsp.run('x')\n",
    "from subprocess import run\nrun('x')\n", "import subprocess\nrun = subprocess.run\nrun('x')\n",
    "import multiprocessing\nmultiprocessing.Process()\n", "import ctypes\nctypes.CDLL('x')\n",
    "import importlib\nimportlib.reload(m)\n", "__import__('os')\n", "compile('x', 'f', 'exec')\n", "eval('1')\n",
    "import os\nos.popen('x')\n", "import os\nos.execv('a', [])\n", "import os\nos.spawnl(0, 'a')\n",
    "import runpy\nrunpy.run_path('a')\n", "import pty\npty.spawn('a')\n", "import os\nos.fork()\n",
    "import builtins\nbuiltins.exec('x')\n", "from pathlib import Path\nPath(x).write_text('')\n",
    "from pathlib import Path\np = Path('/a')\np = Path('/b')\np.write_text('x')\n",  # which one: unknown
    "p = make_path()\np.write_text('x')\n", "f = g = h\nf.touch()\n", "open('/a', 'w'\n", "open('/a', 'w')\n\x00",
    "x = [open('/a', 'w')] + " + "[" * 1000 + "]" * 1000 + "\n",  # too deep for ast: unread
    "import os\nopen(os.path.basename('/opt/x.py'), 'w')\n",  # a call the reader does not work out: not its argument
    "import os\nfrom pathlib import Path\nopen(Path(os.environ['D']).parent / 'x.py', 'w')\n",  # the folder of a path it computes
    "D = '/opt/a.py'\nfor D in ['/opt/b.py']:\n    open(D, 'w')\n",  # bound to a string, then by a loop
    "import builtins, os\nf = builtins.getattr(os, input())\nf('/a')\n",  # which function: only known when it runs
    # A method called through a name, on an object the reader cannot place: only a path has write_text.
    "p = make_path()\nsave = p.write_text\nsave('x')\n",
    "import tarfile\nt = tarfile.open('/tmp/w.tar')\nunpack = t.extractall\nunpack('/opt')\n",
    "import zipfile\nz = zipfile.ZipFile('/tmp/w.zip')\nget = z.extract\nget('x.py', '/opt')\n",
    # The helper's or a package's folder inside another path: where that lands, the reader cannot say.
    "import os\nopen('b' + os.path.dirname(__file__) + '/x.py', 'w')\n",
    "import os\nopen(os.path.join('/opt', os.path.dirname(__file__), 'x.py'), 'w')\n",
    "import os, vllm\nopen('b' + os.path.dirname(vllm.__file__) + '/x.py', 'w')\n",
    "import os, q\nopen(os.path.join(os.path.dirname(q.__file__), '../../x.py'), 'w')\n",  # climbs out of q's folder
])
def test_a_write_the_reader_cannot_pin_down_gives_none(source: str) -> None:
    assert python_effects(source) is None


def path_built_through_names(names: int, spelling: str) -> str:
    """A helper that builds the file it writes one folder a name, each name from the one before it."""
    lines = ["import os", "P0 = '/usr/local/corex/lib/python3/dist-packages'"]
    lines += [f"P{n} = " + spelling.format(previous=f"P{n - 1}", folder=f"d{n}") for n in range(1, names + 1)]
    return "\n".join(lines) + f"\nwith open(P{names}, 'w') as f:\n    f.write('')\n"


SPELLINGS = ["{previous} + '/{folder}'", "os.path.join({previous}, '{folder}')", "os.fspath({previous}) + '/{folder}'",
             "f'{{{previous}}}/{folder}'", "str({previous} + '/{folder}')",
             "'' + ({previous} + '/{folder}')"]  # the name on the right of the outer +


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_path_built_through_the_names_a_helper_holds_is_read(spelling: str) -> None:
    effects = python_effects(path_built_through_names(6, spelling))
    assert effects is not None and effects.writes == ("/usr/local/corex/lib/python3/dist-packages/d1/d2/d3/d4/d5/d6",)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_path_built_through_more_names_than_the_reader_follows_gives_none(spelling: str) -> None:
    # The reader follows a path through a bounded number of steps (a hostile helper could chain names without
    # end, or double the work at each one): past that, what the helper writes is unread, as for a path it computes.
    assert python_effects(path_built_through_names(40, spelling)) is None


def test_a_module_name_rebound_to_a_value_built_from_it_is_still_read() -> None:
    # 'logging = logging.getLogger(...)' shadows the module with a logger built from it: inside its own value the
    # name is still the module, so following the binding ends there and the helper's one write is read.
    helper = ("import logging\nlogging.basicConfig(level=logging.INFO)\nlogging = logging.getLogger('patch_scheduler')\n"
              "TARGET = '/usr/local/lib/python3.10/dist-packages/vllm/core/scheduler.py'\n"
              "with open(TARGET) as f:\n    source = f.read()\nwith open(TARGET, 'w') as f:\n"
              "    f.write(source.replace('max_num_seqs = 256', 'max_num_seqs = 512'))\n"
              "logging.info('patched %s', TARGET)\n")
    effects = python_effects(helper)
    assert effects is not None
    assert effects.writes == ("/usr/local/lib/python3.10/dist-packages/vllm/core/scheduler.py",)


def test_a_call_through_more_names_than_the_reader_follows_gives_none() -> None:
    # Each name is bound to the one before it, the first to shutil.copy: the last call copies onto the shipped
    # file. Past the names the reader follows it cannot say which function runs, so the helper is unread rather
    # than read as writing nothing.
    helper = "import shutil\nw0 = shutil.copy\n" + "".join(f"w{n} = w{n - 1}\n" for n in range(1, 30))
    assert python_effects(helper + f"w29('paged_attn.py', '{SHIPPED}')\n") is None
    through = python_effects(helper + f"w3('paged_attn.py', '{SHIPPED}')\n")
    direct = python_effects(f"import shutil\nshutil.copy('paged_attn.py', '{SHIPPED}')\n")
    assert through is not None and direct is not None
    assert (through.writes, through.removes) == (direct.writes, direct.removes) == ((SHIPPED,), ())
    assert [(c.how, c.source, c.destination) for c in through.copies] == [("copy", "paged_attn.py", SHIPPED)]


@pytest.mark.parametrize(("source", "writes", "removes"), [
    (f"from pathlib import Path\nsave = Path('{SHIPPED}').write_text\nsave('')\n", (SHIPPED,), ()),
    (f"from pathlib import Path\nP = Path('{SHIPPED}')\nw = P.write_bytes\nw(b'')\n", (SHIPPED,), ()),
    (f"from pathlib import Path\ndrop = Path('{SHIPPED}').unlink\ndrop(missing_ok=True)\n", (), (SHIPPED,)),
    ("text = 'abc'\nswap = text.replace\nswap('a', 'b')\n", (), ()),  # a string's method writes nothing
    ("from pathlib import Path\np = Path('/a')\nw = p.open\nw('w')\n", ("/a",), ()),
    ("from pathlib import Path\np = Path('/a')\nw = p.open\nw(mode='a')\n", ("/a",), ()),
    # A def of the same name after the binding replaces the method: the call runs the function.
    ("from pathlib import Path\nsave = Path('/a').write_text\ndef save(text):\n    pass\nsave('')\n", (), ()),
])
def test_a_method_stored_in_a_name_is_read_when_called(source: str, writes: tuple[str, ...],
                                                       removes: tuple[str, ...]) -> None:
    # CPython calls the bound method: 'save = Path(F).write_text; save(...)' writes F.
    effects = python_effects(source)
    assert effects is not None and (effects.writes, effects.removes) == (writes, removes)


def test_a_stored_extract_method_is_unreadable() -> None:
    assert python_effects("import tarfile\nunpack = tarfile.open('/tmp/w.tar').extractall\nunpack('/opt')\n") is None



def test_a_name_bound_to_a_method_of_an_object_is_read_as_that_method() -> None:
    # 'open' rebound to a gzip file's method is that method, not the builtin: read as the direct call would be.
    stored = python_effects("import gzip\nopen = gzip.GzipFile('/tmp/a.gz').open\nopen('/tmp/b', 'w')\n")
    direct = python_effects("import gzip\ngzip.GzipFile('/tmp/a.gz').open('/tmp/b', 'w')\n")
    assert stored == direct and stored is not None and "/tmp/b" not in stored.writes


@pytest.mark.parametrize("source", [
    "globals().get('open')('/a', 'w')\n",
    "f = globals()['open']\nf('/a', 'w')\n",
    "import os\nopen('/a')\nglobals()\n",
])
def test_a_helper_that_reaches_its_functions_through_globals_is_unread(source: str) -> None:
    # globals() hands out the module's names as data: what is called through it (open, os.remove...) is
    # looked up at run time, so the reader cannot say what the helper writes.
    assert python_effects(source) is None


def prefixed_through_names(names: int) -> str:
    """A helper that builds the file it writes by putting one folder before the path of the name before it."""
    lines = ["P0 = '/scheduler.py'"] + [f"P{n} = '/d{n}' + P{n - 1}" for n in range(1, names + 1)]
    return "\n".join(lines) + f"\nopen(P{names}, 'w')\n"


def test_a_path_prefixed_through_more_names_than_the_reader_follows_gives_none() -> None:
    # The name on the right of each '+' is a step as much as one on the left: past the bound, unread.
    effects = python_effects(prefixed_through_names(3))
    assert effects is not None and effects.writes == ("/d3/d2/d1/scheduler.py",)
    assert python_effects(prefixed_through_names(40)) is None


@pytest.mark.parametrize("source", [
    "import os\nrm = print\nrm = os.remove\nrm('a')\n",  # a name bound twice: the last binding runs
    "import os, sys\nrm = os.remove if sys.argv else os.unlink\nrm('a')\n",
    "import os\nspec = (os, 'remove')\nf = getattr(*spec)\nf('a')\n",
    "import os\nfns = {'r': os.remove}\nfor f in fns.values():\n    f('a')\n",
    "import shutil\njobs = [(shutil.copy, 'a', '/opt/b')]\nfor job, *paths in jobs:\n    job(*paths)\n",
])
def test_a_writing_function_handed_on_as_a_value_leaves_the_helper_unread(source: str) -> None:
    # Each removes or writes a file in CPython 3.11; the reader cannot tell which call runs it.
    assert python_effects(source) is None


@pytest.mark.parametrize(("source", "removes"), [
    ("import os\nrm = os.remove\nrm('a')\n", ("a",)),  # bound once: followed to os.remove
    ("import shutil\nshutil.copytree('a', '/opt/b', copy_function=shutil.copy2)\n", ()),  # the copy's own reading
])
def test_a_writing_function_bound_once_or_given_to_a_copy_is_still_read(source: str, removes: tuple[str, ...]) -> None:
    effects = python_effects(source)
    assert effects is not None and effects.removes == removes
