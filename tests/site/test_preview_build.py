"""`rrsite preview`'s build: the reload script and collector target exist only there."""

from __future__ import annotations

import json
from pathlib import Path

from rrsite.site.builder import build, default_pyodide, default_templates
from rrsite.site.preview import PREVIEW_PREFIX, preview_build, sources_signature

ROOT = Path(__file__).resolve().parents[2]
SURVEYS = [ROOT / "surveys" / "cheating-partner.md", ROOT / "surveys" / "undeclared-income.md"]


def every_text(dist: Path) -> str:
    return "\n".join(path.read_bytes().decode("utf-8", "replace")
                     for path in sorted(dist.rglob("*")) if path.is_file()
                     and path.suffix in (".html", ".js", ".json", ".css", ""))


def test_rrsite_build_output_has_no_preview_script(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    build(SURVEYS, dist, compress=False, cache=False)
    assert PREVIEW_PREFIX not in every_text(dist)
    assert json.loads((dist / "cheating-partner" / "survey.json").read_text())["submit"]["to"] \
        == "netlify"


def test_preview_build_adds_the_script_and_sends_every_target_to_the_collector(
        tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    preview_build(SURVEYS, dist, default_templates(), default_pyodide(), 7)
    for survey in ("cheating-partner", "undeclared-income"):
        html = (dist / survey / "index.html").read_text(encoding="utf-8")
        assert html.count(f'src="{PREVIEW_PREFIX}/reload.js?build=7"') == 1
        manifest = json.loads((dist / survey / "survey.json").read_text())
        assert manifest["submit"] == {"to": "collector", "url": "/api/submissions"}
        assert '"to":"collector"' in html
    # Same survey versions as the real build: submissions in preview validate like the real ones.
    real = tmp_path / "real"
    build(SURVEYS, real, compress=False, cache=False)
    for survey in ("cheating-partner", "undeclared-income"):
        versions = [json.loads((root / survey / "survey.json").read_text())["version"]
                    for root in (dist, real)]
        assert versions[0] == versions[1]


def test_preview_watches_a_survey_s_own_catalog(tmp_path: Path) -> None:
    """Saving `messages: xx.json` beside a survey rebuilds the preview."""
    survey = tmp_path / "s.md"
    survey.write_text("---\nid: s\n---\n", encoding="utf-8")
    catalog = tmp_path / "sw.json"
    catalog.write_text("{}", encoding="utf-8")
    before = sources_signature([tmp_path], default_templates())
    catalog.write_text('{"submit": "Tuma"}', encoding="utf-8")
    assert sources_signature([tmp_path], default_templates()) != before
