# Held-out reference values from R's RRreg 0.7.6 for tests/reference/test_rrreg_heldout.py.
#
# The data are drawn here in R (set.seed below), written to data.csv, and fitted with RRreg's own
# functions; their results go to rrreg.json. The Python test puts the same responses through a
# survey built with rrsite's grammar and `rrsite analyze`, and compares. Regenerate with
#
#     Rscript tests/reference/rrreg/make_reference.R
#
# (needs RRreg 0.7.6, lme4 and jsonlite; run from the repository's root).
#
# RRreg 0.7.6's RRuni cannot fit mix.norm or mix.exp: RRuni.mix.norm/mix.exp read `pt`, which is
# never assigned (R finds stats::pt, the t distribution's function, and stops with "non-numeric
# argument to binary operator"), and divide the SE by the whole vector `p`. The reference for
# those two runs RRreg's own function with `pt <- p[1]` put first and takes the first SE: what
# the code means to compute.

suppressPackageStartupMessages({
  library(RRreg)
  library(jsonlite)
  library(lme4)
})
stopifnot(packageVersion("RRreg") == "0.7.6")
out <- "tests/reference/rrreg"
set.seed(2311)
n <- 600

# --- numbers: mix.unknown, mix.norm, mix.exp over log-normal incomes
income <- pmin(rlnorm(n, 8, 1.2), 1e5)
inc_group <- sample(1:2, n, replace = TRUE)
inc_unknown <- ifelse(runif(n) < c(0.3, 0.8)[inc_group], income, runif(n, 0, 10000))
inc_norm <- ifelse(runif(n) < 0.7, income, rnorm(n, 5000, 3000))
inc_exp <- ifelse(runif(n) < 0.6, income, rexp(n, 1 / 4000))

# --- Moors: UQTunknown with p2 = 0
uq_group <- sample(1:2, n, replace = TRUE)
uq <- ifelse(runif(n) < c(0.7, 0)[uq_group], rbinom(n, 1, 0.3), rbinom(n, 1, 0.4))

# --- correlated latent answers for RRcor, RRlin and RRmixed
school <- rep(1:30, each = n / 30)
x <- round(rnorm(n), 4)
common <- rnorm(n)
u <- rnorm(30, 0, 0.8)[school]
w_true <- rbinom(n, 1, plogis(-0.4 + 0.8 * common))     # randomized predictor 1 (Warner 0.8)
f_true <- rbinom(n, 1, plogis(0.2 - 0.6 * common))      # randomized predictor 2 (FR)
hours <- round(20 + 6 * w_true - 4 * f_true + 2 * x + 3 * common + rnorm(n, 0, 4), 3)
w <- ifelse(runif(n) < 0.8, w_true, 1 - w_true)
coin <- runif(n)                                         # FR: no 0.1, yes 0.15, truth 0.75
f <- ifelse(coin < 0.1, 0, ifelse(coin < 0.25, 1, f_true))
c_true <- rbinom(n, 1, plogis(-0.5 + 0.9 * x + u))      # clustered (forced response)
coin <- runif(n)
cheat <- ifelse(coin < 0.125, 0, ifelse(coin < 0.25, 1, c_true))

data <- data.frame(inc_unknown, inc_group, inc_norm, inc_exp, uq, uq_group, w, f, hours, x,
                   school, cheat)
write.csv(data, file.path(out, "data.csv"), row.names = FALSE)

fixed_mix <- function(fun, response, p) {
  body(fun) <- as.call(c(as.name("{"), quote(pt <- p[1]), as.list(body(fun))[-1]))
  r <- fun(response, p)
  list(pi = r$pi, piSE = r$piSE[1])
}
ref <- list()
r <- RRuni(response = inc_unknown, model = "mix.unknown", p = c(0.3, 0.8), group = inc_group)
ref$mix_unknown <- list(pi = r$pi, piSE = r$piSE, piUQ = r$piUQ, piUQSE = r$piUQSE)
ref$mix_norm <- fixed_mix(RRreg:::RRuni.mix.norm, inc_norm, c(0.7, 5000, 3000))
ref$mix_exp <- fixed_mix(RRreg:::RRuni.mix.exp, inc_exp, c(0.6, 4000))
ref$mix_norm_fails <- inherits(try(RRuni(response = inc_norm, model = "mix.norm",
                                         p = c(0.7, 5000, 3000)), silent = TRUE), "try-error")

r <- RRuni(response = uq, model = "UQTunknown", p = c(0.7, 0), group = uq_group)
ref$uqt_unknown <- list(pi = r$pi, piSE = r$piSE, piUQ = r$piUQ, piUQSE = r$piUQSE)

r <- RRcor(x = data.frame(w = w, f = f, hours = hours, x = x),
           models = c("Warner", "FR", "direct", "direct"),
           p.list = list(0.8, c(0.1, 0.15)))
ref$rrcor <- list(variables = c("w", "f", "hours", "x"), r = unname(r$r))

r <- RRlin(hours ~ w + f + x, data = data, models = c("Warner", "FR"),
           p.list = list(0.8, c(0.1, 0.15)), fit.n = 10)
ref$rrlin <- list(coefficients = as.list(r$beta), sigma = r$sigma,
                  se = as.list(sqrt(diag(r$vcov))), convergence = r$convergence,
                  logLik = as.numeric(r$logLik), pi = as.list(r$pi))

m <- RRmixed(cheat ~ x + (1 | school), data = data, model = "FR", p = c(0.125, 0.125),
             nAGQ = 25)
ref$rrmixed <- list(fixef = as.list(fixef(m)), se = as.list(sqrt(diag(as.matrix(vcov(m))))),
                    sd = as.numeric(attr(VarCorr(m)$school, "stddev")),
                    logLik = as.numeric(logLik(m)), nAGQ = 25)
m1 <- RRmixed(cheat ~ x + (1 | school), data = data, model = "FR", p = c(0.125, 0.125))
ref$rrmixed_laplace <- list(fixef = as.list(fixef(m1)),
                            sd = as.numeric(attr(VarCorr(m1)$school, "stddev")),
                            logLik = as.numeric(logLik(m1)))
ref$rrreg_version <- as.character(packageVersion("RRreg"))
writeLines(toJSON(ref, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           file.path(out, "rrreg.json"))
