"""An R script that reads an export and re-fits each randomized question with RRreg.

``rrsite export --r-script analysis.R`` writes it from the codebook (rrsite.report.codebook):
for each randomized question and each of its designs (the versions using it), the reports
become RRreg's response (their position among the question's reports: RRreg's coding), and
``RRuni`` fits the design's RRreg model with its ``p`` (``group`` for the two-group designs,
``Kukrep`` for Kuk, the misclassification matrix for a design RRreg knows only as "custom").
The extended crosswise model is fitted in each group with RRreg's crosswise model, then both
groups together by maximum likelihood, with its goodness-of-fit test (base R). The script reads
the CSV export (base R) or the labelled .sav/.dta files (with the haven package).

R and RRreg are optional: rrsite does not need them; the script is for researchers who want
RRreg's figures beside rrsite's (they agree: rrsite's tests compare both on RRreg's formulas).
"""

from __future__ import annotations

import math
from typing import Any

from .codebook import Codebook, Variable

#: The script's opening: what it is, how to run it, reading the export.
HEADER = """\
# RRreg re-fits of survey "{survey}" ({title}), written by `rrsite export --r-script`.
# Each randomized column holds the respondents' randomized reports, not their answers; RRreg
# (Heck & Moshagen 2018, CRAN) de-biases them with each question's design, as rrsite analyze does.
#
#   Rscript {script} [EXPORT]     EXPORT: the .csv, .sav or .dta export (default: {default})
#
# Needs R with RRreg: install.packages("RRreg"); the .sav and .dta files also need haven:
# install.packages("haven").
suppressPackageStartupMessages(library(RRreg))

args <- commandArgs(trailingOnly = TRUE)
path <- if (length(args) > 0) args[[1]] else {default}

read_export <- function(path) {{
  if (grepl("[.]sav$", path, ignore.case = TRUE))
    return(as.data.frame(haven::zap_labels(haven::read_sav(path))))
  if (grepl("[.]dta$", path, ignore.case = TRUE))
    return(as.data.frame(haven::zap_labels(haven::read_dta(path))))
  utils::read.csv(path, colClasses = "character", check.names = FALSE, na.strings = "")
}}

# a column by its name in the CSV export, or its variable name in the .sav and .dta files
column <- function(data, exported, name) {{
  if (exported %in% names(data)) data[[exported]] else data[[name]]
}}

# RRreg's response: a report's position among the question's reports (0, 1, ...); the .sav and
# .dta files hold that code already
response <- function(values, reports) {{
  if (is.numeric(values)) return(values)
  match(values, reports) - 1
}}

data <- read_export(path)
version <- as.character(column(data, "version", "version"))
"""

ECWM = """\
# the extended crosswise model (Heck, Hoffmann & Moshagen 2018): crosswise with p in group 1
# and 1 - p in group 2; RRreg fits each group, the two together by maximum likelihood below
ingroup <- function(g) keep & !is.na(group) & group == g
for (g in 1:2) {{
  pg <- if (g == 1) {p} else 1 - {p}
  cat("\\n{qid}: group", g, "(Crosswise, p =", pg, ")\\n")
  print(summary(RRuni(response = y[ingroup(g)], model = "Crosswise", p = pg)))
}}
same <- sapply(1:2, function(g) sum(y[ingroup(g)] == 1))
n <- sapply(1:2, function(g) sum(ingroup(g)))
pgroup <- c({p}, 1 - {p})
loglik <- function(pi) {{
  lambda <- pi * pgroup + (1 - pi) * (1 - pgroup)
  sum(same * log(lambda) + (n - same) * log(1 - lambda))
}}
best <- optimize(loglik, c(0, 1), maximum = TRUE)
saturated <- sum(ifelse(same > 0, same * log(same / n), 0) +
                 ifelse(n - same > 0, (n - same) * log((n - same) / n), 0))
G2 <- 2 * (saturated - best$objective)
cat("{qid}: extended crosswise pi =", round(best$maximum, 6),
    "; goodness of fit G2 =", round(G2, 4), "df = 1, p =", signif(1 - pchisq(G2, 1), 4), "\\n")
"""


