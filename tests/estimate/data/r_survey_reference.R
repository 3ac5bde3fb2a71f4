# Reference figures from R's survey package for tests/estimate/test_survey_design_r.py.
# Regenerate: Rscript tests/estimate/data/r_survey_reference.R > tests/estimate/data/r_survey_reference.json
# (R 4.2, survey 4.1-1 and sampling 2.9-2 from Debian's r-cran-survey, r-cran-sampling). r is the de-biased variable of the fair
# two-coin forced response (p00 = p11 = 3/4): r = (z - 1/4) / (1/2).
suppressMessages(library(survey))
d <- read.csv("tests/estimate/data/design_sample.csv")
d$r <- (d$z - 0.25) / 0.5
wr <- svydesign(ids = ~school, strata = ~region, weights = ~weight, data = d, nest = TRUE)
wo <- svydesign(ids = ~school, strata = ~region, weights = ~weight, fpc = ~fpc, data = d,
                nest = TRUE)
jk <- as.svrepdesign(wr, type = "JKn", mse = TRUE)
out <- list()
put <- function(name, x) {
  out[[name]] <<- list(estimate = unname(coef(x)), variance = unname(diag(as.matrix(vcov(x)))))
}
put("mean_wr", svymean(~r, wr))
put("total_wr", svytotal(~r, wr))
put("mean_fpc", svymean(~r, wo))
put("total_fpc", svytotal(~r, wo))
put("mean_jkn", svymean(~r, jk))
put("mean_domain_wr", svymean(~r, subset(wr, courses >= 4)))
g <- svyglm(club ~ courses, design = wr, family = quasibinomial())
out[["glm_wr"]] <- list(estimate = unname(coef(g)), variance = unname(diag(vcov(g))),
                        covariance = unname(as.vector(vcov(g))))
out[["degf"]] <- degf(wr)
# RRTCS's analytic default (R/Estimator.R of RRTCS 0.0.3, restated here because RRTCS is not in
# Debian): ForcedResponse(z, p1 = 1/4, p2 = 1/4, pi, type, cl, N) transforms r = (z - p1) /
# (1 - p1 - p2), v = r (r - 1), and takes sum(v / pi) + sampling::varest(r, pik = pi)
# (over N^2 for "mean"); varest is the sampling package's own.
suppressMessages(library(sampling))
pik <- 1 / d$weight
v <- d$r * (d$r - 1)
N <- 2000
out[["rrtcs_total"]] <- list(estimate = sum(d$r / pik),
                             variance = sum(v / pik) + varest(d$r, pik = pik))
out[["rrtcs_mean"]] <- list(estimate = sum(d$r / pik) / N,
                            variance = (sum(v / pik) + varest(d$r, pik = pik)) / N^2)
# RRTCS's ResamplingVariance(output, pi, type, option = 1, N, str = region, clu = school), as its
# R/ResamplingVariance.R and R/JackknifeVariance.R compute it (restated: a loop over strata, and
# within each a loop deleting one cluster at a time).
rrtcs_jk <- function(r, pi, str, clu) {
  ve <- 0
  for (h in unique(str)) {
    rh <- r[str == h]
    ph <- pi[str == h]
    ch <- factor(clu[str == h])
    n <- nlevels(ch)
    Je <- sapply(levels(ch), function(j) sum(rh[ch != j] / (ph[ch != j] * ((n - 1) / n))))
    ve <- ve + (1 - mean(ph)) * ((n - 1) / n) * sum((Je - mean(Je))^2)
  }
  ve
}
jk_total <- rrtcs_jk(d$r, pik, d$region, d$school)
out[["rrtcs_jk_total"]] <- list(estimate = sum(d$r / pik), variance = jk_total)
out[["rrtcs_jk_mean"]] <- list(estimate = sum(d$r / pik) / N, variance = jk_total / N^2)
cat(paste0("{", paste(sprintf('"%s": %s', names(out), sapply(out, function(x) {
  if (is.list(x)) paste0("{", paste(sprintf('"%s": [%s]', names(x), sapply(x, function(v)
    paste(sprintf("%.17g", v), collapse = ", "))), collapse = ", "), "}")
  else sprintf("%.17g", x)
})), collapse = ",\n "), "}\n"))
