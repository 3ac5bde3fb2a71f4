"""How a survey file's values are read: the kinds of value, blocks of keys, and their checks.

Values are read from PyYAML *nodes* (``yaml.compose``), not from constructed Python objects, so
that every value keeps its line, duplicate keys are caught, and YAML 1.1 surprises cannot happen
(``options: [Yes, No]`` stays two strings; the key ``no`` of forced-response stays a name).
Reading a block never stops at the first problem: every problem is recorded with its line and
reading goes on. The declarations of every key are rrsite.survey.schema.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import yaml

from .errors import Problems

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
_FRACTION_RE = re.compile(rf"({_NUMBER})\s*/\s*({_NUMBER})")
_LN_RE = re.compile(rf"ln\s*(?:\(\s*({_NUMBER})\s*\)|({_NUMBER}))")
_TRUE = {"true", "yes", "on"}
_FALSE = {"false", "no", "off"}


class Invalid(Exception):
    """A value cannot be read; ``line`` overrides the node's line when set."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def line_of(node: yaml.Node) -> int:
    """The 1-based file line of a node (block texts are composed with their leading lines kept)."""
    return int(node.start_mark.line) + 1


#: Words authors bring from other tools, by what they mean here. A suggestion from this table
#: is made only when its word is among the candidates (a question type, a design, a key).
SYNONYMS: dict[str, str] = {
    "single-choice": "choice", "single": "choice", "radio": "choice", "select": "choice",
    "dropdown": "choice", "one-of": "choice", "checkbox": "multi-choice",
    "checkboxes": "multi-choice", "multi-select": "multi-choice", "multiselect": "multi-choice",
    "many-of": "multi-choice", "boolean": "yes-no", "bool": "yes-no", "binary": "yes-no",
    "yes/no": "yes-no", "true-false": "yes-no", "numeric": "number", "integer": "number",
    "int": "number", "float": "number", "decimal": "number", "string": "text",
    "free-text": "text", "open": "text", "open-ended": "text", "textarea": "text",
    "forced": "forced-response", "forced-choice": "forced-response", "fr": "forced-response",
    "krr": "k-rr", "k-ary": "k-rr", "randomized-response": "forced-response",
    "choices": "options", "answers": "options", "minimum": "min", "maximum": "max",
}
#: A spelling at least this similar (difflib's ratio) is a typo of the word, whatever its parts.
TYPO_RATIO = 0.9


