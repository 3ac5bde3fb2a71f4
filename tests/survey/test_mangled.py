"""Property: a mangled survey ends in a built site or in file:line errors, never a traceback."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rrsite.errors import RRSiteError
from rrsite.site.builder import build
from rrsite.survey import SurveyErrors, load_survey

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "site" / "fixtures"
SEEDS = [path.read_text("utf-8") for path in sorted((ROOT / "surveys").glob("*.md"))]
SPECIAL = ["\t", ":", "-", "#", "`", "```", "---", "[", "]", "{", "}", "'", '"', "&", "*", "!",
           "|", ">", "\x00", "\u2028", "é", "1/0", "ln(", "~~~", "##", "\r"]

OPERATIONS = ("delete", "duplicate", "swap", "insert", "indent", "dedent", "truncate", "bytes",
              "tab")


@st.composite
def mangled(draw: st.DrawFn) -> bytes:
    lines = draw(st.sampled_from(SEEDS)).split("\n")
    for _ in range(draw(st.integers(1, 4))):
        operation = draw(st.sampled_from(OPERATIONS))
        if not lines:
            lines = [""]
        index = draw(st.integers(0, len(lines) - 1))
        if operation == "delete":
            del lines[index]
        elif operation == "duplicate":
            lines.insert(index, lines[index])
        elif operation == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[index], lines[other] = lines[other], lines[index]
        elif operation == "insert":
            noise = draw(st.one_of(
                st.sampled_from(SPECIAL),
                st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6),
            ))
            position = draw(st.integers(0, len(lines[index])))
            lines[index] = lines[index][:position] + noise + lines[index][position:]
        elif operation == "indent":
            lines[index] = " " * draw(st.integers(1, 4)) + lines[index]
        elif operation == "dedent":
            lines[index] = lines[index].lstrip()
        elif operation == "tab":
            lines[index] = "\t" + lines[index]
        elif operation == "truncate":
            text = "\n".join(lines)
            lines = text[: draw(st.integers(0, len(text)))].split("\n")
        elif operation == "bytes":
            data = "\n".join(lines).encode("utf-8")
            position = draw(st.integers(0, len(data)))
            junk = draw(st.binary(min_size=1, max_size=3))
            return data[:position] + junk + data[position:]
    return "\n".join(lines).encode("utf-8")


@pytest.mark.slow
@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mangled())
def test_mangled_survey_builds_or_reports_file_line_errors(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mangled.md"
        path.write_bytes(data)
        dist = Path(folder) / "dist"
        try:
            load_survey(path)
            build([path], dist, FIXTURES / "templates", FIXTURES / "pyodide", compress=False)
        except SurveyErrors as failure:
            event("refused")
            assert failure.errors
            last_line = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").count(b"\n") + 1
            for error in failure.errors:
                text = str(error)
                assert re.match(rf"^{re.escape(str(path))}:\d+: \S", text), text
                assert 1 <= error.line <= last_line, text
            return
        except RRSiteError as other:  # pragma: no cover - shows what went wrong
            raise AssertionError(f"an RRSiteError without file:line: {other}") from other
        event("built")
        assert (dist / "_headers").is_file()
        built = [p for p in dist.iterdir() if (p / "index.html").is_file()]
        assert len(built) == 1 and (built[0] / "survey.json").is_file()


def test_every_seed_builds_unchanged(tmp_path: Path) -> None:
    """The property above starts from files that build; a mangling is what makes them fail."""
    for number, seed in enumerate(SEEDS):
        path = tmp_path / f"seed{number}.md"
        path.write_text(seed, "utf-8")
        build([path], tmp_path / f"dist{number}", FIXTURES / "templates", FIXTURES / "pyodide",
              compress=False)
