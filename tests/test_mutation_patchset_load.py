"""Loading a patch set: the series, each file's header, parameters and steps, each refusal one exact line.

Written against the mutants of patcher/patchset/load.py, model.py and
templates.py that survived the package's tests (benchmarks/mutation.sh):
every refusal names its file (and the series line), what is wrong and,
where one helps, what to do; steps are built on first use (``PatchCode``);
the digest the patch cache keys on follows what a patch is built from.
"""

from __future__ import annotations

import locale
from pathlib import Path
from typing import Any, Iterator

import pytest

from patcher.errors import PatchSetError
from patcher.patchset.load import load_outline, load_patch_set, templates_digest
from patcher.patchset.model import Patch, PatchCode
from patcher.patchset.templates import TemplateFailure, make_environment, render

# A patch as an engineer writes one: a DEP-3 header, a typed knob, one step.
GUARD = '''\
# Lift the V1 length guard of the shipped paged attention.
id = "v1-guard"
description = """
Route long decodes past V1

The vendor sends every decode to V1; V1 fails past 8192 tokens on the
BI-V100 (shared memory), so longer contexts go to the PyTorch path.
"""
origin = "other, patcher project"
last-update = "2026-11-29"
target = "vllm/attention/ops/paged_attn.py"
scope = "PagedAttention.forward_decode"

[params.limit]
type = "int"
default = 8192
min = 1
help = "Longest sequence, in tokens, that decodes with V1."

[[steps]]
op = "replace"
pattern = "use_v1 = True"
code = "use_v1 = actual_max <= {{ limit }}"
'''

# A second patch of another file, with no parameter.
PREGATHER = '''\
id = "pregather"
description = "Gather the prefix once"
origin = "vendor"
last-update = "2026-11-30"
target = "vllm/attention/ops/prefix_prefill.py"
scope = "context_attention_fwd"

[[steps]]
op = "replace"
pattern = "k = gather(k_cache)"
code = "k = k_cache"
'''


def _set(tmp_path: Path, files: dict[str, str | bytes], series: str | None = None,
         templates: dict[str, str | bytes] | None = None) -> Path:
    """Write a patch set folder (``patches/`` with ``series``, ``templates/`` beside it)."""
    folder = tmp_path / "team" / "patches"
    folder.mkdir(parents=True)
    (folder.parent / "templates").mkdir()
    for name, text in files.items():
        target = folder / name
        target.write_bytes(text.encode() if isinstance(text, str) else text)
    for name, text in (templates or {}).items():
        target = folder.parent / "templates" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode() if isinstance(text, str) else text)
    if series is None:
        series = "".join(f"{name}\n" for name in files)
    (folder / "series").write_bytes(series.encode())
    return folder


def _refusal(call: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(PatchSetError) as refused:
        call(*args, **kwargs)
    text = str(refused.value)
    assert "\n" not in text
    return text


def _one(tmp_path: Path, text: str, **kwargs: Any) -> Patch:
    folder = _set(tmp_path, {"v1-guard.toml": text})
    (patch,) = load_patch_set(folder, **kwargs).patches
    return patch


# The series file --------------------------------------------------------------


def test_a_folder_without_series_is_refused_with_a_hint(tmp_path: Path) -> None:
    folder = tmp_path / "vendor-drop"
    folder.mkdir()
    (folder / "v1-guard.toml").write_text(GUARD)
    expected = f"{folder}: no 'series' file listing the patches in order (is this a patch set folder?)"
    assert _refusal(load_patch_set, folder) == expected
    assert _refusal(load_outline, folder) == expected


def test_a_series_of_comments_only_lists_no_patch(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD}, series="# The patch series, in order.\n\n   # v1-guard.toml\n")
    assert _refusal(load_patch_set, folder) == f"{folder / 'series'}: the series lists no patch"


def test_series_comments_end_at_the_first_hash(tmp_path: Path) -> None:
    series = "# The patch series.\r\nv1-guard.toml   # see #12 and #15\r\n\r\npregather.toml#\r\n"
    folder = _set(tmp_path, {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER}, series=series)
    assert [p.id for p in load_patch_set(folder).patches] == ["v1-guard", "pregather"]
    assert load_outline(folder).patches == (("v1-guard", "vllm/attention/ops/paged_attn.py"),
                                            ("pregather", "vllm/attention/ops/prefix_prefill.py"))


