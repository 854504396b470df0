"""Read the series in ``patches/``, validate every patch, and render it with its parameters."""

from __future__ import annotations

import datetime
import difflib
import hashlib
import json
import math
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..errors import PatchSetError
from .folder import FileMissing, PatchFolder, decode, parse_toml, shown, templates_digest
from .model import (PARAM_TYPES, STR_KINDS, AppliedMarker, Built, Example, Param, Patch, PatchCode, PatchSet,
                    SeriesOutline)

if TYPE_CHECKING:
    from .templates import PatcherEnvironment

# Rendering (Jinja2) and building steps (libcst) are imported where they are
# used: commands that only need the outline of the series load neither.

SERIES = "series"
PATCH_KEYS = frozenset({
    "id", "description", "origin", "last-update", "author", "forwarded", "bug",
    "target", "scope", "params", "applied-when", "requires", "steps", "examples",
})
REQUIRED_KEYS = ("id", "description", "origin", "last-update", "target", "scope", "steps")
PARAM_KEYS = frozenset({"type", "default", "help", "min", "max", "kind", "allow-nonfinite"})
EXAMPLE_KEYS = frozenset({"name", "before", "after", "error", "params"})
# An id names files (ID.toml), cache entries, git commits and markdown table
# cells: letters, digits, '.' and '-', short enough for every file system.
PATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")
MAX_ID_LENGTH = 100
# More patches than any set needs; each file is read once and capped.
MAX_SERIES_ENTRIES = 1000
# What --set accepts: plain ASCII decimal numbers (int() alone would take
# ' 1_0 ', Arabic-Indic digits, and float() 'infinity').
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_FLOAT_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|nan)", re.IGNORECASE)


def load_patch_set(
    directory: Path,
    *,
    overrides: Sequence[str] = (),
    templates: Path | None = None,
    commit: str | None = None,
    lazy: bool = False,
) -> PatchSet:
    """Load and render the series; ``overrides`` are ``PATCH.PARAM=VALUE`` strings.

    ``templates`` defaults to the folder beside ``directory``. With
    ``lazy``, each patch's steps and markers are rendered and parsed only
    when first used (``PatchCode``), and a mistake in them is raised then:
    ``apply`` and ``diff`` use it, so that a run answered by the patch cache
    loads neither Jinja2 nor libcst. Otherwise every patch is built here.
    """
    # Only the patch set's own templates: a template missing from it must not
    # be found in the tool's folder by accident.
    folder = PatchFolder.open(directory, templates or directory.parent / "templates")
    environment = LazyEnvironment(folder)
    raw = [read_patch_file(path, folder) for path in series_files(folder)]
    ids = [data["id"] for _, data in raw]
    values = parse_overrides(overrides, {data["id"]: (path, data) for path, data in raw})
    shared = templates_digest(folder.templates or directory.parent / "templates")
    patches = tuple(build_patch(path, data, environment, values.get(data["id"], {}), shared) for path, data in raw)
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise PatchSetError(f"patch id '{sorted(duplicates)[0]}' is used twice in the series", where=str(directory))
    if not lazy:
        for patch in patches:
            patch.code.built  # noqa: B018 - builds it, raising what is wrong with it now
    return PatchSet(directory=directory, patches=patches, commit=commit)


class LazyEnvironment:
    """The Jinja2 environment of a load, made when the first patch is built (Jinja2 loads then)."""

    def __init__(self, folder: PatchFolder) -> None:
        self.folder = folder
        self._env: PatcherEnvironment | None = None

    def get(self) -> PatcherEnvironment:
        """Return the environment, making it on first use."""
        if self._env is None:
            from .templates import make_environment

            self._env = make_environment(self.folder)
        return self._env


