"""Read the series in ``patches/``, validate every patch, and render it with its parameters."""

from __future__ import annotations

import difflib
import hashlib
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the image-side tool may run on 3.10
    import tomli as tomllib

from ..errors import PatchSetError
from .model import PARAM_TYPES, AppliedMarker, Built, Example, Param, Patch, PatchCode, PatchSet, SeriesOutline

if TYPE_CHECKING:
    import jinja2

# Rendering (Jinja2) and building steps (libcst) are imported where they are
# used: commands that only need the outline of the series load neither.

SERIES = "series"
PATCH_KEYS = frozenset({
    "id", "description", "origin", "last-update", "author", "forwarded", "bug",
    "target", "scope", "params", "applied-when", "requires", "steps", "examples",
})
REQUIRED_KEYS = ("id", "description", "origin", "last-update", "target", "scope", "steps")
PARAM_KEYS = frozenset({"type", "default", "help", "min", "max"})
EXAMPLE_KEYS = frozenset({"name", "before", "after", "error", "params"})


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
    folder = templates or directory.parent / "templates"
    environment = LazyEnvironment(folder)
    raw = [read_patch_file(path) for path in series_files(directory)]
    ids = [data["id"] for _, data in raw]
    values = parse_overrides(overrides, {data["id"]: (path, data) for path, data in raw})
    shared = templates_digest(folder)
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

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._env: jinja2.Environment | None = None

    def get(self) -> jinja2.Environment:
        """Return the environment, making it on first use."""
        if self._env is None:
            from .templates import make_environment

            self._env = make_environment(self.folder)
        return self._env


def templates_digest(folder: Path) -> str:
    """Digest every file the template loader can read in the folder (names and bytes), through symlinked folders too.

    Jinja2's loader follows links, so the digest does as well (a changed
    file behind a linked subfolder must change the cache key). Each folder
    is walked once, under the first name met in sorted order; any other
    name reaching it (a second link, or a loop back to a folder above) is
    recorded as that name's alias, so which names exist is covered as well
    as what they hold. FIFOs, sockets and devices are not read.
    """
    import os
    import stat

    digest = hashlib.sha256()
    if not folder.is_dir():
        return digest.hexdigest()
    records: list[tuple[str, bytes, bytes]] = []
    top = os.stat(folder)
    seen = {(top.st_dev, top.st_ino): ""}
    for here, dirs, files in os.walk(folder, followlinks=True):
        base = Path(here).relative_to(folder).as_posix()
        prefix = "" if base == "." else base + "/"
        dirs.sort()
        for name in list(dirs):
            try:
                info = os.stat(os.path.join(here, name))
            except OSError:
                dirs.remove(name)  # a link to nothing, or unreadable: the loader cannot read it either
                continue
            first = seen.setdefault((info.st_dev, info.st_ino), prefix + name)
            if first != prefix + name:
                dirs.remove(name)  # walked already, under another name: its alias is enough
                records.append((prefix + name, b"D", hashlib.sha256(os.fsencode(first)).digest()))
        for name in files:
            path = os.path.join(here, name)
            try:
                if not stat.S_ISREG(os.stat(path).st_mode):
                    continue  # a FIFO would block, a device read forever; the loader cannot use them
            except OSError:
                continue  # a link to nothing
            records.append((prefix + name, b"F", hashlib.sha256(Path(path).read_bytes()).digest()))
    for name, kind, content in sorted(records):
        # A name never holds NUL and every record ends with a fixed-length
        # digest, so no two folders feed the same bytes.
        digest.update(kind + os.fsencode(name) + b"\0" + content)
    return digest.hexdigest()


def load_outline(directory: Path) -> SeriesOutline:
    """Read which file each patch targets, checking the series and each file's keys but rendering nothing.

    For commands that only read the vendor tree (``verify-sync``,
    ``inspect``): they need the targets, not the steps.
    """
    raw = [read_patch_file(path) for path in series_files(directory)]
    ids = [str(data["id"]) for _, data in raw]
    duplicates = {i for i in ids if ids.count(i) > 1}
    if duplicates:
        raise PatchSetError(f"patch id '{sorted(duplicates)[0]}' is used twice in the series", where=str(directory))
    return SeriesOutline(directory=directory, patches=tuple((str(d["id"]), str(d["target"])) for _, d in raw))


def series_files(directory: Path) -> list[Path]:
    """List the patch files named by ``series``, in order, checking each exists."""
    series = directory / SERIES
    if not series.is_file():
        raise PatchSetError("no 'series' file listing the patches in order", where=str(directory),
                            hint="is this a patch set folder?")
    files = []
    for number, line in enumerate(series.read_text(encoding="utf-8").splitlines(), 1):
        name = line.partition("#")[0].strip()
        if not name:
            continue
        path = directory / name
        if not path.is_file():
            raise PatchSetError(f"line {number} names '{name}', which does not exist", where=str(series))
        files.append(path)
    if not files:
        raise PatchSetError("the series lists no patch", where=str(series))
    return files


