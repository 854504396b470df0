"""Run the policy's rules over what ships; every finding is a value, nothing stops the run."""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
import re
import signal
import threading
from dataclasses import dataclass, field
from types import TracebackType
from typing import Callable, Collection, Iterable, Iterator, Mapping, Sequence

from ..archive.tree import SourceTree
from ..errors import PatcherError
from ..shipping import ShipPlan
from .base import PARSE_ERRORS, BuildContext, FileRule, PythonSource, Settings, Severity, TreeRule, Violation
from .cache import RuleCache, cache_dir
from .policy import Policy, canonical
from .python_3_10 import Python310
from .reachability import names_set_by
from .rules import RULES

Reader = Callable[[], bytes]
# What a module must spell to reach another module without naming it (then it may set any of its names).
_REACHES_A_MODULE = (b"sys.modules", b"import_module", b"__import__")


@dataclass(frozen=True)
class CheckResult:
    """What the rules found, and which rules this run is allowed to break (with why)."""

    policy: Policy
    violations: tuple[Violation, ...]  # notes too (severity note): they never count
    checked: tuple[str, ...]  # the Python files read
    allowed: Mapping[str, str] = field(default_factory=dict)  # rule id -> reason of the override

    def is_allowed(self, violation: Violation) -> bool:
        """Whether an override covers ``violation``."""
        return violation.severity is not Severity.NOTE and violation.rule in self.allowed

    @property
    def errors(self) -> tuple[Violation, ...]:
        """Error violations no override covers: any one of them stops the run."""
        return tuple(v for v in self.violations if v.severity is Severity.ERROR and not self.is_allowed(v))

    @property
    def warnings(self) -> tuple[Violation, ...]:
        """Warnings no override covers: printed, never stopping."""
        return tuple(v for v in self.violations if v.severity is Severity.WARNING and not self.is_allowed(v))

    @property
    def overridden(self) -> tuple[Violation, ...]:
        """Violations an override covers."""
        return tuple(v for v in self.violations if self.is_allowed(v))

    @property
    def notes(self) -> tuple[Violation, ...]:
        """Return what the rules note without counting it: e.g. a flagged call in code that cannot run."""
        return tuple(v for v in self.violations if v.severity is Severity.NOTE)


def shipped_python(plan: ShipPlan) -> list[str]:
    """Every Python file the Docker build takes from the context, sorted."""
    return sorted(path for path in plan.copied if path.endswith(".py"))


def read_shipped_python(tree: SourceTree, plan: ShipPlan) -> dict[str, bytes]:
    """The bytes of every shipped Python file, to hand a forked child; empty if one cannot be read.

    The rules read the files again themselves and report what is wrong.
    """
    try:
        return {path: tree.read(path) for path in shipped_python(plan)}
    except (PatcherError, OSError):
        return {}


def run_rules(
    files: Iterable[tuple[str, Reader]],
    policy: Policy,
    *,
    plan: ShipPlan | None = None,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
    read: Callable[[str], bytes] | None = None,
    use_cache: bool = True,
    ahead: Mapping[str, Ahead] | None = None,
) -> CheckResult:
    """Run every file rule on ``files`` and, given a plan, every tree rule on it.

    ``files`` are read one at a time and dropped once checked. A file that
    does not parse or decode gets only the python-3.10 finding: the other
    rules cannot read it. What the file rules find is cached by content
    (``cache.py``). ``read`` gives tree rules the context's files as they
    will be written (KeyError for a path that is not one). ``ahead`` holds
    what the file rules found in some files already (``FileRulesAhead``),
    used for a file only if its bytes are the ones judged there.
    """
    found_in: dict[str, list[Violation]] = {}
    readers: dict[str, Reader] = {}
    tested: dict[str, frozenset[str]] = {}  # module flags a file's tests read, when it was parsed here
    file_rules = _file_rules(policy)
    folder = cache_dir() if use_cache else None
    cache = RuleCache(folder, [s for _, s in file_rules]) if folder is not None else None
    tree_rules = [(rule, s) for r, s in policy.rules.items() if isinstance(rule := RULES[r], TreeRule)]
    words: dict[str, list[str]] = {w: [] for rule, _ in tree_rules for w in rule.WORDS}
    for path, reader in files:
        readers[path] = reader
        data = reader()
        for word, holding in words.items():
            if word.encode() in data or not data.isascii():
                holding.append(path)
        key = cache.key(data) if cache is not None else ""
        hit = cache.get(key, path) if cache is not None else None
        if hit is not None:
            found_in[path] = list(hit)
            continue
        early = ahead.get(path) if ahead else None
        if early is not None and early[0] == hashlib.sha256(data).hexdigest():
            found, readable = list(early[1]), early[2]
        else:
            source = PythonSource(path, data)
            found, readable = _check_file(source, file_rules)
            if readable and _reasoned(found):
                tested[path] = source.reachability.tested_flags()
        found_in[path] = found
        if cache is not None and readable:
            cache.put(key, found)
    for path, untrusted in _flags_set_elsewhere(found_in, readers, tested).items():
        found_in[path], _ = _check_file(PythonSource(path, readers[path](), untrusted), file_rules)
    checked = list(found_in)
    violations = [v for found in found_in.values() for v in found]
    if plan is not None:
        build = BuildContext(plan, tuple(targets), tuple(checked), read or _no_files, words)
        for tree_rule, settings in tree_rules:
            violations.extend(tree_rule.check_tree(build, settings))
    violations.sort(key=lambda v: (v.path, v.line, v.rule, v.message))
    return CheckResult(policy, tuple(violations), tuple(checked),
                       {canonical(rule): reason for rule, reason in allowed})


