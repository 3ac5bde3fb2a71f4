"""rrsite.estimate: the likelihood machinery shared by the analyzer, the planner and the regression.

Pure functions over counts, matrices and covariates (numpy + scipy): no reading of files, no
rendering. Modules:

- ``models``: every univariate design of R's RRreg 0.7.x in RRreg's exact parameterisation
  (latent states, reports, estimated parameters, bounds, misclassification matrices PW).
- ``estimators`` and ``intervals``: the analyzer's estimators of yes/no and categorical
  questions with rrsite's own matrices, pooled designs, Clopper-Pearson / Wilson / Wald
  intervals mapped through a design.
- ``planning``: Fisher information, privacy of the devices, respondents needed, designs tuned to
  one epsilon (``rrsite plan --design`` for RRreg's designs, ``rrsite plan --compare``).
- ``univariate``: maximum-likelihood estimation for those models from report counts per group
  (several survey versions pooled in one likelihood; ``likelihood``), RRreg-compatible moment
  estimates and standard errors, profile-likelihood intervals (``profile``), identifiability
  messages.
- ``regression/``: the regressions' likelihoods; ``joint`` and ``joint_groups`` the table of
  several questions; ``correlation``; ``numbers`` and ``deconvolution`` randomized numbers;
  ``survey_design`` and ``debias`` design-based estimation.
"""
