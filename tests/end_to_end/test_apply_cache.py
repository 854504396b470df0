"""A second apply on the same drop is answered by the patch cache and writes the same bytes."""

from __future__ import annotations

from tests.fixtures_vendor import SHIPPED


def test_a_warm_run_is_a_cache_hit(cli, vendor_zip, monkeypatch, hermetic_cache) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset import cache

    monkeypatch.delenv("PATCHER_NO_CACHE", raising=False)
    computed: list[str] = []
    real = cache.patch_source

    def counting(path, source, patches):  # type: ignore[no-untyped-def]
        computed.append(path)
        return real(path, source, patches)

    monkeypatch.setattr(cache, "patch_source", counting)
    assert cli("apply", vendor_zip, "-o", "cold.tar.gz").exit_code == 0
    assert computed == [SHIPPED]
    assert len(list((hermetic_cache / "patched").iterdir())) == 1
    assert cli("apply", vendor_zip, "-o", "warm.tar.gz").exit_code == 0
    assert computed == [SHIPPED]  # nothing computed the second time
    assert (cli.cwd / "warm.tar.gz").read_bytes() == (cli.cwd / "cold.tar.gz").read_bytes()
