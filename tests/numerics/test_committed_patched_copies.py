"""The patched copies committed under tests/golden are what ``patcher apply`` writes, for both gather settings.

benchmarks/gpu_prefix.py and cpu_prefix_memory.py read these plain files
on machines without patcher's dependencies.
"""

from __future__ import annotations

from tests.fixtures_patches import GOLDEN
from tests.fixtures_vendor import SHIPPED


def test_committed_patched_copies_are_what_apply_writes(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    # benchmarks/gpu_prefix.py and cpu_prefix_memory.py read these plain files.
    for name, extra in (("paged_attn.patched.py", ()), ("paged_attn.patched-gather0.py",
                                                        ("--set", "prefix-pregather.max_gather_tokens=0"))):
        out = cli.cwd / name
        result = cli("apply", vendor_zip, "-o", out, *extra)
        assert result.exit_code == 0, result.stderr
        assert (out / SHIPPED).read_bytes() == (GOLDEN / name).read_bytes(), name
