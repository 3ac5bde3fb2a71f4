"""Survey files written from parts, for tests that need a survey but do not test its grammar.

``survey_text(id, *blocks)`` writes the front matter and one ``## Q`` section per question block;
``question(id, type, **fields)`` writes one fenced question block, a field per line in the order
given (a value that starts with a newline is a nested mapping, written as it stands). The blocks
most tests ask for stand here once, named for what they are. ``line_of`` finds the line of a
snippet in a survey's text (for the file:line of an error).
"""

from __future__ import annotations


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line number of the n-th line of ``text`` containing ``needle``."""
    found = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            found += 1
            if found == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in the text")


def question(qid: str, qtype: str, **fields: object) -> str:
    """One fenced ``question`` block: id, type, then every field as ``key: value``."""
    lines = [f"id: {qid}", f"type: {qtype}"]
    for key, value in fields.items():
        text = str(value)
        lines.append(f"{key}:{text}" if text.startswith("\n") else f"{key}: {text}")
    return "```question\n" + "\n".join(lines) + "\n```\n"


def survey_text(sid: str, *blocks: str, title: str = "Test", budget: float = 20,
           language: str | None = "en", collector: bool = False) -> str:
    """A survey file: front matter (id, title, language, budget, optionally the collector) and
    one ``## Q`` section per block, in order."""
    front = ["---", f"id: {sid}", f"title: {title}"]
    if language is not None:
        front.append(f"language: {language}")
    front += ["privacy:", f"  budget: {budget:g}"]
    if collector:
        front += ["submit:", "  to: collector"]
    front.append("---")
    return "\n".join(front) + "\n" + "".join(f"\n## Q\n\n{block}" for block in blocks)


# forced response with its default coins (the truth with 1/2, else "yes" 1/4, "no" 1/4)
CHEAT_FORCED = question("cheat", "yes-no", randomize="forced-response")
CHEATED_FORCED = question("cheated", "yes-no", randomize="forced-response",
                          truth="1/2", yes="1/4", no="1/4")
DRUGS_WARNER = question("drugs", "yes-no", randomize="warner", p=0.8,
                        mirrored="I have never used drugs.")
UQT = question("uqt", "yes-no", randomize="unrelated-unknown", p="[0.7, 0.3]",
               innocuous="Born in spring?")
SLD = question("sld", "yes-no", randomize="sld", p="[0.3, 0.7]", accept_no_epsilon="true")
CDM = question("cdm", "yes-no", randomize="cdm", p="[0.3, 0.7]", accept_no_epsilon="true")
FACULTY = question("faculty", "choice", options="[arts, science]")
YEAR = question("year", "choice", options="[First, Second]")
HOURS = question("hours", "number", min=0, max=100)
NOTE = question("note", "text")
YEAR_REQUIRED = question("year", "choice", options="[First, Second]", required="true")
SLD_QUARTERS = question("sld", "yes-no", randomize="sld", p="[0.25, 0.75]",
                        accept_no_epsilon="true")
KUK3 = question("kuk3", "yes-no", randomize="kuk", red_yes=0.7, red_no=0.3, cards=3)
MOTHER = "My mother was born in January to March."


def days_question(qid: str = "days", **design: object) -> str:
    """A whole number of days out of the last 30 (0 to 30), with the design's fields if any."""
    return question(qid, "number", min=0, max=30, integer="true", **design)


# blocks that several surveys of the tests share
STIMULANTS = question("stimulants", "yes-no", randomize="forced-response", truth=0.7)
LEAVE = question("leave", "yes-no", randomize="forced-response")
TEAM_KRR = question("team", "choice", options="[A, B, C]", randomize="k-rr", epsilon=1.5)
DID = question("did", "yes-no", randomize="forced-response")
DID_HALF = question("did", "yes-no", randomize="forced-response", truth="1/2")
YEAR_THREE = question("year", "choice", options="[First, Second, Third]")
SMOKER = question("smoker", "yes-no")
ENROLLED = question("enrolled", "yes-no", screen_out='["no"]')


def faculty(science: str = "Science", arts: str = "Arts") -> str:
    """The campus survey's faculty question, its two options labelled (a translation relabels
    them)."""
    return question("faculty", "choice", options=f"\n  - {{value: science, label: {science}}}"
                    f"\n  - {{value: arts, label: {arts}}}")


#: The front matter of the campus survey in two languages (no closing ``---``: more may follow).
CAMPUS_FRONT = "---\nid: campus\ntitle: Campus life\nlanguages: [en, de]\nprivacy:\n  budget: 4\n"


def wave_front(series: str, title: str, budget: float, wave_epsilon: float) -> str:
    """The front matter of one wave of a series, with its closing ``---``; ``{wave}`` is left in
    it for ``str.format`` (the wave's number)."""
    return (f"---\nid: {series}-w{{wave}}\ntitle: {title}, wave {{wave}}\nseries: {series}\n"
            f"wave: {{wave}}\nprivacy:\n  budget: {budget:g}\n  wave_epsilon: {wave_epsilon:g}\n"
            "---\n")
