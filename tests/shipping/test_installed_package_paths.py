"""A Python helper that rewrites a file of an installed package, found through the package's ``__file__``.

Later vendor scripts stop spelling the site-packages folder out and ask
Python for it: ``os.path.dirname(vllm.__file__)``, ``Path(vllm.__file__)
.resolve().parent``. Where that folder is, only the image knows, but not
what lies under it: such a helper rewrites ``vllm/attention/ops/paged_attn.py``
of whichever site-packages holds vllm. The reader says so, scoped to that
place (any placed file at ``**/vllm/attention/ops/paged_attn.py``), rather
than calling the helper a program that could change any file. The package
must be one the helper imports and never binds to anything else; a path
that climbs out of the folder, or puts it inside another, is unknown.
"""

from __future__ import annotations

import pytest

from tests.shipping.conftest import run_script

SITE = "/usr/lib/python3/dist-packages"
INSTALL = f"mkdir -p {SITE}/vllm/attention/ops\ncp x.py {SITE}/vllm/attention/ops/paged_attn.py\npython3 h.py\n"
SHIPPED = "**/vllm/attention/ops/paged_attn.py"


def notes(helper: str) -> list[tuple[str, str, tuple[str, ...] | None]]:
    plan = run_script(INSTALL, files={"s/h.py": helper})
    return [(n.kind, n.reason, n.scope) for n in plan.notes]


@pytest.mark.parametrize("helper", [
    "import os, vllm\np = os.path.join(os.path.dirname(vllm.__file__), 'attention', 'ops', 'paged_attn.py')\n"
    "text = open(p).read()\nopen(p, 'w').write(text.replace('a', 'b'))\n",
    "import vllm, pathlib\np = pathlib.Path(vllm.__file__).parent / 'attention' / 'ops' / 'paged_attn.py'\n"
    "p.write_text(p.read_text().replace('a', 'b'))\n",
    "import vllm\nfrom pathlib import Path\n(Path(vllm.__file__).resolve().parent / 'attention/ops/paged_attn.py')"
    ".write_text('')\n",
    "import os\nimport vllm.attention.ops as ops\n"
    "open(os.path.join(os.path.dirname(os.path.abspath(ops.__file__)), 'paged_attn.py'), 'w').write('')\n",
    "import os, vllm\nwith open(f'{os.path.dirname(vllm.__file__)}/attention/ops/paged_attn.py', 'w') as f:\n"
    "    f.write('')\n",
])
def test_a_helper_rewriting_a_placed_file_of_an_installed_package_is_unread_there(helper: str) -> None:
    assert notes(helper) == [("unread", f"h.py rewrites vllm/attention/ops/paged_attn.py of the installed package, "
                                        f"which the build placed at {SITE}/vllm/attention/ops/paged_attn.py",
                              (SHIPPED,))]


def test_a_helper_removing_a_placed_file_of_an_installed_package_is_unread_there() -> None:
    helper = "import os, vllm\nos.remove(os.path.join(os.path.dirname(vllm.__file__), 'attention/ops/paged_attn.py'))\n"
    assert notes(helper) == [("unread", "h.py removes vllm/attention/ops/paged_attn.py of the installed package, "
                                        "where the build placed files", (SHIPPED,))]


def test_a_helper_rewriting_another_file_of_the_package_changes_nothing_placed() -> None:
    # patch_scheduler.py's later form: the base image's scheduler, which the build did not place.
    helper = ("import os, vllm\np = os.path.join(os.path.dirname(vllm.__file__), 'core', 'scheduler.py')\n"
              "open(p, 'w').write(open(p).read().replace('2048', '8192'))\n")
    assert notes(helper) == []


@pytest.mark.parametrize("helper", [
    "import os, vllm\nopen('/opt/' + os.path.dirname(vllm.__file__) + '/x', 'w')\n",  # inside another path
    "import os, vllm\nopen(os.path.dirname(vllm.__file__) + '/../../x', 'w')\n",  # climbed out of it
    "import os\nvllm = None\nopen(os.path.dirname(vllm.__file__) + '/x', 'w')\n",  # no import: a name
    "import os, vllm\nopen('\\x02vllm/attention/ops/paged_attn.py', 'w')\n",  # a string cannot forge the folder
])
def test_a_package_path_the_reader_cannot_place_leaves_the_helper_unread(helper: str) -> None:
    assert [kind for kind, _, scope in notes(helper)] == ["program"]
