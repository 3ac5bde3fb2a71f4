"""`rrsite simulate`: a realistic export through a survey's own designs (for planning, tests).

    rrsite simulate SURVEY --respondents N --truth QID=RATE ... -o EXPORT [--seed S]
        [--logit "QID ~ B0 + B1*COLUMN ..."]
    rrsite simulate SURVEY --frame FRAME.csv [--strata COL] [--cluster COL]
        [--sample-clusters K] [--frame-truth QID=COL ...] --truth ... -o EXPORT.csv [--seed S]

SURVEY is a survey file (.md) or a built survey.json. A RATE is the "yes" rate of a yes-no
question, or ``value:share,value:share`` for a choice question. EXPORT ends in .csv or .jsonl.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from ..errors import RRSiteError, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite simulate`."""
    parser.add_argument("survey", metavar="SURVEY", help="survey file (.md) or survey.json")
    parser.add_argument("--respondents", type=int, metavar="N",
                        help="number of submissions (required without --frame)")
    parser.add_argument("--truth", action="append", default=[], metavar="QID=RATE",
                        help="true rate of a question: QID=0.2 (yes-no) or "
                        "QID=opt1:0.2,opt2:0.8 (choice); for a number question its true values' "
                        "distribution: QID=lognormal:MU,SIGMA, normal:MEAN,SD, exponential:MEAN, "
                        "uniform:MIN,MAX or poisson:MEAN, optionally followed by ,zeros:SHARE "
                        "(e.g. days=poisson:8,zeros:0.7), clipped to the question's range; "
                        "repeatable. Sensitive questions without one get equal shares, numbers "
                        "without one are uniform over their range")
    parser.add_argument("--logit", action="append", default=[], metavar='"QID ~ B0 + B1*COL"',
                        help="true answers of yes-no QID from a logistic model on the direct "
                        "answers' columns, e.g. 'violated ~ -1.2 + 0.6*year[Second] + "
                        "0.05*courses'; repeatable")
    parser.add_argument("--joint", action="append", default=[], metavar='"Q1,Q2=S1,S2,..."',
                        help="true answers of several yes-no/choice questions drawn together "
                        "from the table of their combinations (row-major, the last question "
                        "varying fastest: no-no, no-yes, yes-no, yes-yes); repeatable")
    parser.add_argument("--cor", action="append", default=[], metavar='"Q1,Q2,X=R"',
                        help="true values of yes-no and number questions (randomized or direct) "
                        "correlated through normals with correlation R for every pair, or "
                        "=R12,R13,R23 pair by pair; yes-no rates from --truth; prints the true "
                        "values' own Pearson correlations; repeatable")
    parser.add_argument("--predictor", action="append", default=[],
                        metavar='"Y ~ B0 + B1*Q[yes] + ...; sd=S"',
                        help="a directly asked number (normal, sd S) or yes-no (logistic) Y "
                        "driven by randomized questions' TRUE answers (Q[level]) and direct "
                        "columns; the randomized answers are drawn from --truth and randomized "
                        "as usual; repeatable")
    parser.add_argument("-o", "--output", required=True, metavar="EXPORT",
                        help="the export to write: .csv or .jsonl")
    parser.add_argument("--seed", type=int, default=None, help="random seed (reproducible runs)")
    panel = parser.add_argument_group(
        "panel", "the same respondents answer every wave of a series (SURVEY is wave 1): one "
        "export per wave, -o with {wave} in its name")
    panel.add_argument("--wave", action="append", default=[], metavar="WAVE.md",
                       help="the next wave's survey file; repeatable, in order")
    panel.add_argument("--churn", type=float, default=0.2,
                       help="share of respondents whose true answers are drawn anew each wave "
                       "(default 0.2)")
    panel.add_argument("--wave-truth", action="append", default=[], metavar="N:QID=RATE",
                       help="wave N's rates for the answers drawn anew (else --truth's)")
    panel.add_argument("--keep", type=float, default=1.0,
                       help="share of devices that keep the panel's permanent reports and token "
                       "(default 1)")
    frame = parser.add_argument_group(
        "sampling frame", "draw the respondents from a frame (one row per person): a stratified "
        "and/or clustered sample whose design columns follow the answers in the export")
    frame.add_argument("--frame", metavar="FRAME.csv",
                       help="the population: every row answers, or --sample-clusters of them")
    frame.add_argument("--strata", metavar="COL", help="the frame's stratum column")
    frame.add_argument("--cluster", metavar="COL", help="the frame's cluster column")
    frame.add_argument("--sample-clusters", type=int, metavar="K",
                       help="draw K clusters (people without --cluster) per stratum without "
                       "replacement; adds the columns weight (M_h / K) and fpc (M_h)")
    frame.add_argument("--frame-truth", action="append", default=[], metavar="QID=COL",
                       help="the frame column with each person's probability of a true 'yes' "
                       "to yes-no QID; repeatable")


