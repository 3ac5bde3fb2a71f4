"""rrsite.estimate: the likelihood machinery shared by the analyzer, the planner and the regression.

Pure functions over counts, matrices and covariates (numpy + scipy): no reading of files, no
rendering. Modules:

- ``models``: every univariate design of R's RRreg 0.7.x in RRreg's exact parameterisation
  (latent states, reports, estimated parameters, bounds, misclassification matrices PW).
- ``univariate``: maximum-likelihood estimation for those models from report counts per group
  (several survey versions pooled in one likelihood), RRreg-compatible moment estimates and
  standard errors, profile-likelihood intervals, identifiability messages.
"""
