"""Regressions with randomized answers: the likelihoods behind ``rrsite analyze --model``.

``formula`` parses model formulas and codes covariates into a design matrix; ``logistic`` fits a
randomized yes-no outcome (and its two-group and weighted variants); ``mixed`` a random
intercept per cluster; ``predictors`` and ``predictors_groups`` randomized predictors (latent
classes). No I/O and no printing: rrsite.analyze.regression reads the rows and builds the
results.
"""
