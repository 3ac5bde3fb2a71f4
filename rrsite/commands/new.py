"""`rrsite new NAME`: write a starter survey file, NAME.md, that builds as it is.

``--language CODE`` sets the page's language, and the starter's words for respondents (its
introduction, questions, options and closing text) are in that language for the languages
rrsite ships. For another language the survey brings its own message catalog: CODE.json is
written beside the survey, a copy of the shipped en.json to translate, and the front matter names
it (``messages: CODE.json``); the starter's words are then English, to translate too.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

from ..errors import UsageError
from ..site.builder import default_templates
from ..survey.catalog import LANGUAGE_NAMES, LANGUAGE_RULE, LANGUAGE_TAG, primary_subtag
from ..survey.schema import LANGUAGES

STARTER = """\
---
# The survey's id: its folder in the built site and the "survey" field of every submission.
id: {id}
title: {title}
language: {language}{language_pad}# the language of the page's buttons and explanations
{messages_line}privacy:
  budget: 2.0               # per respondent: randomized questions' epsilons add up to at most this
submit:
  to: collector             # collector (rrsite serve) | endpoint (with url:) | netlify | download
---
{intro}

## {did_it}

{coins}

```question
id: did_it
type: yes-no
randomize: forced-response  # the fair two-coin design: epsilon = ln 3 (about 1.1)
truth: 1/2
```

## {how_often}

```question
id: how_often               # asked directly; `rrsite analyze --by how_often` breaks estimates down
type: choice
options:
  - {never}
  - {sometimes}
  - {{value: often, label: "*{often}*"}}
required: false
```

{closing}
"""

#: The starter's words for respondents in each language rrsite ships (the rest of the file is
#: for the author: keys and comments). Another language gets the English words to translate.
WORDS: dict[str, dict[str, str]] = {
    "en": {
        "intro": "Thank you for taking part. Some questions are **randomized on your device**: "
                 "before anything is sent, your browser flips coins that decide whether your "
                 "true answer or a random one goes out.\nNobody can tell which, so any single "
                 "answer proves nothing about you.",
        "did_it": "Have you ever done the thing this survey is about?",
        "coins": "The coins: first coin heads, your true answer is sent; tails, a second coin "
                 "picks \"yes\" or \"no\".",
        "how_often": "How often does it happen around you?",
        "never": "Never", "sometimes": "Sometimes", "often": "Often",
        "closing": "Thank you for your answers. You can close this page now.",
    },
    "es": {
        "intro": "Gracias por participar. Algunas preguntas se **aleatorizan en su dispositivo**: "
                 "antes de enviar nada, su navegador lanza monedas que deciden si se envía su "
                 "respuesta verdadera o una al azar.\nNadie puede saber cuál, así que ninguna "
                 "respuesta por sí sola demuestra nada sobre usted.",
        "did_it": "¿Alguna vez ha hecho aquello de lo que trata esta encuesta?",
        "coins": "Las monedas: si la primera sale cara, se envía su respuesta verdadera; si sale "
                 "cruz, una segunda moneda elige «sí» o «no».",
        "how_often": "¿Con qué frecuencia ocurre a su alrededor?",
        "never": "Nunca", "sometimes": "A veces", "often": "A menudo",
        "closing": "Gracias por sus respuestas. Ya puede cerrar esta página.",
    },
    "fr": {
        "intro": "Merci de votre participation. Certaines questions sont **randomisées sur votre "
                 "appareil** : avant tout envoi, votre navigateur lance des pièces qui décident "
                 "si votre vraie réponse ou une réponse au hasard est envoyée.\nPersonne ne peut "
                 "savoir laquelle : une réponse isolée ne prouve donc rien sur vous.",
        "did_it": "Avez-vous déjà fait ce dont parle cette enquête ?",
        "coins": "Les pièces : si la première tombe sur face, votre vraie réponse est envoyée ; "
                 "sur pile, une deuxième pièce choisit « oui » ou « non ».",
        "how_often": "À quelle fréquence cela arrive-t-il autour de vous ?",
        "never": "Jamais", "sometimes": "Parfois", "often": "Souvent",
        "closing": "Merci pour vos réponses. Vous pouvez maintenant fermer cette page.",
    },
    "de": {
        "intro": "Vielen Dank für Ihre Teilnahme. Einige Fragen werden **auf Ihrem Gerät per "
                 "Zufall verfremdet**: Bevor etwas gesendet wird, wirft Ihr Browser Münzen, die "
                 "entscheiden, ob Ihre wahre Antwort oder eine zufällige übermittelt wird.\n"
                 "Niemand kann erkennen, welche es war; eine einzelne Antwort beweist also "
                 "nichts über Sie.",
        "did_it": "Haben Sie jemals getan, worum es in dieser Umfrage geht?",
        "coins": "Die Münzen: Zeigt die erste Münze Kopf, wird Ihre wahre Antwort gesendet; bei "
                 "Zahl wählt eine zweite Münze „Ja“ oder „Nein“.",
        "how_often": "Wie oft kommt es in Ihrem Umfeld vor?",
        "never": "Nie", "sometimes": "Manchmal", "often": "Oft",
        "closing": "Vielen Dank für Ihre Antworten. Sie können diese Seite jetzt schließen.",
    },
    "pt": {
        "intro": "Obrigado por participar. Algumas perguntas são **aleatorizadas no seu "
                 "dispositivo**: antes de qualquer envio, o seu navegador lança moedas que "
                 "decidem se é enviada a sua resposta verdadeira ou uma ao acaso.\nNinguém "
                 "consegue saber qual, por isso nenhuma resposta isolada prova nada sobre si.",
        "did_it": "Alguma vez fez aquilo de que trata este questionário?",
        "coins": "As moedas: se a primeira sair cara, é enviada a sua resposta verdadeira; se "
                 "sair coroa, uma segunda moeda escolhe \"sim\" ou \"não\".",
        "how_often": "Com que frequência isso acontece à sua volta?",
        "never": "Nunca", "sometimes": "Às vezes", "often": "Frequentemente",
        "closing": "Obrigado pelas suas respostas. Já pode fechar esta página.",
    },
    "it": {
        "intro": "Grazie per la partecipazione. Alcune domande sono **rese casuali sul suo "
                 "dispositivo**: prima di inviare qualsiasi cosa, il suo browser lancia delle "
                 "monete che decidono se inviare la sua risposta vera o una a caso.\nNessuno può "
                 "sapere quale, quindi nessuna singola risposta dimostra nulla su di lei.",
        "did_it": "Le è mai capitato di fare ciò di cui parla questa indagine?",
        "coins": "Le monete: se la prima esce testa, viene inviata la sua risposta vera; se esce "
                 "croce, una seconda moneta sceglie «sì» o «no».",
        "how_often": "Quanto spesso succede intorno a lei?",
        "never": "Mai", "sometimes": "A volte", "often": "Spesso",
        "closing": "Grazie per le sue risposte. Ora può chiudere questa pagina.",
    },
}


def title_of(stem: str, language: str) -> str:
    """The survey's title from its file name, without a language code at its end.

    ``campus-de`` with ``--language de`` is "Campus".
    """
    for code in (language, primary_subtag(language)):
        found = re.fullmatch(rf"(.+?)[-_\s]+{re.escape(code)}", stem, flags=re.IGNORECASE)
        if found:
            stem = found.group(1)
            break
    words = [word for word in re.split(r"[-_\s]+", stem) if word]
    return " ".join(words).capitalize() or "My survey"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `rrsite new`."""
    parser.add_argument("name", metavar="NAME", help="the survey to create: writes NAME.md")
    parser.add_argument("--language", metavar="CODE", default="en",
                        help="the page's language: " + ", ".join(LANGUAGES) + " are shipped; "
                             "for any other code (e.g. sw, ar) CODE.json is written beside the "
                             "survey, rrsite's English messages to translate (default: en)")


