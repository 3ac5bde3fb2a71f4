"""rrsite.plan: planning a survey before any answer exists.

``designs`` is ``rrsite plan`` (the optimal design for a privacy budget, a named design's
figures, ``--compare``, RRreg's designs), ``numbers`` its part for randomized numbers, ``power``
and ``power_predictor`` ``rrsite power`` (respondents to detect an odds ratio). The maths lives
in rrsite.estimate; this package chooses, tabulates and words it.
"""
