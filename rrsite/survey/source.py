"""Split a survey file into its parts, keeping line numbers: front matter, prose, headings, blocks.

Python-Markdown's block processors never see source lines, so the question headings and blocks are
found here, line by line, before any prose reaches Markdown. The rules follow CommonMark where it
matters: fences of three or more backticks or tildes (up to three spaces of indent) hide whatever
they contain, so a ``##`` inside a code sample is not a question.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from .errors import Problems

#: The largest survey file read (bytes): far beyond any survey, short of a file that would stall
#: the build.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: Control characters refused in a survey's text: C0 and C1 controls other than tab and line
#: breaks, and DEL (a NUL or an ESC in a title reaches the page and the manifest).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Bidirectional embeddings, overrides and isolates: removed, with a warning. They make text show
#: in an order other than the one it is written in (a question that reads differently from what
#: it says); the page sets the direction of its text from the survey's language. The marks that
#: right-to-left text needs (U+200E, U+200F, U+061C) are kept.
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
#: Either (a message catalog refuses both).
UNWANTED = re.compile(f"{_CONTROL.pattern}|{_BIDI.pattern}")

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_HEADING2 = re.compile(r"^ {0,3}##(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
#: A page break: a line ``+++``, optionally followed by the next page's title.
_PAGE_BREAK = re.compile(r"^ {0,3}\+\+\+(?:[ \t]+(.*?))?[ \t]*$")
_FRONT_OPEN = "---"
_FRONT_CLOSE = ("---", "...")


@dataclass
class Prose:
    """Markdown text between the structural parts (may be only blank lines)."""

    line: int
    lines: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The Markdown source."""
        return "\n".join(self.lines).strip("\n")


@dataclass
class Heading:
    """A level-2 heading: the text of one question."""

    line: int
    text: str


@dataclass
class QuestionBlock:
    """A ```` ```question ```` fence: its YAML, with the lines before it kept blank for marks."""

    line: int
    body: list[str]
    closed: bool = True

    @property
    def yaml_text(self) -> str:
        """The YAML padded with empty lines so that PyYAML's marks are file line numbers."""
        return yaml_lines([""] * self.line + self.body)


@dataclass
class PageBreak:
    """A line ``+++ [title]``: the questions after it are on a new page."""

    line: int
    title: str


Part = Prose | Heading | QuestionBlock | PageBreak

#: Characters YAML counts as line breaks that Markdown and this module do not.
_YAML_ONLY_BREAKS = str.maketrans({"\x85": " ", "\u2028": " ", "\u2029": " "})


def yaml_lines(lines: list[str]) -> str:
    """YAML text whose line numbers are the file's (no extra line breaks for YAML to count)."""
    return "\n".join(lines).translate(_YAML_ONLY_BREAKS) + "\n"


@dataclass
class Source:
    """A survey file cut into front matter and body parts."""

    front_line: int
    front_yaml: str | None
    parts: list[Part]
    last_line: int


def read_text(data: bytes, problems: Problems) -> str | None:
    """Decode UTF-8 (a BOM is dropped); report the line of the first bad byte."""
    if len(data) > MAX_FILE_BYTES:
        problems.error(1, f"the file is {len(data):,} bytes: a survey file may be at most "
                          f"{MAX_FILE_BYTES:,}")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        line = before.count(b"\n") + 1
        problems.error(line, f"the file is not UTF-8 text (byte 0x{data[error.start]:02x} here); "
                             "save it as UTF-8")
        return None
    return text.removeprefix("\ufeff")


def describe(character: str) -> str:
    """``U+202E (RIGHT-TO-LEFT OVERRIDE)``; a control character by its code alone."""
    name = unicodedata.name(character, "")
    return f"U+{ord(character):04X}" + (f" ({name})" if name else "")


def clean_characters(text: str, line: int, problems: Problems, what: str = "the text") -> str:
    """`text` without its control and bidirectional characters (errors and warnings).

    Each control character is an error, each removal of a bidirectional one a warning.

    `line`: the file line of the text's first line; `what` names the text in the messages.
    """
    if not (_CONTROL.search(text) or _BIDI.search(text)):
        return text
    for offset, content in enumerate(text.split("\n")):
        control = _CONTROL.search(content)
        if control:
            problems.error(line + offset, f"a control character, {describe(control.group())}, "
                                          f"in {what}: remove it (it has no place in a survey)")
        found = sorted(set(_BIDI.findall(content)))
        if found:
            problems.warn(line + offset, f"removed {', '.join(describe(c) for c in found)} from "
                                         f"{what}: bidirectional controls can show text in an "
                                         "order other than the one it is written in; the page "
                                         "sets the text's direction from the survey's language")
    return _CONTROL.sub("", _BIDI.sub("", text))  # reported once: later readers see neither


