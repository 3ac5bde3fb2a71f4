"""RRcor with two-group designs against R's RRreg 0.7.6.

tests/reference/rrreg/make_twogroup_cor.R draws correlated true answers in R, randomizes them
(Warner, SLD, unrelated-unknown; a number asked directly), writes twogroup_cor.csv and RRcor's
correlation matrices to twogroup_cor.json. Here the same responses go through a survey and
`rrsite analyze --cor --format json`:

- with the two-group variable last (where RRcor's subgroup weights are right), rrsite equals
  RRcor to 1e-9, and its pi and tau equal RRuni's moment estimates;
- with two two-group variables (s third, u last) RRcor weighs the pairs ending in s with u's
  noise: rrsite's entries for those pairs are the right ones (equal to RRcor's with s last) and
  RRcor's differ; every other entry equals RRcor's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rrsite.cli import main

HERE = Path(__file__).parent / "rrreg"
REF = json.loads((HERE / "twogroup_cor.json").read_text(encoding="utf-8"))

SURVEY = """\
---
id: twogroup-cor
title: RRcor with two-group designs (tests/reference/rrreg/make_twogroup_cor.R)
privacy:
  budget: 30
---

## Q

```question
id: w
type: yes-no
randomize: warner
p: 0.8
```

## Q

```question
id: hours
type: number
min: -100
max: 200
```

## Q

```question
id: s
type: yes-no
randomize: sld
p: [0.3, 0.7]
accept_no_epsilon: true
```

## Q

```question
id: u
type: yes-no
randomize: unrelated-unknown
p: [0.7, 0.3]
innocuous: Were you born in spring?
innocuous_rate: 0.35
```
"""


@pytest.fixture(scope="module")
def export(tmp_path_factory, reference_export) -> tuple[Path, Path]:
    yes_no = {"0": "no", "1": "yes"}
    return reference_export(
        tmp_path_factory.mktemp("rrcor2"), SURVEY, HERE / "twogroup_cor.csv",
        lambda r: {"w": yes_no[r["w"]], "hours": r["hours"], "s": yes_no[r["s"]],
                   "s.group": r["s_group"], "u": yes_no[r["u"]], "u.group": r["u_group"]})


def cor(export, capsys, variables: list[str]) -> dict:
    survey, out = export
    capsys.readouterr()
    assert main(["analyze", str(out), "--survey", str(survey), "--format", "json",
                 "--cor", ",".join(variables)]) == 0
    return json.loads(capsys.readouterr().out)["correlations"]


def test_the_reference_is_rrreg_0_7_6() -> None:
    assert REF["rrreg_version"] == "0.7.6"


@pytest.mark.parametrize("key, uni, nuisance", [("sld_last", "sld_uni", "t"),
                                                ("uqt_last", "uqt_uni", "piUQ")])
def test_two_group_last_equals_rrcor(export, capsys, key, uni, nuisance) -> None:
    ref = REF[key]
    data = cor(export, capsys, ref["variables"])
    assert data["variables"] == ref["variables"]
    assert np.allclose(data["r"], ref["r"], atol=1e-9, rtol=0)
    last = ref["variables"][-1]
    assert data["prevalence"][last] == pytest.approx(REF[uni]["pi"], abs=1e-9)
    assert data["nuisance"][last]["name"] == nuisance
    assert data["nuisance"][last]["estimate"] == pytest.approx(REF[uni][nuisance], abs=1e-9)
    t = data["nuisance"][last]
    assert t["ci_low"] < t["estimate"] < t["ci_high"] and 0 < t["se"] < 0.1


def test_two_two_group_variables_fix_rrcors_weights(export, capsys) -> None:
    ref = REF["both"]
    data = cor(export, capsys, ref["variables"])
    r, rrcor = np.array(data["r"]), np.array(ref["r"])
    right = np.array(REF["sld_last"]["r"])              # w, hours, s with s last
    wrong = [(0, 2), (1, 2)]                            # (w, s), (hours, s): RRcor uses u's noise
    for i, k in wrong:
        assert r[i, k] == pytest.approx(right[i, 2] if i == 0 else right[1, 2], abs=1e-9)
        assert abs(rrcor[i, k] - r[i, k]) > 0.05
    for i in range(4):
        for k in range(i + 1, 4):
            if (i, k) not in wrong:
                assert r[i, k] == pytest.approx(rrcor[i, k], abs=1e-9)
