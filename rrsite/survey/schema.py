"""The survey-file grammar as data: one declaration per key, with its type, default and meaning.

Validation, "did you mean" suggestions and the documentation's reference tables all come from the
declarations below (``FRONT_MATTER``, ``PRIVACY``, ``SUBMIT``, ``QUESTION``, ``OPTION``), in the
manner of MkDocs' ``config/defaults.py``. Unlike MkDocs, reading a block never stops at the first
problem: every problem is recorded with its line and reading goes on.

How values are read (the kinds of value, blocks, did-you-mean suggestions) is
rrsite.survey.kinds; its names are re-exported here.

Run ``python -m rrsite.survey`` to print the reference tables in Markdown.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core import NAMED_DESIGNS, NUMBER_DESIGNS
from ..core.frequency import FREQUENCY_DESIGNS
from .catalog import LANGUAGE_NAMES, LANGUAGE_RULE, LANGUAGE_TAG
from .fielding.blocks import FRONT_KEYS, PANEL, QUESTION_KEYS, VALIDATION
from .kinds import (
    PROBABILITY,
    SYNONYMS,
    TYPO_RATIO,
    Answers,
    Block,
    Distribution,
    Fields,
    Flag,
    Invalid,
    Key,
    Kind,
    MatrixKind,
    Name,
    Nested,
    Number,
    OneOf,
    Options,
    OptionSpec,
    Priors,
    ProbabilityOrPair,
    Text,
    closest,
    is_null,
    line_of,
    parse_number,
    read_block,
    scalar_text,
    suggest,
)

QUESTION_TYPES = ("yes-no", "choice", "multi-choice", "number", "text")
RANDOMIZABLE_TYPES = ("yes-no", "choice", "multi-choice", "number")
#: Design names a question may give as ``randomize:`` (core's names, the authority); the number
#: designs (rrsite.core.numbers) are for ``type: number``; the frequency oracles
#: (rrsite.core.frequency) and ``auto`` for choice and multi-choice questions.
DESIGN_NAMES = tuple(NAMED_DESIGNS) + tuple(NUMBER_DESIGNS) + tuple(FREQUENCY_DESIGNS) + ("auto",)
SUBMIT_TARGETS = ("collector", "endpoint", "netlify", "download")
#: Languages rrsite ships, with their answer words for yes-no questions (the same as their
#: catalog's ``answer_no``/``answer_yes``, templates/messages/<lang>.json). A survey in another
#: language brings its own catalog (``messages:``), whose words it uses.
LANGUAGES: dict[str, dict[str, str]] = {
    "en": {"no": "No", "yes": "Yes"},
    "es": {"no": "No", "yes": "Sí"},
    "fr": {"no": "Non", "yes": "Oui"},
    "de": {"no": "Nein", "yes": "Ja"},
    "pt": {"no": "Não", "yes": "Sim"},
    "it": {"no": "No", "yes": "Sì"},
}
def _listed(words: tuple[str, ...]) -> str:
    """```a`, `b` and `c```."""
    quoted = [f"`{word}`" for word in words]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


#: An epsilon above this protects nothing and overflows e^epsilon in places; refuse it.
EPSILON_MAX = 30.0

PROBABILITIES = ProbabilityOrPair()
EPSILON = Number(above=0, maximum=EPSILON_MAX, allow_ln=True, name="epsilon")
DELTA = Number(minimum=0, below=1, name="delta in [0, 1)")

_ID_RULE = "letters, digits, '-' and '_', starting with a letter, at most 64 characters"

OPTION = Block(
    name="option",
    title="an option",
    keys=(
        Key("value", Text(max_length=200), "What is stored and exported for this answer.",
            required=True),
        Key("label", Text(markdown=True), "What the respondent sees (inline Markdown).",
            default_doc="the value"),
    ),
)

PRIVACY = Block(
    name="privacy",
    title="privacy",
    keys=(
        Key("budget", EPSILON,
            "Per-respondent epsilon budget: the sensitive questions' epsilons added up (basic "
            "composition) must not exceed it, compared at 6 significant digits (a sum that prints "
            "equal to the budget is within it). Questions with `accept_no_epsilon` are not "
            "counted (they have no epsilon) and are listed in the manifest instead.",
            default_doc="required with sensitive questions"),
        Key("epsilon", EPSILON,
            "Default epsilon for questions that say only `sensitive: true`: they get the optimal "
            "design for it (k-RR for a choice question)."),
        Key("delta", DELTA, "Default delta for questions whose design rrsite "
            "chooses from an epsilon (`epsilon:` or `sensitive: true`).", default=0.0),
        Key("wave_epsilon", EPSILON, "In a series (`series:`): the default epsilon of one "
            "wave's report of a question kept as a permanent report; the question's own epsilon "
            "bounds all waves together.", default_doc="half of each question's epsilon"),
    ),
)

SUBMIT = Block(
    name="submit",
    title="submit",
    keys=(
        Key("to", OneOf(SUBMIT_TARGETS),
            "Where reports go: `collector` (rrsite serve, same origin), `endpoint` (JSON POST to "
            "`url`), `netlify` (Netlify Forms), `download` (the respondent saves a JSON file).",
            default="collector"),
        Key("url", Text(max_length=2000), "With `to: endpoint`: the absolute https URL that takes "
            "the JSON POST (http is allowed for localhost only). Its origin joins the CSP's "
            "connect-src.", applies="to: endpoint"),
    ),
)

FRONT_MATTER = Block(
    name="front matter",
    title="the front matter",
    keys=(
        Key("id", Name(r"[a-z0-9][a-z0-9-]{0,63}",
                       "lowercase letters, digits and '-', starting with a letter or digit, "
                       "at most 64 characters"),
            "The survey's id: its folder in the built site and the `survey` of every submission.",
            required=True),
        Key("title", Text(max_length=300), "The page title.", required=True),
        Key("language", Name(LANGUAGE_TAG, LANGUAGE_RULE, name="language code",
                             hints=LANGUAGE_NAMES),
            "Language of the page's own words (buttons, coin explanations, errors) and of the "
            "page's `lang` and text direction. rrsite ships " + ", ".join(LANGUAGES) + " (a "
            "regional code such as `pt-BR` uses its language's catalog); any other language "
            "needs `messages:`.", default="en"),
        Key("messages", Text(max_length=300),
            "The survey's own message catalog, a JSON file beside the survey, in its own folder "
            "(`messages: sw.json`; no path, no link out of the folder): every key of rrsite's "
            "`en.json`, translated. It replaces the shipped catalog of `language`."),
        Key("privacy", Nested(PRIVACY), "The privacy budget and defaults, below."),
        Key("submit", Nested(SUBMIT), "The submission target, below.",
            default_doc="`{to: collector}`"),
        Key("review", OneOf(("full", "result-only")),
            "What the page's review shows on screen: `full` (what each coin did, the report and "
            "the exact body) or `result-only` (the report and the rule that produces it, not the "
            "coins: on a shared screen the transcript plus the report would reveal the truth).",
            default="full"),
        Key("priors", Priors(), "Prior guesses of the true rate of yes-no sensitive questions, by "
            "id (`{violated: 0.2}`): they choose among optimal designs when delta > 0, and the "
            "analyzer's planning uses them."),
        # fielding ------------------------------------------------------------------
        Key("consent", Text(markdown=True, max_length=20000),
            "Consent text (Markdown, a YAML block `|` for several paragraphs). The page shows it "
            "first with *I agree* / *I do not agree*; nothing can be answered before agreeing, "
            "and declining sends nothing."),
        Key("mode", OneOf(("web", "kiosk")), "`kiosk`: one device serves many respondents "
            "in turn: after each one the page clears every answer and stored report, and reports "
            "that cannot be sent wait in a queue on the device until the connection returns.",
            default="web"),
        Key("shuffle", Flag(), "Show the questions of each page (of the survey, without pages) "
            "in an order drawn on the respondent's device; the order is not sent.",
            default=False),
        # repeated studies: the same panel asked again ----------------------------------------
        Key("series", Name(r"[a-z0-9][a-z0-9-]{0,63}", "lowercase letters, digits and '-', "
                           "starting with a letter or digit, at most 64 characters"),
            "This survey is one wave of a repeated study: the id the waves share (each wave "
            "keeps its own `id`). The respondent's device keeps a permanent report of each "
            "question for every wave (where the respondent allows it) and sends a light "
            "re-randomization of it; the manifest and the page state the privacy of one wave "
            "and of all waves together. (Recruiting through an online panel such as Prolific "
            "is `panel:`, which says nothing of waves.)"),
        Key("wave", Number(minimum=1, maximum=1000, integer=True, name="whole number"),
            "With `series`: this wave's number, 1 for the first.", applies="series"),
        Key("waves", Number(minimum=1, maximum=1000, integer=True, name="whole number"),
            "With `series`: how many waves are planned. Needed when a randomized question has "
            "no permanent report (its privacy is then charged once per wave).",
            applies="series"),
        # a study as researchers field it: languages, panels, validation (survey/fielding/)
        *FRONT_KEYS,
    ),
)

SHOW_IF = Block(
    name="show_if",
    title="show_if",
    keys=(
        Key("question", Name(r"[A-Za-z][A-Za-z0-9_-]{0,63}", _ID_RULE),
            "The id of an earlier **direct** (not randomized) yes-no, choice or multi-choice "
            "question.", required=True),
        Key("is", Answers(), "The answer, or a list of answers, that shows this question "
            "(multi-choice: any of them chosen).", required=True),
    ),
)

QUESTION = Block(
    name="question",
    title="a question block",
    keys=(
        Key("id", Name(r"[A-Za-z][A-Za-z0-9_-]{0,63}", _ID_RULE),
            "The question's id in submissions, exports and analysis.", required=True),
        Key("type", OneOf(QUESTION_TYPES),
            _listed(RANDOMIZABLE_TYPES) + " can be randomized (a number with a number design: "
            + ", ".join(f"`{name}`" for name in NUMBER_DESIGNS) + "; a multi-choice, \"tick all "
            "that apply\", with `oue`, `sue` or `auto`), or asked directly; "
            + _listed(tuple(t for t in QUESTION_TYPES if t not in RANDOMIZABLE_TYPES))
            + " are always asked directly. Answers asked directly can break the estimates down "
            "(`rrsite analyze --by`).", required=True),
        Key("short", Text(max_length=60), "A short name for the question in reports, the "
            "codebook and the variable labels of Stata and SPSS files (`Exam cheating`); not "
            "shown to respondents.", default_doc="the id"),
        Key("options", Options(OPTION), "The answers of a `choice` or `multi-choice` question: "
            "strings, or `{value, label}` with a Markdown label. A randomized choice question's "
            "design matrix follows this order.", applies="type: choice, multi-choice"),
        Key("required", Flag(), "Whether the respondent must answer.",
            default_doc="`true` when randomized, else `false`"),
        Key("min", Number(), "Smallest number accepted.", applies="type: number"),
        Key("max", Number(), "Largest number accepted.", applies="type: number"),
        Key("integer", Flag(), "Accept whole numbers only.", default=False, applies="type: number"),
        Key("unit", Text(max_length=40), "The unit shown beside the number input and in the "
            "transcript (`EUR`, `days`).", applies="type: number"),
        Key("max_length", Number(minimum=1, maximum=10000, integer=True, name="whole number"),
            "Longest answer accepted, in characters.", default=500, applies="type: text"),
        Key("sensitive", Flag(), "Randomize this question. `true` with neither `randomize` nor "
            "`epsilon` uses the optimal design for `privacy.epsilon`.",
            default_doc="`true` when `randomize` or `epsilon` is given"),
        Key("randomize", OneOf(DESIGN_NAMES),
            "The design, by name: `forced-response`, `forced-yes`, `warner`, `unrelated`, "
            "`matrix`, `k-rr`, `crosswise`, `extended-crosswise`, `triangular`, `mangat`, `kuk`, "
            "`unrelated-unknown`, `cdm`, `cdm-sym`, `sld`; for `type: number`: `mixture`, "
            "`mixture-unknown`, `additive`, `multiplicative`, `laplace`, `duchi`, `piecewise`; "
            "for `type: choice` also the frequency oracles `oue`, `sue`, `olh`, `subset`, "
            "`hadamard` and `auto` (the one of least variance at the epsilon and the number of "
            "options), for `type: multi-choice` `oue`, `sue`, `auto` (the documentation's "
            "explanation of the designs gives each one's matrix or distribution); its parameters "
            "are the keys below. Leave it out and give `epsilon` to let rrsite choose the optimal "
            "design (`auto` for a choice).", spellings=("randomise",)),
        Key("truth", PROBABILITY, "Probability of answering truthfully.",
            default_doc="`1/2`", applies="randomize: forced-response, forced-yes"),
        Key("yes", PROBABILITIES, "Probability of being told to say yes (cdm-sym: a list, one "
            "per group).", default_doc="half the rest",
            applies="randomize: forced-response, cdm-sym"),
        Key("no", PROBABILITIES, "Probability of being told to say no (cdm-sym: a list, one per "
            "group).", default_doc="half the rest", applies="randomize: forced-response, cdm-sym"),
        Key("p", PROBABILITIES, "warner: probability of the statement (not the mirrored one); "
            "unrelated: probability of the sensitive question; k-rr: probability of the truth; "
            "crosswise, triangular: known yes-rate of the innocuous statement; "
            "extended-crosswise: group 1's (group 2's is 1 - p); mangat: "
            "probability that a respondent without the attribute is shown \"I have A\" (says "
            "no); two-group designs: a list of two, one per group (unrelated-unknown: P(sensitive "
            "question); cdm: P(forced yes); sld: as mangat).",
            default_doc="warner `0.75`, unrelated `0.5`",
            applies="randomize: warner, unrelated, k-rr, crosswise, extended-crosswise, "
                    "triangular, mangat, unrelated-unknown, cdm, sld"),
        Key("innocuous_rate", PROBABILITY, "unrelated: known yes-rate of the innocuous question; "
            "unrelated-unknown: the rate assumed for privacy accounting only (the analysis "
            "estimates it).", required=False, default_doc="unrelated: required; "
            "unrelated-unknown: `0.5`", applies="randomize: unrelated, unrelated-unknown"),
        Key("innocuous", Text(markdown=True), "The innocuous question, shown when the coin picks "
            "it (unrelated), or the innocuous statement shown beside the sensitive one "
            "(crosswise, triangular; extended-crosswise: group 1's) (Markdown).",
            default_doc="required",
            applies="randomize: unrelated, unrelated-unknown, crosswise, extended-crosswise, "
                    "triangular"),
        Key("complement", Text(markdown=True), "extended-crosswise: the innocuous statement "
            "group 2 is shown, true for 1 - p of people: the complement of `innocuous` (\"My "
            "mother was born in April to December.\") (Markdown).", default_doc="required",
            applies="randomize: extended-crosswise"),
        Key("anchor", Flag(), "crosswise: this question is the survey's anchor, a statement "
            "false for everyone (\"I was born on 30 February.\"): its reports measure how many "
            "respondents answered at random, and `rrsite analyze` corrects the other crosswise "
            "questions for them (Atsusaka & Stevenson's bias-corrected estimator). Its reports "
            "say nothing of any sensitive attribute: it is left out of the privacy budget.",
            default=False, applies="randomize: crosswise"),
        Key("red_yes", PROBABILITY, "Proportion of red cards in the deck of respondents with the "
            "attribute.", default_doc="required", applies="randomize: kuk"),
        Key("red_no", PROBABILITY, "Proportion of red cards in the deck of respondents without "
            "the attribute.", default_doc="required", applies="randomize: kuk"),
        Key("cards", Number(minimum=1, maximum=100, integer=True, name="whole number"),
            "Cards drawn (with replacement); the report is the number of red ones (RRreg "
            "`Kukrep`).", default_doc="`1`", applies="randomize: kuk"),
        Key("probability", PROBABILITY, "Probability that the page assigns a respondent to group "
            "1 (the group is drawn on the device and sent).", default_doc="`1/2`",
            applies="randomize: unrelated-unknown, cdm, cdm-sym, sld, extended-crosswise"),
        Key("mirrored", Text(markdown=True), "The mirrored statement (\"I have always been "
            "faithful\"), shown when the spinner picks it (Markdown).",
            applies="randomize: warner"),
        Key("mask", Distribution(), "mixture: the distribution drawn and sent instead of the "
            "true number: `{normal: {mean, sd}}`, `{exponential: {mean}}`, `{uniform: {min, "
            "max}}` (whole numbers when `integer: true`) or `{values: [...], probabilities: "
            "[...]}` (docs/explanation/number-designs.md).", applies="randomize: mixture"),
        Key("scramble", Distribution(), "additive: the distribution of the number added to the "
            "answer; multiplicative: of the positive factor (`uniform` with min above 0, or "
            "`exponential`).", applies="randomize: additive, multiplicative"),
        Key("p00", PROBABILITY, "P(report no | truth no).", applies="randomize: matrix (yes-no)"),
        Key("p11", PROBABILITY, "P(report yes | truth yes).", applies="randomize: matrix (yes-no)"),
        Key("matrix", MatrixKind(), "k x k rows, `matrix[i][j]` = P(report option j | truth "
            "option i), options in order (yes-no: no, yes).", applies="randomize: matrix"),
        Key("epsilon", EPSILON,
            "Without `randomize`: the budget for this question; rrsite uses the optimal design "
            "(Holohan et al. 2017) for a yes-no question, `auto` for a choice or multi-choice "
            "question. With `randomize: k-rr`, a frequency oracle or `auto`: its epsilon (a "
            "multi-choice question's covers its whole set of ticks). With `randomize: laplace`, "
            "`duchi` or `piecewise` (a number question): the mechanism's epsilon on [min, max]. "
            "In a series: the bound for all waves together.",
            default_doc="`privacy.epsilon` if `sensitive: true`"),
        Key("delta", DELTA, "With `epsilon` (no `randomize`), yes-no only: "
            "the delta of the optimal design.", default_doc="`privacy.delta`"),
        Key("prior", PROBABILITY, "Prior guess of the true yes-rate (yes-no, randomized): chooses "
            "the optimal design when delta > 0; the analyzer's planning uses it.",
            default_doc="`priors.<id>`, else `0.5`"),
        Key("g", Number(minimum=2, maximum=10007, integer=True, name="whole number"),
            "Local hashing: the number of buckets, a prime.",
            default_doc="the prime of least variance near e^epsilon + 1", applies="randomize: olh"),
        Key("d", Number(minimum=1, maximum=9999, integer=True, name="whole number"),
            "Subset selection: the size of the subset sent.",
            default_doc="the size of least variance", applies="randomize: subset"),
        Key("max_ticks", Number(minimum=1, maximum=10000, integer=True, name="whole number"),
            "A randomized multi-choice question: the most boxes a respondent may tick; epsilon "
            "covers any two sets of that many.", default_doc="required",
            applies="type: multi-choice, randomized"),
        Key("wave_epsilon", EPSILON, "In a series: the epsilon of one wave's report of this "
            "question (below its `epsilon`, which bounds all waves).",
            default_doc="`privacy.wave_epsilon`, else half of `epsilon`", applies="series"),
        Key("accept_no_epsilon", Flag(), "Accept a design under which some report reveals the "
            "true answer (no finite epsilon, e.g. `forced-yes`: a \"no\" is never deniable).",
            default=False),
        # fielding ------------------------------------------------------------------
        Key("show_if", Nested(SHOW_IF), "Show this question only when an earlier direct "
            "question has one of the given answers (`{question: smoker, is: yes}`). A hidden "
            "question is not asked and not sent. A condition on a randomized question is refused: "
            "which questions follow would reveal its true answer."),
        Key("practice", Flag(), "Randomized yes-no questions: show before it a practice round "
            "of its device on a neutral question (\"Is it daytime now?\"), repeatable, never "
            "sent or stored.", default=False),
        # a study as researchers field it: comprehension checks, screening (survey/fielding/)
        *QUESTION_KEYS,
    ),
)

BLOCKS: tuple[Block, ...] = (FRONT_MATTER, PRIVACY, SUBMIT, QUESTION, SHOW_IF, OPTION, PANEL,
                             VALIDATION)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def reference_table(block: Block) -> str:
    """One Markdown table: key, type, default, meaning."""
    rows = ["| key | type | default | meaning |", "|---|---|---|---|"]
    for key in block.keys:
        kind = key.kind.name
        if isinstance(key.kind, OneOf):
            kind = " | ".join(f"`{choice}`" for choice in key.kind.choices)
        meaning = key.doc + (f" *({key.applies})*" if key.applies else "")
        if key.spellings:
            meaning += " Also read when spelled " + ", ".join(f"`{s}`" for s in key.spellings) \
                + "."
        rows.append(f"| `{key.name}` | {_cell(kind)} | {_cell(key.shown_default())} | "
                    f"{_cell(meaning)} |")
    return "\n".join(rows)


def reference_markdown(blocks: Sequence[Block] = BLOCKS, level: int = 4) -> str:
    """The survey-file reference: one table per block, generated from the declarations.

    The documentation's reference page (docs/reference/survey-file.md) is this, with ``level`` 2.
    """
    titles = {
        "front matter": "Front matter (YAML between `---` lines at the top)",
        "privacy": "`privacy:` in the front matter",
        "submit": "`submit:` in the front matter",
        "question": "Question block (YAML in a ```` ```question ```` fence under a `##` heading)",
        "option": "An option given as a mapping (in `options:`)",
        "show_if": "`show_if:` in a question block",
        "panel": "`panel:` in the front matter",
        "validation": "`validation:` in the front matter",
    }
    parts = []
    for block in blocks:
        heading = "#" * level
        title = titles.get(block.name, block.name)
        parts.append(f"{heading} {title}\n\n{reference_table(block)}\n")
    return "\n".join(parts)



__all__ = [
    "BLOCKS", "DELTA", "DESIGN_NAMES", "EPSILON", "EPSILON_MAX", "FRONT_MATTER", "LANGUAGES",
    "OPTION", "PANEL", "PRIVACY", "PROBABILITIES", "PROBABILITY", "QUESTION", "QUESTION_TYPES",
    "RANDOMIZABLE_TYPES", "SHOW_IF", "SUBMIT", "SUBMIT_TARGETS", "SYNONYMS", "TYPO_RATIO",
    "VALIDATION",
    "Answers", "Block", "Distribution", "Fields", "Flag", "Invalid", "Key", "Kind", "MatrixKind",
    "Name", "Nested", "Number", "OneOf", "OptionSpec", "Options", "Priors", "ProbabilityOrPair",
    "Text", "closest", "is_null", "line_of", "parse_number", "read_block", "reference_markdown",
    "reference_table", "scalar_text", "suggest",
]
