"""The manifest: contract shape, matrices equal to core's, epsilons, and the version hash."""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import zipfile
from pathlib import Path

import pytest

from rrsite.core import (
    KRR,
    ForcedResponse,
    ForcedYes,
    UnrelatedQuestion,
    Warner,
    design_from_spec,
    privacy_of,
)
from rrsite.core.frequency import oracle_from_spec
from rrsite.survey import load_survey
from rrsite.survey.bundle import build_core_zip, core_files, core_hash, core_zip

SURVEYS = Path(__file__).resolve().parents[2] / "surveys"
EXAMPLES = sorted(SURVEYS.glob("*.md"))


def manifest_of(name: str) -> dict:
    return load_survey(SURVEYS / f"{name}.md").manifest()


def question(manifest: dict, qid: str) -> dict:
    return next(q for q in manifest["questions"] if q["id"] == qid)


def as_lists(matrix) -> list[list[float]]:
    return [list(row) for row in matrix]


def test_the_five_examples_exist():
    names = {path.stem for path in EXAMPLES}
    assert {"honor-code", "cheating-partner", "drug-use", "undeclared-income",
            "workplace"} <= names


def test_honor_code_manifest_matches_the_contract():
    manifest = manifest_of("honor-code")
    assert list(manifest) == ["format", "id", "title", "language", "version", "core_hash",
                              "submit", "privacy", "questions"]
    assert manifest["format"] == 1
    assert manifest["id"] == "honor-code"
    assert re.fullmatch(r"[0-9a-f]{16}", manifest["version"])
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", manifest["core_hash"])
    assert manifest["submit"] == {"to": "collector", "url": "/api/submissions"}
    assert manifest["privacy"]["budget"] == pytest.approx(math.log(3))
    violated = question(manifest, "violated")
    assert violated["type"] == "yes-no" and violated["sensitive"] and violated["required"]
    assert violated["values"] == ["no", "yes"]
    assert violated["options"] == [{"value": "no", "label": "No"},
                                   {"value": "yes", "label": "Yes"}]
    assert violated["design"] == {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25}
    # Seed 003 by hand: P(yes | violated) = 3/4, P(yes | not) = 1/4.
    assert violated["matrix"] == [[0.75, 0.25], [0.25, 0.75]]
    assert violated["epsilon"] == pytest.approx(math.log(3), abs=1e-15)
    assert violated["delta"] == 0.0
    assert violated["text"] == "Have you ever violated the Honor Code?"
    year = question(manifest, "year")
    assert year == {"id": "year", "text": "Which year are you in?", "type": "choice",
                    "sensitive": False, "required": True,
                    "values": ["First", "Second", "Third", "Fourth or later"],
                    "options": [{"value": v, "label": v} for v in
                                ["First", "Second", "Third", "Fourth or later"]]}
    courses = question(manifest, "courses")
    assert (courses["min"], courses["max"], courses["integer"], courses["required"]) == (
        0, 12, True, False)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_matrix_equals_core_and_aligns_with_values(path):
    survey = load_survey(path)
    manifest = survey.manifest()
    json.dumps(manifest, allow_nan=False)  # strict JSON: no Infinity or NaN anywhere
    assert manifest == json.loads(json.dumps(manifest))
    for entry in manifest["questions"]:
        if not entry["sensitive"]:
            assert "design" not in entry and "matrix" not in entry
            continue
        if entry["type"] == "number":  # a number design: tests/survey/test_numbers_grammar.py
            assert "matrix" not in entry
            continue
        if "oracle" in entry:  # a frequency oracle: tests/survey/test_frequency_grammar.py
            assert "matrix" not in entry
            oracle = oracle_from_spec(entry["design"])
            assert entry["oracle"] == {"p": oracle.p, "q": oracle.q, "ratio": oracle.ratio}
            continue
        design = design_from_spec(entry["design"])
        if "groups" in entry:  # a two-group design: one matrix per group, no single one
            assert "matrix" not in entry
            matrices = [group["matrix"] for group in entry["groups"]]
            assert matrices == [as_lists(m) for m in design.group_matrices()]
            assert [group["id"] for group in entry["groups"]] == [1, 2]
            assert math.fsum(g["probability"] for g in entry["groups"]) == pytest.approx(1.0)
        else:
            assert entry["matrix"] == as_lists(design.matrix)
            matrices = [entry["matrix"]]
        k = len(entry["values"])  # rows: true answers; columns: reports (values unless named)
        columns = len(entry.get("reports") or entry["values"])
        for matrix in matrices:
            assert len(matrix) == k and all(len(row) == columns for row in matrix)
            assert all(math.fsum(row) == pytest.approx(1.0) for row in matrix)
        privacy = privacy_of(design)
        if "memoize" in entry:  # a panel: one wave's epsilon; the design's bounds all waves
            assert entry["memoize"]["epsilon_all_waves"] == pytest.approx(privacy.epsilon)
            assert entry["epsilon"] == pytest.approx(entry["memoize"]["ledger"][0])
            assert entry["epsilon"] < privacy.epsilon
        elif entry["epsilon"] is None:
            assert math.isinf(privacy.epsilon)
            assert entry["id"] in manifest["privacy"]["not_private"]
        elif entry["delta"] > 0:  # (epsilon, delta) as chosen: delta at that epsilon
            assert privacy_of(design, entry["epsilon"]).delta == pytest.approx(entry["delta"])
            assert privacy.epsilon > entry["epsilon"]
        else:
            assert entry["epsilon"] == pytest.approx(privacy.epsilon, rel=1e-12)


