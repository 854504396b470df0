"""``benchmarks/make_realistic_drop.py`` builds a zip of the shape the bench relies on."""

from __future__ import annotations

import ast
import importlib.util
import random
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_realistic_drop", ROOT / "benchmarks" / "make_realistic_drop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(sys.modules[spec.name])
    return sys.modules[spec.name]


@pytest.fixture(scope="module")
def drop(tmp_path_factory: pytest.TempPathFactory) -> tuple[ModuleType, Path]:
    generator = _generator()
    return generator, generator.build(tmp_path_factory.mktemp("drop") / "drop.zip")


def test_the_drop_has_the_real_ones_shape(drop: tuple[ModuleType, Path]) -> None:
    generator, path = drop
    shape = generator.summary(path)
    assert 470 <= shape["files"] <= 490
    assert shape["shipped_py"] == 26
    assert shape["shipped_lines"] >= 11_000
    assert 400_000 <= shape["shipped_bytes"] <= 600_000
    assert 100 <= shape["smallest_lines"] and 1_100 <= shape["largest_lines"] <= 1_500
    assert shape["crlf"] >= 5 and shape["lf"] >= 5


def test_every_shipped_file_parses_under_3_10_and_is_installed(drop: tuple[ModuleType, Path]) -> None:
    generator, path = drop
    top = generator.TOP + "/"
    with zipfile.ZipFile(path) as archive:
        shipped = {i.filename.removeprefix(top): i for i in archive.infolist()
                   if i.filename.startswith(top + "qwen3_6_scripts/") and not i.is_dir()}
        for name, info in shipped.items():
            if name.endswith(".py"):
                ast.parse(archive.read(info), filename=name, feature_version=(3, 10))
        script = archive.read(shipped["qwen3_6_scripts/patch_ops.sh"]).decode()
        assert shipped["qwen3_6_scripts/patch_ops.sh"].external_attr >> 16 & 0o111  # run as ./patch_ops.sh
        dockerfile = archive.read(top + "Dockerfile")
    assert b"COPY ./qwen3_6_scripts" in dockerfile
    assert "cp ./paged_attn.py /usr/local/corex/lib/python3/dist-packages/vllm/attention/ops/paged_attn.py" in script
    assert "cp ./qwen3_5.py " in script and "cp -r ./reasoning " in script


def test_the_patch_series_applies_to_the_shipped_paged_attn(drop: tuple[ModuleType, Path]) -> None:
    from patcher.patchset import load_patch_set
    from patcher.patchset.runner import Status, patch_source

    generator, path = drop
    with zipfile.ZipFile(path) as archive:
        source = archive.read(generator.TOP + "/" + SHIPPED)
    assert b"\r\n" in source  # the vendor's CRLF
    patch_set = load_patch_set(PATCHES)
    patches = patch_set.for_target(patch_set.targets[0])
    outcome = patch_source(SHIPPED, source, patches)
    assert [o.status for o in outcome.outcomes] == [Status.APPLIED] * len(patches), outcome.outcomes


def test_the_same_seed_gives_the_same_files() -> None:
    generator = _generator()
    first = generator._shipped(random.Random(7))
    assert first == generator._shipped(random.Random(7))
    assert first != generator._shipped(random.Random(8))
