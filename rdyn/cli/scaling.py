"""Measured exponents and constants behind the papers' Theta-claims, with 95% intervals.

Claims tested (seed 000 = Model A, for identity, ReLU and LeakyReLU(kappa); seed 003 = Model B):
  A.t1     Lemma D.13   t1 = Theta(1/eta)
  A.Tstar  Lemma D.16   T* = Theta(K D^2 / (eta ||V*||_F^2))
  A.loss   Theorem 3.1  excess loss L(T) = Theta(K D^4 / (eta T)) for T >> T*
  B.ln.gamma, B.ln.alpha, B.ln.beta        LN layer: gamma ~ t^(1/3), alpha, beta ~ t^(1/6)
  B.looped.rho, B.looped.w, B.looped.v     looped (L=2): rho = w v ~ t^(1/2), w, v ~ t^(1/4)

Definitions (docs/models_and_conventions.md; units: GD steps, all other quantities dimensionless):
  t1 = min{t >= 1 : C1(t) >= 0.95 C1*(t)}   (C1* the fixed point of the C1 update at p(t))
  T* = min{t >= 0 : p(t) >= 1/(2K)}          (p the attention on an in-group key)
  excess loss L = 1/2 E||Y - TF(X)||_F^2 - 1/2 E||E||_F^2 (noise constant removed)
  For A.loss the lines in D, K, eta measure T L(T) at T = m T* (m = 16; 8 with --quick), the
  T line measures L(T) at T = m T* 2^k.  Model B: one trajectory per model (Task 2 spectrum
  (3,1,1,1), exact expectations, alpha0 = 0, beta0 = 1, eta = 2),
  sampled at t = T 2^-k.

Method: each line varies one factor over a geometric range, the others fixed (softmax scale
1/D unless --logit-scale sqrtD), and fits log y = log C + a log x by least squares. The 95%
interval is a Student-t interval from the regression residuals; the data are deterministic,
so it measures the departure from a pure power law over the range, not noise. "local" is the
log-log slope between the two points at the line's asymptotic end (largest D, T, t;
smallest K (K/D -> 0), eta, ||V*||^2). Verdict: "confirmed" when the claimed exponent is inside
an interval no wider than +-10% of it, or the local exponent is within 10% of it, else
"not confirmed". C is the prefactor of the
claimed form with the varied factor's exponent replaced by the fitted one (listed under the
table), so constants of confirmed lines of one claim are comparable.

--extend continues the Model A T* D-lines (largest iterated D = 64; 32 with --quick) to
D = 2^20 (2^14 with --quick) by the slow-manifold limit T* = tau_star/eta at the line's eta
(the eta -> 0 limit, real numbers, not step counts; as the teacher's --method slow). Each point
of a row's "extension" says its "source" ("map" or "slow_manifold"); the fit over the extension
points is reported apart from the iterated fit, next to the derived exponent (3 at logits/D,
2 at logits/sqrt(D)), and the slow limit is compared with the map at every iterated D.

Default sizes take about 2 minutes on 2 cores; --quick about 30 s. Progress goes to stderr.
--json prints {"rows": [...], ...}; --out FILE writes the JSON (FILE ending in .json) or the
table. Exit status 0.
"""
from __future__ import annotations

from rdyn.option_types import ScalingOptions

NAME = "scaling"


def run(values: ScalingOptions, args) -> int:
    from rdyn.api._scaling import run as api_run

    res = api_run(values)
    if values.json:
        print(res.to_json())
    else:
        print(res.detail["table"])
    return 0