def test_a_series_line_naming_a_missing_file_gives_its_line_number(tmp_path: Path) -> None:
    series = "# order matters\nv1-guard.toml\n\npre-gather.toml  # renamed?\n"
    folder = _set(tmp_path, {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER}, series=series)
    assert _refusal(load_patch_set, folder) == f"{folder / 'series'}: line 4 names 'pre-gather.toml', which does not exist"


def test_a_patch_listed_twice_is_refused_naming_the_set(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER},
                  series="v1-guard.toml\npregather.toml\nv1-guard.toml\n")
    expected = f"{folder}: patch id 'v1-guard' is used twice in the series"
    assert _refusal(load_patch_set, folder) == expected
    assert _refusal(load_outline, folder) == expected


def test_the_first_duplicate_id_in_sorted_order_is_named(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER},
                  series="v1-guard.toml\npregather.toml\nv1-guard.toml\npregather.toml\n")
    expected = f"{folder}: patch id 'pregather' is used twice in the series"
    assert _refusal(load_patch_set, folder) == expected
    assert _refusal(load_outline, folder) == expected


def test_two_files_whose_names_give_one_id_are_refused(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD, "v1_guard.toml": GUARD})
    assert _refusal(load_patch_set, folder) == f"{folder}: patch id 'v1-guard' is used twice in the series"


# Each patch file's header -----------------------------------------------------


def test_an_underscore_in_the_file_name_stands_for_a_dash_in_the_id(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1_guard.toml": GUARD})
    (patch,) = load_patch_set(folder).patches
    assert (patch.id, patch.path) == ("v1-guard", folder / "v1_guard.toml")


def test_an_id_that_does_not_match_the_file_name_is_refused(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-length.toml": GUARD})
    assert _refusal(load_patch_set, folder) == (
        f"{folder / 'v1-length.toml'}: id 'v1-guard' does not match the file name (expected 'v1-length')")


def test_a_patch_file_saved_in_latin_1_is_refused(tmp_path: Path) -> None:
    text = GUARD.replace('origin = "other, patcher project"', 'origin = "other, José (vendor)"')
    folder = _set(tmp_path, {"v1-guard.toml": text.encode("latin-1")})
    assert _refusal(load_patch_set, folder) == f"{folder / 'v1-guard.toml'}: not UTF-8 text"
    assert _refusal(load_outline, folder) == f"{folder / 'v1-guard.toml'}: not UTF-8 text"


def test_a_patch_file_in_utf_8_keeps_its_accents(tmp_path: Path) -> None:
    patch = _one(tmp_path, GUARD.replace('origin = "other, patcher project"', 'origin = "other, José (vendor)"'))
    assert patch.origin == "other, José (vendor)"


@pytest.fixture
def c_locale() -> Iterator[None]:
    """Run with the plain C locale, whose text encoding is ASCII (a bare CI container's)."""
    before = locale.setlocale(locale.LC_CTYPE)
    locale.setlocale(locale.LC_CTYPE, "C")
    try:
        yield
    finally:
        locale.setlocale(locale.LC_CTYPE, before)


def test_patch_files_are_read_as_utf_8_whatever_the_locale(tmp_path: Path, c_locale: None) -> None:
    text = GUARD.replace('origin = "other, patcher project"', 'origin = "other, José (vendor)"')
    folder = _set(tmp_path, {"v1-guard.toml": text}, series="# Reihenfolge für BI-V100\nv1-guard.toml\n")
    (patch,) = load_patch_set(folder).patches
    assert patch.origin == "other, José (vendor)"
    assert load_outline(folder).patches == (("v1-guard", "vllm/attention/ops/paged_attn.py"),)


@pytest.mark.parametrize("key", ["origin", "target", "scope"])
def test_a_missing_header_key_is_named(tmp_path: Path, key: str) -> None:
    text = "\n".join(line for line in GUARD.splitlines() if not line.startswith(f"{key} = ")) + "\n"
    folder = _set(tmp_path, {"v1-guard.toml": text})
    assert _refusal(load_patch_set, folder) == f"{folder / 'v1-guard.toml'}: missing key '{key}'"
    assert _refusal(load_outline, folder) == f"{folder / 'v1-guard.toml'}: missing key '{key}'"


def test_the_header_is_kept_as_written(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD})
    patch_set = load_patch_set(folder, commit="3f2a9c1")
    (patch,) = patch_set.patches
    assert patch_set.commit == "3f2a9c1"
    assert patch_set.directory == folder
    assert patch.path == folder / "v1-guard.toml"
    assert (patch.origin, patch.last_update) == ("other, patcher project", "2026-11-29")
    assert patch.summary == "Route long decodes past V1"
    assert patch.header() == (  # one blank line after the summary, as in a commit message
        "Route long decodes past V1\n\n"
        "The vendor sends every decode to V1; V1 fails past 8192 tokens on the\n"
        "BI-V100 (shared memory), so longer contexts go to the PyTorch path.\n\n"
        "Patch: v1-guard\nOrigin: other, patcher project\nLast-Update: 2026-11-29\n")


def test_a_one_line_description_makes_a_header_without_a_body(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"pregather.toml": PREGATHER})
    (patch,) = load_patch_set(folder).patches
    assert patch.header() == "Gather the prefix once\n\nPatch: pregather\nOrigin: vendor\nLast-Update: 2026-11-30\n"


