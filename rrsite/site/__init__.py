"""rrsite.site: the builder, from survey files to a static site.

``builder`` renders each survey's page from the Jinja2 templates, writes its manifest and the
shared assets (the trimmed Pyodide runtime of ``stdlib``, the core bundle, pre-compressed copies
and the ``_headers`` of ``headers``), and swaps ``dist/`` in atomically (``swap``), so a failed
build leaves the old site intact. Every script and stylesheet is pinned with its integrity
(``pins``; a module's imports inlined by ``bundle``), every file listed with its hash and the
code fingerprint (``filelist``), and ``verify`` compares a deployed site with a local build.
``preview`` rebuilds on save. Imports survey, core and errors only.
"""
