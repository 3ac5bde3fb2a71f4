"""Which random devices a question's design draws with, and whether the author's words agree.

The page's transcript names each device that decided a report: a coin (two equal sides), a die
with d sides (weights with a small common denominator) or a spinner (any other weights; see
``rrsite.core.designs.draw``). An author's help text that says "spinner" while the page rolls a
die leaves the respondent unable to check the transcript against the instructions, so the build
warns about it: the device named must match the text.
"""

from __future__ import annotations

import html
import inspect
import random
import re

from ..core.designs import Design

#: Words that name a device in each language the page speaks (whole words, any case). A text is
#: read in its survey's language only: German's article "die" is no die.
DEVICE_WORDS_BY_LANGUAGE: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {"coin": ("coin", "coins"), "die": ("die", "dice"),
           "spinner": ("spinner", "spinners", "wheel")},
    "es": {"coin": ("moneda", "monedas"), "die": ("dado", "dados"),
           "spinner": ("ruleta", "ruletas")},
    "fr": {"coin": ("pièce", "pièces"), "die": ("dé", "dés"),
           "spinner": ("roulette", "roulettes")},
    "de": {"coin": ("münze", "münzen"), "die": ("würfel",), "spinner": ("glücksrad",)},
    "pt": {"coin": ("moeda", "moedas"), "die": ("dado", "dados"),
           "spinner": ("roleta", "roletas")},
    "it": {"coin": ("moneta", "monete"), "die": ("dado", "dadi"), "spinner": ("ruota",)},
}
#: Every language's words together: for a survey in a language rrsite does not ship.
DEVICE_WORDS: dict[str, tuple[str, ...]] = {
    device: tuple(dict.fromkeys(word for words in DEVICE_WORDS_BY_LANGUAGE.values()
                                for word in words[device]))
    for device in ("coin", "die", "spinner")
}
#: Designs the respondent answers in their head: the page draws nothing (core's ``randomize`` of
#: these exists for simulation only).
ANSWERED_IN_THE_HEAD = frozenset({"crosswise", "triangular", "extended-crosswise"})
#: Draws per true answer when listing a design's devices: every branch of the designs rrsite has
#: is taken with chance >= 1/12, so a branch is missed with chance below (11/12)^400 ~ 1e-15.
_DRAWS = 400


def devices_of(design: Design) -> set[str]:
    """The devices (``coin``, ``die``, ``spinner``) the page may draw with for this design.

    Found by running the design's own randomizer with a fixed seed over every true answer
    (and both answers of an innocuous question), so it follows the core exactly.
    """
    if design.name in ANSWERED_IN_THE_HEAD:
        return set()
    rng = random.Random(20261122)
    takes_innocuous = "innocuous" in inspect.signature(design.randomize).parameters
    seen: set[str] = set()
    for truth in range(design.k):
        for draw in range(_DRAWS):
            if takes_innocuous:
                outcome = design.randomize(truth, rng, innocuous=draw % 2)  # type: ignore[call-arg]
            else:
                outcome = design.randomize(truth, rng)
            seen.update(step.device for step in outcome.steps)
    return seen


def _words(text_html: str) -> set[str]:
    text = html.unescape(re.sub(r"<[^>]+>", " ", text_html)).lower()
    return set(re.findall(r"[^\W\d_]+", text))


def named_devices(text_html: str, language: str | None = None) -> set[str]:
    """The devices an author's text names (from its HTML), read in the survey's ``language``.

    A language rrsite does not ship, or None: in every language's words.
    """
    words = _words(text_html)
    primary = (language or "").split("-", 1)[0].lower()
    table = DEVICE_WORDS_BY_LANGUAGE.get(primary, DEVICE_WORDS)
    return {device for device, names in table.items() if words & set(names)}


def mismatch(text_html: str, design: Design, language: str | None = None) -> str | None:
    """A warning when the text names a device the design never draws with, else None."""
    named = named_devices(text_html, language)
    if not named:
        return None
    drawn = devices_of(design)
    if not drawn:  # answered without a randomizer (crosswise, triangular)
        return (f"the text names a {' and a '.join(sorted(named))}, but this design draws "
                "nothing on the device: the respondent combines two statements")
    wrong = named - drawn
    if not wrong:
        return None
    return (f"the text says {' and '.join(sorted(wrong))} but the page draws with "
            f"{' and '.join(_a(d) for d in sorted(drawn))}: the transcript names the device "
            "that decided, so say the same in the text")


def _a(device: str) -> str:
    return {"coin": "a coin", "die": "a die", "spinner": "a spinner"}[device]
