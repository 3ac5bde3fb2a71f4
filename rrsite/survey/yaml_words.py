"""YAML's syntax errors in plain words, with the line to fix, and list items YAML silently joins.

A survey's YAML is bounded before it is composed (:func:`bounded`): at most `MAX_YAML_BYTES`,
nested at most `MAX_DEPTH` deep, and without anchors and aliases (``&name``, ``*name``), which a
survey never needs and which let a few lines expand into billions of values ("billion laughs");
PyYAML's composer is recursive, so a deep nesting would end in a RecursionError. Each text value
is checked for control and bidirectional characters (source.clean_characters).

PyYAML reports where its reading stopped ("mapping values are not allowed here"), which is often a
line after the one to fix and in a parser's words. :func:`explain` says what is most likely wrong
and which line to look at ("check the indentation of line 6"), and keeps YAML's own words at the
end for searching. :func:`joined_items` finds what YAML reads without complaint yet an author did
not mean: a list item indented deeper than the item above it is read as the rest of that item
(``- Sometimes`` then ``    - Rarely`` is one answer, ``Sometimes - Rarely``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from .errors import Problems
from .source import clean_characters

#: The largest YAML block read (front matter or a question), in bytes.
MAX_YAML_BYTES = 256 * 1024
#: The deepest nesting of lists and mappings read (a survey needs four or five).
MAX_DEPTH = 32

_KEY_WITH_VALUE = re.compile(r"^\s*(?:-\s+)?[^\s:#'\"][^:#]*:\s+\S")
_TWO_COLONS = re.compile(r"^\s*(?:-\s+)?[^\s:#'\"][^:#]*:\s+[^'\"\s].*?:(?:\s|$)")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _line(lines: list[str], index: int) -> str:
    return lines[index] if 0 <= index < len(lines) else ""


def _previous(lines: list[str], index: int) -> int | None:
    """The index of the nearest non-blank, non-comment line above ``index``."""
    for above in range(index - 1, -1, -1):
        stripped = _line(lines, above).strip()
        if stripped and not stripped.startswith("#"):
            return above
    return None


def _quote_problem(text: str, number: int) -> str | None:
    """What is wrong with a quoted value on this line, if its value starts with a quote."""
    value = text.split(": ", 1)[1].strip() if ": " in text else text.strip().removeprefix("- ")
    if not value or value[0] not in "'\"":
        return None
    quote, index = value[0], 1
    while index < len(value):
        if quote == '"' and value[index] == "\\":
            index += 2
            continue
        if value[index] == quote:
            if quote == "'" and value[index + 1:index + 2] == "'":
                index += 2
                continue
            after = value[index + 1:].strip()
            if after and not after.startswith("#"):
                other = "'" if quote == '"' else '"'
                inner = '\\"' if quote == '"' else "''"
                return (f"on line {number} the quoted value ends at its second {quote} and text "
                        f"follows it: put the whole value in {other} quotes instead, or write "
                        f"the inner quotes as {inner}")
            return None
        index += 1
    return (f"line {number} opens a quote that is never closed: close it on the same line, or "
            "quote the whole value")


def explain(error: yaml.MarkedYAMLError, lines: list[str]) -> tuple[int, str]:
    """``(1-based line, message)`` for a YAML syntax error in ``lines`` (the text composed)."""
    problem = error.problem or error.context or "unreadable"
    said = f"YAML says: {problem}" + (f", {error.context}" if error.context and error.problem
                                      else "")
    mark = error.problem_mark or error.context_mark
    index = mark.line if mark is not None else 0
    context = error.context_mark.line if error.context_mark is not None else index
    text = _line(lines, index)

    def at(line_index: int, words: str) -> tuple[int, str]:
        return line_index + 1, f"{words} ({said})"

    if "'\\t'" in problem:
        return at(index, f"line {index + 1} is indented with a tab: YAML indents with spaces "
                         "only. Replace the tab with spaces")
    above = _previous(lines, index)
    deeper = above is not None and _indent(text) > _indent(_line(lines, above)) and \
        bool(_KEY_WITH_VALUE.match(_line(lines, above)))
    if deeper and ("mapping values are not allowed" in problem
                   or "expected <block end>" in problem):
        assert above is not None
        return at(index, f"check the indentation of line {index + 1}: it is indented deeper "
                         f"than line {above + 1} above it, so YAML reads it as the rest of "
                         f"that line's value. Indent it like line {above + 1}")
    if "mapping values are not allowed" in problem:
        if _TWO_COLONS.match(text):
            return at(index, f"line {index + 1} has a second ': ' in its value: put the value "
                             "in quotes (key: \"a: b\")")
        return at(index, f"check the indentation of line {index + 1}: YAML reads it as the "
                         "value of the line above it")
    if "could not find expected ':'" in problem:
        return at(context, f"check line {context + 1}: YAML expected 'key: value' or '- item' "
                           "there (a list item needs a space after its '-'; text that goes on "
                           "from the line above must be indented deeper than its key)")
    quoted = _quote_problem(text, index + 1)
    if "expected <block end>" in problem and quoted:
        return at(index, quoted)
    if "expected <block end>" in problem:
        return at(index, f"check the indentation of line {index + 1}: it lines up with none of "
                         "the lines above it (keys of one mapping, and items of one list, start "
                         "in the same column)")
    if "flow sequence" in (error.context or "") or "flow mapping" in (error.context or ""):
        return at(context, f"line {context + 1}: a value that starts with '[' or '{{' is read "
                           "as a list or mapping; put the text in quotes (title: \"[Draft] "
                           "A survey\")")
    if "quoted scalar" in (error.context or ""):
        return at(context, f"line {context + 1} opens a quote that is never closed: close it "
                           "on the same line, or quote the whole value")
    if "alias" in (error.context or "") or "anchor" in (error.context or ""):
        return at(index, f"line {index + 1}: a value that starts with '*' or '&' is read as a "
                         "YAML reference; put the text in quotes (title: \"*New* survey\")")
    if "cannot start any token" in problem:
        return at(index, f"line {index + 1}: a value cannot start with this character in YAML; "
                         "put the text in quotes")
    return at(index, f"YAML cannot read line {index + 1}: check the indentation of line "
                     f"{index + 1} and of the line above it")


def scalars(node: yaml.Node | None) -> Iterator[yaml.ScalarNode]:
    """Every scalar node under ``node``: mapping keys and values, list items, depth first."""
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                stack.extend((key, value))
        elif isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.ScalarNode):
            yield current


def joined_items(node: yaml.Node | None, lines: list[str]) -> list[tuple[int, str]]:
    """``(1-based line, message)`` for each list item YAML joined to the item above it.

    A plain (unquoted) value spread over several lines whose continuation line starts with
    ``- `` is a list item indented deeper than the one above it; YAML folds both into one
    string, ``"Sometimes - Rarely"``.
    """
    found: list[tuple[int, str]] = []
    for current in scalars(node):
        if current.style is not None:
            continue
        first, last = current.start_mark.line, current.end_mark.line
        for index in range(first + 1, last + 1):
            stripped = _line(lines, index).strip()
            if stripped == "-" or stripped.startswith("- "):
                start = _line(lines, first)
                found.append((index + 1, (
                    f"check the indentation of line {index + 1}: '{stripped}' is indented "
                    f"deeper than line {first + 1} ('{start.strip()}'), so YAML reads them "
                    f"as one value, {current.value!r}. Indent it like line {first + 1}")))
                break
    return sorted(found)


def bounded(text: str, problems: Problems, what: str) -> bool:
    """Whether YAML text is within the bounds (size, depth, no anchors or aliases).

    If not, the error with its line. Reads PyYAML's events, which are made without recursion,
    and stops at the first one out of bounds.
    """
    size = len(text.encode("utf-8"))
    if size > MAX_YAML_BYTES:
        first = next((i for i, line in enumerate(text.splitlines()) if line.strip()), 0)
        problems.error(first + 1, f"{what} is {size:,} bytes of YAML: at most "
                                  f"{MAX_YAML_BYTES:,}")
        return False
    depth = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            problems.error(line, f"line {line} of {what} is a YAML anchor or alias ('&' or '*' "
                                 "before a name), which survey files do not use; if it is text "
                                 "that starts with '*' or '&', put it in quotes "
                                 "(title: \"*New* survey\")")
            return False
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                problems.error(line, f"{what} nests lists and mappings more than {MAX_DEPTH} "
                                     f"deep at line {line}")
                return False
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1
    return True


def _clean_scalars(node: yaml.Node | None, problems: Problems, what: str) -> None:
    """Control characters in a text value are errors; bidirectional ones removed (a warning)."""
    for current in scalars(node):
        if isinstance(current.value, str):
            current.value = clean_characters(current.value, current.start_mark.line + 1,
                                             problems, f"a value of {what}")


def compose(text: str, problems: Problems, what: str) -> yaml.Node | None:
    """Compose YAML into nodes; a syntax error is recorded in plain words with the line to fix.

    The YAML must be within bounds first (:func:`bounded`). List items that YAML joins into one
    value (an item indented deeper than the one above it) are errors too; text values are
    checked for control and bidirectional characters.
    """
    lines = text.splitlines()
    try:
        if not bounded(text, problems, what):
            return None
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        line, message = explain(error, lines)
        problems.error(line, f"bad YAML in {what}: {message}")
        return None
    except yaml.YAMLError as error:  # pragma: no cover - PyYAML marks all its syntax errors
        problems.error(1, f"bad YAML in {what}: {error}")
        return None
    for line, message in joined_items(node, lines):
        problems.error(line, f"in {what}: {message}")
    _clean_scalars(node, problems, what)
    return node
