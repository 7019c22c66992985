"""Configuration declarations: each kind declares its keys once; the declaration validates, and documents.

Every configurable kind (module kinds, compensators, setups, controls, plants, specimens, ...) declares
its table as one :class:`Schema` of :class:`Key` entries (type, unit, range, default, one line of doc).
The same declaration

- validates a parsed TOML or JSON table before anything is built (:meth:`Schema.check`): unknown keys,
  missing keys, wrong types, out-of-range numbers, each as a :class:`ConfigError` whose message names
  the dotted key (``limits.displacment``) and the fix, one line;
- documents the kind (:meth:`Schema.reference`): ``hybridsim site KIND --describe-config`` and the
  generated page ``docs/config_reference.md`` (``python -m hybridsim.coordinator.reference``).

How to declare a new kind (one file, one registry line):

1. In the kind's file, beside its class::

       from hybridsim.modules.config_schema import Key, Number, Numbers, Schema

       CONFIG = Schema("compensator 'lead'", "a first-order lead on the target", {
           "gain": Key(Number(minimum=0), "lead gain (dimensionless)", required=True),
           "delay": Key(Number("s", minimum=0), "assumed actuator delay", default=0.0),
       })

   and give the class ``CONFIG = CONFIG`` (a class attribute); ``from_config`` may then trust key
   names and types (it still checks what spans keys, e.g. matching lengths).
2. Add the registry line as usual (``"lead": "hybridsim....lead:LeadCompensator"``).  A parent table
   that holds one of several kinds names the registry in :class:`Variants`
   (``Variants("kind", KINDS)``): the chosen class's ``CONFIG`` validates the rest of the table, and
   the reference page lists every kind.
3. Regenerate the reference page (``python -m hybridsim.coordinator.reference > docs/config_reference.md``;
   a test fails when it drifts).

Callers add where the table came from: ``ConfigError.located("in module 'story1' (config story1.toml)")``
gives ``unknown key limits.displacment in module 'story1' (config story1.toml); allowed: ...``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hybridsim.registry import resolve
from hybridsim.wire.contract import ModuleError


class ConfigError(ModuleError, ValueError):
    """A configuration table that does not match its declaration: ``key`` (dotted) and what is wrong."""

    def __init__(self, lead: str, key: str, rest: str) -> None:
        self.lead, self.key, self.rest = lead, key, rest
        super().__init__(f"{lead}{key}{rest}")

    def located(self, where: str) -> str:
        """The one-line message with ``where`` (e.g. ``in module 'x' (config x.toml)``) after the key."""
        return f"{self.lead}{self.key} {where}{self.rest}"


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _bad(path: str, wanted: str, value: Any, choices: Sequence[str] = ()) -> ConfigError:
    shown = repr(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return ConfigError("", path, f" must be {wanted}, got {shown}{_nearest(value, choices)}")


def _nearest(word: Any, names: Sequence[str]) -> str:
    """``; did you mean NAME?`` for a misspelling of one of ``names`` (difflib's similarity of at least 0.6)."""
    close = difflib.get_close_matches(word, sorted(names), n=1) if isinstance(word, str) else []
    return f"; did you mean {close[0]}?" if close else ""


# -- value types -----------------------------------------------------------------------------------
def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class Number:
    """A finite real number, optionally within a range (``open_*``: the bound itself excluded)."""

    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    open_minimum: bool = False
    open_maximum: bool = False

    def bounds(self) -> str:
        """The range in words ('>= 0 and < 1'), empty when unbounded."""
        bounds = []
        if self.minimum is not None:
            bounds.append(f"{'>' if self.open_minimum else '>='} {self.minimum:g}")
        if self.maximum is not None:
            bounds.append(f"{'<' if self.open_maximum else '<='} {self.maximum:g}")
        return " and ".join(bounds)

    def wanted(self) -> str:
        unit = f" ({self.unit})" if self.unit else ""
        return f"a number {self.bounds()}".rstrip() + unit

    def in_range(self, value: float) -> bool:
        lo, hi = self.minimum, self.maximum
        return ((lo is None or (value > lo if self.open_minimum else value >= lo))
                and (hi is None or (value < hi if self.open_maximum else value <= hi)))

    def check(self, value: Any, path: str) -> None:
        if _is_number(value) and not math.isfinite(value):
            raise _bad(path, "a finite number", value)
        if not _is_number(value) or not self.in_range(value):
            raise _bad(path, self.wanted(), value)


@dataclass(frozen=True)
class Integer:
    """A whole number (TOML integer), optionally within a range."""

    minimum: int | None = None
    maximum: int | None = None
    unit: str = ""

    def bounds(self) -> str:
        """The range in words, empty when unbounded."""
        bounds = [f">= {self.minimum}"] if self.minimum is not None else []
        return " and ".join(bounds + ([f"<= {self.maximum}"] if self.maximum is not None else []))

    def wanted(self) -> str:
        unit = f" ({self.unit})" if self.unit else ""
        return f"an integer {self.bounds()}".rstrip() + unit

    def check(self, value: Any, path: str) -> None:
        if (not isinstance(value, int) or isinstance(value, bool)
                or (self.minimum is not None and value < self.minimum)
                or (self.maximum is not None and value > self.maximum)):
            raise _bad(path, self.wanted(), value)


@dataclass(frozen=True)
class Text:
    """A non-empty string, optionally one of ``choices`` or matching ``pattern`` (a regular expression, the whole
    string), which ``shown`` then says in words (``HOST:PORT``)."""

    choices: tuple[str, ...] = ()
    unit: str = ""
    pattern: str = ""
    shown: str = ""

    def wanted(self) -> str:
        if self.shown:
            return self.shown
        return "one of " + ", ".join(repr(c) for c in self.choices) if self.choices else "a non-empty string"

    def check(self, value: Any, path: str) -> None:
        if (not isinstance(value, str) or not value or (self.choices and value not in self.choices)
                or (self.pattern and not re.fullmatch(self.pattern, value))):
            raise _bad(path, self.wanted(), value, self.choices)


@dataclass(frozen=True)
class Flag:
    """true or false."""

    unit: str = ""

    def wanted(self) -> str:
        return "true or false"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, bool):
            raise _bad(path, self.wanted(), value)


