"""Survey files: Markdown with YAML front matter and question blocks, parsed into a :class:`Survey`.

``load_survey(path)`` reads and validates a file and raises :class:`SurveyErrors` holding every
problem as ``file:line: message``; ``Survey.manifest()`` is the manifest of docs/contracts.md.
"""

from .errors import SurveyError, SurveyErrors
from .loader import endpoint_origin, load_survey, parse_survey
from .model import Option, Question, Survey

__all__ = [
    "Option",
    "Question",
    "Survey",
    "SurveyError",
    "SurveyErrors",
    "endpoint_origin",
    "load_survey",
    "parse_survey",
]