def test_spent_epsilon_stays_within_every_example_budget():
    for path in EXAMPLES:
        manifest = load_survey(path).manifest()
        finite = [q["epsilon"] for q in manifest["questions"]
                  if q["sensitive"] and q["epsilon"] is not None]
        assert manifest["privacy"]["spent"]["epsilon"] == pytest.approx(math.fsum(finite))
        assert manifest["privacy"]["spent"]["epsilon"] <= manifest["privacy"]["budget"] + 1e-9


def test_warner_and_unrelated_designs():
    manifest = manifest_of("cheating-partner")
    assert manifest["submit"] == {"to": "netlify", "form": "cheating-partner"}
    cheated = question(manifest, "cheated")
    assert cheated["design"] == {"name": "warner", "p": 0.75}
    assert cheated["matrix"] == as_lists(Warner(p=0.75).matrix)
    assert cheated["mirrored"] == "Have you *always* been faithful to your partner?"
    money = question(manifest, "money_lie")
    assert money["design"]["innocuous_rate"] == pytest.approx(181 / 365)
    expected = UnrelatedQuestion(p=2 / 3, innocuous_rate=181 / 365)
    assert money["matrix"] == as_lists(expected.matrix)
    # MATH.md section 2 by hand: p00 = p + (1-p)(1-pi_u), p11 = p + (1-p) pi_u.
    p, rate = 2 / 3, 181 / 365
    assert money["matrix"][0][0] == pytest.approx(p + (1 - p) * (1 - rate))
    assert money["matrix"][1][1] == pytest.approx(p + (1 - p) * rate)
    assert money["innocuous"].startswith("Is your birthday")


def test_forced_yes_has_no_epsilon_and_delta_one_half():
    manifest = manifest_of("drug-use")
    assert manifest["language"] == "es"
    mes = question(manifest, "mes")
    assert mes["epsilon"] is None
    assert mes["delta"] == 0.5
    assert mes["matrix"] == as_lists(ForcedYes(truth=0.5).matrix) == [[0.5, 0.5], [0.0, 1.0]]
    assert mes["not_private"] and "no" in mes["not_private"][0]
    assert manifest["privacy"]["not_private"] == ["mes"]
    assert question(manifest, "anio")["matrix"] == as_lists(ForcedResponse().matrix)
    assert [o["label"] for o in mes["options"]] == ["No", "Sí"]
    assert manifest["privacy"]["spent"]["epsilon"] == pytest.approx(math.log(3))