def read_patch_file(path: Path) -> tuple[Path, dict[str, Any]]:
    """Parse one patch file and check its top-level keys."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise PatchSetError(f"not valid TOML: {error}", where=str(path)) from None
    except UnicodeDecodeError:
        raise PatchSetError("not UTF-8 text", where=str(path)) from None
    _check_keys(data, PATCH_KEYS, path, "")
    for key in REQUIRED_KEYS:
        if key not in data:
            raise PatchSetError(f"missing key '{key}'", where=str(path))
    expected = path.stem.replace("_", "-")
    if data["id"] != expected:
        raise PatchSetError(f"id '{data['id']}' does not match the file name (expected '{expected}')", where=str(path))
    return path, data


def parse_params(path: Path, data: Mapping[str, Any]) -> tuple[Param, ...]:
    """Read the typed parameters a patch declares."""
    params = []
    for name, spec in data.get("params", {}).items():
        where = f"params.{name}"
        if not isinstance(spec, Mapping):
            raise PatchSetError(f"'{where}' must be a table with 'type' and 'default'", where=str(path))
        _check_keys(spec, PARAM_KEYS, path, where + ".")
        kind = spec.get("type")
        if kind not in PARAM_TYPES:
            raise PatchSetError(f"'{where}.type' must be one of {', '.join(PARAM_TYPES)}, not {kind!r}", where=str(path))
        if "default" not in spec:
            raise PatchSetError(f"'{where}' has no 'default'", where=str(path))
        param = Param(name, kind, spec["default"], spec.get("help", ""), spec.get("min"), spec.get("max"))
        check_value(param, spec["default"], f"{path}: {where}.default")
        params.append(param)
    return tuple(params)


def check_value(param: Param, value: Any, where: str) -> Any:
    """Check a parameter value against the declared type and bounds."""
    expected = PARAM_TYPES[param.type]
    if isinstance(value, bool) and expected is not bool or not isinstance(value, expected):
        if not (expected is float and isinstance(value, int) and not isinstance(value, bool)):
            raise PatchSetError(f"expected {param.type}, got {value!r}", where=where)
    if param.minimum is not None and value < param.minimum:
        raise PatchSetError(f"{value!r} is below the minimum {param.minimum}", where=where)
    if param.maximum is not None and value > param.maximum:
        raise PatchSetError(f"{value!r} is above the maximum {param.maximum}", where=where)
    return value


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
    try:
        if param.type == "bool":
            lowered = text.strip().lower()
            if lowered not in {"true", "false", "1", "0", "yes", "no"}:
                raise ValueError
            return lowered in {"true", "1", "yes"}
        return PARAM_TYPES[param.type](text)
    except ValueError:
        raise PatchSetError(f"expected {param.type}, got {text!r}", where=where) from None


def build_patch(path: Path, data: Mapping[str, Any], environment: LazyEnvironment,
                overrides: Mapping[str, Any], templates: str) -> Patch:
    """Read a patch's header, parameters and examples; its steps are built from them on first use.

    ``templates`` is the digest of the templates folder (``templates_digest``).
    """
    params = parse_params(path, data)
    values = {p.name: p.default for p in params} | dict(overrides)
    examples = tuple(_example(path, number, entry) for number, entry in
                     enumerate(_tables(data.get("examples", []), path, "examples"), 1))
    # Everything the steps are built from: the patch's own table, its values
    # and the templates it may render (parameter types are in the table).
    described = json.dumps([data, values, templates], sort_keys=True, default=repr)
    code = PatchCode(hashlib.sha256(described.encode()).hexdigest(),
                     lambda: _build_code(path, data, environment, values))
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
        try:
            pattern = parse_pattern("pattern", render_value("pattern", str(entry["pattern"])))
        except ConfigError as error:
            raise PatchSetError(f"{where}: {error}", where=str(path)) from None
        markers.append(AppliedMarker(pattern, str(entry.get("scope", data["scope"]))))
    return tuple(markers)


def _example(path: Path, number: int, entry: Mapping[str, Any]) -> Example:
    _check_keys(entry, EXAMPLE_KEYS, path, f"examples[{number}].")
    if "before" not in entry:
        raise PatchSetError(f"'examples[{number}]' has no 'before'", where=str(path))
    return Example(name=entry.get("name", f"example {number}"), before=entry["before"],
                   after=entry.get("after"), error=entry.get("error"), params=entry.get("params", {}))


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


__all__ = ["load_outline", "load_patch_set"]
