"""The statistics: PPI-corrected means, per-answer intervals, calibration measures, and the
paired tests behind ``ragrecall.stats``. Imports nothing of ragrecall.

Modules: ``tests`` (mean, bootstraps, sign-flip, Wilcoxon, ranks), ``power`` (effect size,
smallest p, detectable difference), ``agreement`` (balanced accuracy, kappa, plain ECE),
``calibration`` (Brier, log loss, debiased ECE, prior shift), ``platt`` (logit, sigmoid, Platt
fit), ``intervals`` (share and conformal intervals), ``ppi`` (PPI++ and Student's t).

Why each routine is written here rather than taken from scipy, scikit-learn or ppi-python.
Shared facts: the core depends on none of them, nor on numpy (scipy reaches the dev
environment only through mlflow); ``import scipy.stats`` alone takes about a second and
``import ragrecall`` 10 ms; the tests pin figures drawn from ``random.Random(seed)``, which
numpy's generators do not reproduce. A routine moves to a library when the core depends on
it anyway and the figures stay; today none does.

=============================  ===========================================================
routine                        hand-written because
=============================  ===========================================================
t_quantile                     scipy.stats.t.ppf gives the same (to 1e-12), but scipy is
                               not a dependency; 40 lines
ppi_mean, ppi_difference       ppi-python's estimator assumes the labelled answers are apart
                               from the judged ones, with no finite-population correction:
                               another answer for ragrecall's design (judge scores all,
                               people label a subset); it also brings numpy and scipy
bootstrap_ci,                  scipy.stats.bootstrap draws with numpy (the seeded figures
bootstrap_interval             would change) and defaults to BCa; both share one draw here
                               and differ only in the quantile (interpolated / lower)
sign_flip_test                 scipy.stats.permutation_test draws with numpy and counts
                               its p-value otherwise; the exact enumeration is 10 lines
wilcoxon_signed_rank, ranks    scipy.stats.wilcoxon / rankdata give the same p and ranks
                               (ties exact since scipy 1.13), but scipy is not a dependency
paired_effect_size, power      one-line formulas on the standard library's NormalDist
balanced_accuracy,             scikit-learn's scores agree, but it is not a dependency,
cohen_kappa                    and it warns where these return None (one class only)
brier_score, log_loss          scikit-learn clips log loss at machine epsilon (here 1e-6:
                               the pinned figures); two lines each
expected_calibration_error,    no well-kept library has the debiased binned estimator
debiased_ece, calibrated_ece   (Kumar et al. 2019) or its perfectly calibrated yardstick
prior_shift                    EM of Saerens et al. 2002: in no well-kept library
share_interval                 the one-factor Poisson-binomial is in no well-kept library
conformal_interval, radius     one quantile of |human - judge|; MAPIE is heavy for that
platt, logit, sigmoid          scikit-learn's sigmoid calibration fits the raw score, not
                               its logit, without the ridge toward slope 1 or the rule
                               against a negative slope: other (a, b); scipy.special's
                               logit/expit are one line each
=============================  ===========================================================
"""
