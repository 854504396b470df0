"""A target path matches a shipped path only on a path-component boundary.

``foo_paged_attn.py`` is not ``paged_attn.py``, ``/x/vllm2/attention`` is
not ``/x/vllm/attention``, a COPY of ``qwen3_6`` does not take
``qwen3_6_scripts/``, and what an unread command could change stops at
its folder's boundary too.
"""

from __future__ import annotations

import pytest

from patcher.errors import ShippingError
from patcher.shipping.install_script import Note
from tests.shipping.conftest import plan_of, script_context

TARGET = "vllm/attention/ops/paged_attn.py"


def context(script: str) -> dict[str, str | bytes]:
    return script_context(script, files={"s/paged_attn.py": "a = 1\n", "s/foo_paged_attn.py": "b = 1\n"})


@pytest.mark.parametrize("script", [
    "cp foo_paged_attn.py /x/vllm/attention/ops/\n",  # a longer file name ending in the target's
    "cp paged_attn.py /x/vllm2/attention/ops/\n",  # a folder name that starts like the target's
    "cp paged_attn.py /x/avllm/attention/ops/\n",  # one that ends like it
    "cp paged_attn.py /x/vllm/attention/ops/paged_attn.py.bak\n",
    "cp paged_attn.py /x/vllm/attention/ops_old/paged_attn.py\n",
])
def test_a_near_miss_is_not_the_target(script: str) -> None:
    plan = plan_of(context(script))
    assert plan.find(TARGET) == []
    with pytest.raises(ShippingError, match="nothing the image ships lands at"):
        plan.shipped_copy(TARGET)


def test_the_target_itself_is_found_beside_near_misses() -> None:
    plan = plan_of(context("cp foo_paged_attn.py /x/vllm/attention/ops/\ncp paged_attn.py /x/vllm/attention/ops/\n"
                           "cp paged_attn.py /x/vllm2/attention/ops/\n"))
    assert [(i.path, i.image_path) for i in plan.find(TARGET)] == [
        ("s/paged_attn.py", "/x/vllm/attention/ops/paged_attn.py")]
    assert plan.shipped_copy(TARGET) == "s/paged_attn.py"


def test_a_target_at_the_image_root_is_found() -> None:
    plan = plan_of(context("cp paged_attn.py /vllm/attention/ops/paged_attn.py\n"))
    assert plan.shipped_copy(TARGET) == "s/paged_attn.py"


def test_a_copy_source_matches_whole_folder_names() -> None:
    plan = plan_of({"Dockerfile": "FROM base\nCOPY qwen3_6 /app/\n", "qwen3_6/a.py": "", "qwen3_6_scripts/b.py": ""})
    assert {image: p.source for image, p in plan.image.items()} == {"/app/a.py": "qwen3_6/a.py"}


def test_a_recursive_copy_takes_only_its_own_folder() -> None:
    plan = plan_of(script_context("cp -r sub /made\n", files={"s/subway/w.py": "", "s/sub/y.py": ""}))
    assert not any("subway" in path for path in plan.image if not path.startswith("/w/s/"))


@pytest.mark.parametrize(("scope", "image_path", "covers"), [
    ("/usr/lib", "/usr/lib/python3/x.py", True),
    ("/usr/lib", "/usr/lib64/python3/x.py", False),
    ("/usr/lib/x.py", "/usr/lib/x.py", True),
    ("/usr/lib/x.py", "/usr/lib/x.pyc", False),
    ("**/dist-packages/vllm", "/usr/lib/python3/dist-packages/vllm/ops/a.py", True),
    ("**/dist-packages/vllm", "/usr/lib/python3/dist-packages/vllm2/ops/a.py", False),
    ("**/dist-packages/vllm", "/usr/lib/python3/my-dist-packages/vllm/a.py", False),
    ("/", "/usr/lib/python3/x.py", True),  # a command that could write anywhere under the root
    ("/usr/lib/", "/usr/lib/python3/x.py", True),  # a folder spelled with its trailing slash
    ("/usr/lib/", "/usr/lib64/python3/x.py", False),
])
def test_what_an_unread_command_could_change_stops_at_a_folder_boundary(scope: str, image_path: str,
                                                                          covers: bool) -> None:
    note = Note("s/i.sh", 1, "x", "why", "unread", (scope,))
    assert note.could_change(image_path) is covers


def test_a_copy_to_a_folder_named_by_an_unknown_value_could_change_every_file() -> None:
    plan = plan_of(context("cp paged_attn.py /x/vllm/attention/ops/\ncp foo_paged_attn.py \"/$NOBODY_SET_THIS/\"\n"))
    assert [(n.kind, n.line, n.scope) for n in plan.notes] == [("unread", 2, ("/",))]
    assert [n.line for n in plan.caveats("s/paged_attn.py", ("/x/vllm/attention/ops/paged_attn.py",))] == [2]
