# Reference figures from R's survey package for tests/estimate/test_survey_design_r.py.
# Regenerate: Rscript tests/estimate/data/r_survey_reference.R > tests/estimate/data/r_survey_reference.json
# (R 4.2, survey 4.1-1 from Debian's r-cran-survey). r is the de-biased variable of the fair
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
cat(paste0("{", paste(sprintf('"%s": %s', names(out), sapply(out, function(x) {
  if (is.list(x)) paste0("{", paste(sprintf('"%s": [%s]', names(x), sapply(x, function(v)
    paste(sprintf("%.17g", v), collapse = ", "))), collapse = ", "), "}")
  else sprintf("%.17g", x)
})), collapse = ",\n "), "}\n"))