def split(text: str, problems: Problems) -> Source:
    """Find the front matter, question headings and question blocks; record structural problems."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    problems.last_line = len(lines)
    front_yaml: str | None = None
    start = 0
    if lines and lines[0].rstrip() == _FRONT_OPEN:
        for index in range(1, len(lines)):
            if lines[index].rstrip() in _FRONT_CLOSE:
                front_yaml = yaml_lines(["", *lines[1:index]])
                start = index + 1
                break
        else:
            problems.error(1, "the front matter opened on line 1 is never closed: add a line '---' "
                              "after it")
            return Source(1, None, [], len(lines))
    else:
        problems.error(1, "missing front matter: the file must start with a line '---', then "
                          "id, title, language, privacy and submit in YAML, then '---'")
    parts: list[Part] = []
    prose = Prose(start + 1)
    index = start
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence and not (fence.group(2)[0] == "`" and "`" in fence.group(3)):
            marker, info = fence.group(2), fence.group(3).strip()
            end = _closing_fence(lines, index + 1, marker)
            if info == "question":
                if prose.lines:
                    parts.append(prose)
                opener = _next_question_fence(lines, index + 1, end)
                if opener is not None:  # never closed: the next question's fence comes first
                    following = _question_start(lines, index + 1, opener)
                    parts.append(QuestionBlock(index + 1, lines[index + 1 : following],
                                               closed=False))
                    problems.error(index + 1, f"the question block opened here is never closed: "
                                              f"add a line '{marker}' after its YAML, before "
                                              f"the next question on line {following + 1} (line "
                                              f"{opener + 1} opens another ```question block)")
                    index = following
                    prose = Prose(index + 1)
                    continue
                body = lines[index + 1 : end] if end is not None else lines[index + 1 :]
                parts.append(QuestionBlock(index + 1, body, closed=end is not None))
                if end is None:
                    problems.error(index + 1, f"the question block opened here is never closed: "
                                              f"add a line '{marker}' after its YAML")
                    return Source(1, front_yaml, parts, len(lines))
                index = end + 1
                prose = Prose(index + 1)
                continue
            stop = len(lines) if end is None else end + 1
            prose.lines.extend(lines[index:stop])
            index = stop
            continue
        # a page break or a heading ends the prose above it
        kind: type[PageBreak | Heading] = PageBreak
        match = _PAGE_BREAK.match(line)
        if match is None:
            kind, match = Heading, _HEADING2.match(line)
        if match:
            if prose.lines:
                parts.append(prose)
            parts.append(kind(index + 1, (match.group(1) or "").strip()))
            prose = Prose(index + 2)
        else:
            prose.lines.append(line)
        index += 1
    if prose.lines:
        parts.append(prose)
    return Source(1, front_yaml, parts, len(lines))


def _next_question_fence(lines: list[str], start: int, end: int | None) -> int | None:
    """Index of a line opening another ```question block before ``end``, or None.

    Such a line at the margin cannot be YAML, so the block above it was never closed.
    """
    for index in range(start, len(lines) if end is None else end):
        fence = _FENCE.match(lines[index])
        if fence and not fence.group(1) and fence.group(3).strip() == "question":
            return index
    return None


def _question_start(lines: list[str], start: int, opener: int) -> int:
    """Where the question of the block opened at ``opener`` starts.

    Its heading, if one lies between ``start`` and ``opener``, else the block itself.
    """
    for index in range(opener - 1, start - 1, -1):
        if _HEADING2.match(lines[index]):
            return index
    return opener


def _closing_fence(lines: list[str], start: int, marker: str) -> int | None:
    """Index of the line closing a fence opened with ``marker``, or None if it runs to the end."""
    for index in range(start, len(lines)):
        candidate = lines[index].strip()
        if (
            len(lines[index]) - len(lines[index].lstrip(" ")) <= 3
            and candidate
            and set(candidate) == {marker[0]}
            and len(candidate) >= len(marker)
        ):
            return index
    return None
