"""Read the policy file that declares the safety rules, and the ``--allow`` overrides."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ..errors import PatchSetError, PatcherError
from ..patchset.folder import FileMissing, PatchFolder, read_toml
from .base import Settings, Severity
from .rules import RULES

POLICY = "policy.toml"
TOP_KEYS = frozenset({"rules"})
RULE_KEYS = frozenset({"id", "severity", "reason", "params"})


@dataclass(frozen=True)
class Policy:
    """The rules to run, each with the severity and reason the policy file gives it."""

    path: Path
    rules: Mapping[str, Settings]  # rule id -> settings, in the file's order

    def reason(self, rule: str) -> str:
        """Why a violation of ``rule`` matters, in hardware terms."""
        return self.rules[rule].reason


def canonical(rule: str) -> str:
    """Return the current id of ``rule``: a former id (``no-triton-prefill``) names the rule that replaced it."""
    for rule_id, known in RULES.items():
        if rule == rule_id or rule in known.ALIASES:
            return rule_id
    return rule


def policy_path(patches: Path) -> Path:
    """The policy beside a patch set; the bundled one when the set has none.

    The rules protect the hardware whatever the patches do, so a patch set
    without its own policy is checked against the tool's.
    """
    from ..resources import _bundled

    own = patches / POLICY
    # Whatever stands at that name is the set's policy: a link that leads
    # out or a FIFO is refused when read, never silently replaced.
    return own if os.path.lexists(own) else _bundled("patches") / POLICY


def load_policy(path: Path) -> Policy:
    """Parse and validate the policy file: known keys, every rule declared once.

    It is read as the rest of a patch set is (``patcher.patchset.folder``):
    a regular file inside its own folder once symlinks are resolved, of
    bounded size and nesting.
    """
    try:
        data = read_toml(path, roots=(PatchFolder.open(path.parent).root,), what="policy file")
    except FileMissing:
        raise PatchSetError("no policy file", where=str(path), hint="the safety rules are declared there") from None
    _check_keys(data, TOP_KEYS, path, "")
    entries = data.get("rules", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PatchSetError("'rules' must be an array of tables ([[rules]])", where=str(path))
    rules: dict[str, Settings] = {}
    for number, entry in enumerate(entries, 1):
        settings = _settings(entry, f"rules[{number}]", path)
        if settings.rule in rules:
            raise PatchSetError(f"rule '{settings.rule}' is declared twice", where=str(path))
        rules[settings.rule] = settings
    missing = [rule for rule in RULES if rule not in rules]
    if missing:
        raise PatchSetError(f"rule '{missing[0]}' is not declared", where=str(path),
                            hint="declare every rule with its severity and reason; weaken one with severity = \"warning\"")
    return Policy(path, rules)


def _settings(entry: Mapping[str, Any], where: str, path: Path) -> Settings:
    _check_keys(entry, RULE_KEYS, path, f"{where}.")
    for key in ("id", "severity", "reason"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            raise PatchSetError(f"'{where}.{key}' must be a non-empty string", where=str(path))
    rule_id = canonical(entry["id"])
    if rule_id not in RULES:
        raise PatchSetError(f"'{where}': no rule '{rule_id}'{_did_you_mean(rule_id, _known_ids())}",
                            where=str(path))
    severities = [s.value for s in Severity if s is not Severity.NOTE]  # a note is not a verdict
    if entry["severity"] not in severities:
        raise PatchSetError(f"'{where}.severity' must be one of {', '.join(severities)}, "
                            f"not {entry['severity']!r}", where=str(path))
    defaults = RULES[rule_id].PARAMS
    given = entry.get("params", {})
    if not isinstance(given, dict):
        raise PatchSetError(f"'{where}.params' must be a table", where=str(path))
    for name, value in given.items():
        if name not in defaults:
            known = f" (it has: {', '.join(defaults)})" if defaults else " (it has none)"
            raise PatchSetError(f"rule '{rule_id}' has no parameter '{name}'{_did_you_mean(name, defaults)}{known}",
                                where=str(path))
        if type(value) is not type(defaults[name]):
            raise PatchSetError(f"'{where}.params.{name}' must be a {type(defaults[name]).__name__}, "
                                f"not {value!r}", where=str(path))
    return Settings(rule_id, Severity(entry["severity"]), " ".join(entry["reason"].split()),
                    {**defaults, **given})


def parse_allowed(rules: Sequence[str], reasons: Sequence[str], policy: Policy) -> tuple[tuple[str, str], ...]:
    """Pair each ``--allow RULE`` with its ``--reason``, in order; every rule must exist."""
    if len(rules) != len(reasons):
        raise PatcherError(f"{len(rules)} --allow but {len(reasons)} --reason",
                           hint='give each --allow RULE its own --reason "why this run may break it"')
    pairs = []
    for given, reason in zip(rules, reasons):
        rule = canonical(given)
        if rule not in policy.rules:
            raise PatcherError(f"--allow {rule}: no such rule{_did_you_mean(rule, _known_ids(policy))}",
                               hint=f"rules: {', '.join(policy.rules)}")
        if not reason.strip():
            raise PatcherError(f"--allow {rule}: the --reason is empty", hint="say why this run may break the rule")
        pairs.append((rule, " ".join(reason.split())))
    return tuple(pairs)


def _known_ids(policy: Policy | None = None) -> list[str]:
    """Return every id a user may write: the rules (of ``policy``, if given) and their former ids."""
    rules = list(policy.rules) if policy is not None else list(RULES)
    return rules + [alias for rule in rules for alias in RULES[rule].ALIASES]


def _check_keys(data: Mapping[str, Any], known: frozenset[str], path: Path, prefix: str) -> None:
    for key in data:
        if key not in known:
            raise PatchSetError(f"unknown key '{prefix}{key}'{_did_you_mean(key, known)}", where=str(path))


def _did_you_mean(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""
