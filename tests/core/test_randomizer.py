"""The randomizer: report frequencies against the matrix, transcripts, the random source."""

import json
import random

import pytest

from rrsite.core import (
    KRR,
    BinaryMatrix,
    CategoricalMatrix,
    DesignError,
    ForcedResponse,
    ForcedYes,
    UnrelatedQuestion,
    Warner,
    respond,
    respond_json,
    secure_random,
)
from rrsite.core.designs import draw

from .stats import chi_square_p_value

DRAWS_PER_DESIGN = 100_000

DESIGNS = [
    ForcedResponse(),
    ForcedResponse(truth=1 / 6),
    ForcedResponse(truth=0.6, yes=0.3, no=0.1),
    ForcedResponse(truth=0.7071, yes=0.2, no=0.0929),  # irrational-looking: spinner
    ForcedYes(),
    Warner(p=0.7),
    UnrelatedQuestion(p=0.6, innocuous_rate=0.25),
    BinaryMatrix(1.0, 0.1),
    CategoricalMatrix(((0.6, 0.3, 0.1), (0.1, 0.6, 0.3), (0.3, 0.1, 0.6))),
    KRR(4, epsilon=1.0),
    KRR(3, p=0.5),
]


@pytest.mark.slow
@pytest.mark.parametrize("design", DESIGNS, ids=repr)
def test_report_frequencies_follow_the_matrix(design):
    rng = random.Random(20261122)
    per_row = DRAWS_PER_DESIGN // design.k
    for truth in range(design.k):
        counts = [0] * design.k
        for _ in range(per_row):
            counts[design.randomize(truth, rng).report] += 1
        p_value = chi_square_p_value(counts, list(design.matrix[truth]))
        assert p_value > 1e-6, (design, truth, counts, p_value)


@pytest.mark.slow
def test_a_wrong_matrix_is_detected_at_this_sample_size():
    # the fair two-coin design must not pass as a design with P(yes | yes) = 0.76 (a 1% error)
    rng = random.Random(7)
    counts = [0, 0]
    for _ in range(DRAWS_PER_DESIGN):
        counts[ForcedResponse().randomize(1, rng).report] += 1
    assert chi_square_p_value(counts, [0.24, 0.76]) < 1e-3


def test_default_source_is_the_operating_systems_csprng(monkeypatch):
    assert isinstance(secure_random(), random.SystemRandom)
    calls = []
    real = random._urandom  # what SystemRandom draws from: os.urandom

    def counting(n):
        calls.append(n)
        return real(n)

    monkeypatch.setattr(random, "_urandom", counting)
    state = random.getstate()
    ForcedResponse().randomize(1)
    KRR(5, epsilon=1.0).randomize(2)
    assert calls, "the default source must draw from os.urandom"
    assert random.getstate() == state, "the module's Mersenne Twister must not be used"


def test_default_source_frequencies():
    counts = [0, 0]
    design = ForcedResponse()
    for _ in range(20_000):
        counts[design.randomize(0).report] += 1
    assert chi_square_p_value(counts, list(design.matrix[0])) > 1e-6


def test_injected_source_makes_it_reproducible():
    for design in DESIGNS:
        first = [design.randomize(0, random.Random(5)) for _ in range(3)]
        again = [design.randomize(0, random.Random(5)) for _ in range(3)]
        assert first == again


def test_two_coin_transcript_explains_the_report():
    rng = random.Random(3)
    seen = set()
    for _ in range(200):
        truth = rng.randrange(2)
        outcome = ForcedResponse().randomize(truth, rng)
        first = outcome.steps[0]
        assert first.device == "coin" and first.faces == 2
        assert first.action == ("truth" if first.outcome == "heads" else "forced")
        if first.action == "truth":
            assert len(outcome.steps) == 1 and outcome.report == truth
        else:
            second = outcome.steps[1]
            assert second.device == "coin"
            assert second.action == ("yes" if second.outcome == "heads" else "no")
            assert outcome.report == (1 if second.action == "yes" else 0)
        seen.add(tuple(step.outcome for step in outcome.steps))
    assert seen == {("heads",), ("tails", "heads"), ("tails", "tails")}


def test_die_and_spinner_transcripts():
    rng = random.Random(11)
    die = ForcedResponse(truth=1 / 6).randomize(1, rng).steps[0]
    assert die.device == "die" and die.faces == 6 and 1 <= int(die.outcome) <= 6
    assert die.action == ("truth" if die.outcome == "1" else "forced")
    spinner = ForcedResponse(truth=0.7071, yes=0.2, no=0.0929).randomize(1, rng).steps[0]
    assert spinner.device == "spinner"
    assert 0 <= float(spinner.outcome) < 1
    assert spinner.action == ("truth" if float(spinner.outcome) < 0.7071 else "forced")


def test_warner_transcript():
    rng = random.Random(2)
    for truth in (0, 1):
        for _ in range(50):
            outcome = Warner(p=0.7).randomize(truth, rng)
            expected = truth if outcome.steps[0].action == "statement" else 1 - truth
            assert outcome.report == expected


def test_unrelated_question_uses_the_respondents_innocuous_answer():
    rng = random.Random(4)
    design = UnrelatedQuestion(p=0.5, innocuous_rate=0.1)
    for _ in range(200):
        outcome = design.randomize(0, rng, innocuous=1)
        if outcome.steps[0].action == "sensitive":
            assert outcome.report == 0
        else:
            assert outcome.report == 1 and len(outcome.steps) == 1


def test_draw_uses_the_smallest_fair_die():
    rng = random.Random(1)
    assert draw(("a", "b"), (0.5, 0.5), rng)[1].faces == 2
    assert draw(("a", "b", "c"), (1 / 3, 1 / 4, 5 / 12), rng)[1].faces == 12
    assert draw(("a", "b"), (0.1234567, 0.8765433), rng)[1].device == "spinner"


def test_bad_truth_is_refused():
    with pytest.raises(DesignError, match="0..1"):
        ForcedResponse().randomize(2)
    with pytest.raises(TypeError):
        ForcedResponse().randomize("yes")  # type: ignore[arg-type]


QUESTION = {
    "id": "violated",
    "values": ["no", "yes"],
    "design": {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
}


def test_respond_returns_only_the_report_and_the_steps():
    result = respond(QUESTION, "yes", rng=random.Random(9))
    assert set(result) == {"report", "steps"}
    assert result["report"] in ("yes", "no")
    json.dumps(result)
    out = json.loads(respond_json(json.dumps(QUESTION), "no"))
    assert out["report"] in ("yes", "no")


@pytest.mark.slow
def test_respond_frequencies_for_a_choice_question():
    question = {
        "id": "drug",
        "values": ["none", "cannabis", "other"],
        "design": {"name": "k-rr", "k": 3, "epsilon": 1.0},
    }
    design = KRR(3, epsilon=1.0)
    rng = random.Random(12)
    counts = {"none": 0, "cannabis": 0, "other": 0}
    for _ in range(30_000):
        counts[respond(question, "cannabis", rng=rng)["report"]] += 1
    assert chi_square_p_value(list(counts.values()), list(design.matrix[1])) > 1e-6


def test_respond_refuses_unknown_answers():
    with pytest.raises(DesignError, match="not one of"):
        respond(QUESTION, "maybe")
    with pytest.raises(DesignError, match="2 values"):
        respond({**QUESTION, "design": {"name": "k-rr", "k": 3, "p": 0.5}}, "yes")
