"""The codebook of a survey's data: every variable, its values and labels, its design and privacy.

``variables(catalog)`` describes each column of the export (``rrsite export``): the fields every
row has (survey, version, respondent, submitted_at), each question's column and, for a two-group
design, its ``<id>.group`` column. A randomized question's column holds the **report** the
device (or the respondent, under crosswise and triangular) produced, never the true answer; the
codebook says so for every such column, with the design that maps answers to reports, RRreg's
model and ``p``, and the privacy guarantee. Values are coded by their position among the
question's answers (0, 1, ...): for a randomized question that is RRreg's response coding
(yes = 1; crosswise's "same" = 1, triangular's "triangle" = 1; Kuk's number of red cards).

The same description names the variables of the Stata and SPSS files (rrsite.report.labelled):
letters, digits and underscores, at most 32 characters, no reserved word. ``render(codebook,
form)`` writes it as Markdown, HTML or JSON.
"""

from __future__ import annotations

import html
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..core import privacy_of
from ..estimate.numbers import rrreg_of
from ..exports.catalog import CHOICE_TYPES, GROUP_SUFFIX, Catalog, QuestionSpec
from .tables import STYLE

FORMATS = ("markdown", "html", "json")
#: What each file extension of ``--codebook`` means.
EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html",
              ".json": "json"}
ROLE_META = "record"
ROLE_DIRECT = "answer (asked directly)"
ROLE_REPORT = "randomized report (not the answer)"
ROLE_GROUP = "design group (drawn on the device)"
#: What each report of the designs with their own reports means.
REPORT_MEANINGS = {
    "crosswise": {"different": "different: exactly one of the two statements is true",
                  "same": "same: both statements true, or both false"},
    "extended-crosswise": {"different": "different: exactly one of the two statements is true",
                           "same": "same: both statements true, or both false"},
    "triangular": {"circle": "circle: both statements false",
                   "triangle": "triangle: at least one statement true"},
}
#: Words Stata or SPSS reserve (compared in lower case): such a variable gets a ``v_`` prefix.
RESERVED = frozenset({
    "_all", "_b", "byte", "_coef", "_cons", "double", "float", "if", "in", "int", "long", "_n",
    "_pi", "_pred", "_rc", "_skip", "strl", "using", "with", "and", "by", "eq", "ge", "gt", "le",
    "lt", "ne", "not", "or", "to", "all",
})
#: Longest variable name (Stata's limit; SPSS allows 64) and variable label (Stata's).
NAME_LIMIT = 32
LABEL_LIMIT = 80
META_TEXT = {
    "survey": "The survey's id",
    "version": "The survey version the respondent answered (its manifest holds the designs)",
    "respondent": "A random token drawn on the respondent's device (links nothing else)",
    "submitted_at": "When the collector received the submission (UTC, to the minute)",
}


@dataclass
class Value:
    """One value of a categorical variable: its code in Stata/SPSS, as exported, its label."""

    code: int
    value: str
    label: str

    def to_dict(self) -> dict[str, Any]:
        """code, value, label."""
        return {"code": self.code, "value": self.value, "label": self.label}


@dataclass
class Variable:
    """One column of the export, as a statistics package should read it."""

    column: str
    name: str
    label: str
    type: str
    role: str
    question: str | None = None
    text: str | None = None
    values: list[Value] = field(default_factory=list)
    unit: str | None = None
    #: Per design: the versions using it, the design spec, RRreg's model, the privacy guarantee.
    designs: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def randomized(self) -> bool:
        """A randomized question's report (its values are reports, not answers)."""
        return self.role == ROLE_REPORT

    def codes(self) -> dict[str, int]:
        """Value as exported -> its code."""
        return {v.value: v.code for v in self.values}

    def to_dict(self) -> dict[str, Any]:
        """The codebook entry (JSON)."""
        out: dict[str, Any] = {
            "column": self.column, "name": self.name, "label": self.label, "type": self.type,
            "role": self.role, "randomized": self.randomized, "question": self.question,
            "text": self.text, "values": [v.to_dict() for v in self.values],
        }
        if self.unit is not None:
            out["unit"] = self.unit
        if self.designs:
            out["designs"] = self.designs
        out["notes"] = list(self.notes)
        return out


