"""The words of the questions the build adds, in each language rrsite ships.

The same texts are keys of the page's catalogs (templates/messages/<lang>.json): a survey that
brings its own catalog (``messages:``) brings them too, and the loader takes them from there, as it
takes ``answer_yes`` and ``answer_no``. ``{yes}`` and ``{no}`` are the language's answer words.
"""

from __future__ import annotations

from ..catalog import Catalog, primary_subtag

#: The catalog keys the survey loader reads (not the page).
KEYS = ("language_name", "language_variable", "arm_variable", "arm_randomized", "arm_direct",
        "check_question", "check_yes", "check_truth", "check_no", "direct_help")

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "language_name": "English",
        "language_variable": "Language of the page",
        "arm_variable": "How the comparison questions were asked",
        "arm_randomized": "With the randomizer",
        "arm_direct": "Directly",
        "check_question": "Before you answer: if the draw on your device says “{yes}”, what is "
                          "sent?",
        "check_yes": "“{yes}”, whatever my answer",
        "check_truth": "My true answer",
        "check_no": "“{no}”",
        "direct_help": "This question is asked directly, without the randomizer: your answer is "
                       "sent exactly as you give it.",
    },
    "es": {
        "language_name": "Español",
        "language_variable": "Idioma de la página",
        "arm_variable": "Cómo se hicieron las preguntas de comparación",
        "arm_randomized": "Con el aleatorizador",
        "arm_direct": "Directamente",
        "check_question": "Antes de responder: si el sorteo en tu dispositivo dice «{yes}», ¿qué "
                          "se envía?",
        "check_yes": "«{yes}», sea cual sea mi respuesta",
        "check_truth": "Mi respuesta verdadera",
        "check_no": "«{no}»",
        "direct_help": "Esta pregunta se hace directamente, sin aleatorizador: tu respuesta se "
                       "envía tal como la das.",
    },
    "fr": {
        "language_name": "Français",
        "language_variable": "Langue de la page",
        "arm_variable": "Manière dont les questions de comparaison ont été posées",
        "arm_randomized": "Avec le tirage au sort",
        "arm_direct": "Directement",
        "check_question": "Avant de répondre : si le tirage sur votre appareil donne « {yes} », "
                          "qu’est-ce qui est envoyé ?",
        "check_yes": "« {yes} », quelle que soit ma réponse",
        "check_truth": "Ma vraie réponse",
        "check_no": "« {no} »",
        "direct_help": "Cette question est posée directement, sans tirage au sort : votre "
                       "réponse est envoyée exactement telle que vous la donnez.",
    },
    "de": {
        "language_name": "Deutsch",
        "language_variable": "Sprache der Seite",
        "arm_variable": "Wie die Vergleichsfragen gestellt wurden",
        "arm_randomized": "Mit der Auslosung",
        "arm_direct": "Direkt",
        "check_question": "Bevor Sie antworten: Wenn die Auslosung auf Ihrem Gerät „{yes}“ "
                          "ergibt, was wird gesendet?",
        "check_yes": "„{yes}“, unabhängig von meiner Antwort",
        "check_truth": "Meine wahre Antwort",
        "check_no": "„{no}“",
        "direct_help": "Diese Frage wird direkt gestellt, ohne Auslosung: Ihre Antwort wird genau "
                       "so gesendet, wie Sie sie geben.",
    },
    "pt": {
        "language_name": "Português",
        "language_variable": "Idioma da página",
        "arm_variable": "Como as perguntas de comparação foram feitas",
        "arm_randomized": "Com o sorteio",
        "arm_direct": "Diretamente",
        "check_question": "Antes de responder: se o sorteio no seu dispositivo der “{yes}”, o que "
                          "é enviado?",
        "check_yes": "“{yes}”, qualquer que seja a minha resposta",
        "check_truth": "A minha resposta verdadeira",
        "check_no": "“{no}”",
        "direct_help": "Esta pergunta é feita diretamente, sem sorteio: a sua resposta é enviada "
                       "exatamente como você a dá.",
    },
    "it": {
        "language_name": "Italiano",
        "language_variable": "Lingua della pagina",
        "arm_variable": "Come sono state poste le domande di confronto",
        "arm_randomized": "Con il sorteggio",
        "arm_direct": "Direttamente",
        "check_question": "Prima di rispondere: se il sorteggio sul tuo dispositivo dice "
                          "«{yes}», che cosa viene inviato?",
        "check_yes": "«{yes}», qualunque sia la mia risposta",
        "check_truth": "La mia risposta vera",
        "check_no": "«{no}»",
        "direct_help": "Questa domanda è posta direttamente, senza sorteggio: la tua risposta "
                       "viene inviata esattamente come la dai.",
    },
}


def words_for(language: str, catalog: Catalog | None) -> dict[str, str]:
    """The loader's words of a survey in ``language``: its own catalog's where it has them.

    A language rrsite does not ship, without the keys in its catalog, gets English (the build
    then refuses the catalog for the keys it lacks).
    """
    shipped = WORDS.get(language) or WORDS.get(primary_subtag(language)) or WORDS["en"]
    own = catalog.messages if catalog is not None else {}
    return {key: own.get(key) or shipped[key] for key in KEYS}
