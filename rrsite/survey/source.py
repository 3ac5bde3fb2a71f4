"""Split a survey file into its parts, keeping line numbers: front matter, prose, headings, blocks.

Python-Markdown's block processors never see source lines, so the question headings and blocks are
found here, line by line, before any prose reaches Markdown. The rules follow CommonMark where it
matters: fences of three or more backticks or tildes (up to three spaces of indent) hide whatever
they contain, so a ``##`` inside a code sample is not a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import Problems

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
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        line = before.count(b"\n") + 1
        problems.error(line, f"the file is not UTF-8 text (byte 0x{data[error.start]:02x} here); "
                             "save it as UTF-8")
        return None
    return text.removeprefix("\ufeff")


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
        page_break = _PAGE_BREAK.match(line)
        if page_break:
            if prose.lines:
                parts.append(prose)
            parts.append(PageBreak(index + 1, (page_break.group(1) or "").strip()))
            prose = Prose(index + 2)
            index += 1
            continue
        heading = _HEADING2.match(line)
        if heading:
            if prose.lines:
                parts.append(prose)
            parts.append(Heading(index + 1, (heading.group(1) or "").strip()))
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
