"""Per-sample (loss, dloss/dgamma) of Model B's three models on a rule (Lemma C.1, Section B.1;
derived in :mod:`rdyn.derivations.model_b`)."""
from __future__ import annotations

from rdyn.reduced_dynamics.model_b.looped import looped_terms
from rdyn.reduced_dynamics.model_b.rule import SpectralRule, sqrt_elementwise


def ln_terms(rule: SpectralRule, g):
    """Per-sample (loss, dloss/dgamma) of the LN layer (Lemma C.1; rdyn.derivations.model_b)."""
    m1, m2, var = rule.m1, rule.m2, rule.variance
    r2 = 1 + 2 * g * m1 + g * g * m2
    r, sq2 = sqrt_elementwise(r2), sqrt_elementwise(m2)
    cos = (m1 + g * m2) / (r * sq2)
    # 2 - 2 cos without cancellation (rdyn.derivations.model_b.ln_loss_stable_form)
    loss = 2 * var / (r2 * m2 * (1 + cos))
    dloss = -2 * var / (sq2 * r2 * r)
    return loss, dloss


def noln_terms(rule: SpectralRule, g, target: str):
    """Per-sample (loss, dloss/dgamma) of the no-LN layer (Section B.1; rdyn.derivations.model_b)."""
    m1, m2 = rule.m1, rule.m2
    sq2 = sqrt_elementwise(m2)
    if target == "unnormalized":
        return 1 + 2 * (g - 1) * m1 + (g - 1) ** 2 * m2, 2 * (m1 + (g - 1) * m2)
    return 2 + 2 * g * m1 - 2 * m1 / sq2 + g * g * m2 - 2 * g * sq2, 2 * (m1 + g * m2 - sq2)


def model_terms(model: str, rule: SpectralRule, g, target: str | None = None, L: int = 1):
    """Per-sample (loss, dloss/dgamma) of any of the three models, on a given rule."""
    if model == "ln":
        return ln_terms(rule, g)
    if model == "looped":
        return looped_terms(rule, g, L)
    return noln_terms(rule, g, target)