def test_k_rr_and_k_by_k_matrix():
    manifest = manifest_of("undeclared-income")
    assert manifest["submit"] == {"to": "endpoint",
                                  "url": "https://surveys.example.org/api/submissions"}
    undeclared = question(manifest, "undeclared")
    assert undeclared["values"] == ["none", "under-10", "10-50", "over-50"]
    assert undeclared["design"] == {"name": "k-rr", "k": 4, "p": pytest.approx(2 / 3)}
    assert undeclared["matrix"] == as_lists(KRR(4, p=2 / 3).matrix)
    # p / q = (2/3) / (1/9) = 6
    assert undeclared["epsilon"] == pytest.approx(math.log(6))
    cash = question(manifest, "cash_in_hand")
    assert cash["matrix"] == [[0.7, 0.2, 0.1], [0.15, 0.7, 0.15], [0.1, 0.2, 0.7]]
    # largest column ratio: 0.7 / 0.1 = 7
    assert cash["epsilon"] == pytest.approx(math.log(7))
    under = question(manifest, "underreported")
    assert under["matrix"] == [[0.8, pytest.approx(0.2)], [pytest.approx(0.3), 0.7]]
    assert under["epsilon"] == pytest.approx(math.log(3.5))


def test_epsilon_only_questions_get_the_optimal_design():
    manifest = manifest_of("workplace")
    sick = question(manifest, "sick")
    # delta = 0: p00 = p11 = e^eps / (1 + e^eps) (MATH.md section 4), computed here by hand.
    p = math.e / (1 + math.e)
    assert sick["design"]["name"] == "matrix"
    assert sick["matrix"][0][0] == pytest.approx(p) and sick["matrix"][1][1] == pytest.approx(p)
    assert sick["epsilon"] == pytest.approx(1.0) and sick["delta"] == 0.0
    assert sick["chosen_for"] == {"epsilon": 1.0, "delta": 0.0, "prior": 0.5, "vertex": "S"}
    credit = question(manifest, "credit")
    e = math.exp(1.5)
    # With delta = 0.01 and prior 0.2 (front matter priors), g < 0.2 < 1 - g: vertex S.
    g = 0.01 * (e + 0.01) / (e - 1 + 0.02) ** 2
    assert g < 0.2 < 1 - g
    assert credit["matrix"][0][0] == pytest.approx((e + 0.01) / (1 + e))
    assert credit["epsilon"] == 1.5 and credit["delta"] == pytest.approx(0.01)
    assert credit["prior"] == 0.2
    witnessed = question(manifest, "witnessed")
    assert witnessed["matrix"] == sick["matrix"]  # privacy.epsilon = 1 is its default
    private_time = question(manifest, "private_time")
    assert private_time["design"]["name"] == "k-rr"
    assert private_time["matrix"][0][0] == pytest.approx(math.e / (math.e + 2))
    assert private_time["epsilon"] == pytest.approx(1.0)


def test_optimal_design_with_delta_at_a_low_prior_is_vertex_a(load, valid):
    text = valid.replace("randomize: forced-response\ntruth: 1/2",
                         "epsilon: 0.5\ndelta: 0.1\nprior: 0.01")
    entry = load(text).manifest()["questions"][0]
    # g(0.5, 0.1) by hand; prior 0.01 < g gives design A: p00 = 1, p11 = delta.
    e = math.exp(0.5)
    assert 0.01 < 0.1 * (e + 0.1) / (e - 1 + 0.2) ** 2
    assert entry["matrix"] == [[1.0, 0.0], [pytest.approx(0.9), pytest.approx(0.1)]]
    assert entry["epsilon"] == 0.5 and entry["delta"] == pytest.approx(0.1)
    assert entry["chosen_for"]["vertex"] == "A"