@dataclass(frozen=True)
class Numbers:
    """Finite numbers nested ``dims`` deep: 0 a number, 1 a list, 2 a matrix (list of rows); every element
    within ``element``'s range.  ``dims`` lists the depths allowed (``(0, 1)``: a number or a list)."""

    unit: str = ""
    dims: tuple[int, ...] = (1,)
    element: Number | Integer = Number()
    empty: bool = False
    """an empty list is allowed (none of them)"""

    def wanted(self) -> str:
        one, many = ("an integer", "integers") if isinstance(self.element, Integer) else ("a number", "numbers")
        shapes = {0: one, 1: f"a list of {many}", 2: f"a matrix (a list of rows of {many})"}
        what = " or ".join(shapes[d] for d in self.dims)
        bounds = self.element.bounds()
        unit = f" ({self.unit})" if self.unit else ""
        return f"{what}{', each ' + bounds if bounds else ''}{unit}"

    def check(self, value: Any, path: str) -> None:
        if self.empty and isinstance(value, (list, tuple)) and not value:
            return
        depth = 0
        items: list[Any] = [value]
        while items and all(isinstance(v, (list, tuple)) for v in items):
            if any(not v for v in items):
                raise _bad(path, self.wanted(), value)
            items = [x for v in items for x in v]
            depth += 1
        if depth not in self.dims or not items:
            raise _bad(path, self.wanted(), value)
        for item in items:
            if not _is_number(item) or isinstance(self.element, Integer) and not isinstance(item, int):
                raise _bad(path, self.wanted(), value)
            if not math.isfinite(item):
                raise _bad(path, "finite numbers", value)
            if isinstance(self.element, Number) and not self.element.in_range(item):
                raise _bad(path, self.wanted(), value)
            if isinstance(self.element, Integer):
                self.element.check(item, path)
        if depth == 2 and len({len(row) for row in value}) != 1:
            raise _bad(path, f"{self.wanted()} with rows of equal length", value)


@dataclass(frozen=True)
class Names:
    """A non-empty list of non-empty strings (DOF names, for instance), each optionally one of ``choices``."""

    choices: tuple[str, ...] = ()
    unit: str = ""

    def wanted(self) -> str:
        of = " each one of " + ", ".join(repr(c) for c in self.choices) if self.choices else ""
        return f"a non-empty list of strings{of}"

    def check(self, value: Any, path: str) -> None:
        if (not isinstance(value, (list, tuple)) or not value
                or not all(isinstance(v, str) and v and (not self.choices or v in self.choices) for v in value)):
            raise _bad(path, self.wanted(), value)


@dataclass(frozen=True)
class Free:
    """A table whose keys belong to someone else (e.g. the keyword arguments of an OpenSees model's build)."""

    unit: str = ""

    def wanted(self) -> str:
        return "a table (any keys)"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise _bad(path, self.wanted(), value)
        _finite(value, path)