def load_outline(directory: Path) -> SeriesOutline:
    """Read which file each patch targets, checking the series and each file's keys but rendering nothing.

    For commands that only read the vendor tree (``verify-sync``,
    ``inspect``): they need the targets, not the steps.
    """
    folder = PatchFolder.open(directory)
    raw = [read_patch_file(path, folder) for path in series_files(folder)]
    ids = [str(data["id"]) for _, data in raw]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise PatchSetError(f"patch id '{sorted(duplicates)[0]}' is used twice in the series", where=str(directory))
    return SeriesOutline(directory=directory, patches=tuple((str(d["id"]), str(d["target"])) for _, d in raw))


def series_files(folder: PatchFolder) -> list[Path]:
    """List the patch files named by ``series``, in order; each must lie inside the folder."""
    series = folder.directory / SERIES
    try:
        data = folder.read(series, what="series file")
    except FileMissing:
        raise PatchSetError("no 'series' file listing the patches in order", where=str(folder.directory),
                            hint="is this a patch set folder?") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PatchSetError("not UTF-8 text", where=str(series)) from None
    files: list[Path] = []
    for number, line in enumerate(text.splitlines(), 1):
        name = line.partition("#")[0].strip()
        if not name:
            continue
        if len(files) == MAX_SERIES_ENTRIES:
            raise PatchSetError(f"line {number}: the series lists more than {MAX_SERIES_ENTRIES} patches",
                                where=str(series))
        path = folder.entry(name, series=series, line=number)
        if not os.path.exists(path):
            raise PatchSetError(f"line {number} names '{shown(name)}', which does not exist", where=str(series))
        files.append(path)
    if not files:
        raise PatchSetError("the series lists no patch", where=str(series))
    return files


def read_patch_file(path: Path, folder: PatchFolder | None = None) -> tuple[Path, dict[str, Any]]:
    """Parse one patch file (inside ``folder``, else inside its own folder) and check its top-level keys."""
    folder = folder or PatchFolder.open(path.parent)
    data = parse_toml(decode(folder.read(path, what="patch file"), path), path)
    _check_keys(data, PATCH_KEYS, path, "")
    for key in REQUIRED_KEYS:
        if key not in data:
            raise PatchSetError(f"missing key '{key}'", where=str(path))
    _check_id(data["id"], path)
    expected = path.stem.replace("_", "-")
    if data["id"] != expected:
        raise PatchSetError(f"id '{data['id']}' does not match the file name (expected '{shown(expected)}')",
                            where=str(path))
    for key in ("description", "origin", "target", "scope"):
        if not isinstance(data[key], str):
            raise PatchSetError(f"'{key}' must be a string, not {_type_name(data[key])}", where=str(path))
    if not isinstance(data["last-update"], (str, datetime.date)):
        raise PatchSetError(f"'last-update' must be a date, not {_type_name(data['last-update'])}", where=str(path))
    return path, data


def _check_id(value: Any, path: Path) -> None:
    if not isinstance(value, str):
        raise PatchSetError(f"'id' must be a string, not {_type_name(value)}", where=str(path))
    if len(value) > MAX_ID_LENGTH:
        raise PatchSetError(f"the id is {len(value)} characters long, more than {MAX_ID_LENGTH}", where=str(path),
                            hint="choose a shorter id, and name the file after it")
    if not PATCH_ID.fullmatch(value):
        raise PatchSetError(f"the id '{shown(value)}' holds characters an id may not", where=str(path),
                            hint="use letters, digits, '.' and '-', starting with a letter or digit, "
                                 "e.g. 'decode-fast-path'")


def _type_name(value: Any) -> str:
    names = {str: "a string", bool: "a boolean", int: "an integer", float: "a float", list: "an array",
             dict: "a table", datetime.date: "a date", datetime.datetime: "a date-time", datetime.time: "a time"}
    return names.get(type(value), type(value).__name__)