# ---- the version hash -------------------------------------------------------------------------


def version_of(load, text: str) -> str:
    return load(text).version


def test_version_changes_with_meaning_not_with_prose(load, valid):
    base = version_of(load, valid)
    prose_changes = [
        valid.replace("Intro prose.", "Completely different intro."),
        valid.replace("## Have you ever done it?", "## Have you *ever* done **it**?"),
        valid.replace("Help for the first question.", "Other help."),
        valid.replace("title: Test survey", "title: Renamed"),
        valid.replace("Outro prose.", ""),
        valid.replace("truth: 1/2", "truth: 0.5"),  # same number written differently
        valid.replace("[First, Second, Third]",
                      "[{value: First, label: '*1st*'}, Second, Third]"),
        valid.replace("budget: 3.0", "budget: 4.0"),
        valid.replace("submit:\n  to: collector", "submit:\n  to: download"),
    ]
    for changed in prose_changes:
        assert version_of(load, changed) == base, changed
    meaning_changes = [
        valid.replace("truth: 1/2", "truth: 0.6"),
        valid.replace("truth: 1/2", "truth: 1/2\nyes: 0.3"),
        valid.replace("randomize: forced-response\ntruth: 1/2", "randomize: warner\np: 0.75"),
        valid.replace("[First, Second, Third]", "[First, Second, Third, Fourth]"),
        valid.replace("[First, Second, Third]", "[Second, First, Third]"),
        valid.replace("options: [First, Second, Third]",
                      "options: [First, Second, Third]\nrequired: true"),
        valid.replace("id: did", "id: done"),
        valid.replace("id: test-survey", "id: other-survey"),
        valid.replace("type: choice", "type: multi-choice"),
    ]
    versions = {version_of(load, changed) for changed in meaning_changes}
    assert base not in versions
    assert len(versions) == len(meaning_changes)


def test_version_is_sha256_of_the_canonical_meaning(load, valid):
    survey = load(valid)
    meaning = {"id": survey.id, "questions": [
        {"id": q.id, "type": q.type, "sensitive": q.sensitive, "values": q.values,
         "design": q.design.spec() if q.design else None,
         "matrix": [list(r) for r in q.design.matrix] if q.design else None,
         "required": q.required, "min": q.minimum, "max": q.maximum}
        for q in survey.questions]}
    canonical = json.dumps(meaning, sort_keys=True, separators=(",", ":"))
    assert survey.version == hashlib.sha256(canonical.encode()).hexdigest()[:16]


def test_number_range_is_part_of_the_version(load, valid):
    number = valid.replace("type: choice\noptions: [First, Second, Third]",
                           "type: number\nmin: 0\nmax: 10")
    assert version_of(load, number) != version_of(load, number.replace("max: 10", "max: 11"))


# ---- the core bundle --------------------------------------------------------------------------


def test_core_bundle_is_deterministic_and_holds_only_core():
    data = core_zip()
    assert core_hash() == "sha256:" + hashlib.sha256(data).hexdigest()
    assert build_core_zip(core_files()) == data
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        names = archive.namelist()
        assert names[0] == "rrsite/__init__.py"
        assert archive.read("rrsite/__init__.py") == b""
        assert all(re.fullmatch(r"rrsite/core/([a-z_]+/)?[a-z_]+\.py", n) for n in names[1:])
        assert "rrsite/core/designs.py" in names and "rrsite/core/respond.py" in names
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in archive.infolist())
    core_dir = Path(__file__).resolve().parents[2] / "rrsite" / "core"
    assert len(names) - 1 == len(list(core_dir.rglob("*.py")))
    assert "rrsite/core/numbers/__init__.py" in names  # the subpackages too


def test_core_hash_changes_with_core_content():
    files = core_files()
    changed = [(name, data + b"\n# changed\n" if name.endswith("designs.py") else data)
               for name, data in files]
    assert build_core_zip(changed) != build_core_zip(files)
