"""inspect warns where a failed copy of a patched file would not stop the build: no 'set -e', or a copy
behind '|| true', '2>/dev/null', '&&' or a pipe, which 'set -e' does not save.
"""

from __future__ import annotations

import json

import pytest

from tests.fixtures_cli import INSTALLED
from tests.fixtures_vendor import SHIPPED


def test_set_e_does_not_save_a_copy_behind_or_true(cli, modern) -> None:  # type: ignore[no-untyped-def]
    result = cli("inspect", "--format", "json", "--strict", modern)
    assert result.exit_code == 1
    warnings = json.loads(result.stdout)["warnings"]
    assert [(w["line"], w["image_path"], w["reasons"]) for w in warnings] == [
        (6, INSTALLED, ["'2>/dev/null'", "'|| true'"]),
        (6, "/usr/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py", ["'2>/dev/null'", "'|| true'"]),
    ]
    assert result.stderr.count("warning: qwen3_6_scripts/patch_ops.sh:6: ") == 2


# How a copy line hides its failure, as examples:
# script body -> (what hides it, set -e in force, whether inspect warns) for the paged_attn copy.
HIDING = [
    ("cp ./paged_attn.py $D/paged_attn.py", [], False, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py", [], True, False),
    ("#!/bin/bash -e\ncp ./paged_attn.py $D/paged_attn.py", [], True, False),
    ("set -euo pipefail\nset +e\ncp ./paged_attn.py $D/paged_attn.py", [], False, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py || echo 'copy failed'", ["|| echo"], True, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py && echo ok", ["&& ..."], True, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py | tee log", ["| ..."], True, True),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py >/dev/null 2>&1", [">/dev/null 2>&1"], True, False),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py &>/dev/null", ["&>/dev/null"], True, False),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py 2>/dev/null", ["2>/dev/null"], True, False),
    ("set -e\ncp ./paged_attn.py $D/paged_attn.py || exit 1", [], True, False),
    ("set -o errexit\n[ -d $D ] && cp ./paged_attn.py ${D}/paged_attn.py", [], True, False),
]


@pytest.mark.parametrize(("body", "hides", "stops", "warns"), HIDING)
def test_what_hides_a_failed_copy(cli, vendor_copy, body, hides, stops, warns) -> None:  # type: ignore[no-untyped-def]
    lines = body.splitlines()
    shebang, rest = (lines[:1], lines[1:]) if lines[0].startswith("#!") else ([], lines)
    script = vendor_copy / "qwen3_6_scripts" / "patch_ops.sh"
    script.write_text("\n".join([*shebang, f"D={INSTALLED.rsplit('/', 1)[0]}", *rest]) + "\n")
    data = json.loads(cli("inspect", "--format", "json", vendor_copy).stdout)
    (copy,) = [i for i in data["installed"] if i["path"] == SHIPPED]
    assert copy["image_path"] == INSTALLED
    assert (copy["hides_failure"], copy["stops_on_error"]) == (hides, stops)
    assert bool(data["warnings"]) == warns
