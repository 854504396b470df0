"""What every operation shares: its configuration, its failure, and how it is described."""

from __future__ import annotations

import dataclasses
import difflib
from abc import ABC, abstractmethod
from typing import Any, Callable, ClassVar, Mapping

import libcst as cst

from .pattern import Pattern, PatternSyntaxError, parse_snippet


class StepFailed(Exception):
    """The step cannot be applied: its pattern matched too few or too many times."""


class ConfigError(ValueError):
    """A step's configuration is invalid; the message names the key."""

    def __init__(self, key: str, message: str):
        super().__init__(message)
        self.key = key


# Renders one configuration value through Jinja with the patch's parameters;
# the second argument says whether it names a template file or holds code.
Render = Callable[[str, str], str]


@dataclasses.dataclass(frozen=True)
class Operation(ABC):
    """One step of a patch: a transform of the module restricted to a scope."""

    name: ClassVar[str]
    scope: str | None = None

    @abstractmethod
    def apply(self, module: cst.Module, scope: str) -> cst.Module:
        """Return the module transformed within ``scope`` (a qualified name), or raise StepFailed."""

    @abstractmethod
    def describe(self) -> str:
        """Say in one line what this step looks for."""

    @classmethod
    def from_config(cls, config: Mapping[str, Any], render: Render) -> "Operation":
        """Build the step from its table in a patch file, checking every key."""
        known = cls.keys | {"op", "scope"}
        for key in config:
            if key not in known:
                hint = difflib.get_close_matches(key, sorted(known), n=1)
                suggestion = f"; did you mean '{hint[0]}'?" if hint else ""
                raise ConfigError(key, f"unknown key '{key}' for operation '{cls.name}'{suggestion}")
        return cls(scope=config.get("scope"), **cls._convert(config, render))

    # The keys a step of this operation may have, besides 'op' and 'scope'.
    keys: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    @abstractmethod
    def _convert(cls, config: Mapping[str, Any], render: Render) -> dict[str, Any]:
        """Turn the raw configuration into constructor arguments, rendering code."""


def require(config: Mapping[str, Any], key: str, operation: str) -> Any:
    """Return a required configuration value, or say which key is missing."""
    if key not in config:
        raise ConfigError(key, f"operation '{operation}' needs the key '{key}'")
    return config[key]


def count(config: Mapping[str, Any]) -> int:
    """Read ``expect``: how many matches the step must find (default 1)."""
    expect = config.get("expect", 1)
    if not isinstance(expect, int) or isinstance(expect, bool) or expect < 1:
        raise ConfigError("expect", f"'expect' must be a whole number of matches >= 1, not {expect!r}")
    return expect


def expect_count(found: int, expect: int, what: str) -> None:
    """Fail unless the pattern matched exactly as often as the step declares."""
    if found != expect:
        times = "once" if expect == 1 else f"{expect} times"
        raise StepFailed(f"expected {what} {times}, found it {found} time{'s' if found != 1 else ''}")


def parse_pattern(key: str, code: str) -> Pattern:
    """Parse pattern code from configuration, naming the key if it is not Python."""
    try:
        return Pattern.parse(code)
    except PatternSyntaxError as error:
        raise ConfigError(key, f"pattern in '{key}' is {error}") from None


def check_code(key: str, code: str) -> str:
    """Make sure rendered code parses, naming the key if it does not."""
    try:
        parse_snippet(code)
    except PatternSyntaxError as error:
        raise ConfigError(key, f"code from '{key}' is {error}") from None
    return code


def take_code(config: Mapping[str, Any], render: Render, *, required: bool = True) -> str | None:
    """Return the step's rendered code, from ``template`` (a file) or ``code`` (inline)."""
    if "template" in config and "code" in config:
        raise ConfigError("template", "give either 'template' or 'code', not both")
    if "template" in config:
        return check_code("template", render("template", str(config["template"])))
    if "code" in config:
        return check_code("code", render("code", str(config["code"])))
    if required:
        raise ConfigError("code", "the step needs 'template' (a file in templates/) or 'code'")
    return None
