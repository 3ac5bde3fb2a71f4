# Held-out reference for RRcor with a two-group design, for
# tests/reference/test_rrcor_two_group.py. Regenerate from the repository's root with
#
#     Rscript tests/reference/rrreg/make_twogroup_cor.R
#
# (needs RRreg 0.7.6 and jsonlite). The data are drawn here (set.seed below) with correlated true
# answers, written to twogroup_cor.csv, and RRcor's correlation matrices go to twogroup_cor.json.
#
# RRcor's subgroup weights read quotient.list[[j]] inside a loop over k, with j left at the last
# variable by an earlier loop: the weights are right only when the pair's second variable is the
# last one. `sld_last` and `uqt_last` put the two-group variable last (the weights right: the
# reference rrsite must equal). `both` has two two-group variables, s third and u last: the pairs
# ending in s weigh s's subgroups with u's noise (the bug), the other pairs are right.

suppressPackageStartupMessages({
  library(RRreg)
  library(jsonlite)
})
stopifnot(packageVersion("RRreg") == "0.7.6")
out <- "tests/reference/rrreg"
set.seed(2312)
n <- 1500
common <- rnorm(n)
w_true <- rbinom(n, 1, plogis(-0.3 + 1.2 * common))
w <- ifelse(runif(n) < 0.8, w_true, 1 - w_true)                      # Warner, p = 0.8
hours <- round(20 + 3 * common + rnorm(n, 0, 4), 3)                  # asked directly
s_true <- rbinom(n, 1, plogis(-0.5 + 1.2 * common))
s_group <- sample(1:2, n, replace = TRUE)
# SLD, p = (0.3, 0.7): a non-carrier says "no" with p[group]; a carrier "yes" with t = 0.8
s <- ifelse(s_true == 1, rbinom(n, 1, 0.8), rbinom(n, 1, 1 - c(0.3, 0.7)[s_group]))
u_true <- rbinom(n, 1, plogis(0.2 - 1.2 * common))
u_group <- sample(1:2, n, replace = TRUE)
# unrelated-unknown, p = (0.7, 0.3): the sensitive question with p[group], else an innocuous one
# whose yes-rate is 0.35
u <- ifelse(runif(n) < c(0.7, 0.3)[u_group], u_true, rbinom(n, 1, 0.35))
write.csv(data.frame(w, hours, s, s_group, u, u_group), file.path(out, "twogroup_cor.csv"),
          row.names = FALSE)

ref <- list(rrreg_version = as.character(packageVersion("RRreg")))
r <- RRcor(x = data.frame(w = w, hours = hours, s = s), models = c("Warner", "direct", "SLD"),
           p.list = list(0.8, c(0.3, 0.7)), group = s_group)
ref$sld_last <- list(variables = c("w", "hours", "s"), r = unname(r$r))
r <- RRcor(x = data.frame(w = w, hours = hours, s = s, u = u),
           models = c("Warner", "direct", "SLD", "UQTunknown"),
           p.list = list(0.8, c(0.3, 0.7), c(0.7, 0.3)), group = cbind(s_group, u_group))
ref$both <- list(variables = c("w", "hours", "s", "u"), r = unname(r$r))
r <- RRcor(x = data.frame(w = w, hours = hours, u = u),
           models = c("Warner", "direct", "UQTunknown"), p.list = list(0.8, c(0.7, 0.3)),
           group = u_group)
ref$uqt_last <- list(variables = c("w", "hours", "u"), r = unname(r$r))
e <- RRuni(s, model = "SLD", p = c(0.3, 0.7), group = s_group, MLest = FALSE)
ref$sld_uni <- list(pi = e$pi, t = e$t)
e <- RRuni(u, model = "UQTunknown", p = c(0.7, 0.3), group = u_group, MLest = FALSE)
ref$uqt_uni <- list(pi = e$pi, piUQ = e$piUQ)
writeLines(toJSON(ref, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           file.path(out, "twogroup_cor.json"))
