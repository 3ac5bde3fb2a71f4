"""``python -m rrsite.survey``: print the survey-file reference tables (Markdown)."""

from .schema import reference_markdown

print(reference_markdown())