def _flags_set_elsewhere(found_in: Mapping[str, Sequence[Violation]], readers: Mapping[str, Reader],
                         tested: Mapping[str, frozenset[str]]) -> dict[str, frozenset[str]]:
    """Return, per file, the module flags it tests that another of ``readers``' files assigns.

    A module flag (``USE_TRITON = False``, never rebound in its module)
    decides branches only while no other module sets it
    (``paged_attn.USE_TRITON = True``, ``setattr(paged_attn, "USE_TRITON", 1)``).
    Only files where a rule found something are looked at: a flag that
    decides nothing a rule reports cannot change a finding. ``tested`` holds
    the flags of the files parsed in this run; another (a cache hit) is
    parsed only if its bytes can hold a flag its tests read. The other files
    are searched for the flag's name (or a way to reach a module without
    naming it) as bytes before any is parsed.
    """
    result: dict[str, frozenset[str]] = {}
    for path, found in found_in.items():
        if not _reasoned(found):
            continue
        flags = tested.get(path)
        if flags is None:
            data = readers[path]()
            if not _may_test_a_flag(data):
                continue
            try:
                flags = PythonSource(path, data).reachability.tested_flags()
            except (*PARSE_ERRORS, RecursionError):
                continue
        if not flags:
            continue
        untrusted: set[str] = set()
        for other, reader in readers.items():
            if other == path:
                continue
            data = reader()
            named = [flag for flag in flags if flag.encode() in data or not data.isascii()]
            if not named and not any(word in data for word in _REACHES_A_MODULE):
                continue
            try:
                assigned = names_set_by(PythonSource(other, data).index, here=False)
            except (*PARSE_ERRORS, RecursionError):
                continue
            untrusted.update(flags if "*" in assigned else assigned.intersection(named))
        if untrusted:
            result[path] = frozenset(untrusted)
    return result


def _reasoned(found: Sequence[Violation]) -> bool:
    """Whether a rule that reasons about code that can run found something (python-3.10 does not reason so)."""
    return any(v.rule != Python310.ID for v in found)


# A top-level name set to a literal: what a module flag looks like in bytes.
_TOP_LEVEL_LITERAL = re.compile(rb"^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[ \t]*(?:[-+(]*[0-9.]|True\b|False\b|None\b|[rbuRBU]{0,2}['\"])",
                                re.MULTILINE)


def _may_test_a_flag(data: bytes) -> bool:
    """Tell from the bytes whether a file can hold a module flag it reads again (non-ASCII: always)."""
    if not data.isascii():
        return True
    names = set(_TOP_LEVEL_LITERAL.findall(data))
    if len(names) > 64:
        return True  # parsing is linear; a search per name over the whole file would not be
    return any(len(re.findall(rb"\b" + re.escape(name) + rb"\b", data)) > 1 for name in names)


def _file_rules(policy: Policy) -> list[tuple[FileRule, Settings]]:
    return [(rule, s) for r, s in policy.rules.items() if isinstance(rule := RULES[r], FileRule)]


Ahead = tuple[str, tuple[Violation, ...], bool]  # sha256 of the bytes judged, what the file rules found, readable


