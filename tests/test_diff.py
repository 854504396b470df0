"""``patcher diff`` through the CLI: a diff 'patch -p1' takes back, annotated, per patch, against a revision."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE, VENDOR_ZIP

GNU_PATCH = shutil.which("patch")
needs_patch = pytest.mark.skipif(GNU_PATCH is None, reason="GNU patch is not installed")
SERIES = ("three-tier-decode", "prefix-pregather", "prefix-buffer-reuse")
MANIFEST = "patcher-manifest.json"


def _files(folder: Path) -> dict[str, tuple[bytes, bool]]:
    return {p.relative_to(folder).as_posix(): (p.read_bytes(), bool(p.stat().st_mode & 0o100))
            for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts}


def _unpacked(zip_path: Path, into: Path) -> Path:
    """Unzip as unzip(1) does, keeping the executable bits."""
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            archive.extract(info, into)
            if not info.is_dir():
                (into / info.filename).chmod((info.external_attr >> 16) & 0o777)
    return into / VENDOR_TREE.name


def _applied(cli, source: Path, name: str = "applied", *extra: str) -> Path:  # type: ignore[no-untyped-def]
    result = cli("apply", source, "-o", name, *extra)
    assert result.exit_code == 0, result.stderr
    return cli.cwd / name


def _patch_p1(context: Path, diff: bytes) -> None:
    done = subprocess.run([GNU_PATCH or "patch", "-p1", "--quiet", "--batch"], cwd=context, input=diff,
                          capture_output=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _run(*args: object) -> Result:
    from patcher.cli import main

    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


# Runs on the demo zip that several tests only read, made once per module.
@pytest.fixture(scope="module")
def plain() -> Result:
    return _run("diff", VENDOR_ZIP)


@pytest.fixture(scope="module")
def per_patch() -> Result:
    return _run("diff", "--per-patch", VENDOR_ZIP)


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[bytes, bool]]:
    """apply's output folder for the demo zip, the manifest aside."""
    folder = tmp_path_factory.mktemp("applied") / "out"
    assert _run("apply", VENDOR_ZIP, "-o", folder).exit_code == 0
    files = _files(folder)
    del files[MANIFEST]
    return files


# -- the round trip ------------------------------------------------------------