def parse_params(path: Path, data: Mapping[str, Any]) -> tuple[Param, ...]:
    """Read the typed parameters a patch declares, checking their bounds, kind and default."""
    params = []
    table = data.get("params", {})
    if not isinstance(table, Mapping):
        raise PatchSetError("'params' must be a table of parameters ([params.NAME])", where=str(path))
    for name, spec in table.items():
        where = f"params.{name}"
        if not isinstance(spec, Mapping):
            raise PatchSetError(f"'{where}' must be a table with 'type' and 'default'", where=str(path))
        _check_keys(spec, PARAM_KEYS, path, where + ".")
        kind = spec.get("type")
        if kind not in PARAM_TYPES:
            raise PatchSetError(f"'{where}.type' must be one of {', '.join(PARAM_TYPES)}, not {kind!r}", where=str(path))
        if not name.isidentifier() or not name.isascii():
            raise PatchSetError(f"'{shown(where)}': a parameter name must be a plain name (letters, digits, '_')",
                                where=str(path))
        if "default" not in spec:
            raise PatchSetError(f"'{where}' has no 'default'", where=str(path))
        if not isinstance(spec.get("help", ""), str):
            raise PatchSetError(f"'{where}.help' must be a string", where=str(path))
        bounds = [_bound(spec, key, kind, where, path) for key in ("min", "max")]
        if None not in bounds and bounds[0] > bounds[1]:  # type: ignore[operator]
            raise PatchSetError(f"'{where}.min' ({bounds[0]}) is above '{where}.max' ({bounds[1]})", where=str(path))
        str_kind = spec.get("kind", "literal")
        if "kind" in spec and (kind != "str" or str_kind not in STR_KINDS):
            raise PatchSetError(f"'{where}.kind' is for str parameters: one of {', '.join(STR_KINDS)}"
                                + ("" if kind == "str" else f" (this one is {kind})"), where=str(path))
        nonfinite = spec.get("allow-nonfinite", False)
        if "allow-nonfinite" in spec and (kind != "float" or not isinstance(nonfinite, bool)):
            raise PatchSetError(f"'{where}.allow-nonfinite' is true or false, for float parameters", where=str(path))
        param = Param(name, kind, spec["default"], spec.get("help", ""), bounds[0], bounds[1], str_kind, nonfinite)
        check_value(param, spec["default"], f"{path}: {where}.default")
        params.append(param)
    return tuple(params)


