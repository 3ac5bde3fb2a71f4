"""RRreg's misclassification matrices against the closed forms of MATH.md section 7."""

from __future__ import annotations

import numpy as np
import pytest

from rrsite.estimate.models import MODEL_NAMES, Design, from_manifest


def yes_rates(
    design: Design, group: int = 1, theta: list[float] | None = None
) -> tuple[float, float]:
    pw = design.pw(group, theta)
    return float(pw[1, 1]), float(pw[1, 0])  # P(report 1 | state 1), P(report 1 | state 0)


def test_binary_models_match_math_table() -> None:
    assert yes_rates(Design("Warner", 0.7)) == pytest.approx((0.7, 0.3))
    expected = (0.6 + 0.4 * 0.25, 0.4 * 0.25)
    assert yes_rates(Design("UQTknown", [0.6, 0.25])) == pytest.approx(expected)
    assert yes_rates(Design("Mangat", 0.8)) == pytest.approx((1.0, 0.2))
    assert yes_rates(Design("Crosswise", 0.2)) == pytest.approx((0.2, 0.8))
    assert yes_rates(Design("Triangular", 0.3)) == pytest.approx((1.0, 0.3))
    uqt = Design("UQTunknown", [0.7, 0.3])
    assert yes_rates(uqt, 2, [0.1, 0.4]) == pytest.approx((0.3 + 0.7 * 0.4, 0.7 * 0.4))
    sld = Design("SLD", [0.2, 0.8])
    assert yes_rates(sld, 1, [0.1, 0.9]) == pytest.approx((0.9, 0.8))
    assert yes_rates(sld, 2, [0.1, 0.9]) == pytest.approx((0.9, 0.2))


def test_kuk_is_binomial_in_red_cards() -> None:
    design = Design("Kuk", [0.7, 0.3], kukrep=3)
    pw = design.pw()
    assert pw.shape == (4, 2)
    # carriers (state 1) draw from deck p1 = 0.7: P(2 red of 3) = 3 * .49 * .3
    assert pw[2, 1] == pytest.approx(3 * 0.7**2 * 0.3)
    assert pw[0, 0] == pytest.approx(0.7**3)
    assert design.reports == ("0", "1", "2", "3")


def test_fr_and_cdm_columns() -> None:
    fr = Design("FR", [0.1, 0.15, 0.05])
    pw = fr.pw()
    assert pw[:, 0] == pytest.approx([0.7 + 0.1, 0.15, 0.05])
    assert pw[:, 2] == pytest.approx([0.1, 0.15, 0.7 + 0.05])
    cdm = Design("CDM", [0.3, 0.7])
    assert cdm.pw(2) == pytest.approx(np.array([[0.0, 0.3, 1.0], [1.0, 0.7, 0.0]]))
    sym = Design("CDMsym", [0.2, 0.1, 0.6, 0.3])  # y1 n1 y2 n2
    assert sym.pw(2) == pytest.approx(np.array([[0.3, 0.4, 1.0], [0.7, 0.6, 0.0]]))
    assert cdm.state_shares([0.2, 0.5]) == pytest.approx([0.2, 0.5, 0.3])


@pytest.mark.parametrize("model", MODEL_NAMES)
def test_columns_are_distributions(model: str) -> None:
    p = {"Warner": 0.7, "UQTknown": [0.7, 0.2], "UQTunknown": [0.7, 0.3], "Mangat": 0.6,
         "Kuk": [0.6, 0.2], "FR": [0.1, 0.2], "Crosswise": 0.2, "Triangular": 0.3,
         "CDM": [0.3, 0.6], "CDMsym": [0.2, 0.1, 0.5, 0.2], "SLD": [0.3, 0.7],
         "custom": [[0.8, 0.2, 0.1], [0.1, 0.7, 0.2], [0.1, 0.1, 0.7]]}[model]
    design = Design(model, p, kukrep=2)
    theta = [0.2] * len(design.parameters)
    for group in design.groups:
        pw = design.pw(group, theta)
        assert pw.shape == (len(design.reports), len(design.states))
        assert pw.sum(axis=0) == pytest.approx(np.ones(len(design.states)))
        assert design.report_probabilities(theta, group).sum() == pytest.approx(1.0)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="SLD needs p of length 2"):
        Design("SLD", 0.3)
    with pytest.raises(ValueError, match="unknown RRreg model"):
        Design("Warnr", 0.3)
    with pytest.raises(ValueError, match="sum"):
        Design("FR", [0.5, 0.6])
    with pytest.raises(ValueError, match="group"):
        Design("Warner", 0.7).pw(2)
    assert from_manifest({"model": "Kuk", "p": [0.6, 0.2], "Kukrep": 4}).reports[-1] == "4"
