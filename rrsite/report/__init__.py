"""rrsite.report: every result of rrsite.analyze rendered as table, Markdown, JSON or HTML.

``analysis``, ``html`` and ``rows`` render an ``Analysis`` (the per-question report); ``models``,
``joint`` and ``correlation`` the other results through ``tables`` (one writer of text,
Markdown and HTML tables); ``plots`` draws inline SVG. Nothing here fits anything.
"""
