"""The safety rules through the CLI: ``apply`` refuses to write what would break the card,
``--allow`` overrides a rule for one run and says so in the manifest, and ``check`` passes
everything ``apply`` writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.fixtures_vendor import PATCHES, ROOT, SHIPPED, VENDOR_TREE

GOLDEN = Path(__file__).parent / "golden" / "paged_attn.patched.py"


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Rule results (and patch results) are cached by content: keep them in this test's folder.
    monkeypatch.setenv("PATCHER_CACHE_DIR", str(tmp_path / "cache"))
TRITON_COMMENT = "# from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
TRITON_REENABLED = (
    "from vllm.triton_utils import HAS_TRITON\n"
    "if HAS_TRITON:\n"
    "    from vllm.attention.ops.prefix_prefill import context_attention_fwd\n"
)


def _edit(tree: Path, path: str, old: str, new: str) -> None:
    file = tree / path
    text = file.read_bytes().decode()
    assert old in text, f"{path} no longer holds {old!r}"
    file.write_bytes(text.replace(old, new, 1).encode())


def _triton_zip(vendor_copy: Path, make_zip) -> Path:  # type: ignore[no-untyped-def]
    _edit(vendor_copy, SHIPPED, TRITON_COMMENT, TRITON_REENABLED)
    return make_zip(vendor_copy)  # type: ignore[no-any-return]


def _line_of(tree: Path, path: str, text: str) -> int:
    lines = (tree / path).read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)


def _refused(result, output: Path, rule: str) -> list[str]:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2, result.stderr
    assert not output.exists()
    assert "nothing written: " in result.stderr
    assert result.stdout == ""
    return [line for line in result.stderr.splitlines() if line.startswith(f"error: ") and f": {rule}: " in line]


# -- apply refuses ------------------------------------------------------


def test_apply_refuses_triton_import_reenabled_under_has_triton(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    source = _triton_zip(vendor_copy, make_zip)
    result = cli("apply", source, "-o", "ctx.tar.gz")
    errors = _refused(result, cli.cwd / "ctx.tar.gz", "no-triton-kernels")
    line = _line_of(vendor_copy, SHIPPED, "    from vllm.attention.ops.prefix_prefill import")
    assert errors == [
        f"error: {SHIPPED}:{line}: no-triton-kernels: imports context_attention_fwd from "
        "vllm.attention.ops.prefix_prefill, under `if HAS_TRITON:` (why: the BI-V100 runtime does not support "
        "the PTX that Triton compiles: the Triton context_attention_fwd kernel hangs the card permanently (no "
        "error, no timeout; only a host reboot brings it back), and so does installing the other card family's "
        "Triton build; a hang cannot be caught by try/except, so no Triton kernel may be defined, imported, "
        "called or installed in what ships)"
    ]


def test_apply_refuses_a_v2_call_without_a_v1_fallback(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    # Another shipped file grows a V2 call whose handler gives up instead of falling back.
    _edit(vendor_copy, "qwen3_6_scripts/qwen3_5.py", "\n", "\n" + (
        "from vllm import _custom_ops as ops\n\n\n"
        "def decode_fast(output, query):\n"
        "    try:\n"
        "        ops.paged_attention_v2(output, query)\n"
        "    except NotImplementedError:\n"
        "        return None\n"
    ))
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx")
    errors = _refused(result, cli.cwd / "ctx", "v2-needs-fallback")
    line = _line_of(vendor_copy, "qwen3_6_scripts/qwen3_5.py", "ops.paged_attention_v2(")
    assert len(errors) == 1
    assert errors[0].startswith(
        f"error: qwen3_6_scripts/qwen3_5.py:{line}: v2-needs-fallback: ops.paged_attention_v2(...) sits in a try, "
        f"but the handler at line {line + 1} returns before reaching ops.paged_attention_v1 (why: ")


def test_apply_refuses_a_patch_whose_v2_handler_reraises(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The realistic mistake: a patch author "simplifies" the fallback away.
    patch_set = tmp_path / "set"
    shutil.copytree(PATCHES, patch_set / "patches")
    shutil.copytree(ROOT / "templates", patch_set / "templates")
    dispatch = patch_set / "templates" / "three-tier-decode" / "dispatch.py.j2"
    text = dispatch.read_text()
    old = "        PagedAttention._v2_unavailable = True\n        use_v2 = False\n"
    assert old in text
    dispatch.write_text(text.replace(old, "        raise\n"))
    result = cli("apply", vendor_zip, "-o", "ctx.zip", "--patches", patch_set / "patches")
    errors = _refused(result, cli.cwd / "ctx.zip", "v2-needs-fallback")
    assert len(errors) == 1 and "raises before reaching ops.paged_attention_v1" in errors[0], result.stderr


def test_apply_refuses_a_tree_without_forward_decode_pytorch(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    path = vendor_copy / SHIPPED
    text = path.read_text()
    start = text.index("    @staticmethod\n    def _forward_decode_pytorch(")
    end = text.index("    # V1 fails for long contexts")
    path.write_text(text[:start] + text[end:])
    result = cli("apply", make_zip(vendor_copy), "-o", "ctx.tar.gz")
    errors = _refused(result, cli.cwd / "ctx.tar.gz", "keep-pytorch-fallbacks")
    line = _line_of(vendor_copy, SHIPPED, "class PagedAttention:")
    assert [e.split(" (why:")[0] for e in errors] == [
        f"error: {SHIPPED}:{line}: keep-pytorch-fallbacks: class PagedAttention has no _forward_decode_pytorch"
    ]


def test_warnings_are_printed_but_do_not_stop_apply(cli, vendor_zip, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The bundled set caps large_threshold at 32768 (--set refuses more); a
    # set that lifts the cap still gets the rule's warning.
    lifted = tmp_path / "lifted" / "patches"
    shutil.copytree(PATCHES, lifted)
    shutil.copytree(ROOT / "templates", lifted.parent / "templates")
    toml = lifted / "three-tier-decode.toml"
    toml.write_text(toml.read_text().replace("max = 32768\n", ""))
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", "--set", "three-tier-decode.large_threshold=65536",
                 "--patches", lifted)
    assert result.exit_code == 0, result.stderr
    assert (cli.cwd / "ctx.tar.gz").is_file()
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert any(f"{SHIPPED}:" in w and ": v1-length-limit: _PYTORCH_DECODE_THRESHOLD = 65536 sends sequences "
               "of 32769 to 65536 tokens to the V1 kernel" in w for w in warnings), warnings
    # The fixture's install script has no `set -e`.
    assert any(w.startswith("warning: qwen3_6_scripts/patch_ops.sh:") and "install-fails-loudly" in w
               and "runs without `set -e`" in w for w in warnings), warnings


# -- --allow ------------------------------------------------------------


def test_allow_overrides_a_rule_for_one_run_and_the_manifest_records_it(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    source = _triton_zip(vendor_copy, make_zip)
    reason = "lab card, Triton build under test (ticket 42)"
    # The rule's former id still works, and names the rule by its current id.
    result = cli("apply", source, "-o", "ctx", "--allow", "no-triton-prefill", "--reason", reason)
    assert result.exit_code == 0, result.stderr
    assert any(line.startswith(f"allowed: {SHIPPED}:") and "no-triton-kernels" in line and reason in line
               for line in result.stderr.splitlines()), result.stderr
    assert f"override --allow no-triton-kernels: {reason} (recorded in the manifest)" in result.stderr
    manifest = json.loads((cli.cwd / "ctx" / "patcher-manifest.json").read_text())
    assert manifest["allowed_rules"] == [{"rule": "no-triton-kernels", "reason": reason}]
    # The next run is not covered by this one's override...
    again = cli("apply", source, "-o", "ctx2")
    assert again.exit_code == 2 and not (cli.cwd / "ctx2").exists()
    # ...but check honours what apply recorded, and says so.
    checked = cli("check", cli.cwd / "ctx")
    assert checked.exit_code == 0, checked.stdout + checked.stderr
    assert any(line.startswith("allowed: ") and "recorded in patcher-manifest.json" in line
               for line in checked.stdout.splitlines()), checked.stdout


@pytest.mark.parametrize("args, message", [
    (["--allow", "no-triton-prefill"], "error: 1 --allow but 0 --reason"),
    (["--allow", "no-triton-prefil", "--reason", "x"], "did you mean 'no-triton-prefill'?"),
    (["--allow", "python-3.10", "--reason", " "], "the --reason is empty"),
])
def test_allow_needs_a_known_rule_and_a_reason(cli, vendor_zip, args, message) -> None:  # type: ignore[no-untyped-def]
    result = cli("apply", vendor_zip, "-o", "ctx.tar.gz", *args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (cli.cwd / "ctx.tar.gz").exists()


# -- check --------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["ctx.tar.gz", "ctx.zip", "ctx"])
def test_check_passes_what_apply_writes_in_every_format(cli, vendor_zip, suffix) -> None:  # type: ignore[no-untyped-def]
    assert cli("apply", vendor_zip, "-o", suffix).exit_code == 0
    result = cli("check", cli.cwd / suffix)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert not any(line.startswith("error: ") for line in result.stdout.splitlines())
    assert "passes: 0 error(s)" in result.stderr


def test_check_passes_the_vendor_zip_noting_its_dead_v2_call_and_ignores_unshipped_copies(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", vendor_zip)
    assert result.exit_code == 0, result.stdout + result.stderr
    line = _line_of(VENDOR_TREE, SHIPPED, "ops.paged_attention_v2(")
    override = _line_of(VENDOR_TREE, SHIPPED, "use_v1 = True")
    assert not [row for row in result.stdout.splitlines() if row.startswith("error: ")]
    assert [row for row in result.stdout.splitlines() if row.startswith("note: ")] == [
        f"note: {SHIPPED}:{line}: v2-needs-fallback: ops.paged_attention_v2 at line {line} cannot run: "
        f"`use_v1` is always True here (line {override})"
    ]
    # The stale root copies import the Triton kernel, but never reach the image.
    assert "context_attention_fwd" in (VENDOR_TREE / "__init__.py").read_text()
    assert "no-triton-kernels" not in result.stdout
    assert "passes: 0 error(s), 1 warning(s), 0 allowed, 1 note(s)" in result.stderr


def test_check_fails_the_vendor_zip_without_its_use_v1_override(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    override = "        use_v1 = True  # BI-V100: the V2 kernel is not available\n"
    _edit(vendor_copy, SHIPPED, override, "")
    result = cli("check", make_zip(vendor_copy))
    assert result.exit_code == 1
    line = _line_of(vendor_copy, SHIPPED, "ops.paged_attention_v2(")
    errors = [row.split(" (why:")[0] for row in result.stdout.splitlines() if row.startswith("error: ")]
    assert errors == [
        f"error: {SHIPPED}:{line}: v2-needs-fallback: ops.paged_attention_v2(...) is called outside any try, "
        "so nothing falls back to ops.paged_attention_v1"
    ]
    assert not [row for row in result.stdout.splitlines() if row.startswith("note: ")]
    assert "fails: 1 error(s)" in result.stderr


def test_check_json_output(cli, vendor_zip) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", vendor_zip, "--format", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["passed"] is True and report["errors"] == 0 and report["warnings"] == 1
    assert SHIPPED in report["checked"] and "paged_attn.py" not in report["checked"]
    rules = {v["rule"]: v for v in report["violations"]}
    assert rules["v2-needs-fallback"]["severity"] == "note"
    assert rules["v2-needs-fallback"]["path"] == SHIPPED
    assert "cannot run: `use_v1` is always True here" in rules["v2-needs-fallback"]["message"]
    assert "NotImplementedError" in rules["v2-needs-fallback"]["reason"]
    assert rules["install-fails-loudly"]["severity"] == "warning"


def test_check_a_single_file(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert cli("check", GOLDEN).exit_code == 0
    assert cli("check", VENDOR_TREE / SHIPPED).exit_code == 0
    without_override = tmp_path / "paged_attn.py"
    without_override.write_bytes((VENDOR_TREE / SHIPPED).read_bytes().replace(b"use_v1 = True", b"pass"))
    assert cli("check", without_override).exit_code == 1
    newer = tmp_path / "newer.py"
    newer.write_text("x = 1\ntype Vector = list[float]\n")
    result = cli("check", newer)
    assert result.exit_code == 1
    assert result.stdout.startswith(f"error: {newer}:2: python-3.10: uses a `type` alias statement")


def test_check_with_an_allow_exits_0(cli, vendor_copy, make_zip) -> None:  # type: ignore[no-untyped-def]
    _edit(vendor_copy, SHIPPED, "use_v1 = True", "pass")
    source = make_zip(vendor_copy)
    assert cli("check", source).exit_code == 1
    result = cli("check", source, "--allow", "v2-needs-fallback", "--reason", "V2 is stubbed in this image")
    assert result.exit_code == 0
    assert "allowed: " in result.stdout


def test_check_bad_input_is_one_line_and_exit_2(cli, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", tmp_path / "missing.zip")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1


def test_check_help_documents_exit_codes(cli) -> None:  # type: ignore[no-untyped-def]
    result = cli("check", "--help")
    text = " ".join(result.stdout.split())
    assert "0 no error (warnings are printed but do not fail); 1 a safety rule error" in text
    assert "--format [text|json]" in text