@pytest.mark.parametrize(("description", "body"), [
    ('"""\nRoute long decodes past V1\nV1 fails past 8192 tokens.\n"""', "V1 fails past 8192 tokens.\n\n"),
    ('"Route long decodes past V1\\n\\n\\n\\nV1 fails past 8192 tokens.\\n\\n"', "V1 fails past 8192 tokens.\n\n"),
    ('"""\n  Route long decodes past V1  \n\n"""', ""),
])
def test_the_header_has_one_blank_line_after_the_summary(tmp_path: Path, description: str, body: str) -> None:
    start = GUARD.index('description = """')
    end = GUARD.index('origin = ')
    patch = _one(tmp_path, GUARD[:start] + f"description = {description}\n" + GUARD[end:])
    assert patch.header() == (
        f"Route long decodes past V1\n\n{body}Patch: v1-guard\nOrigin: other, patcher project\nLast-Update: 2026-11-29\n")


def test_a_patch_set_loaded_without_a_commit_has_none(tmp_path: Path) -> None:
    assert load_patch_set(_set(tmp_path, {"v1-guard.toml": GUARD})).commit is None


def test_an_unquoted_toml_date_is_the_last_update(tmp_path: Path) -> None:
    # TOML reads `last-update = 2026-11-29` as a date, not a string.
    patch = _one(tmp_path, GUARD.replace('last-update = "2026-11-29"', "last-update = 2026-11-29"))
    assert patch.last_update == "2026-11-29"
    assert patch.header().endswith("Last-Update: 2026-11-29\n")
    assert [str(step.pattern) for step in patch.steps] == ["use_v1 = True"]


# Parameters -------------------------------------------------------------------


def test_parameters_keep_their_type_bounds_and_help(tmp_path: Path) -> None:
    text = GUARD + '\n[params.fallback]\ntype = "bool"\ndefault = true\n'
    (limit, fallback) = _one(tmp_path, text).params
    assert (limit.name, limit.type, limit.default, limit.help, limit.minimum, limit.maximum) == (
        "limit", "int", 8192, "Longest sequence, in tokens, that decodes with V1.", 1, None)
    assert (fallback.name, fallback.type, fallback.default, fallback.help, fallback.minimum, fallback.maximum) == (
        "fallback", "bool", True, "", None, None)


@pytest.mark.parametrize(("spec", "message"), [
    ("[params]\nlimit = 8192\n", "'params.limit' must be a table with 'type' and 'default'"),
    ('[params.limit]\ntype = "integer"\ndefault = 8192\n',
     "'params.limit.type' must be one of int, float, str, bool, not 'integer'"),
    ("[params.limit]\ndefault = 8192\n", "'params.limit.type' must be one of int, float, str, bool, not None"),
    ('[params.limit]\ntype = "int"\ndefault = 8192\nmaximum = 65536\n',
     "unknown key 'params.limit.maximum'; did you mean 'max'?"),
    ('[params.limit]\ntype = "int"\nhelp = "Longest V1 sequence."\n', "'params.limit' has no 'default'"),
    ('[params.ratio]\ntype = "float"\ndefault = "0.5"\n', "params.ratio.default: expected float, got '0.5'"),
    ('[params.backend]\ntype = "str"\ndefault = 2\n', "params.backend.default: expected str, got 2"),
])
def test_a_bad_parameter_is_refused_naming_the_file(tmp_path: Path, spec: str, message: str) -> None:
    text = GUARD.split("[params.limit]")[0] + spec + "\n[[steps]]" + GUARD.split("[[steps]]")[1]
    folder = _set(tmp_path, {"v1-guard.toml": text})
    assert _refusal(load_patch_set, folder) == f"{folder / 'v1-guard.toml'}: {message}"


