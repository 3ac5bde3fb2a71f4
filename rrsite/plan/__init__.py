"""rrsite.plan: planning a survey before any answer exists.

``designs`` holds the figures of ``rrsite plan`` (the optimal design for a privacy budget, a
named design's figures, ``--compare``, RRreg's designs) and their tables, ``numbers`` and
``frequency`` its parts for randomized numbers and choice questions, ``power`` and
``power_predictor`` the sample sizes of ``rrsite power`` (respondents to detect an odds ratio).
The commands' options live in rrsite.commands.plan and rrsite.commands.power; the maths in
rrsite.estimate; this package chooses, tabulates and words it.
"""