@dataclass
class Codebook:
    """A survey's variables, in export order."""

    survey: str
    title: str
    versions: list[str]
    variables: list[Variable]

    def variable(self, column: str) -> Variable:
        """The variable of an export column."""
        for variable in self.variables:
            if variable.column == column:
                return variable
        raise KeyError(column)

    def to_dict(self) -> dict[str, Any]:
        """The JSON codebook (docs/reference/contracts.md)."""
        return {"survey": self.survey, "title": self.title, "versions": self.versions,
                "coding": "categorical values are coded by their position among the question's "
                          "answers (0, 1, ...): RRreg's response coding for a randomized question",
                "variables": [v.to_dict() for v in self.variables]}


def safe_name(column: str, taken: set[str]) -> str:
    """A Stata and SPSS variable name for an export column, unique among ``taken`` (added)."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", column) or "v"
    if not re.match(r"[A-Za-z]", name):
        name = "v" + name
    if name.lower() in RESERVED:
        name = "v_" + name
    name = name[:NAME_LIMIT]
    base, number = name, 1
    while name.lower() in taken:
        number += 1
        suffix = f"_{number}"
        name = base[:NAME_LIMIT - len(suffix)] + suffix
    taken.add(name.lower())
    return name


def _label(text: str) -> str:
    """A variable label within Stata's 80 characters (cut with an ellipsis)."""
    return text if len(text) <= LABEL_LIMIT else text[:LABEL_LIMIT - 1] + "…"


def _design_entry(question: QuestionSpec, versions: list[str]) -> dict[str, Any]:
    """One design of a randomized question: spec, matrix or groups, RRreg, privacy."""
    entry: dict[str, Any] = {"versions": versions, "design": question.design_spec}
    manifest = question.manifest
    if "matrix" in manifest:
        entry["matrix"] = manifest["matrix"]
    if "groups" in manifest:
        entry["groups"] = manifest["groups"]
    if question.number_design is not None:
        entry["rrreg"] = rrreg_of(question.number_design)
    else:
        entry["rrreg"] = manifest.get("rrreg")
    privacy = question.privacy
    if privacy is None and question.design is not None:
        privacy = privacy_of(question.design)
    if privacy is not None:
        entry["epsilon"] = privacy.epsilon if math.isfinite(privacy.epsilon) else None
        entry["delta"] = privacy.delta
        entry["privacy"] = privacy.describe()
    return entry


def _values(question: QuestionSpec, codes: dict[str, int], values: list[Value]) -> None:
    """Add the question's answers (its reports when randomized) not coded yet."""
    meanings = REPORT_MEANINGS.get((question.design_spec or {}).get("name", ""), {})
    for value in question.answers:
        if value in codes:
            continue
        codes[value] = len(codes)
        if question.sensitive and question.reports:
            label = meanings.get(value, f"report: {value}")
        elif question.sensitive:
            label = f"report: {question.label(value)}"
        else:
            label = question.label(value)
        values.append(Value(codes[value], value, label))