def slug(name: str) -> str:
    """A survey id from a file name: lowercase letters, digits and single dashes."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64].strip("-")
    return text or "my-survey"


def run(args: argparse.Namespace) -> int:
    """Write the starter file; refuse to overwrite anything."""
    path = Path(args.name)
    if path.suffix != ".md":
        path = path.with_name(path.name + ".md")
    if path.exists():
        raise UsageError(f"{path} already exists; choose another name")
    if not path.parent.is_dir():
        raise UsageError(f"{path.parent} is not a folder")
    language = str(args.language)
    if not re.fullmatch(LANGUAGE_TAG, language):
        meant = LANGUAGE_NAMES.get(language.lower())
        hint = f": write --language {meant} for {language}" if meant else ""
        raise UsageError(f"--language must be {LANGUAGE_RULE}, got {language!r}{hint}")
    shipped = language in LANGUAGES or primary_subtag(language) in LANGUAGES
    catalog = path.with_name(f"{language}.json")
    if not shipped and catalog.exists():
        raise UsageError(f"{catalog} already exists; choose another name or folder")
    survey_id = slug(path.stem)
    words = WORDS.get(primary_subtag(language), WORDS["en"])
    text = STARTER.format(
        id=survey_id, title=json.dumps(title_of(path.stem, language), ensure_ascii=False),
        language=language, language_pad=" " * max(1, 28 - len("language: ") - len(language)),
        messages_line="" if shipped else (
            f"messages: {catalog.name}".ljust(27) + " # the page's words in this language: "
            "translate this file\n"),
        **words)
    with path.open("x", encoding="utf-8") as handle:
        handle.write(text)
    if not shipped:
        shutil.copyfile(default_templates() / "messages" / "en.json", catalog)
        print(f"wrote {catalog}: rrsite's messages in English, to translate into {language} "
              "(the build warns while some are still English)")
    print(f"wrote {path}: check it with `rrsite check {path}`, try it with "
          f"`rrsite preview {path}`, build it with `rrsite build {path} -o dist`")
    return 0
