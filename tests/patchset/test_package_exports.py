"""``patcher.patchset`` lends its loaders lazily and refuses other names as a module does."""

from __future__ import annotations

import pytest


def test_the_package_lends_the_loaders_and_refuses_other_names_as_a_module_does() -> None:
    import patcher.patchset as package
    from patcher.patchset import load as loader

    assert package.load_outline is loader.load_outline
    assert package.load_patch_set is loader.load_patch_set
    for name in package.__all__:
        assert getattr(package, name) is not None
    with pytest.raises(AttributeError, match=r"^module 'patcher.patchset' has no attribute 'load_series'$"):
        package.load_series  # noqa: B018  (a name that is not there)
    assert not hasattr(package, "LOAD_OUTLINE")
