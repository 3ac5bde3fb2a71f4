"""rrsite.estimate.compliance: did randomized response work? The estimators that tell.

``split``: the split-ballot comparison of a randomized question's estimate with the share of the
same question asked directly ("more is better": the difference, its one-sided test and
intervals). ``crosswise``: the crosswise model's corrections for inattentive respondents (the
anchor question's bias-corrected estimate, Atsusaka & Stevenson; its sensitivity bounds without
one). The extended crosswise model's goodness-of-fit test is RRreg's likelihood
(rrsite.estimate.univariate). numpy and scipy, no I/O.
"""