def _bound(spec: Mapping[str, Any], key: str, kind: str, where: str, path: Path) -> float | None:
    """Read ``min`` or ``max``: a finite number for int and float, a length in characters for str."""
    if key not in spec:
        return None
    value = spec[key]
    if kind == "bool":
        raise PatchSetError(f"'{where}.{key}': a bool parameter has no bounds", where=str(path))
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "str" and not (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        raise PatchSetError(f"'{where}.{key}' bounds a str's length: a whole number >= 0, not {value!r}",
                            where=str(path))
    if not number or not math.isfinite(value):
        raise PatchSetError(f"'{where}.{key}' must be a finite number, not {value!r}", where=str(path))
    if kind == "int" and isinstance(value, float) and not value.is_integer():
        raise PatchSetError(f"'{where}.{key}' bounds an int: a whole number, not {value!r}", where=str(path))
    return value


def check_value(param: Param, value: Any, where: str) -> Any:
    """Check a parameter value against the declared type, bounds and kind; return it."""
    expected = PARAM_TYPES[param.type]
    if isinstance(value, bool) and expected is not bool or not isinstance(value, expected):
        if not (expected is float and isinstance(value, int) and not isinstance(value, bool)):
            raise PatchSetError(f"expected {param.type}, got {shown(repr(value))}", where=where)
    if param.type == "float" and not math.isfinite(value):
        if not param.allow_nonfinite:
            raise PatchSetError(f"{value!r} is not a finite number", where=where,
                                hint=f"give a number, or declare 'allow-nonfinite = true' for '{param.name}'")
        if math.isnan(value) and (param.minimum is not None or param.maximum is not None):
            raise PatchSetError(f"nan is not within the bounds of '{param.name}'", where=where)
    if param.type == "str":
        _check_text(param, value, where)
        return value
    if param.minimum is not None and value < param.minimum:
        raise PatchSetError(f"{value!r} is below the minimum {param.minimum}", where=where)
    if param.maximum is not None and value > param.maximum:
        raise PatchSetError(f"{value!r} is above the maximum {param.maximum}", where=where)
    return value


def _check_text(param: Param, value: str, where: str) -> None:
    length = len(value)
    if param.minimum is not None and length < param.minimum:
        raise PatchSetError(f"{shown(repr(value))} is {length} characters long, below the minimum length "
                            f"{param.minimum}", where=where)
    if param.maximum is not None and length > param.maximum:
        raise PatchSetError(f"{shown(repr(value))} is {length} characters long, above the maximum length "
                            f"{param.maximum}", where=where)
    if param.kind != "literal":
        problem = _code_problem(param.kind, value)
        if problem:
            raise PatchSetError(f"{shown(repr(value))} is not a Python {param.kind}: {problem}", where=where)


def _parse_code(value: str) -> Any:
    """Parse a parameter's value as one Python expression with libcst (imported only for such parameters)."""
    import libcst

    return libcst.parse_expression(value)


def _code_problem(kind: str, value: str) -> str | None:
    """Say why ``value`` is not a one-line Python identifier or expression (libcst's grammar), or None."""
    import io
    import keyword
    import tokenize

    if "\n" in value or "\r" in value or not value.isprintable():
        return "it must be one line of printable characters"
    if kind == "identifier":
        if not (value.isascii() and value.isidentifier()):
            return "an identifier is ASCII letters, digits and '_', not starting with a digit"
        if keyword.iskeyword(value):
            return f"'{value}' is a keyword"
    try:
        tree = _parse_code(value)
        tokens = list(tokenize.generate_tokens(io.StringIO(value).readline))
    except Exception as error:  # libcst's ParserSyntaxError, tokenize's errors
        return f"it does not parse ({' '.join(str(error).split())[:120]})"
    if any(token.type == tokenize.COMMENT for token in tokens):
        return "it holds a comment, which would swallow the rest of the line"
    if kind == "identifier" and type(tree).__name__ != "Name":
        return "it is not a single name"
    return None


def code_text(kind: str, value: str) -> str:
    """Write a checked expression so that it stays one operand wherever a template puts it.

    An atom (a name, a call, an attribute, a subscript, a literal) or an
    expression already in parentheses is written as it is; anything else
    (``a + b``, ``x if c else y``, ``1, 2``) gets parentheses, so that
    ``{{ expr }} * 2`` multiplies the whole expression.
    """
    if kind != "expression":
        return value
    tree = _parse_code(value)
    atoms = ("Name", "Attribute", "Call", "Subscript", "Integer", "Float", "Imaginary", "SimpleString",
             "ConcatenatedString", "FormattedString", "List", "Dict", "Set", "ListComp", "SetComp", "DictComp",
             "Ellipsis")
    if getattr(tree, "lpar", None) or type(tree).__name__ in atoms:
        return value
    return f"({value})"


def template_values(params: Sequence[Param], values: Mapping[str, Any]) -> dict[str, Any]:
    """The values a patch's templates see: a str is a ``Text`` literal unless its kind says it is code."""
    from .templates import Text

    kinds = {p.name: p for p in params}
    seen: dict[str, Any] = {}
    for name, value in values.items():
        param = kinds.get(name)
        if param is not None and param.type == "str":
            seen[name] = Text(value) if param.kind == "literal" else code_text(param.kind, value)
        else:
            seen[name] = value  # int, bool, float: floats are written by the environment's finalize
    return seen


def parse_overrides(
    overrides: Sequence[str], patches: Mapping[str, tuple[Path, Mapping[str, Any]]]
) -> dict[str, dict[str, Any]]:
    """Turn ``--set PATCH.PARAM=VALUE`` strings into typed values per patch.

    ``patches`` maps each id to its file and table. The last dot ends the
    patch id: an id may hold dots (``vllm-0.6.3-backport``, from its file
    name), a parameter name may not (templates read it as a plain name).
    """
    values: dict[str, dict[str, Any]] = {}
    for item in overrides:
        where = f"--set {item}"
        key, sep, text = item.partition("=")
        patch_id, dot, name = key.rpartition(".")
        if not sep or not dot:
            raise PatchSetError("expected PATCH.PARAM=VALUE", where=where)
        if patch_id not in patches:
            raise PatchSetError(f"no patch '{patch_id}' in the series{_did_you_mean(patch_id, patches)}", where=where)
        declared = {p.name: p for p in parse_params(*patches[patch_id])}
        if name not in declared:
            raise PatchSetError(f"patch '{patch_id}' has no parameter '{name}'{_did_you_mean(name, declared)}", where=where)
        param = declared[name]
        values.setdefault(patch_id, {})[name] = check_value(param, _parse_value(param, text, where), where)
    return values


def _parse_value(param: Param, text: str, where: str) -> Any:
    """Read a --set value as the parameter's type; a number is plain ASCII decimal."""
    if param.type == "str":
        return text
    lowered = text.strip().lower()
    if param.type == "bool" and lowered in {"true", "false", "1", "0", "yes", "no"}:
        return lowered in {"true", "1", "yes"}
    try:
        if param.type == "int" and _INT_TEXT.fullmatch(lowered) and len(lowered) < 1000:
            return int(lowered)
        if param.type == "float" and _FLOAT_TEXT.fullmatch(lowered):
            number = float(lowered)
            if math.isinf(number) and "inf" not in lowered:
                raise PatchSetError(f"{shown(text)} is too large for a float", where=where)
            return number
    except ValueError:
        pass
    raise PatchSetError(f"expected {param.type}, got {shown(repr(text))}", where=where)


def build_patch(path: Path, data: Mapping[str, Any], environment: LazyEnvironment,
                overrides: Mapping[str, Any], templates: str) -> Patch:
    """Read a patch's header, parameters and examples; its steps are built from them on first use.

    ``templates`` is the digest of the templates folder (``templates_digest``).
    """
    params = parse_params(path, data)
    values = {p.name: p.default for p in params} | dict(overrides)
    examples = tuple(_example(path, number, entry, params) for number, entry in
                     enumerate(_tables(data.get("examples", []), path, "examples"), 1))
    # Everything the steps are built from: the patch's own table, its values
    # and the templates it may render (parameter types are in the table).
    described = json.dumps([data, values, templates], sort_keys=True, default=repr)
    code = PatchCode(hashlib.sha256(described.encode()).hexdigest(),
                     lambda: _build_code(path, data, environment, template_values(params, values)))
    return Patch(
        id=data["id"], path=path, description=str(data["description"]), origin=str(data["origin"]),
        last_update=str(data["last-update"]), target=str(data["target"]), scope=str(data["scope"]),
        params=params, values=values, code=code, examples=examples,
    )


def _build_code(path: Path, data: Mapping[str, Any], environment: LazyEnvironment, values: Mapping[str, Any]) -> Built:
    """Render the patch's patterns and code with its parameter values and build its steps and markers."""
    from ..transforms import OPERATIONS
    from ..transforms.base import ConfigError
    from .templates import TemplateFailure, render

    env = environment.get()

    def render_value(key: str, text: str) -> str:
        try:
            if key == "template":
                return render(env, name=text, values=values)
            return render(env, source=text, values=values)
        except TemplateFailure as error:
            raise ConfigError(key, f"{error} (in '{key}')") from None

    steps = []
    for number, config in enumerate(_tables(data["steps"], path, "steps"), 1):
        where = f"steps[{number}]"
        op = config.get("op")
        if op not in OPERATIONS:
            raise PatchSetError(f"'{where}.op' is {op!r}, not an operation{_did_you_mean(str(op), OPERATIONS)} "
                                f"(known: {', '.join(sorted(OPERATIONS))})", where=str(path))
        try:
            steps.append(OPERATIONS[op].from_config(config, render_value))
        except ConfigError as error:
            raise PatchSetError(f"{where}.{error.key}: {error}", where=str(path)) from None
    markers = _markers(path, data, "applied-when", render_value)
    requires = _markers(path, data, "requires", render_value)
    return tuple(steps), markers, requires


def _markers(path: Path, data: Mapping[str, Any], key: str, render_value: Any) -> tuple[AppliedMarker, ...]:
    """Read a list of patterns, each a string or a table with 'pattern' and 'scope'."""
    from ..transforms.base import ConfigError, parse_pattern

    markers = []
    entries = data.get(key, [])
    if not isinstance(entries, list):
        raise PatchSetError(f"'{key}' must be a list of patterns", where=str(path))
    for number, entry in enumerate(entries, 1):
        entry = {"pattern": entry} if isinstance(entry, str) else entry
        where = f"{key}[{number}]"
        if not isinstance(entry, Mapping) or "pattern" not in entry:
            raise PatchSetError(f"'{where}' must be a pattern or a table with 'pattern'", where=str(path))
        _check_keys(entry, frozenset({"pattern", "scope"}), path, where + ".")
        for field in ("pattern", "scope"):
            if field in entry and not isinstance(entry[field], str):
                raise PatchSetError(f"'{where}.{field}' must be a string, not {_type_name(entry[field])}",
                                    where=str(path))
        try:
            pattern = parse_pattern("pattern", render_value("pattern", str(entry["pattern"])))
        except ConfigError as error:
            raise PatchSetError(f"{where}: {error}", where=str(path)) from None
        markers.append(AppliedMarker(pattern, str(entry.get("scope", data["scope"]))))
    return tuple(markers)


def _example(path: Path, number: int, entry: Mapping[str, Any], params: Sequence[Param]) -> Example:
    where = f"examples[{number}]"
    _check_keys(entry, EXAMPLE_KEYS, path, f"{where}.")
    if "before" not in entry:
        raise PatchSetError(f"'{where}' has no 'before'", where=str(path))
    for key in ("name", "before", "after", "error"):
        if key in entry and not isinstance(entry[key], str):
            raise PatchSetError(f"'{where}.{key}' must be a string, not {_type_name(entry[key])}", where=str(path))
    given = entry.get("params", {})
    if not isinstance(given, Mapping):
        raise PatchSetError(f"'{where}.params' must be a table of parameter values, not {_type_name(given)}",
                            where=str(path))
    declared = {p.name: p for p in params}
    for name, value in given.items():
        if name not in declared:
            raise PatchSetError(f"'{where}.params': the patch has no parameter '{shown(name)}'"
                                f"{_did_you_mean(name, declared)}", where=str(path))
        check_value(declared[name], value, f"{path}: {where}.params.{name}")
    return Example(name=entry.get("name", f"example {number}"), before=entry["before"],
                   after=entry.get("after"), error=entry.get("error"), params=given)


def _tables(value: Any, path: Path, key: str) -> list[Mapping[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, Mapping) for v in value):
        raise PatchSetError(f"'{key}' must be an array of tables ([[{key}]])", where=str(path))
    return value


def _check_keys(data: Mapping[str, Any], known: frozenset[str], path: Path, prefix: str) -> None:
    for key in data:
        if key not in known:
            raise PatchSetError(f"unknown key '{prefix}{key}'{_did_you_mean(key, known)}", where=str(path))


def _did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


__all__ = ["load_outline", "load_patch_set", "templates_digest"]