class FileRulesAhead:
    """Run the file rules on some files in a forked child while this process patches.

    Parsing every shipped file is most of what the rules cost, and patching
    needs none of it: on a machine with a second core the two overlap. The
    child gets the files' bytes in memory (it never reads the input, whose
    file offset it would share), sends back what it found, and exits. Where
    ``fork`` is missing, other threads run (a child could inherit a held
    lock), or anything fails, ``results`` is empty and the rules run here.
    Use it as a context manager: leaving it ends a child not waited for.
    """

    def __init__(self, files: Mapping[str, bytes], policy: Policy) -> None:
        self._pid: int | None = None
        self._pipe = -1
        if not files or not hasattr(os, "fork") or threading.active_count() > 1:
            return
        file_rules = _file_rules(policy)
        read, write = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(read)
            os.close(write)
            return
        if pid == 0:  # the child: never returns
            status = 1
            try:
                os.close(read)
                found = {path: (hashlib.sha256(data).hexdigest(), *_judged(path, data, file_rules))
                         for path, data in files.items()}
                with os.fdopen(write, "wb") as out:
                    out.write(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL))
                status = 0
            finally:
                os._exit(status)  # no atexit handlers, no flushing the parent's buffers twice
        os.close(write)
        self._pid, self._pipe = pid, read

    def results(self) -> dict[str, Ahead]:
        """Wait for the child; return what it found per path, or {} if it failed."""
        if self._pid is None:
            return {}
        try:
            with os.fdopen(self._pipe, "rb") as pipe:
                payload = pipe.read()
        finally:
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
        if status != 0:
            return {}
        try:
            found = pickle.loads(payload)
        except Exception:  # a child that died mid-write: judge the files here
            return {}
        return found if isinstance(found, dict) else {}

    def __enter__(self) -> "FileRulesAhead":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._pid is not None:  # results were not collected: the run stopped early
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)
            os.close(self._pipe)
            self._pid = None


class Pending(Mapping[str, Ahead]):
    """What a ``FileRulesAhead`` finds for ``paths``, waited for only when one of them is first looked up.

    ``run_rules`` reads the files in order: give the child the last ones,
    and this process judges the first ones meanwhile.
    """

    def __init__(self, ahead: FileRulesAhead, paths: Collection[str]) -> None:
        self._ahead, self._paths = ahead, frozenset(paths)
        self._found: dict[str, Ahead] | None = None

    def __getitem__(self, path: str) -> Ahead:
        if path not in self._paths:
            raise KeyError(path)
        if self._found is None:
            self._found = self._ahead.results()
        return self._found[path]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._paths))

    def __len__(self) -> int:
        return len(self._paths)


def last_half(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The files, in path order, whose middle byte lies in the second half of all their bytes: a child's share."""
    total, seen, kept = sum(map(len, files.values())), 0, {}
    for path in sorted(files):
        if seen + len(files[path]) / 2 >= total / 2:
            kept[path] = files[path]
        seen += len(files[path])
    return kept


def _judged(path: str, data: bytes, file_rules: Sequence[tuple[FileRule, Settings]]) -> tuple[tuple[Violation, ...], bool]:
    found, readable = _check_file(PythonSource(path, data), file_rules)
    return tuple(found), readable


def _check_file(source: PythonSource, file_rules: Sequence[tuple[FileRule, Settings]]) -> tuple[list[Violation], bool]:
    """Return what the file rules find in ``source``, and whether it could be read at all."""
    try:
        source.tree
        readable = True
    except PARSE_ERRORS:
        readable = False
    found: list[Violation] = []
    for rule, settings in file_rules:
        if readable or isinstance(rule, Python310):
            found.extend(rule.check_file(source, settings))
    return found, readable


def _no_files(path: str) -> bytes:
    raise KeyError(path)


def check_tree(
    tree: SourceTree,
    plan: ShipPlan,
    policy: Policy,
    *,
    changes: Mapping[str, bytes] | None = None,
    targets: Sequence[str] = (),
    allowed: Sequence[tuple[str, str]] = (),
    use_cache: bool = True,
    ahead: Mapping[str, Ahead] | None = None,
) -> CheckResult:
    """Check the shipped files of ``tree`` as they will be written: ``changes`` first, then the tree."""
    overlay = changes or {}

    def read(path: str) -> bytes:
        return overlay[path] if path in overlay else tree.read(path)

    files = ((path, functools.partial(read, path)) for path in shipped_python(plan))
    return run_rules(files, policy, plan=plan, targets=targets, allowed=allowed, read=read, use_cache=use_cache,
                     ahead=ahead)