@needs_patch
def test_patch_p1_on_the_unpacked_vendor_context_reproduces_apply(plain, applied, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert plain.exit_code == 0
    context = _unpacked(VENDOR_ZIP, tmp_path / "unpacked")
    _patch_p1(context, plain.stdout_bytes)
    assert _files(context) == applied
    if shutil.which("git"):  # git apply takes the same diff
        other = _unpacked(VENDOR_ZIP, tmp_path / "git-apply")
        subprocess.run(["git", "apply", "--whitespace=nowarn"], cwd=other, input=plain.stdout_bytes, check=True)
        assert _files(other) == applied


@needs_patch
def test_round_trip_keeps_crlf_and_a_missing_final_newline(cli, vendor_copy, make_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    shipped = vendor_copy / SHIPPED
    text = shipped.read_bytes().replace(b"\r\n", b"\n")
    shipped.write_bytes(text.rstrip(b"\n").replace(b"\n", b"\r\n"))  # CRLF, no newline at the end
    (vendor_copy / "paged_attn.py").write_bytes(b"# stale, without a final newline")
    source = make_zip(vendor_copy)
    result = cli("diff", source)
    assert result.exit_code == 0, result.stderr
    assert b"\\ No newline at end of file\n" in result.stdout_bytes
    assert b"\r\n" in result.stdout_bytes
    context = _unpacked(source, tmp_path / "unpacked")
    _patch_p1(context, result.stdout_bytes)
    expected = _files(_applied(cli, source))
    del expected[MANIFEST]
    assert _files(context) == expected
    assert not _files(context)[SHIPPED][0].endswith(b"\n")


@needs_patch
def test_per_patch_sections_replay_the_series_and_add_up_to_apply(per_patch, applied, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert per_patch.exit_code == 0, per_patch.stderr
    titles = [line for line in per_patch.stdout.splitlines() if line.startswith("# ==== ")]
    assert [t.split()[3] for t in titles[:3]] == list(SERIES)
    assert titles[0].startswith("# ==== [1/3] three-tier-decode (applied): Decode in three tiers")
    assert titles[3].startswith("# ==== mirrors:")
    context = _unpacked(VENDOR_ZIP, tmp_path / "unpacked")
    _patch_p1(context, per_patch.stdout_bytes)
    assert _files(context) == applied


def test_each_section_holds_only_its_own_patch(per_patch) -> None:  # type: ignore[no-untyped-def]
    sections = per_patch.stdout.split("# ==== ")[1:]
    for section, patch in zip(sections, SERIES):
        assert section.splitlines()[1:3] == [f"# {SHIPPED}", f"#   {patch}  " + section.split(": ", 1)[1].splitlines()[0]]
        assert section.count("diff --git") == 1
    # prefix-buffer-reuse rewrites the online-softmax update; three-tier-decode never touches it.
    assert "out=" in sections[2] and "out=" not in sections[0]


# -- what the diff says ---------------------------------------------------------------


def test_each_file_is_preceded_by_the_patches_that_produced_it(plain) -> None:  # type: ignore[no-untyped-def]
    lines = plain.stdout.splitlines()
    start = lines.index(f"diff --git a/{SHIPPED} b/{SHIPPED}")
    assert lines[start - 4] == f"# {SHIPPED}"
    assert [line.split()[1] for line in lines[start - 3:start]] == list(SERIES)
    assert "Gather the prefill context K/V in groups of tiles" in lines[start - 2]
    mirror = lines.index("diff --git a/paged_attn.py b/paged_attn.py")
    assert lines[mirror - 4] == f"# paged_attn.py: mirror of {SHIPPED}, made identical to it"
    assert start < mirror  # the shipped copy first, then its stale copies
    assert MANIFEST not in plain.stdout


def test_paths_are_relative_to_the_context_root(plain) -> None:  # type: ignore[no-untyped-def]
    headers = [line for line in plain.stdout.splitlines() if line.startswith(("--- ", "+++ "))]
    assert headers == [f"--- a/{SHIPPED}", f"+++ b/{SHIPPED}", "--- a/paged_attn.py", "+++ b/paged_attn.py"]


def test_stat_summarises_and_exit_code_flags_a_diff(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--stat", "--exit-code", vendor_zip)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f" {SHIPPED} |") and lines[1].startswith(" paged_attn.py ")
    assert lines[-1].startswith(" 2 files changed, ") and lines[-1].endswith("deletions(-)")
    assert "diff --git" not in result.stdout


def test_a_tree_apply_already_wrote_has_an_empty_diff(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    patched = _applied(cli, vendor_zip, "patched")
    result = cli("diff", "--exit-code", patched)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "no changes\n")
    assert cli("diff", "--exit-code", "--format", "json", patched).exit_code == 0


def test_json_lists_files_patches_and_stat(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(cli("diff", "--format", "json", vendor_zip).stdout)
    files = data["sections"][0]["files"]
    assert [f["path"] for f in files] == [SHIPPED, "paged_attn.py"]
    assert [p["id"] for p in files[0]["patches"]] == list(SERIES)
    assert files[1]["mirror_of"] == SHIPPED
    assert data["stat"]["files"] == 2 and data["empty"] is False
    assert files[0]["diff"].startswith(f"diff --git a/{SHIPPED} b/{SHIPPED}\n")


def test_markdown_is_ready_for_a_pull_request(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--format", "markdown", vendor_zip)
    text = result.stdout
    assert text.startswith(f"### patcher diff: `{vendor_zip.name}`")
    assert "| `prefix-pregather` | Gather the prefill context K/V in groups of tiles" in text
    assert f"<summary><code>{SHIPPED}</code> (+" in text
    assert text.count("```diff\n") == 2 and "\r" not in text
    assert "CRLF line endings (shown as LF here)" in text  # the stale root copy is CRLF


def test_markdown_template_fails_loudly_on_a_missing_variable(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from patcher.patchset.templates import TemplateFailure
    from patcher.review import render
    from patcher.review.changes import DiffReport

    (tmp_path / render.MARKDOWN_TEMPLATE).write_text("{{ no_such_value }}\n")
    monkeypatch.setattr(render, "tool_templates_dir", lambda: tmp_path)
    with pytest.raises(TemplateFailure, match="no_such_value"):
        render.markdown(DiffReport("x.zip", None, ()))


def test_colour_only_when_asked_or_on_a_terminal(cli, vendor_zip, plain) -> None:  # type: ignore[no-untyped-def]
    assert b"\x1b[" not in plain.stdout_bytes  # CliRunner's stdout is no terminal
    coloured = cli("diff", "--color", vendor_zip).stdout_bytes
    assert b"\x1b[32m+" in coloured and b"\x1b[31m-" in coloured and b"\x1b[33m# " in coloured
    assert coloured.replace(b"\x1b[m", b"").replace(b"\x1b[32m", b"").replace(b"\x1b[31m", b"").replace(
        b"\x1b[36m", b"").replace(b"\x1b[33m", b"").replace(b"\x1b[1m", b"") == plain.stdout_bytes


def test_a_patch_that_does_not_apply_is_exit_2_and_no_diff(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    shutil.copyfile(vendor_copy / "paged_attn.py", vendor_copy / SHIPPED)  # the upstream-like stale file
    result = cli("diff", make_zip(vendor_copy))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {SHIPPED}: patch three-tier-decode: ")


def test_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    text = " ".join(cli("diff", "--help", terminal_width=200).stdout.split())
    assert "Exit codes: 0" in text and "1 the diff is not empty (--exit-code only)" in text and "3 internal" in text


# -- --base REF ---------------------------------------------------------------------


@pytest.fixture
def history(tmp_path: Path) -> Path:
    """A checkout whose patches/ has two commits: the bundled set, then small_max 8192 -> 4096."""
    git = pytest.importorskip("git")
    repo_dir = tmp_path / "repo"
    shutil.copytree(PATCHES, repo_dir / "patches")
    shutil.copytree(ROOT / "templates", repo_dir / "templates")
    repo = git.Repo.init(repo_dir)
    actor = git.Actor("test", "test@localhost")
    repo.index.add(["patches", "templates"])
    repo.index.commit("the bundled patch set", author=actor, committer=actor)
    toml = repo_dir / "patches" / "three-tier-decode.toml"
    text = toml.read_text()
    assert "default = 8192" in text
    toml.write_text(text.replace("default = 8192", "default = 4096"))
    repo.index.add(["patches/three-tier-decode.toml"])
    repo.index.commit("decode with V1 up to 4096 tokens", author=actor, committer=actor)
    return repo_dir


@needs_patch
def test_base_diff_shows_what_a_patch_change_does_and_takes_one_output_to_the_other(  # type: ignore[no-untyped-def]
        cli, history, applied) -> None:
    import git

    repo = git.Repo(history)
    template = history / "templates" / "three-tier-decode" / "dispatch.py.j2"
    template.write_text(template.read_text().replace("# Run PagedAttention V1.", "# Run the V1 kernel."))
    repo.index.add([str(template.relative_to(history))])  # staged, not committed: part of the working tree
    head, status = repo.head.commit.hexsha, repo.git.status("--porcelain")
    result = cli("diff", "--base", "HEAD~1", "--patches", history / "patches", VENDOR_ZIP)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == f"# patch set at HEAD~1 ({repo.commit('HEAD~1').hexsha[:12]}) -> working tree"
    removed = [line for line in lines if line.startswith("-") and not line.startswith("---")]
    added = [line for line in lines if line.startswith("+") and not line.startswith("+++")]
    assert any("actual_max > 8192" in line for line in removed)  # the committed parameter change
    assert any("actual_max > 4096" in line for line in added)
    assert "+            # Run the V1 kernel." in lines  # the template change in the working tree
    assert f"--- a/{SHIPPED}" in lines and "--- a/paged_attn.py" in lines
    # Reading HEAD~1 left the working tree, the index and HEAD alone.
    assert (repo.head.commit.hexsha, repo.git.status("--porcelain")) == (head, status)
    # HEAD~1's patch set is the bundled one: the diff takes its output to the working tree's.
    new = _applied(cli, VENDOR_ZIP, "new", "--patches", str(history / "patches"))
    (new / MANIFEST).unlink()
    old = cli.cwd / "old"
    for path, (data, executable) in applied.items():
        (old / path).parent.mkdir(parents=True, exist_ok=True)
        (old / path).write_bytes(data)
        (old / path).chmod(0o755 if executable else 0o644)
    _patch_p1(old, result.stdout_bytes)
    assert _files(old) == _files(new)


def test_base_at_head_is_an_empty_diff(cli, vendor_zip, history) -> None:  # type: ignore[no-untyped-def]
    import git

    result = cli("diff", "--exit-code", "--base", "HEAD", "--patches", history / "patches", vendor_zip)
    head = git.Repo(history).head.commit.hexsha[:12]
    assert (result.exit_code, result.stdout) == (0, f"# patch set at HEAD ({head}) -> working tree\n")


def test_a_bad_ref_is_one_error_line(cli, vendor_zip, history) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--base", "no-such-ref", "--patches", history / "patches", vendor_zip)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert result.stderr.startswith("error: ") and "unknown revision 'no-such-ref'" in result.stderr


def test_a_broken_patch_set_at_the_revision_is_named_by_the_revision(cli, vendor_zip, history) -> None:  # type: ignore[no-untyped-def]
    import git

    repo = git.Repo(history)
    repo.index.remove(["patches/series"])
    repo.index.commit("lose the series", author=git.Actor("t", "t@localhost"), committer=git.Actor("t", "t@localhost"))
    assert (history / "patches" / "series").is_file()  # still in the working tree
    result = cli("diff", "--base", "HEAD", "--patches", history / "patches", vendor_zip)
    assert result.exit_code == 2
    assert result.stderr == (f"error: the patch set at HEAD ({repo.head.commit.hexsha[:12]}): patches: "
                             "no 'series' file listing the patches in order (is this a patch set folder?)\n")


def test_a_patch_set_outside_a_repository_is_one_error_line(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(PATCHES, tmp_path / "loose" / "patches")
    shutil.copytree(ROOT / "templates", tmp_path / "loose" / "templates")
    result = cli("diff", "--base", "HEAD", "--patches", tmp_path / "loose" / "patches", vendor_zip)
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and "not in a git repository" in result.stderr


def test_per_patch_and_base_do_not_combine(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("diff", "--per-patch", "--base", "HEAD", vendor_zip)
    assert result.exit_code == 2 and "cannot be combined" in result.stderr


# -- --keep-going and the closest code ----------------------------------------


def _broken_tree(tmp_path: Path, *variants: str) -> Path:
    from make_upgrade_pairs import make_tree

    return make_tree(tmp_path / "drop", *variants)


def test_keep_going_shows_what_the_other_patches_change_then_the_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path, "no-longer-applies")
    plain = _run("diff", tree)
    assert plain.exit_code == 2 and plain.stdout == ""
    # The hint names a command that works on this very input.
    assert f"'patcher diff --keep-going {tree}'" in plain.stderr
    result = _run("diff", "--keep-going", tree)
    assert result.exit_code == 2
    diff = result.stdout
    assert "#   prefix-pregather" in diff and "#   prefix-buffer-reuse" in diff
    assert "three-tier-decode" not in diff and "use_v2" not in diff
    assert any(line.startswith("+") and "k_grp = (key_cache[grp_ids]" in line for line in diff.splitlines())
    [error] = [line for line in result.stderr.splitlines() if "patch three-tier-decode" in line]
    assert error.startswith(f"error: {SHIPPED}: patch three-tier-decode: step 2 (replace): expected ")
    assert "; closest: lines " in error
    assert error.endswith("statement 2 differs: pattern 'use_v1 = True', code 'use_v1 = actual_max <= 8192'")
    assert "1 patch(es) did not apply" in result.stderr
    assert "--keep-going" not in result.stderr  # no hint that leads back here


def test_keep_going_json_carries_the_diagnostic_as_fields(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path, "no-longer-applies")
    result = _run("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [p["id"] for p in report["sections"][0]["files"][0]["patches"]] == ["prefix-pregather", "prefix-buffer-reuse"]
    [failure] = report["failed"]
    assert (failure["path"], failure["patch"]) == (SHIPPED, "three-tier-decode")
    diagnostic = failure["diagnostic"]
    assert (diagnostic["kind"], diagnostic["scope"], diagnostic["step"]) == ("step", "PagedAttention.forward_decode", 2)
    closest = diagnostic["closest"]
    assert (closest["statement"], closest["matched"], closest["pattern"], closest["code"]) == (
        2, 1, "use_v1 = True", "use_v1 = actual_max <= 8192")
    lines = (tree / SHIPPED).read_text().splitlines()
    assert lines[closest["first_line"] - 1].strip().startswith("use_v1 = (max_seq_len <= 8192")
    assert lines[closest["last_line"] - 1].strip() == "use_v1 = actual_max <= 8192"
    assert failure["message"].endswith(diagnostic["text"])
    assert all(e["rule"] != "no-triton-kernels" for e in report["rule_errors"])


def test_keep_going_lists_the_safety_rule_errors_of_the_input(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path, "triton-reenabled", "no-longer-applies")
    result = _run("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    report = json.loads(result.stdout)
    assert [f["patch"] for f in report["failed"]] == ["three-tier-decode"]
    triton = [e for e in report["rule_errors"] if e["rule"] == "no-triton-kernels"]
    assert triton and all(e["path"] == SHIPPED for e in triton)
    assert any(f"{SHIPPED}:{e['line']}: no-triton-kernels: " in result.stderr for e in triton)


def test_the_hint_repeats_the_patch_set_options(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path, "no-longer-applies")
    result = _run("diff", tree, "--patches", PATCHES, "--set", "three-tier-decode.small_max=4096")
    assert result.exit_code == 2
    assert (f"'patcher diff --keep-going {tree} --patches {PATCHES} --set three-tier-decode.small_max=4096'"
            in result.stderr)


def test_keep_going_on_a_drop_that_applies_is_the_plain_diff(plain) -> None:  # type: ignore[no-untyped-def]
    result = _run("diff", "--keep-going", VENDOR_ZIP)
    assert result.exit_code == 0
    assert result.stdout_bytes == plain.stdout_bytes


def test_a_missing_scope_names_the_scopes_with_the_closest_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path)
    shipped = tree / SHIPPED
    shipped.write_bytes(shipped.read_bytes().replace(b"def forward_decode(", b"def forward_decode_v1("))
    result = _run("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    [failure] = json.loads(result.stdout)["failed"]
    assert failure["diagnostic"]["kind"] == "scope"
    assert failure["diagnostic"]["scope"] == "PagedAttention.forward_decode"
    assert failure["diagnostic"]["scopes"][0] == "PagedAttention.forward_decode_v1"
    assert "scopes with close names: PagedAttention.forward_decode_v1" in failure["message"]


def test_a_step_that_matches_too_often_has_no_closest_to_name(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path)
    shipped = tree / SHIPPED
    # A second class attribute of the same name: step 1 matches twice, not zero times.
    lines = shipped.read_bytes().splitlines(keepends=True)
    [line] = [n.lineno for n in ast.walk(ast.parse(b"".join(lines))) if isinstance(n, ast.Assign)
              and [ast.unparse(t) for t in n.targets] == ["_PYTORCH_DECODE_THRESHOLD"]]
    lines.insert(line, lines[line - 1])
    shipped.write_bytes(b"".join(lines))
    result = _run("diff", "--keep-going", "--format", "json", tree)
    [failure] = json.loads(result.stdout)["failed"]
    assert "found it 2 times" in failure["detail"]
    assert failure["diagnostic"] is None


def test_closest_code_of_a_later_patch_is_named_by_the_lines_of_the_file_as_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path)
    shipped = tree / SHIPPED
    # Another layout for the key gather: prefix-pregather's step 2 no longer matches, after
    # three-tier-decode and prefix-pregather's own step 1 have added lines above it.
    shipped.write_bytes(re.sub(rb"permute\(0,\s*3,\s*1,\s*2,\s*4\)", b"permute(0, 3, 2, 1, 4)", shipped.read_bytes()))
    result = _run("diff", "--keep-going", "--format", "json", tree)
    [failure] = json.loads(result.stdout)["failed"]
    assert failure["patch"] == "prefix-pregather"
    closest = failure["diagnostic"]["closest"]
    assert closest["code"].startswith("k_tile = key_cache[blk_ids].permute(0, 3, 2, 1, 4)")
    lines = shipped.read_text().splitlines()
    assert "k_tile = (key_cache[blk_ids]" in lines[closest["first_line"] - 1]
    assert lines[closest["last_line"] - 1].strip().endswith(".view(-1, num_kv_heads, head_dim))")


def test_keep_going_markdown_lists_failures_and_rule_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path, "triton-reenabled", "no-longer-applies")
    result = _run("diff", "--keep-going", "--format", "markdown", tree)
    assert result.exit_code == 2
    text = result.stdout
    failures = text.index("#### Patches that do not apply")
    rules = text.index("#### Safety rule errors in the input")
    assert failures < rules
    assert f"- `{SHIPPED}`: **three-tier-decode**: step 2 (replace)" in text[failures:rules]
    assert "closest: lines " in text[failures:rules]
    assert "no-triton-kernels" in text[rules:]


def test_an_upstream_like_file_names_the_missing_requirement_and_scopes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tree = _broken_tree(tmp_path)
    shutil.copyfile(tree / "paged_attn.py", tree / SHIPPED)  # the upstream-like stale root copy
    result = _run("diff", "--keep-going", "--format", "json", tree)
    assert result.exit_code == 2
    failed = {f["patch"]: f for f in json.loads(result.stdout)["failed"]}
    assert list(failed) == list(SERIES)
    requires = failed["three-tier-decode"]["diagnostic"]
    assert (requires["kind"], requires["scope"], requires["step"]) == ("requires", "PagedAttention.forward_decode", None)
    assert requires["pattern"] == "actual_max = $_"
    assert requires["closest"]["pattern"] == "actual_max = $_"
    assert requires["closest"]["code"].split(" = ")[0].isidentifier()  # an assignment is closest to an assignment
    for patch_id in SERIES[1:]:
        scope = failed[patch_id]["diagnostic"]
        assert (scope["kind"], scope["scope"]) == ("scope", "PagedAttention._forward_prefix_pytorch")
        assert "PagedAttention.forward_prefix" in scope["scopes"]
        assert failed[patch_id]["message"].endswith("scopes with close names: " + ", ".join(scope["scopes"]))
