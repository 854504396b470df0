"""``touch -c`` (``--no-create``) creates nothing where no file stands (GNU coreutils 9.1): a test of the path
afterwards still finds nothing there."""

from __future__ import annotations

import pytest

from tests.shipping.conftest import in_dest, run_script


@pytest.mark.parametrize(("touch", "placed"), [
    ("touch -c /dest/a.py", ["/dest/b.py"]),
    ("touch --no-create /dest/a.py", ["/dest/b.py"]),
    ("touch /dest/a.py", []),
])
def test_touch_no_create_leaves_a_missing_file_missing(touch: str, placed: list[str]) -> None:
    plan = run_script(f"{touch}\n[ -e /dest/a.py ] || cp x.py /dest/b.py\n")
    assert in_dest(plan) == placed
