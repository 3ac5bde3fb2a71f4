"""`rrsite simulate`: a realistic export through a survey's own designs (for planning, tests).

    rrsite simulate SURVEY --respondents N --truth QID=RATE ... -o EXPORT [--seed S]
        [--logit "QID ~ B0 + B1*COLUMN ..."]

SURVEY is a survey file (.md) or a built survey.json. A RATE is the "yes" rate of a yes-no
question, or ``value:share,value:share`` for a choice question. EXPORT ends in .csv or .jsonl.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..errors import RRSiteError, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite simulate`."""
    parser.add_argument("survey", metavar="SURVEY", help="survey file (.md) or survey.json")
    parser.add_argument("--respondents", type=int, required=True, metavar="N",
                        help="number of submissions")
    parser.add_argument("--truth", action="append", default=[], metavar="QID=RATE",
                        help="true rate of a question: QID=0.2 (yes-no) or "
                        "QID=opt1:0.2,opt2:0.8 (choice); repeatable. Sensitive questions "
                        "without one get equal shares")
    parser.add_argument("--logit", action="append", default=[], metavar='"QID ~ B0 + B1*COL"',
                        help="true answers of yes-no QID from a logistic model on the direct "
                        "answers' columns, e.g. 'violated ~ -1.2 + 0.6*year[Second] + "
                        "0.05*courses'; repeatable")
    parser.add_argument("--joint", action="append", default=[], metavar='"Q1,Q2=S1,S2,..."',
                        help="true answers of several yes-no/choice questions drawn together "
                        "from the table of their combinations (row-major, the last question "
                        "varying fastest: no-no, no-yes, yes-no, yes-yes); repeatable")
    parser.add_argument("--predictor", action="append", default=[],
                        metavar='"Y ~ B0 + B1*Q[yes] + ...; sd=S"',
                        help="a directly asked number (normal, sd S) or yes-no (logistic) Y "
                        "driven by randomized questions' TRUE answers (Q[level]) and direct "
                        "columns; the randomized answers are drawn from --truth and randomized "
                        "as usual; repeatable")
    parser.add_argument("-o", "--output", required=True, metavar="EXPORT",
                        help="the export to write: .csv or .jsonl")
    parser.add_argument("--seed", type=int, default=None, help="random seed (reproducible runs)")


def run(args: argparse.Namespace) -> int:
    """Write the simulated export."""
    from .catalog import load_manifest_file, manifest_from_survey_file, version_from_manifest
    from .simulate import parse_truths, write_export

    if args.respondents < 0:
        raise UsageError(f"--respondents must be 0 or more, got {args.respondents}")
    output = Path(args.output)
    if output.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
        raise UsageError(f"-o {args.output}: the export must end in .csv or .jsonl")
    if args.survey.endswith(".json"):
        manifest = load_manifest_file(args.survey)
    else:
        manifest = manifest_from_survey_file(args.survey)
    version = version_from_manifest(manifest, args.survey)
    truths = parse_truths(args.truth, version)
    from .simulate_logit import parse_logit

    logits = [parse_logit(text, version) for text in args.logit]
    from .simulate_joint import check_disjoint, parse_joint

    joints = [parse_joint(text, version) for text in args.joint]
    check_disjoint(joints, [*truths, *(m.outcome for m in logits)])
    from .simulate_predictor import check_predictors, parse_predictor

    predictors = [parse_predictor(text, version) for text in args.predictor]
    check_predictors(predictors, [*(m.outcome for m in logits),
                                  *(q for j in joints for q in j.questions)])
    jointly = {q for j in joints for q in j.questions}
    unset = [q.id for q in version.questions if q.sensitive and q.id not in truths
             and q.id not in {m.outcome for m in logits} and q.id not in jointly]
    if unset:
        print(f"note: no --truth for {', '.join(unset)}: equal shares of every answer",
              file=sys.stderr)
    started = time.perf_counter()
    try:
        rows = write_export(output, manifest, args.respondents, truths, seed=args.seed,
                            logits=logits, joints=joints, predictors=predictors)
    except OSError as error:
        raise RRSiteError(f"{args.output}: cannot write: {error.strerror or error}") from error
    for model in predictors:
        if model.clipped:
            print(f"note: --predictor {model.outcome}: {model.clipped:,} values fell outside the "
                  "question's range and were clipped to it", file=sys.stderr)
    print(f"wrote {rows:,} simulated submissions of {version.survey} (version "
          f"{version.version}) to {output} in {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    return 0