def test_a_float_parameter_takes_an_integer_default(tmp_path: Path) -> None:
    text = GUARD.replace('[params.limit]', '[params.ratio]\ntype = "float"\ndefault = 2\nmax = 4\n\n[params.limit]')
    ratio = _one(tmp_path, text).params[0]
    assert (ratio.name, ratio.default) == ("ratio", 2)


def test_a_set_value_may_hold_an_equals_sign(tmp_path: Path) -> None:
    text = GUARD.replace('[params.limit]', '[params.flags]\ntype = "str"\ndefault = ""\n\n[params.limit]')
    patch = _one(tmp_path, text, overrides=["v1-guard.flags=--max-model-len=8192"])
    assert patch.values == {"flags": "--max-model-len=8192", "limit": 8192}


def test_a_set_value_reaches_a_patch_whose_id_holds_dots(tmp_path: Path) -> None:
    # Ids come from file names, and a hand-written file may carry a version.
    text = GUARD.replace('id = "v1-guard"', 'id = "v1-guard-0.6.3"')
    folder = _set(tmp_path, {"v1-guard-0.6.3.toml": text})
    (patch,) = load_patch_set(folder, overrides=["v1-guard-0.6.3.limit=4096"]).patches
    assert patch.values == {"limit": 4096}
    assert [str(step.code).strip() for step in patch.steps] == ["use_v1 = actual_max <= 4096"]
    assert _refusal(load_patch_set, folder, overrides=["v1-guard-0.6.3.limits=1"]) == (
        "--set v1-guard-0.6.3.limits=1: patch 'v1-guard-0.6.3' has no parameter 'limits'; did you mean 'limit'?")


def test_a_set_value_for_a_broken_parameter_names_the_patch_file(tmp_path: Path) -> None:
    text = GUARD.replace("default = 8192\n", "")
    folder = _set(tmp_path, {"v1-guard.toml": text, "pregather.toml": PREGATHER})
    assert _refusal(load_patch_set, folder, overrides=["v1-guard.limit=4096"]) == (
        f"{folder / 'v1-guard.toml'}: 'params.limit' has no 'default'")


def test_a_set_value_for_a_patch_not_in_the_series_suggests_one(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD, "pregather.toml": PREGATHER})
    assert _refusal(load_patch_set, folder, overrides=["v1-gaurd.limit=4096"]) == (
        "--set v1-gaurd.limit=4096: no patch 'v1-gaurd' in the series; did you mean 'v1-guard'?")
    assert _refusal(load_patch_set, folder, overrides=["zzz.limit=1"]) == (
        "--set zzz.limit=1: no patch 'zzz' in the series")


# Steps and examples, built on first use ---------------------------------------


@pytest.mark.parametrize("steps", [
    '[steps]\nop = "replace"\npattern = "use_v1 = True"\ncode = "use_v1 = False"\n',
    'steps = ["use_v1 = True"]\n',
    'steps = [{op = "replace", pattern = "use_v1 = True", code = "use_v1 = False"}, "use_v1 = False"]\n',
    'steps = "use_v1 = True"\n',
])
def test_steps_that_are_not_an_array_of_tables_are_refused_when_built(tmp_path: Path, steps: str) -> None:
    head, params = GUARD.split("[[steps]]")[0].split("[params.limit]")
    text = head + steps + "\n[params.limit]" + params
    folder = _set(tmp_path, {"v1-guard.toml": text})
    message = f"{folder / 'v1-guard.toml'}: 'steps' must be an array of tables ([[steps]])"
    assert _refusal(load_patch_set, folder) == message
    (patch,) = load_patch_set(folder, lazy=True).patches  # lazy: refused on first use
    assert _refusal(lambda: patch.steps) == message


