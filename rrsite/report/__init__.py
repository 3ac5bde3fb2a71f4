"""rrsite.report: every result of rrsite.analyze rendered as table, Markdown, JSON or HTML.

``analysis``, ``html`` and ``rows`` render an ``Analysis`` (the per-question report); ``models``,
``joint`` and ``correlation`` the other results through ``tables`` (one writer of text,
Markdown and HTML tables); ``plots`` draws inline SVG; ``compliance`` the section "Did randomized
response work?". The data for papers: ``codebook`` (every variable of an export), ``labelled``
(Stata and SPSS files) and ``rscript`` (an R script for RRreg). Nothing here fits anything.
"""
