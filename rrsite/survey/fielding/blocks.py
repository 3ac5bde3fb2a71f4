"""The survey-file keys of fielding, as declarations (rrsite.survey.schema adds them to its blocks).

Front matter: ``languages`` (the survey's languages, the first its own), ``panel`` (an online
panel's parameters and codes) and ``validation`` (a random split between direct and randomized
questioning). Question blocks: ``check`` (a comprehension check before a randomized question) and
``screen_out`` (answers of a direct question that end the survey for a panel participant).
"""

from __future__ import annotations

import re

import yaml

from ..catalog import LANGUAGE_RULE, LANGUAGE_TAG
from ..errors import Problems
from ..kinds import (
    Answers,
    Block,
    Flag,
    Invalid,
    Key,
    Kind,
    Name,
    Nested,
    Number,
    OneOf,
    Text,
    line_of,
)

#: The panels rrsite knows, and the query parameter that carries a participant's id on each.
PROVIDERS = ("prolific", "mturk", "cloudresearch", "url")
ID_PARAMETERS = {"prolific": "PROLIFIC_PID", "mturk": "workerId", "cloudresearch": "participantId"}
#: Where a panel takes its participants back, by default (``{code}``: the completion code).
REDIRECTS = {"prolific": "https://app.prolific.com/submissions/complete?cc={code}"}
#: The panel's name as the page says it, by default (``url``: the catalog's ``panel_generic``).
PANEL_NAMES = {"prolific": "Prolific", "mturk": "Amazon Mechanical Turk",
               "cloudresearch": "CloudResearch"}
#: What a redirect may fill in.
REDIRECT_FIELDS = ("code", "id")
CODE = Name(r"[A-Za-z0-9_-]{1,64}", "letters, digits, '-' and '_', at most 64 characters",
            name="code")
PARAMETER = Name(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}", "a query parameter's name: letters, digits, "
                 "'_', '.' and '-', starting with a letter or '_'", name="parameter name")


class LanguageList(Kind):
    """A list of language codes, each once (``[en, de]``)."""

    name = "list of language codes"

    def read(self, node: yaml.Node, problems: Problems) -> list[str]:
        """The codes in order; refuse a code twice or a malformed one."""
        if not isinstance(node, yaml.SequenceNode) or not node.value:
            raise Invalid("must be a list of language codes, e.g. [en, de]")
        codes: list[str] = []
        for item in node.value:
            code = Name(LANGUAGE_TAG, LANGUAGE_RULE, name="language code").read(item, problems)
            if code in codes:
                raise Invalid(f"lists '{code}' twice", line_of(item))
            codes.append(code)
        return codes


class Redirect(Kind):
    """An absolute https URL with ``{code}`` (and optionally ``{id}``) in it."""

    name = "URL"

    def read(self, node: yaml.Node, problems: Problems) -> str:
        """The URL as written; refuse one that is not https or lacks ``{code}``."""
        url = Text(max_length=2000).read(node, problems)
        fields = set(re.findall(r"\{(\w*)\}", url))
        if not url.startswith("https://") and not re.match(r"http://(localhost|127\.0\.0\.1)[:/]",
                                                          url):
            raise Invalid(f"must be an https URL (http only for localhost), got {url!r}")
        if any(ch.isspace() for ch in url) or '"' in url or "<" in url or ">" in url:
            raise Invalid(f"must not contain spaces, quotes or angle brackets, got {url!r}")
        unknown = fields - set(REDIRECT_FIELDS)
        if unknown:
            raise Invalid(f"knows only {{code}} and {{id}}, got {{{sorted(unknown)[0]}}}")
        if "code" not in fields:
            raise Invalid(f"must contain {{code}}, where the completion code goes, got {url!r}")
        return url


PANEL = Block(
    name="panel",
    title="panel",
    keys=(
        Key("provider", OneOf(PROVIDERS), "The panel: `prolific`, `mturk` (Amazon Mechanical "
            "Turk), `cloudresearch` (Connect or the MTurk Toolkit) or `url` (any panel that puts "
            "the participant's id in a query parameter).", required=True),
        Key("id", PARAMETER, "The query parameter of the study link that holds the participant's "
            "id. The page reads it and never sends it to the collector.",
            default_doc="prolific `PROLIFIC_PID`, mturk `workerId`, cloudresearch "
                        "`participantId`; required for `url`"),
        Key("name", Text(max_length=80), "The panel's name as the page says it (\"Back to "
            "Prolific\").", default_doc="Prolific, Amazon Mechanical Turk, CloudResearch; "
            "`url`: \"the panel\" in the page's language"),
        Key("complete", CODE, "The completion code the panel gave you.", required=True),
        Key("redirect", Redirect(), "Where the page sends a participant whose answers the "
            "collector stored: an https URL with `{code}` (and, to pass the id back to the "
            "panel, `{id}`). Without one the page shows the code to copy.",
            default_doc="prolific `https://app.prolific.com/submissions/complete?cc={code}`"),
        Key("screen_out", CODE, "The code for participants screened out by a question's "
            "`screen_out:` answers (nothing of theirs is sent)."),
        Key("over_quota", CODE, "The code for participants who arrive once the survey is full "
            "(`rrsite serve --cap`); their answers are not stored."),
        Key("no_consent", CODE, "The code for participants who do not agree to the consent "
            "text."),
        Key("record", Flag(), "Keep a completion record: which participants completed (a "
            "SHA-256 of their id, made on the device), in a set the collector keeps apart from "
            "the answers, with nothing that orders or links it (`rrsite completions`).",
            default=False),
    ),
)

VALIDATION = Block(
    name="validation",
    title="validation",
    keys=(
        Key("direct_share", Number(above=0, below=1, name="probability in (0, 1)"),
            "The chance that a respondent's device puts them in the direct arm, where the "
            "questions under validation are asked directly (no randomizer, no deniability).",
            required=True),
        Key("questions", Answers(), "The ids of the randomized yes-no and choice questions "
            "under validation.", default_doc="every randomized yes-no and choice question"),
    ),
)

FRONT_KEYS = (
    Key("languages", LanguageList(), "The survey's languages, its own first (`[en, de]`). Each "
        "other language `xx` has a translation file beside the survey, `<name>.xx.md`: a copy "
        "of the survey file with its texts translated. The respondent chooses the language on "
        "the page; a link can preset it (`?lang=de`); the page's language is sent as the "
        "variable `language`."),
    Key("panel", Nested(PANEL), "An online panel (Prolific, MTurk, CloudResearch or any panel "
        "that passes an id in the link), below."),
    Key("validation", Nested(VALIDATION), "A random split between direct and randomized "
        "questioning, below."),
)

QUESTION_KEYS = (
    Key("check", Flag(), "A comprehension check before this randomized question: \"If the draw "
        "on your device says “Yes”, what is sent?\", sent as the direct answer `<id>_check` "
        "(`forced-response`, `forced-yes`, `cdm` and `cdm-sym`).", default=False),
    Key("screen_out", Answers(), "Answers of this direct question that end the survey for a "
        "panel participant (`panel:` with `screen_out`): nothing is sent and the page takes "
        "them back to the panel with the screen-out code."),
)