@pytest.mark.parametrize("examples", [
    '[examples]\nbefore = "use_v1 = True"\n',
    'examples = ["use_v1 = True"]\n',
])
def test_examples_that_are_not_an_array_of_tables_are_refused(tmp_path: Path, examples: str) -> None:
    text = GUARD.split("[params.limit]")[0] + examples + "\n[params.limit]" + GUARD.split("[params.limit]")[1]
    folder = _set(tmp_path, {"v1-guard.toml": text})
    assert _refusal(load_patch_set, folder, lazy=True) == (
        f"{folder / 'v1-guard.toml'}: 'examples' must be an array of tables ([[examples]])")


def test_an_unknown_operation_is_refused_naming_the_file(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD.replace('op = "replace"', 'op = "replce"')})
    assert _refusal(load_patch_set, folder) == (
        f"{folder / 'v1-guard.toml'}: 'steps[1].op' is 'replce', not an operation; did you mean 'replace'? "
        "(known: insert, replace, reuse-buffers)")


def test_a_lazy_load_builds_a_patch_once_and_only_when_asked(tmp_path: Path) -> None:
    broken = GUARD.replace("{{ limit }}", "{{ limt }}")
    folder = _set(tmp_path, {"v1-guard.toml": broken, "pregather.toml": PREGATHER})
    guard, pregather = load_patch_set(folder, lazy=True).patches
    assert [str(step.pattern) for step in pregather.steps] == ["k = gather(k_cache)"]
    assert pregather.steps is pregather.steps  # built once
    expected = (f"{folder / 'v1-guard.toml'}: steps[1].code: template uses an undefined variable: "
                "'limt' is undefined (in 'code')")
    assert _refusal(lambda: guard.steps) == expected
    assert _refusal(load_patch_set, folder) == expected


def test_patch_code_is_built_once_and_compared_by_its_digest() -> None:
    calls: list[int] = []

    def build() -> Any:
        calls.append(1)
        return (), (), ()

    code = PatchCode("d1", build)
    assert calls == []
    assert code.built == ((), (), ())
    assert code.built == ((), (), ())
    assert calls == [1]
    assert code == PatchCode("d1", lambda: ((), (), ())) and code != PatchCode("d2", build)


# The digest the patch cache keys on -------------------------------------------


def _digest(tmp_path: Path, name: str, text: str, **kwargs: Any) -> str:
    folder = _set(tmp_path / name, {"v1-guard.toml": text}, templates=kwargs.pop("templates", None))
    (patch,) = load_patch_set(folder, lazy=True, **kwargs).patches
    return patch.code.digest


def test_the_digest_ignores_the_order_of_keys_in_the_file(tmp_path: Path) -> None:
    reordered = GUARD.replace('origin = "other, patcher project"\nlast-update = "2026-11-29"\n',
                              'last-update = "2026-11-29"\norigin = "other, patcher project"\n')
    reordered = reordered.replace('min = 1\nhelp = "Longest', 'help = "Longest').replace(
        'decodes with V1."\n', 'decodes with V1."\nmin = 1\n')
    assert reordered != GUARD
    assert _digest(tmp_path, "a", GUARD) == _digest(tmp_path, "b", reordered)


def test_the_digest_follows_values_set_and_templates(tmp_path: Path) -> None:
    plain = _digest(tmp_path, "a", GUARD)
    assert _digest(tmp_path, "b", GUARD) == plain
    assert _digest(tmp_path, "c", GUARD, overrides=["v1-guard.limit=4096"]) != plain
    assert _digest(tmp_path, "d", GUARD, overrides=["v1-guard.limit=8192"]) == plain
    assert _digest(tmp_path, "e", GUARD, templates={"v1-guard/route.py.j2": "x = 1\n"}) != plain


def test_an_unquoted_date_gives_its_own_stable_digest(tmp_path: Path) -> None:
    dated = GUARD.replace('last-update = "2026-11-29"', "last-update = 2026-11-29")
    assert _digest(tmp_path, "a", dated) == _digest(tmp_path, "b", dated)


def test_the_templates_digest_tells_file_boundaries_apart(tmp_path: Path) -> None:
    # Content may hold NUL bytes (an editor's swap file left in the folder):
    # one file whose bytes look like two files must not digest like two.
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    (one / "a").write_bytes(b"x\0b\0y")
    (two / "a").write_bytes(b"x")
    (two / "b").write_bytes(b"y")
    assert templates_digest(one) != templates_digest(two)
    assert templates_digest(tmp_path / "none") == templates_digest(tmp_path / "none-either")


