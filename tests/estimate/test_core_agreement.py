"""rrsite.core's RRreg designs (branch designs) and rrsite.estimate.models agree on every matrix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rrsite.core import design_from_spec, privacy_of
from rrsite.estimate.models import from_manifest
from rrsite.estimate.planning import device_matrices, epsilon_of

ONE_GROUP = [
    {"name": "crosswise", "p": 0.25},
    {"name": "triangular", "p": 0.3},
    {"name": "mangat", "p": 0.6},
    {"name": "kuk", "red_yes": 0.6, "red_no": 0.2, "cards": 2},
    {"name": "forced-response", "truth": 0.5, "yes": 0.25, "no": 0.25},
    {"name": "warner", "p": 0.7},
]
TWO_GROUP = [
    {"name": "sld", "p": [0.3, 0.75], "probability": 0.4},
    {"name": "cdm", "p": [0.3, 0.7]},
    {"name": "cdm-sym", "yes": [0.2, 0.5], "no": [0.1, 0.2]},
    {"name": "unrelated-unknown", "p": [0.7, 0.3], "innocuous_rate": 0.4},
]


@pytest.mark.parametrize("spec", ONE_GROUP, ids=lambda s: s["name"])
def test_one_group_matrix_is_pw_transposed(spec: dict) -> None:
    core = design_from_spec(spec)
    design = from_manifest(core.rrreg())
    assert np.asarray(core.matrix) == pytest.approx(design.pw().T)
    expected = privacy_of(core).epsilon
    mine = epsilon_of(design)
    assert (math.isinf(expected) and math.isinf(mine)) or mine == pytest.approx(expected)


@pytest.mark.parametrize("spec", TWO_GROUP, ids=lambda s: s["name"])
def test_two_group_device_matrices_agree(spec: dict) -> None:
    core = design_from_spec(spec)
    design = from_manifest(core.rrreg())
    rate = spec.get("innocuous_rate", 0.5)
    for theirs, mine in zip(core.group_matrices(), device_matrices(design, rate), strict=True):
        assert np.asarray(theirs) == pytest.approx(mine.T)
    expected = privacy_of(core).epsilon
    mine_epsilon = epsilon_of(design, rate)
    assert (math.isinf(expected) and math.isinf(mine_epsilon)) or mine_epsilon == pytest.approx(
        expected)