def run(args: argparse.Namespace) -> int:
    """Write the simulated export."""
    from ..exports.catalog import (
        load_manifest_file,
        manifest_from_survey_file,
        version_from_manifest,
    )
    from ..simulate.export import parse_truths, write_export
    from ..simulate.numbers import split_number_truths

    if args.wave:
        return _run_panel(args)
    if args.frame is None and args.respondents is None:
        raise UsageError("give --respondents N (or --frame FRAME.csv)")
    if args.frame is not None and args.respondents is not None:
        raise UsageError("--frame gives the respondents; leave out --respondents")
    if args.frame is None and (args.strata or args.cluster or args.sample_clusters
                               or args.frame_truth):
        raise UsageError("--strata, --cluster, --sample-clusters and --frame-truth need --frame")
    if args.respondents is not None and args.respondents < 0:
        raise UsageError(f"--respondents must be 0 or more, got {args.respondents}")
    output = Path(args.output)
    if output.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
        raise UsageError(f"-o {args.output}: the export must end in .csv or .jsonl")
    if args.survey.endswith(".json"):
        manifest = load_manifest_file(args.survey)
    else:
        manifest = manifest_from_survey_file(args.survey)
    version = version_from_manifest(manifest, args.survey)
    choice_truths, numbers = split_number_truths(args.truth, version)
    truths = parse_truths(choice_truths, version)
    from ..simulate.logit import parse_logit

    logits = [parse_logit(text, version) for text in args.logit]
    from ..simulate.joint import check_disjoint, parse_joint

    joints = [parse_joint(text, version) for text in args.joint]
    check_disjoint(joints, [*truths, *(m.outcome for m in logits)])
    from ..simulate.predictor import check_predictors, parse_predictor

    predictors = [parse_predictor(text, version) for text in args.predictor]
    check_predictors(predictors, [*(m.outcome for m in logits),
                                  *(q for j in joints for q in j.questions), *numbers])
    from ..simulate.cor import check_cor, parse_cor

    cors = [parse_cor(text, version) for text in args.cor]
    check_cor(cors, [*(m.outcome for m in logits), *(q for j in joints for q in j.questions),
                     *(m.outcome for m in predictors)])
    jointly = {q for j in joints for q in j.questions}
    unset = [q.id for q in version.questions if q.sensitive and q.id not in truths
             and q.id not in {m.outcome for m in logits}
             and q.id not in {item.partition("=")[0] for item in args.frame_truth}
             and q.id not in jointly and not q.numeric]
    numeric = [q.id for q in version.questions if q.numeric and q.id not in numbers]
    if numeric:
        print(f"note: randomized numbers {', '.join(numeric)}: true numbers uniform over "
              "[min, max] (0 to 100 without a range), reported through their designs; "
              "--truth QID=lognormal:MU,SIGMA (or normal, exponential, uniform, poisson, with "
              ",zeros:SHARE) draws them from a distribution", file=sys.stderr)
    if unset:
        print(f"note: no --truth for {', '.join(unset)}: equal shares of every answer",
              file=sys.stderr)
    started = time.perf_counter()
    if args.frame is not None:
        from ..simulate.frame import write_frame_export

        if logits or joints or predictors or cors:
            raise UsageError("--logit, --joint, --predictor and --cor cannot be combined with "
                             "--frame")
        try:
            rows = write_frame_export(output, manifest, args.frame, truths, strata=args.strata,
                                      cluster=args.cluster,
                                      sample_clusters=args.sample_clusters,
                                      frame_truth=args.frame_truth, seed=args.seed,
                                      numbers=numbers)
        except OSError as error:
            raise RRSiteError(f"{args.output}: cannot write: {error.strerror or error}"
                              ) from error
        _number_notes(numbers)
        print(f"wrote {rows:,} simulated submissions of {version.survey} drawn from "
              f"{args.frame} to {output}", file=sys.stderr)
        return 0
    try:
        rows = write_export(output, manifest, args.respondents, truths, seed=args.seed,
                            logits=logits, joints=joints, predictors=predictors, cors=cors,
                            numbers=numbers)
    except OSError as error:
        raise RRSiteError(f"{args.output}: cannot write: {error.strerror or error}") from error
    _number_notes(numbers)
    for model in predictors:
        if model.clipped:
            print(f"note: --predictor {model.outcome}: {model.clipped:,} values fell outside the "
                  "question's range and were clipped to it", file=sys.stderr)
    for cor in cors:
        if cor.count > 1:
            r = cor.pearson()
            pairs = ", ".join(f"{a}~{b} {r[i, k]:.3f} (normals {cor.matrix[i, k]:g})"
                              for i, a in enumerate(cor.questions)
                              for k, b in enumerate(cor.questions) if k > i)
            print(f"note: --cor: the true values' Pearson correlations over the {cor.count:,} "
                  f"respondents who answered all: {pairs}", file=sys.stderr)
    print(f"wrote {rows:,} simulated submissions of {version.survey} (version "
          f"{version.version}) to {output} in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    return 0


def _run_panel(args: argparse.Namespace) -> int:
    """`--wave`: a simulated panel, one export per wave."""
    from ..exports.catalog import manifest_from_survey_file
    from ..simulate.panel import write_panel

    if args.respondents is None or args.respondents < 0:
        raise UsageError("a panel needs --respondents N")
    if "{wave}" not in args.output:
        raise UsageError(f"-o {args.output}: with --wave, name the exports with {{wave}} "
                         "(e.g. -o panel-{wave}.csv), one per wave")
    if not args.output.endswith(".csv"):
        raise UsageError(f"-o {args.output}: a panel is written as CSV")
    files = [args.survey, *args.wave]
    manifests = [manifest_from_survey_file(f) for f in files]
    series = {(m.get("series") or {}).get("id") for m in manifests}
    if None in series or len(series) != 1:
        raise UsageError("--wave: every survey must be a wave of the same series (series: and "
                         "wave: in its front matter)")
    paths = [Path(args.output.replace("{wave}", str(i + 1))) for i in range(len(files))]
    try:
        waves = write_panel(paths, manifests, args.respondents, args.truth, args.wave_truth,
                            args.churn, args.keep, args.seed)
    except OSError as error:
        raise RRSiteError(f"{args.output}: cannot write: {error.strerror or error}") from error
    for number, wave in enumerate(waves, start=1):
        shown = "; ".join(f"{qid} " + ", ".join(f"{v} {s:.4f}" for v, s in shares.items())
                          for qid, shares in wave["expected"].items())
        print(f"note: wave {number} ({wave['survey']}): expected true shares: {shown}",
              file=sys.stderr)
        print(f"wrote {args.respondents:,} simulated submissions to {wave['path']}",
              file=sys.stderr)
    return 0


def _number_notes(numbers: Any) -> None:
    """What the number questions' true values were: the distribution, the mean drawn, clipping."""
    for truth in numbers.values():
        if not truth.count:
            continue
        clipped = (f"; {truth.clipped:,} clipped to the range" if truth.clipped else "")
        print(f"note: {truth.qid}: true numbers {truth.describe()}: mean of the {truth.count:,} "
              f"drawn {truth.total / truth.count:,.6g}{clipped}", file=sys.stderr)