# The outline of a series ------------------------------------------------------


def test_the_outline_reads_targets_without_building_anything(tmp_path: Path) -> None:
    broken = GUARD.replace("{{ limit }}", "{% if %}").replace('op = "replace"', 'op = "nope"')
    third = PREGATHER.replace('id = "pregather"', 'id = "pregather-v"').replace("k_cache", "v_cache")
    folder = _set(tmp_path, {"v1-guard.toml": broken, "pregather.toml": PREGATHER, "pregather-v.toml": third})
    outline = load_outline(folder)
    assert outline.directory == folder
    assert outline.targets == ("vllm/attention/ops/paged_attn.py", "vllm/attention/ops/prefix_prefill.py")
    assert outline.ids_for("vllm/attention/ops/prefix_prefill.py") == ("pregather", "pregather-v")
    assert outline.ids_for("vllm/attention/ops/paged_attn.py") == ("v1-guard",)
    assert outline.ids_for("vllm/worker/model_runner.py") == ()


def test_the_outline_refuses_what_the_header_gets_wrong(tmp_path: Path) -> None:
    folder = _set(tmp_path, {"v1-guard.toml": GUARD.replace('scope = "', 'scop = "')})
    assert _refusal(load_outline, folder) == f"{folder / 'v1-guard.toml'}: unknown key 'scop'; did you mean 'scope'?"
    bad = _set(tmp_path / "bad", {"v1-guard.toml": "id = v1-guard\n"})
    assert _refusal(load_outline, bad).startswith(f"{bad / 'v1-guard.toml'}: not valid TOML: ")


# Templates --------------------------------------------------------------------


def test_block_tags_leave_no_blank_lines_or_indentation(tmp_path: Path) -> None:
    (tmp_path / "route.py.j2").write_text(
        "if use_v2:\n"
        "    {% if fallback %}\n"
        "    try:\n"
        "        out = v2(query)\n"
        "    except RuntimeError:\n"
        "        out = v1(query)\n"
        "    {% else %}\n"
        "    out = v2(query)\n"
        "    {% endif %}\n")
    env = make_environment(tmp_path)
    assert render(env, name="route.py.j2", values={"fallback": True}) == (
        "if use_v2:\n    try:\n        out = v2(query)\n    except RuntimeError:\n        out = v1(query)\n")
    assert render(env, name="route.py.j2", values={"fallback": False}) == "if use_v2:\n    out = v2(query)\n"


def test_values_are_rendered_as_python_not_html(tmp_path: Path) -> None:
    env = make_environment(tmp_path)
    values = {"condition": "actual_max > 8192 and dtype != 'fp8'"}
    assert render(env, source="if {{ condition }}:\n", values=values) == "if actual_max > 8192 and dtype != 'fp8':\n"
    (tmp_path / "guard.py.j2").write_text("if {{ condition }}:\n    return v1(query)\n")
    assert render(env, name="guard.py.j2", values=values) == (
        "if actual_max > 8192 and dtype != 'fp8':\n    return v1(query)\n")


def test_a_template_syntax_error_gives_its_line(tmp_path: Path) -> None:
    (tmp_path / "route.py.j2").write_text("if use_v2:\n    {% if fallback %}\n    out = v2(query)\n")
    with pytest.raises(TemplateFailure) as failed:
        render(make_environment(tmp_path), name="route.py.j2", values={"fallback": True})
    # Jinja's own wording after the line number may vary between its versions.
    assert str(failed.value).startswith("template syntax error at line 3: Unexpected end of template.")
    assert "'endif'" in str(failed.value)


def test_a_template_syntax_error_is_refused_naming_the_patch(tmp_path: Path) -> None:
    text = GUARD.replace('code = "use_v1 = actual_max <= {{ limit }}"', 'template = "v1-guard/route.py.j2"')
    folder = _set(tmp_path, {"v1-guard.toml": text}, templates={"v1-guard/route.py.j2": "use_v1 = {{ limit }\n"})
    message = _refusal(load_patch_set, folder)
    assert message.startswith(f"{folder / 'v1-guard.toml'}: steps[1].template: template syntax error at line 1: ")
    assert message.endswith(" (in 'template')")


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
