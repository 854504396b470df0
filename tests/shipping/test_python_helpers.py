"""A Python helper the install script runs is read for the files it writes, as CPython would run it.

The vendor's own helpers (``patch_scheduler.py``, ``patch_registry.py``)
rewrite one named file each: read, not reported. A helper that writes a
shipped file, runs other programs, or writes where its code does not spell
out is reported with what it could change.
"""

from __future__ import annotations

import pytest

from patcher.shipping.python_effects import python_effects
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


def test_a_helper_that_removes_the_shipped_file_takes_it_out_of_the_image() -> None:
    helper = f"import os\nos.remove('{SHIPPED}')\n"
    plan = plan_of(script_context(f"cp x.py {SHIPPED}\npython3 fix.py\n", files={"s/fix.py": helper}))
    assert SHIPPED not in plan.image