def _r_string(text: str) -> str:
    """A double-quoted R string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _r_vector(values: list[Any]) -> str:
    """c(...) of numbers or strings."""
    items = [_r_string(v) if isinstance(v, str) else _r_number(float(v)) for v in values]
    return "c(" + ", ".join(items) + ")"


def _r_number(value: float) -> str:
    """A number as R reads it back exactly (17 significant digits, trimmed)."""
    if math.isclose(value, round(value)) and abs(value) < 1e15:
        return str(int(round(value)))
    return repr(float(value))


def _p_of(rrreg: dict[str, Any]) -> str:
    """RRreg's p: a number, a vector, or (custom) a matrix PW[report, state]."""
    p = rrreg["p"]
    if rrreg["model"] == "custom":
        rows = len(p)
        flat = [x for row in p for x in row]
        return f"matrix({_r_vector(flat)}, nrow = {rows}, byrow = TRUE)"
    if isinstance(p, list):
        return _r_vector(p)
    return _r_number(float(p))


def _custom_block(matrix: list[list[float]]) -> dict[str, Any]:
    """RRreg's "custom" block of matrix[truth][report]: PW[report][state] is its transpose."""
    return {"model": "custom", "p": [list(column) for column in zip(*matrix, strict=True)]}


def _fit(variable: Variable, design: dict[str, Any], reports: list[str], group_name: str,
         group_var: str) -> list[str]:
    """The lines that fit one design of one randomized question."""
    qid = variable.column
    versions = design["versions"]
    spec = design.get("design") or {}
    rrreg = design.get("rrreg")
    if rrreg is None and "matrix" in design:
        rrreg = _custom_block(design["matrix"])
    lines = [f"# --- {qid}: {spec.get('name', 'design')} (version(s) {', '.join(versions)})"]
    if rrreg is None:
        return lines + [f"# RRreg has no model for this design; use rrsite analyze for {qid}", ""]
    if variable.type == "number":
        lines.append(f"y <- suppressWarnings(as.numeric(column(data, {_r_string(qid)}, "
                     f"{_r_string(variable.name)})))")
    else:
        lines.append(f"y <- response(column(data, {_r_string(qid)}, {_r_string(variable.name)}),"
                     f" {_r_vector(reports)})")
    lines.append(f"keep <- !is.na(y) & version %in% {_r_vector(versions)}")
    two_group = "groups" in design or rrreg["model"] in (
        "UQTunknown", "CDM", "CDMsym", "SLD", "mix.unknown")
    if two_group:
        lines.append(f"group <- suppressWarnings(as.numeric(column(data, {_r_string(group_name)}, "
                     f"{_r_string(group_var)})))")
    if spec.get("name") == "extended-crosswise":
        return lines + ECWM.format(p=_r_number(float(spec["p"])), qid=qid).splitlines() + [""]
    arguments = ["response = y[keep]", f"model = {_r_string(rrreg['model'])}",
                 f"p = {_p_of(rrreg)}"]
    if two_group:
        arguments.append("group = group[keep]")
    if "Kukrep" in rrreg:
        arguments.append(f"Kukrep = {int(rrreg['Kukrep'])}")
    lines += [f"fit <- RRuni({', '.join(arguments)})",
              f"cat(\"\\n{qid} ({rrreg['model']}; version(s) {', '.join(versions)})\\n\")",
              "print(summary(fit))", ""]
    return lines


def render(book: Codebook, *, script: str = "analysis.R", default: str = "answers.csv") -> str:
    """The R script for every randomized question of the codebook."""
    out = HEADER.format(survey=book.survey, title=book.title.replace("\n", " "), script=script,
                        default=_r_string(default)).splitlines()
    out.append("")
    fitted = 0
    for variable in book.variables:
        if not variable.randomized:
            continue
        reports = [v.value for v in variable.values]
        group_name = variable.column + ".group"
        group_var = next((v.name for v in book.variables if v.column == group_name), group_name)
        for design in variable.designs:
            out += _fit(variable, design, reports, group_name, group_var)
            fitted += 1
    if not fitted:
        out.append("cat(\"this survey has no randomized question: nothing to re-fit\\n\")")
    return "\n".join(out).rstrip() + "\n"