def _canonical(word: str) -> str:
    """Lowercase, with ``_`` and spaces read as ``-``."""
    return "-".join(part for part in re.split(r"[-_\s]+", word.strip().lower()) if part)


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` most likely means, or None; meaning and prefixes before spelling.

    In order: the same word in another case or separator (``Yes_No`` -> ``yes-no``); a known
    synonym (``single-choice`` -> ``choice``, ``checkbox`` -> ``multi-choice``); a one-letter
    typo of a long word (``unrelated-unknwn``); the longest
    candidate that ``word`` starts or ends with as a whole part (``unrelated-question`` ->
    ``unrelated``, ``single-choice`` -> ``choice``); the one candidate that starts with ``word``
    (``forced-resp`` -> ``forced-response``); and only then the closest spelling (difflib).
    """
    choices = list(dict.fromkeys(candidates))
    if not choices or len(word) > 200:
        return None
    canonical = {_canonical(choice): choice for choice in choices}
    key = _canonical(word)
    if not key:
        return None
    if key in canonical:
        return canonical[key]
    meant = SYNONYMS.get(key)
    if meant is not None and meant in canonical:
        return canonical[meant]
    typo = difflib.get_close_matches(key, list(canonical), n=1, cutoff=TYPO_RATIO)
    if typo:
        return canonical[typo[0]]
    parts = [name for name in canonical
             if key.startswith(name + "-") or key.endswith("-" + name)]
    if parts:
        return canonical[max(parts, key=len)]
    starting = [name for name in canonical if name.startswith(key)]
    if len(starting) == 1 and len(key) >= 2:
        return canonical[starting[0]]
    close = difflib.get_close_matches(key, list(canonical), n=1, cutoff=0.6)
    return canonical[close[0]] if close else None


def suggest(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the candidate :func:`closest` finds, or an empty string."""
    close = closest(word, candidates)
    return f" (did you mean '{close}'?)" if close is not None else ""


def _describe(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return repr(node.value)


def scalar_text(node: yaml.Node, expected: str) -> str:
    """The text of a scalar exactly as written (quoted or not); refuse lists and mappings."""
    if not isinstance(node, yaml.ScalarNode):
        raise Invalid(f"must be {expected}, got {_describe(node)}")
    return str(node.value)


def is_null(node: yaml.Node) -> bool:
    """An empty or ``null``/``~`` plain scalar: a key written without a value."""
    return (
        isinstance(node, yaml.ScalarNode)
        and node.style is None
        and node.value in ("", "~", "null", "Null", "NULL")
    )


def parse_number(text: str, *, allow_ln: bool = False) -> float:
    """A decimal number, a fraction ``a/b``, or (for epsilons) ``ln(x)``; always finite."""
    stripped = text.strip()
    value: float | None = None
    if _NUMBER_RE.fullmatch(stripped):
        value = float(stripped)
    elif match := _FRACTION_RE.fullmatch(stripped):
        if float(match.group(2)) == 0:
            raise Invalid(f"must be a number, got {text!r} (division by zero)")
        value = float(Fraction(match.group(1)) / Fraction(match.group(2)))
    elif allow_ln and (match := _LN_RE.fullmatch(stripped)):
        argument = float(match.group(1) or match.group(2))
        if not argument > 0:
            raise Invalid(f"must be a number, got {text!r} (ln needs a positive number)")
        value = math.log(argument)
    if value is None:
        forms = "a number such as 0.5 or 1/2" + (" or ln(3)" if allow_ln else "")
        raise Invalid(f"must be {forms}, got {text!r}")
    if not math.isfinite(value):
        raise Invalid(f"must be a finite number, got {text!r}")
    return value


# --------------------------------------------------------------------------------------------
# Kinds: how one value is read


class Kind:
    """How a key's value is read from its node; ``name`` is the reference's type column."""

    name = "value"

    def read(self, node: yaml.Node, problems: Problems) -> Any:
        """The value, or raise :class:`Invalid` (nested kinds record their own problems)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Text(Kind):
    """A line of text (Markdown where ``markdown`` is set)."""

    markdown: bool = False
    max_length: int = 2000
    name: str = "text"

    def read(self, node: yaml.Node, problems: Problems) -> str:
        """Non-empty text of at most ``max_length`` characters."""
        text = scalar_text(node, "text").strip()
        if not text:
            raise Invalid("must not be empty")
        if len(text) > self.max_length:
            raise Invalid(f"must be at most {self.max_length} characters, got {len(text)}")
        return text


@dataclass(frozen=True)
class Name(Kind):
    """An identifier matching ``pattern``."""

    pattern: str
    rule: str
    name: str = "name"
    #: Words people write instead (``German``) and the identifier each means (``de``).
    hints: dict[str, str] = field(default_factory=dict)

    def read(self, node: yaml.Node, problems: Problems) -> str:
        """The identifier, or a message stating the rule (and what was probably meant)."""
        text = scalar_text(node, "a name").strip()
        if not re.fullmatch(self.pattern, text):
            meant = self.hints.get(text.lower())
            if meant is not None:
                raise Invalid(f"must be {self.rule}, got {text!r}: write '{meant}' for "
                              f"{text}")
            if re.fullmatch(self.pattern, text.lower()):
                raise Invalid(f"must be {self.rule}, got {text!r} (did you mean "
                              f"'{text.lower()}'?)")
            raise Invalid(f"must be {self.rule}, got {text!r}")
        return text


@dataclass(frozen=True)
class OneOf(Kind):
    """One word of a fixed list."""

    choices: tuple[str, ...]
    name: str = "one of"

    def read(self, node: yaml.Node, problems: Problems) -> str:
        """The word, or a message with the closest choice and all of them."""
        text = scalar_text(node, f"one of {', '.join(self.choices)}").strip()
        if text not in self.choices:
            hint = suggest(text, self.choices)
            raise Invalid(f"must be one of {', '.join(self.choices)}, got {text!r}{hint}")
        return text


@dataclass(frozen=True)
class Flag(Kind):
    """true or false."""

    name: str = "true/false"

    def read(self, node: yaml.Node, problems: Problems) -> bool:
        """``true``/``false`` (``yes``/``no``, ``on``/``off`` also read)."""
        text = scalar_text(node, "true or false").strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise Invalid(f"must be true or false, got {node.value!r}")


@dataclass(frozen=True)
class Number(Kind):
    """A number, with optional bounds checked here (design probabilities are checked by core)."""

    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None
    below: float | None = None
    integer: bool = False
    allow_ln: bool = False
    name: str = "number"

    def read(self, node: yaml.Node, problems: Problems) -> float | int:
        """The number, refused with the bound it breaks."""
        value = parse_number(scalar_text(node, "a number"), allow_ln=self.allow_ln)
        shown = node.value
        if self.integer:
            if value != int(value):
                raise Invalid(f"must be a whole number, got {shown!r}")
            value = int(value)
        if self.minimum is not None and value < self.minimum:
            raise Invalid(f"must be at least {self.minimum:g}, got {shown}")
        if self.maximum is not None and value > self.maximum:
            raise Invalid(f"must be at most {self.maximum:g}, got {shown}")
        if self.above is not None and not value > self.above:
            raise Invalid(f"must be above {self.above:g}, got {shown}")
        if self.below is not None and not value < self.below:
            raise Invalid(f"must be below {self.below:g}, got {shown}")
        return value


@dataclass(frozen=True)
class Distribution(Kind):
    """A distribution drawn on the device (core checks its values).

    ``{normal: {mean, sd}}``, ``{exponential: {mean}}``, ``{uniform: {min, max}}`` or
    ``{values: [...], probabilities: [...]}``.
    """

    name: str = "distribution"

    def read(self, node: yaml.Node, problems: Problems) -> dict[str, Any]:
        """The mapping with its numbers read; core names what is wrong with the values."""
        if not isinstance(node, yaml.MappingNode):
            raise Invalid("must be a mapping such as {normal: {mean: 0, sd: 1}}, "
                          "{exponential: {mean: 5}}, {uniform: {min: 0, max: 30}} or "
                          f"{{values: [0, 1, 2], probabilities: [0.5, 0.3, 0.2]}}, got "
                          f"{_describe(node)}")
        return {str(scalar_text(key, "a name")): self._value(value) for key, value in node.value}

    def _value(self, node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            return {str(scalar_text(key, "a name")): self._value(value)
                    for key, value in node.value}
        if isinstance(node, yaml.SequenceNode):
            return [parse_number(scalar_text(cell, "a number")) for cell in node.value]
        return parse_number(scalar_text(node, "a number"))


@dataclass(frozen=True)
class OptionSpec:
    """One answer of a choice question as written: its value, label (Markdown) and line."""

    value: str
    label: str
    line: int


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Options(Kind):
    """A list of answers: plain strings, or mappings with ``value`` and ``label``.

    ``option`` is the block a mapping is read with (rrsite.survey.schema.OPTION).
    """

    option: Block | None = None
    name: str = "list"

    def read(self, node: yaml.Node, problems: Problems) -> list[OptionSpec]:
        """Each answer; bad items are recorded and left out, duplicates refused."""
        if not isinstance(node, yaml.SequenceNode):
            raise Invalid(f"must be a list of answers, got {_describe(node)}")
        options: list[OptionSpec] = []
        seen: dict[str, int] = {}
        for item in node.value:
            line = line_of(item)
            if isinstance(item, yaml.MappingNode) and self.option is not None:
                fields = read_block(self.option, item, problems, line)
                if "value" not in fields.values:
                    continue
                value = fields.values["value"]
                label = fields.values.get("label", value)
            else:
                try:
                    value = Text(max_length=200).read(item, problems)
                except Invalid as invalid:
                    problems.error(line, f"option {invalid.message}")
                    continue
                label = value
            if _CONTROL.search(value):
                problems.error(line, f"option value must be one line of text, got {value!r}")
                continue
            if value in seen:
                problems.error(line, f"duplicate option value {value!r} "
                                     f"(first on line {seen[value]})")
                continue
            seen[value] = line
            options.append(OptionSpec(value, label, line))
        return options


@dataclass(frozen=True)
class MatrixKind(Kind):
    """A k x k list of rows of probabilities; its shape and sums are checked by core."""

    name: str = "list of rows"

    def read(self, node: yaml.Node, problems: Problems) -> list[list[float]]:
        """Rows of numbers as written."""
        if not isinstance(node, yaml.SequenceNode):
            raise Invalid(f"must be a list of rows, got {_describe(node)}")
        rows: list[list[float]] = []
        for row in node.value:
            if not isinstance(row, yaml.SequenceNode):
                raise Invalid(f"each row must be a list of numbers, got {_describe(row)}",
                              line_of(row))
            numbers = []
            for cell in row.value:
                try:
                    numbers.append(parse_number(scalar_text(cell, "a number")))
                except Invalid as invalid:
                    raise Invalid(f"matrix entries {invalid.message}", line_of(cell)) from None
            rows.append(numbers)
        return rows


@dataclass(frozen=True)
class Nested(Kind):
    """A mapping read with its own block of declarations."""

    block: Block
    name: str = "mapping"

    def read(self, node: yaml.Node, problems: Problems) -> Fields:
        """The nested fields (their problems are recorded as they are found)."""
        if not isinstance(node, yaml.MappingNode):
            names = ", ".join(self.block.names)
            raise Invalid(f"must be a mapping of {names}, got {_describe(node)}")
        return read_block(self.block, node, problems, line_of(node))


@dataclass(frozen=True)
class Priors(Kind):
    """A mapping from question id to a prior guess of its true rate."""

    name: str = "mapping"

    def read(self, node: yaml.Node, problems: Problems) -> dict[str, tuple[float, int]]:
        """``{question id: (prior, line)}``."""
        if not isinstance(node, yaml.MappingNode):
            raise Invalid(f"must be a mapping of question id to a rate, got {_describe(node)}")
        priors: dict[str, tuple[float, int]] = {}
        for key_node, value_node in node.value:
            line = line_of(key_node)
            try:
                key = scalar_text(key_node, "a question id")
                priors[key] = (parse_number(scalar_text(value_node, "a number")), line)
            except Invalid as invalid:
                problems.error(invalid.line or line, f"priors: {invalid.message}")
        return priors


@dataclass(frozen=True)
class Answers(Kind):
    """One answer value or a list of them (``show_if``'s ``is``)."""

    name: str = "answer or list"

    def read(self, node: yaml.Node, problems: Problems) -> list[str]:
        """The values as written, at least one."""
        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        values = [Text(max_length=200).read(item, problems) for item in items]
        if not values:
            raise Invalid("must name at least one answer")
        return values


# --------------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class Key:
    """One key of a block: its kind, default, meaning, and (for the reference) where it applies."""

    name: str
    kind: Kind
    doc: str
    default: Any = None
    required: bool = False
    default_doc: str = ""
    applies: str = ""
    #: Other spellings read as this key (``randomise``): a national spelling is not a mistake.
    spellings: tuple[str, ...] = ()

    def shown_default(self) -> str:
        """The default as the reference shows it."""
        if self.required:
            return "required"
        if self.default_doc:
            return self.default_doc
        if self.default is None:
            return "—"
        if isinstance(self.default, bool):
            return f"`{str(self.default).lower()}`"
        return f"`{self.default}`"


@dataclass(frozen=True)
class Block:
    """A mapping's declarations: one :class:`Key` per allowed key."""

    name: str
    title: str
    keys: tuple[Key, ...]

    @property
    def names(self) -> tuple[str, ...]:
        """The allowed keys in declaration order."""
        return tuple(key.name for key in self.keys)

    def key(self, name: str) -> Key:
        """The declaration of ``name``."""
        for key in self.keys:
            if key.name == name:
                return key
        raise KeyError(name)

    def spelled(self, name: str) -> str:
        """The key another spelling stands for (``randomise``: ``randomize``), or ``name``."""
        for key in self.keys:
            if name in key.spellings:
                return key.name
        return name


@dataclass
class Fields:
    """What a block said: values (defaults not applied), and the line of each key."""

    line: int
    values: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    block: Block | None = None

    def get(self, name: str) -> Any:
        """The value given, else the declared default."""
        if name in self.values:
            return self.values[name]
        return self.block.key(name).default if self.block else None

    def given(self, name: str) -> bool:
        """Whether the key was written (with a readable value)."""
        return name in self.values

    def line_of(self, name: str) -> int:
        """The line of the key, or of the block when it was not written."""
        return self.lines.get(name, self.line)


def read_block(block: Block, node: yaml.Node, problems: Problems, line: int) -> Fields:
    """Read a mapping against ``block``: unknown and duplicate keys, bad values, missing keys.

    Every problem is recorded in ``problems``; the fields that could be read are returned.
    """
    fields = Fields(line=line, block=block)
    if not isinstance(node, yaml.MappingNode):
        names = ", ".join(block.names[:4])
        problems.error(line_of(node) if node is not None else line,
                       f"{block.title} must be a mapping of keys ({names}, ...), "
                       f"got {_describe(node) if node is not None else 'nothing'}")
        return fields
    for key_node, value_node in node.value:
        key_line = line_of(key_node)
        if not isinstance(key_node, yaml.ScalarNode):
            problems.error(key_line,
                           f"{block.title}: keys must be names, got {_describe(key_node)}")
            continue
        written = str(key_node.value)
        name = block.spelled(written)
        if name in fields.lines:
            also = "" if written == name else f" (written '{written}')"
            problems.error(key_line, f"duplicate key '{name}'{also} (first on line "
                                     f"{fields.lines[name]})")
            continue
        fields.lines[name] = key_line
        if name not in block.names:
            hint = suggest(name, block.names)
            problems.error(key_line, f"unknown key '{name}' in {block.title}{hint}")
            continue
        if is_null(value_node):
            problems.error(key_line, f"{name} has no value")
            continue
        try:
            fields.values[name] = block.key(name).kind.read(value_node, problems)
        except Invalid as invalid:
            problems.error(invalid.line or line_of(value_node), f"{name} {invalid.message}")
    for key in block.keys:
        if key.required and key.name not in fields.lines:
            problems.error(line, f"{block.title} is missing '{key.name}': {key.doc}")
    return fields


#: Design probabilities are read as numbers; core checks their range and names them in messages.
PROBABILITY = Number(name="probability")


@dataclass(frozen=True)
class ProbabilityOrPair(Kind):
    """A probability, or a list of two (one per group, for the two-group designs)."""

    name: str = "probability, or a list of two"

    def read(self, node: yaml.Node, problems: Problems) -> float | list[float]:
        """The number, or the two numbers as written (core checks their range)."""
        if isinstance(node, yaml.SequenceNode):
            if len(node.value) != 2:
                raise Invalid(f"must be a list of two probabilities (group 1, group 2), got "
                              f"{len(node.value)} entries")
            return [parse_number(scalar_text(cell, "a number")) for cell in node.value]
        return parse_number(scalar_text(node, "a number or a list of two numbers"))
