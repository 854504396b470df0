"""JSON and TOML read from a vendor tree, nested too deep for their parsers: one line with the file and line.

``json`` and ``tomllib`` recurse once per level and give up past a few
hundred with a RecursionError that names no line (exit 3). A build
context's ``patcher-manifest.json`` (its recorded overrides, read by
``check``) and a vendor's ``patcher.toml`` (read by ``verify-sync``) are
checked for nesting first.
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures_hostile_inputs import DEEP_JSON_LINE, deep_manifest, deep_patcher_toml, one_error_line, run_patcher


def test_a_manifest_nested_too_deep_is_refused_at_its_line(tmp_path: Path) -> None:
    tree = deep_manifest(tmp_path)
    result = run_patcher("check", tree)
    assert result.returncode == 2, result.stderr
    assert one_error_line(result) == (
        f"error: patcher-manifest.json: cannot be read: nests deeper than 100 levels of arrays and tables "
        f"at line {DEEP_JSON_LINE} (was the manifest edited by hand? re-run 'patcher apply {tree}')")


def test_a_manifest_nested_within_the_bound_is_still_read(tmp_path: Path) -> None:
    # Nested arrays are no override list: read, then refused as unreadable, not as too deep.
    result = run_patcher("check", deep_manifest(tmp_path, depth=50))
    assert result.returncode == 2
    assert one_error_line(result).startswith("error: patcher-manifest.json: allowed_rules is unreadable")


def test_a_patcher_toml_nested_too_deep_is_refused_at_its_line(tmp_path: Path) -> None:
    tree = deep_patcher_toml(tmp_path)
    for args in (("verify-sync", tree), ("verify-sync", tree, "--config", tree / "patcher.toml")):
        result = run_patcher(*args)
        assert result.returncode == 2, result.stderr
        where = "patcher.toml" if len(args) == 2 else str(tree / "patcher.toml")
        assert one_error_line(result) == (
            f"error: {where}: cannot be read: nests deeper than 100 levels of arrays and tables at line 3")


def test_a_manifest_nested_too_deep_is_not_carried_and_the_note_names_its_line(tmp_path: Path) -> None:
    # apply reads the whole manifest as a record to carry forward: refused whole, with where, not "RecursionError".
    tree = deep_manifest(tmp_path)
    result = run_patcher("apply", tree, "-o", tmp_path / "context", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert (f"note: {tree}: patcher-manifest.json is not one apply wrote (it nests deeper than 100 levels of "
            f"arrays and tables at line {DEEP_JSON_LINE}); the new one records this run alone") \
        in result.stderr.splitlines()
    assert '"allowed_rules": []' in (tmp_path / "context" / "patcher-manifest.json").read_text()