def _question_variables(catalog: Catalog, qid: str, taken: set[str]) -> list[Variable]:
    """The column of one question (and its group column for a two-group design)."""
    found = catalog.questions_named(qid)
    first = found[0][1]
    sensitive = any(q.sensitive for _, q in found)
    kind = ("categorical" if first.type in CHOICE_TYPES else
            "number" if first.type == "number" else
            "string" if first.type == "text" else "multi")
    title = first.name if first.short else first.text
    variable = Variable(
        column=qid, name=safe_name(qid, taken), type=kind,
        label=_label(f"[randomized report] {title}" if sensitive else title),
        role=ROLE_REPORT if sensitive else ROLE_DIRECT, question=qid, text=first.text,
        unit=first.unit)
    codes: dict[str, int] = {}
    designs: dict[str, tuple[QuestionSpec, list[str]]] = {}
    for m, question in found:
        if kind == "categorical":
            _values(question, codes, variable.values)
        if question.sensitive:
            key = json.dumps([question.design_spec, question.manifest.get("rrreg")],
                             sort_keys=True)
            designs.setdefault(key, (question, []))[1].append(catalog.versions[m].version)
    if kind == "multi":
        variable.values = [Value(i, v, first.label(v)) for i, v in enumerate(first.values)]
        variable.notes.append("a JSON list of the chosen values (as exported)")
    variable.designs = [_design_entry(q, versions) for q, versions in designs.values()]
    variable.notes += _role_notes(first)
    if sensitive:
        variable.notes.append(
            "RANDOMIZED: each value is the report the respondent's device sent, not the "
            "respondent's answer; only estimates over many reports (rrsite analyze, or RRreg "
            "with the design below) say anything about the answers")
        if kind == "number":
            variable.notes.append("a randomized number: the report, not the true number")
        if len(designs) < len(found):
            asked = [catalog.versions[m].version for m, q in found if not q.sensitive]
            variable.notes.append(f"asked directly in version(s) {', '.join(asked)}")
    out = [variable]
    if any(q.two_group for _, q in found):
        group = Variable(
            column=qid + GROUP_SUFFIX, name=safe_name(qid + "_group", taken), type="categorical",
            label=_label(f"[design group] {title}"), role=ROLE_GROUP, question=qid,
            values=[Value(1, "1", "group 1"), Value(2, "2", "group 2")],
            notes=["the group the device drew for this question's two-group design (coded 1 "
                   "and 2, as exported): RRreg's group argument"])
        out.append(group)
    return out


def _role_notes(question: QuestionSpec) -> list[str]:
    """What a variable the page adds, or an anchor question, is."""
    if question.anchor:
        return ["the anchor question: its statement is false for everyone, so its reports "
                "measure how many respondents answered at random (rrsite analyze corrects the "
                "other crosswise questions with it)"]
    if question.role == "direct" and question.direct_of:
        return [f"the direct arm's answer to {question.direct_of!r}: the respondent's TRUE "
                "answer, asked without randomized response (the split ballot)"]
    if question.role == "check" and question.check:
        return [f"comprehension check of {question.check.get('question')!r} (the right answer: "
                f"{question.check.get('correct')!r}); never used to exclude anyone"]
    if question.role == "arm":
        return ["the arm the respondent's device drew: randomized response or direct questions"]
    if question.role == "language":
        return ["the language of the page the respondent answered in"]
    return []


def build(catalog: Catalog) -> Codebook:
    """The codebook of every version in ``catalog``, columns in export order."""
    taken: set[str] = set()
    variables = [
        Variable(column=name, name=safe_name(name, taken), label=_label(text), type="string",
                 role=ROLE_META) for name, text in META_TEXT.items()]
    for qid in catalog.question_ids():
        variables.extend(_question_variables(catalog, qid, taken))
    return Codebook(catalog.survey, catalog.title, catalog.version_ids, variables)


# ------------------------------------------------------------------------------- rendering


def _design_words(entry: dict[str, Any]) -> str:
    spec = entry.get("design") or {}
    params = ", ".join(f"{k}={v}" for k, v in spec.items() if k != "name")
    rrreg = entry.get("rrreg")
    words = f"{spec.get('name', '?')}({params})"
    if rrreg:
        words += f"; RRreg {rrreg.get('model')} with p = {rrreg.get('p')}"
        if "Kukrep" in rrreg:
            words += f", Kukrep = {rrreg['Kukrep']}"
    if "privacy" in entry:
        words += f"; {entry['privacy']}"
    return words + f" (version {', '.join(entry['versions'])})"


