"""A bug inside patcher is exit 3 and one line naming it, with nothing written.

The traceback shows only with --verbose.
"""

from __future__ import annotations


def test_an_internal_error_is_exit_3_and_one_line(cli, vendor_zip, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import patcher.pipeline

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("planted bug")

    monkeypatch.setattr(patcher.pipeline, "cached_patch_source", broken)
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz")
    assert result.exit_code == 3
    assert result.stderr == ("error: internal error: RuntimeError: planted bug "
                             "(a bug in patcher; rerun with --verbose for the traceback and report it)\n")
    assert result.stdout == ""
    assert list(cli.cwd.iterdir()) == []
    verbose = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--verbose")
    assert verbose.exit_code == 3
    assert "Traceback" in verbose.stderr and "RuntimeError: planted bug" in verbose.stderr
