"""Numerics: a prefill that moves by one ulp is a difference, not "close enough".

Fails with a bug that once survived the whole suite (issue 13): a near-equal
compare on the prefill path, which must be bitwise equal.
"""

from __future__ import annotations

import pytest

from tests.fixtures_vendor import SHIPPED, VENDOR_TREE

pytest.importorskip("torch")

from patcher.numerics import compare  # noqa: E402

RETURN = "            return output\n        except Exception:\n"
# One element of the prefill output moves by one unit in the last place, in its own dtype.
NUDGED = """\
            ints = {torch.float32: torch.int32, torch.float16: torch.int16, torch.bfloat16: torch.int16}
            output.view(-1).view(ints[output.dtype])[0] += 1
""" + RETURN


def test_a_one_ulp_prefill_change_is_reported() -> None:
    vendor = (VENDOR_TREE / SHIPPED).read_bytes()
    text = vendor.decode()
    assert text.count(RETURN) == 1  # the end of _forward_prefix_pytorch
    patched = text.replace(RETURN, NUDGED).encode()
    # The prefill half of compare_sources (its decode grid takes minutes on a
    # loaded CPU and is not what this is about), on every prefill case.
    pair = compare._Pair(vendor, patched, compare.BI_V100, compare.V1_LIMIT)
    prefix = [pair.prefix(case, label) for case, label in compare._prefix_grid()]
    dtypes = {label.split()[4] for _, label in compare._prefix_grid()}
    assert dtypes == {"float32", "float16", "bfloat16"}
    assert [c.case for c in prefix if c.ok] == []  # every prefill case is a difference
    assert all(not c.equal and c.error is None and 0 < c.max_abs_diff < 1e-2 for c in prefix)
    unchanged = compare._Pair(vendor, vendor, compare.BI_V100, compare.V1_LIMIT)
    assert all(unchanged.prefix(case, label).ok for case, label in list(compare._prefix_grid())[:3])