def render_markdown(book: Codebook) -> str:
    """The codebook as Markdown: a table of every variable, then each one's values and design."""
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = [f"# Codebook: {book.title}", "",
           f"Survey `{book.survey}`, version(s) {', '.join(f'`{v}`' for v in book.versions)}. "
           "Categorical values are coded by their position among the question's answers "
           "(0, 1, ...); a **randomized** column holds each respondent's randomized *report*, "
           "not the answer.", "",
           "| variable | export column | label | type | role |", "|---|---|---|---|---|"]
    out += [f"| `{v.name}` | `{v.column}` | {cell(v.label)} | {v.type} | {v.role} |"
            for v in book.variables]
    for variable in book.variables:
        if variable.role == ROLE_META:
            continue
        out += ["", f"## `{variable.name}`" + (" (randomized report)" if variable.randomized
                                               else ""), ""]
        if variable.text:
            out.append(f"{cell(variable.text)}" + (f" ({variable.unit})" if variable.unit
                                                   else ""))
            out.append("")
        if variable.values:
            out += ["| code | value | label |", "|---:|---|---|"]
            out += [f"| {v.code} | `{cell(v.value)}` | {cell(v.label)} |"
                    for v in variable.values]
            out.append("")
        out += [f"- design: {cell(_design_words(d))}" for d in variable.designs]
        out += [f"- {cell(note)}" for note in variable.notes]
    return "\n".join(out).rstrip() + "\n"


def render_html(book: Codebook) -> str:
    """The codebook as a self-contained HTML page (no script, no external assets)."""
    e = html.escape
    rows = "".join(
        f"<tr><td><code>{e(v.name)}</code></td><td><code>{e(v.column)}</code></td>"
        f"<td>{e(v.label)}</td><td>{e(v.type)}</td><td>{e(v.role)}</td></tr>"
        for v in book.variables)
    body = [f"<h1>Codebook: {e(book.title)}</h1>",
            f"<p>Survey <code>{e(book.survey)}</code>, version(s) "
            + ", ".join(f"<code>{e(v)}</code>" for v in book.versions)
            + ". Categorical values are coded by their position among the question's answers "
            "(0, 1, ...); a <strong>randomized</strong> column holds each respondent's "
            "randomized <em>report</em>, not the answer.</p>",
            "<table><thead><tr><th>variable</th><th>export column</th><th>label</th>"
            f"<th>type</th><th>role</th></tr></thead><tbody>{rows}</tbody></table>"]
    for variable in book.variables:
        if variable.role == ROLE_META:
            continue
        title = f"<code>{e(variable.name)}</code>"
        if variable.randomized:
            title += ' <span class="warn">(randomized report)</span>'
        body.append(f"<h2>{title}</h2>")
        if variable.text:
            body.append(f"<p>{e(variable.text)}"
                        + (f" ({e(variable.unit)})" if variable.unit else "") + "</p>")
        if variable.values:
            body.append("<table><thead><tr><th class=num>code</th><th>value</th><th>label</th>"
                        "</tr></thead><tbody>" + "".join(
                            f"<tr><td class=num>{v.code}</td><td><code>{e(v.value)}</code></td>"
                            f"<td>{e(v.label)}</td></tr>" for v in variable.values)
                        + "</tbody></table>")
        items = [f"design: {_design_words(d)}" for d in variable.designs] + variable.notes
        if items:
            body.append("<ul class=note>" + "".join(f"<li>{e(i)}</li>" for i in items)
                        + "</ul>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Codebook: {e(book.title)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(body) + "</body></html>\n")


def render(book: Codebook, form: str) -> str:
    """The codebook in one of FORMATS."""
    if form == "json":
        return json.dumps(book.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if form == "html":
        return render_html(book)
    return render_markdown(book)
