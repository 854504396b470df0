"""A step works inside the one class or function its scope names; a missing or doubled name fails, saying where it looked."""

from __future__ import annotations

import pytest

from patcher.patchset.runner import Status

from tests.fixtures_patches import replace_step

X_PLUS_2 = replace_step("x += 1", "x += 2")


def test_a_missing_nested_scope_names_where_it_looked(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "class PagedAttention:\n    def forward_decode(self):\n        x += 1\n"
    _, outcome = run_steps(X_PLUS_2, source, scope="PagedAttention.forward_prefix")
    assert outcome.status is Status.FAILED
    assert "no class or function 'forward_prefix' in PagedAttention" in outcome.detail
    _, outcome = run_steps(X_PLUS_2, source, scope="Missing.forward_prefix")
    assert "no class or function 'Missing' in the module" in outcome.detail


def test_a_missing_function_two_levels_down_names_the_whole_path(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = ("class PagedAttention:\n    def forward_decode(self, x):\n        def _launch(x):\n"
              "            x += 1\n        return _launch(x)\n")
    _, outcome = run_steps(X_PLUS_2, source, scope="PagedAttention.forward_decode._launch_v2")
    assert outcome.status is Status.FAILED
    assert "no class or function '_launch_v2' in PagedAttention.forward_decode" in outcome.detail
    patched, outcome = run_steps(X_PLUS_2, source, scope="PagedAttention.forward_decode._launch")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert "            x += 2\n" in patched


# A scope's name defined twice is ambiguous: an error, never the first definition.
@pytest.mark.parametrize(("scope", "source", "message"), [
    ("f", "def f():\n    x += 1\n\ndef f():\n    pass\n", "2 definitions of 'f' in the module"),
    ("f", "if A:\n    def f():\n        x += 1\nelse:\n    def f():\n        x += 1\n", "2 definitions of 'f' in the module"),
    ("C.g", "class C:\n    def g(self):\n        x += 1\n    def g(self):\n        pass\n", "2 definitions of 'g' in C"),
])
def test_two_definitions_of_the_scope_name_are_an_error(run_steps, scope: str, source: str, message: str) -> None:  # type: ignore[no-untyped-def]
    patched, outcome = run_steps(X_PLUS_2, source, scope=scope)
    assert outcome.status is Status.FAILED
    assert message in outcome.detail
    assert patched == source


def test_a_step_scope_overrides_the_patch_scope(run_steps) -> None:  # type: ignore[no-untyped-def]
    source = "def f(x):\n    x += 1\n\ndef g(x):\n    x += 1\n"
    patched, outcome = run_steps(replace_step("x += 1", "x += 2", scope="g"), source, scope="f")
    assert outcome.status is Status.APPLIED, outcome.detail
    assert patched == "def f(x):\n    x += 1\n\ndef g(x):\n    x += 2\n"