def _finite(value: Any, path: str) -> None:
    """Refuse NaN or infinity anywhere inside a value that no declaration types (TOML allows nan and inf)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise _bad(path, "a finite number", value)
    items = value.items() if isinstance(value, Mapping) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        _finite(item, _join(path, key))


@dataclass(frozen=True)
class Table:
    """A nested table declared by ``schema``."""

    schema: "Schema"
    unit: str = ""

    def wanted(self) -> str:
        return f"a table ({self.schema.title})"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, Mapping):
            raise _bad(path, self.wanted(), value)
        self.schema.check(value, path)


@dataclass(frozen=True)
class Tables:
    """A non-empty list of tables, each declared by ``schema`` (a TOML array of tables)."""

    schema: "Schema"
    unit: str = ""

    def wanted(self) -> str:
        return f"a list of tables ({self.schema.title})"

    def check(self, value: Any, path: str) -> None:
        if not isinstance(value, (list, tuple)) or not value:
            raise _bad(path, self.wanted(), value)
        for i, item in enumerate(value):
            Table(self.schema).check(item, _join(path, i))


@dataclass(frozen=True)
class Either:
    """One of several types, tried in order (e.g. a scheme name or a table)."""

    options: tuple[Any, ...]
    unit: str = ""

    def wanted(self) -> str:
        return " or ".join(o.wanted() for o in self.options)

    def check(self, value: Any, path: str) -> None:
        for option in self.options:
            if (isinstance(option, Table) and isinstance(value, Mapping)
                    or isinstance(option, Tables) and isinstance(value, (list, tuple))):
                option.check(value, path)  # a table's own error names the key inside it
                return
            try:
                option.check(value, path)
                return
            except ConfigError:
                continue
        raise _bad(path, self.wanted(), value)


ValueType = Number | Integer | Text | Flag | Numbers | Names | Free | Table | Tables | Either


# -- keys and tables -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Key:
    """One key of a table: its type (with unit and range), one line of doc, required or its default."""

    type: ValueType
    doc: str
    required: bool = False
    default: Any = None


@dataclass(frozen=True)
class Variants:
    """A table that holds one of several kinds, chosen by its ``key`` (``kind``, ``law``, ``model``).

    ``options`` maps each choice to its :class:`Schema`, or to ``"module:Class"`` (a registry line) whose
    class attribute ``CONFIG`` is the schema (imported only when that choice is validated or documented).
    ``default``: the choice when the key is absent (None: the key is required).
    """

    key: str
    options: Mapping[str, "Schema | str"]
    default: str | None = None
    doc: str = ""

    def schema(self, choice: str) -> "Schema":
        option = self.options[choice]
        if isinstance(option, Schema):
            return option
        return resolve(option).CONFIG


@dataclass(frozen=True)
class Schema:
    """The declaration of one kind's configuration table.

    ``exactly_one``/``at_most_one``: groups of keys of which exactly one / at most one may be given
    (``stiffness`` or ``stiffness_file``); ``together``: groups of keys given all or none (``cert`` and ``key``).
    ``variants``: the kinds this table may hold.
    """

    title: str
    doc: str
    keys: Mapping[str, Key] = field(default_factory=dict)
    variants: Variants | None = None
    exactly_one: tuple[tuple[str, ...], ...] = ()
    at_most_one: tuple[tuple[str, ...], ...] = ()
    renamed: Mapping[str, str] = field(default_factory=dict)
    """keys of an earlier version -> what to write now (an unknown key's message says it)"""
    together: tuple[tuple[str, ...], ...] = ()

    def with_keys(self, title: str, doc: str, keys: Mapping[str, Key]) -> "Schema":
        """This schema with more keys (e.g. every module kind's shared ``limits`` table)."""
        return Schema(title, doc, {**self.keys, **keys}, self.variants, self.exactly_one, self.at_most_one,
                      self.renamed, self.together)

    def chosen(self, table: Mapping[str, Any], path: str = "") -> "Schema":
        """This schema merged with the variant ``table`` names (itself when it has no variants)."""
        if self.variants is None:
            return self
        v = self.variants
        choice = table.get(v.key, v.default)
        if choice is None:
            raise ConfigError("missing key ", _join(path, v.key), f"; choose one of {', '.join(v.options)}")
        if not isinstance(choice, str) or choice not in v.options:
            raise _bad(_join(path, v.key), "one of " + ", ".join(repr(c) for c in v.options), choice, v.options)
        inner = v.schema(choice)
        keys = {**self.keys, v.key: Key(Text(tuple(v.options)), v.doc), **inner.keys}
        merged = Schema(self.title, self.doc, keys, inner.variants, self.exactly_one + inner.exactly_one,
                        self.at_most_one + inner.at_most_one, {**self.renamed, **inner.renamed},
                        self.together + inner.together)
        return merged.chosen(table, path)  # a chosen kind may hold kinds of its own (a spring's law)

    def check(self, table: Mapping[str, Any], path: str = "") -> None:
        """Raise :class:`ConfigError` for the first key of ``table`` (at ``path``) that breaks the declaration."""
        if not isinstance(table, Mapping):
            raise _bad(path or "the configuration", f"a table ({self.title})", table)
        schema = self.chosen(table, path)
        keys = schema.keys
        for name in table:
            if name in schema.renamed:
                raise ConfigError("", _join(path, str(name)), f" is now {schema.renamed[name]}")
            if name not in keys:
                raise ConfigError("unknown key ", _join(path, str(name)),
                                  f"; allowed: {', '.join(sorted(keys))}{_nearest(name, list(keys))}")
        for group in schema.exactly_one:
            given = [k for k in group if k in table]
            if len(given) != 1:
                where = f" in {path}" if path else ""
                raise ConfigError("", f"give exactly one of {' or '.join(group)}{where}",
                                  f", not {' and '.join(given)}" if given else "")
        for group in schema.at_most_one:
            given = [k for k in group if k in table]
            if len(given) > 1:
                raise ConfigError("", f"give at most one of {' or '.join(group)}{' in ' + path if path else ''}",
                                  f", not {' and '.join(given)}")
        for group in schema.together:
            if 0 < sum(k in table for k in group) < len(group):
                both = "both" if len(group) == 2 else "all"
                raise ConfigError("", path or "the configuration",
                                  f": {' and '.join(group)} go together: give {both} or neither")
        for name, key in keys.items():
            if name in table:
                key.type.check(table[name], _join(path, name))
            elif key.required:
                raise ConfigError("missing key ", _join(path, name), f" ({key.type.wanted()}: {key.doc})")

    # -- documentation ---------------------------------------------------------------------------
    def reference(self, level: int = 2, seen: set[int] | None = None) -> str:
        """Markdown: the table's keys (type, unit, range, default, doc), nested tables and variants below;
        a table already in ``seen`` (ids of schemas documented earlier on the page) is referred to by title."""
        seen = set() if seen is None else seen
        seen.add(id(self))
        lines = [f"{'#' * level} {self.title}", "", self.doc, ""]
        lines += _key_table(self.keys)
        for group in self.exactly_one:
            lines.append(f"Give exactly one of {', '.join(f'`{k}`' for k in group)}.")
        for group in self.at_most_one:
            lines.append(f"Give at most one of {', '.join(f'`{k}`' for k in group)}.")
        for group in self.together:
            lines.append(f"Give {' and '.join(f'`{k}`' for k in group)} together or not at all.")
        if self.exactly_one or self.at_most_one or self.together:
            lines.append("")
        if self.variants is not None:
            lines += _variants(self.variants, level, seen)
        lines += _nested(self.keys, level + 1, seen)
        return "\n".join(lines).rstrip() + "\n"


def _variants(v: Variants, level: int, seen: set[int]) -> list[str]:
    default = f"default `{v.default}`" if v.default else "required"
    lines = [f"`{v.key}` ({default}) chooses {v.doc or 'the kind'}: {', '.join(f'`{c}`' for c in v.options)}.", ""]
    for choice in v.options:
        inner = v.schema(choice)
        lines += [f"{'#' * (level + 1)} `{v.key} = \"{choice}\"`: {inner.title}", "", inner.doc, ""]
        lines += _key_table(inner.keys)
        if inner.variants is not None:
            lines += _variants(inner.variants, level + 1, seen)
        lines += _nested(inner.keys, level + 2, seen)
    return lines


def _key_table(keys: Mapping[str, Key]) -> list[str]:
    if not keys:
        return ["(no keys)", ""]
    rows = ["| key | value | default | meaning |", "|---|---|---|---|"]
    for name, key in keys.items():
        default = "required" if key.required else ("" if key.default is None else f"`{key.default!r}`")
        rows.append(f"| `{name}` | {key.type.wanted()} | {default} | {key.doc} |")
    return rows + [""]


def _nested(keys: Mapping[str, Key], level: int, seen: set[int]) -> list[str]:
    lines: list[str] = []
    for key in keys.values():
        options = key.type.options if isinstance(key.type, Either) else (key.type,)
        for option in options:
            if not isinstance(option, (Table, Tables)):
                continue
            if id(option.schema) in seen:
                lines += [f"{'#' * level} {option.schema.title}", "", "As above.", ""]
            else:
                lines += option.schema.reference(level, seen).splitlines() + [""]
    return lines
