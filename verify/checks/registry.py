"""The checks of ``rdyn verify``, as a table of groups, selectable by check id.

A *group* is one function that returns a list of :class:`rdyn.verification.checks.record.Check` records. Each
group declares the ids it produces as patterns (``*`` any run of characters, ``?`` one
character; every other character is literal, since ids contain brackets such as
``A.F.E[x s(x) s'(x)].relu``), so that ``run_checks(only=[...])`` runs just the groups that
can produce a matching id and then keeps exactly the matching records. A produced id that its
group does not declare is an error (the table would otherwise silently skip it).

Verdicts are pure functions of the claim: each group is called with fixed arguments, every
random number comes from a generator seeded inside the check, every precision is set by a
context inside the check (``mpmath.workdps``, :func:`rdyn.reduced_dynamics.model_a.working_precision`),
and no numbers are substituted into sympy expressions (:mod:`rdyn.derivations.numeric`). The tests run
the groups in fresh processes under several hash seeds and in shuffled orders and compare the
records bit for bit (tests/project/test_verify_determinism.py).
"""
from __future__ import annotations

import importlib
import re
import sys
import time
from dataclasses import dataclass, field
from typing import Iterable, Sequence

from rdyn.verification.checks.record import Check

PAPERS = ("A", "B")


@dataclass(frozen=True)
class CheckGroup:
    """One check function: ``module.function(**kwargs)`` returns Check records whose ids all
    match one of ``ids``. ``quick_kwargs`` replace ``kwargs`` under ``--quick``;
    ``quick=False`` leaves the group out of ``--quick`` entirely."""

    name: str
    paper: str
    module: str
    function: str
    ids: tuple[str, ...]
    kwargs: dict = field(default_factory=dict)
    quick_kwargs: dict | None = None
    quick: bool = True

    def call(self, quick: bool) -> list[Check]:
        from rdyn.derivations.reproducible import fixed_sympy_random

        fn = getattr(importlib.import_module(self.module), self.function)
        kwargs = self.quick_kwargs if (quick and self.quick_kwargs is not None) else self.kwargs
        with fixed_sympy_random():  # sympy's random state: the same for every group, every run
            out = list(fn(**kwargs))
        for check in out:
            if not any(id_matches(check.id, p) for p in self.ids):
                raise RuntimeError(f"check {check.id!r} of group {self.name!r} is not declared "
                                   "in rdyn.verification.checks.registry.GROUPS")
        return out


def _pattern_regex(pattern: str) -> re.Pattern:
    parts = (".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)
    return re.compile("".join(parts) + r"\Z", re.DOTALL)


def id_matches(check_id: str, pattern: str) -> bool:
    """``check_id`` matches ``pattern`` (``*`` and ``?`` wildcards, all else literal)."""
    return _pattern_regex(pattern).match(check_id) is not None


def _literal_prefix(pattern: str) -> str:
    return re.split(r"[*?]", pattern, maxsplit=1)[0]


def may_overlap(pattern_a: str, pattern_b: str) -> bool:
    """Conservative test that two patterns can match a common id: their literal prefixes (up
    to the first wildcard) are compatible. Never False when they can overlap."""
    a, b = _literal_prefix(pattern_a), _literal_prefix(pattern_b)
    if "*" not in pattern_a and "?" not in pattern_a and "*" not in pattern_b and "?" not in pattern_b:
        return pattern_a == pattern_b
    return a.startswith(b) or b.startswith(a)


_A, _B = "rdyn.verification.checks.model_a", "rdyn.verification.checks.model_b"
_ACT = "rdyn.verification.checks.activations"

GROUPS: tuple[CheckGroup, ...] = (
    CheckGroup("A.structural", "A", _A, "structural_checks", ("A.invariant.*", "A.first_step.*")),
    CheckGroup("A.printed_appendix_f", "A", _A, "printed_appendix_f_checks", ("A.F.printed.*",)),
    CheckGroup("A.printed_formulas", "A", _A, "printed_formula_checks",
               ("A.C1star.*", "A.loss.section5", "A.F1.*", "A.F2_1.*", "A.F2_2.*", "A.F3.*",
                "A.F4.*", "A.F5.*", "A.F3_is_A_plus_B.*", "A.A_of_t.*", "A.gradWKQ.*",
                "A.lemmaD5.*")),
    CheckGroup("A.bivariate_quadrature", "A", _A, "bivariate_quadrature_checks", ("A.gauss.*",)),
    CheckGroup("A.appendix_f", "A", _A, "appendix_f_checks", ("A.F.E[*",),
               kwargs={"samples": 10**6}),
    CheckGroup("A.map_monte_carlo", "A", _A, "collapsed_map_monte_carlo_checks", ("A.map.mc.*",),
               kwargs={"samples": 400_000}, quick_kwargs={"samples": 100_000}),
    CheckGroup("A.phase_bounds", "A", _A, "phase_bound_checks", ("A.lemmaD13.*",)),
    CheckGroup("A.precision", "A", _A, "precision_checks", ("A.precision.*",)),
    CheckGroup("A.theta_claims", "A", _A, "theta_claim_checks",
               ("A.Tstar.*", "A.t1.*", "A.loss.T_exponent.*", "A.loss.constant.*"), quick=False),
    CheckGroup("B.symbolic", "B", _B, "symbolic_checks",
               ("B.ln.gradient", "B.noln.gradient", "B.recursion.*", "B.kappa.*",
                "B.noln.gamma_star.*", "B.noln.irreducible.*", "B.noln.first_step",
                "B.ln.growth_constant", "B.looped.growth_constant", "B.noln.eta_max",
                "B.ln.loss_stable_form")),
    CheckGroup("B.numeric", "B", _B, "numeric_checks",
               ("B.*.L*.exact_vs_quadrature", "B.kappa2.*", "B.ln.monte_carlo_vs_exact",
                "B.*.growth_increment", "B.looped.upsilon1", "B.looped.upsilon1_routes",
                "B.noln.converges.*", "B.noln.eta_max_descent.*", "B.ln.monotone",
                "B.growth.exponents", "B.looped.theorem_4_7")),
    CheckGroup("B.full_matrix", "B", _B, "full_matrix_checks", ("B.full_matrix.*",)),
    CheckGroup("B.exact_dirichlet", "B", "rdyn.verification.references.dirichlet_b", "checks", ("B.exact.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("B.exact_gaussian", "B", "rdyn.verification.references.gaussian_route_b", "checks", ("B.gaussian.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("A.flow_exponents", "A", "rdyn.verification.checks.flow", "derived_exponent_checks",
               ("A.flow.Tstar_exponent.*",)),
    CheckGroup("A.flow", "A", "rdyn.verification.checks.flow", "checks",
               ("A.flow.order.*", "A.flow.modified.*", "A.flow.slow.*", "A.flow.late_loss.*",
                "A.flow.asymptotic.*"),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("A.scaling", "A", "rdyn.verification.checks.scaling", "checks", ("S.A.*",),
               kwargs={"quick": False, "model": "A"}, quick_kwargs={"quick": True, "model": "A"}),
    CheckGroup("B.scaling", "B", "rdyn.verification.checks.scaling", "checks", ("S.B.*",),
               kwargs={"quick": False, "model": "B"}, quick_kwargs={"quick": True, "model": "B"}),
    CheckGroup("A.claims", "A", "rdyn.verification.checks.claims_a", "checks", ("A.claim.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("B.claims", "B", "rdyn.verification.checks.claims_b", "checks", ("B.claim.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("A.printed_intermediates", "A", "rdyn.verification.checks.printed_f", "checks", ("A.printedF.*",)),
    CheckGroup("A.errata", "A", "rdyn.verification.checks.errata_a", "checks", ("A.errata.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("A.extraction", "A", "rdyn.verification.checks.extraction_a", "checks", ("A.extraction.*",)),
    CheckGroup("A.coverage", "A", "rdyn.verification.checks.coverage_a", "checks", ("A.cover.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    CheckGroup("B.coverage", "B", "rdyn.verification.checks.coverage_b", "checks", ("B.cover.*",),
               kwargs={"quick": False}, quick_kwargs={"quick": True}),
    # smooth activations (beyond the paper)
    CheckGroup("A.act.closure", "A", _ACT, "closure_checks", ("A.act.closure.*",)),
    CheckGroup("A.act.expectations", "A", _ACT, "expectation_checks", ("A.act.expect.*",),
               kwargs={"samples": 1_000_000}, quick_kwargs={"samples": 100_000}),
    CheckGroup("A.act.finite_differences", "A", _ACT, "finite_difference_checks", ("A.act.fd.*",)),
    CheckGroup("A.act.full_matrix", "A", _ACT, "full_matrix_checks", ("A.act.full_matrix.*",)),
    CheckGroup("A.act.precision", "A", _ACT, "precision_checks", ("A.act.dps.*",),
               quick_kwargs={"names": ("erf", "gelu")}),
    CheckGroup("A.act.certified", "A", _ACT, "certified_checks", ("A.act.certified.*",),
               quick_kwargs={"names": ("erf",)}),
    CheckGroup("A.flow.smooth", "A", "rdyn.verification.checks.flow", "smooth_checks",
               ("A.flow.smooth.*",), kwargs={"names": ("erf", "tanh")},
               quick_kwargs={"names": ("tanh",)}),
)


def select_groups(model: str = "all", quick: bool = False,
                  only: Sequence[str] | None = None,
                  groups: Iterable[CheckGroup] = GROUPS) -> list[CheckGroup]:
    """The groups that run for ``model`` ("A", "B", "all"), ``quick`` and ``only`` patterns."""
    out = []
    for group in groups:
        if model != "all" and group.paper != model:
            continue
        if quick and not group.quick:
            continue
        if only and not any(may_overlap(p, q) for p in only for q in group.ids):
            continue
        out.append(group)
    return out


def run_checks(only: Sequence[str] | None = None, model: str = "all", quick: bool = False,
               progress: bool = False, groups: Iterable[CheckGroup] = GROUPS) -> list[Check]:
    """Run the selected groups in table order and return their records (only those matching
    an ``only`` pattern, if given). ``progress`` names each group on stderr."""
    if model not in ("A", "B", "all"):
        raise ValueError(f"model must be A, B or all, not {model!r}")

    out: list[Check] = []
    selected = list(select_groups(model, quick, only, groups))
    for number, group in enumerate(selected, 1):
        if progress:   # the group's place among all selected: the progress has a total
            print(f"rdyn verify: [{number}/{len(selected)}] {group.name} ...", file=sys.stderr,
                  end="", flush=True)
        start = time.monotonic()
        records = group.call(quick)
        if progress:
            print(f" {len(records)} checks, {time.monotonic() - start:.1f} s", file=sys.stderr,
                  flush=True)
        if only:
            records = [c for c in records if any(id_matches(c.id, p) for p in only)]
        out += records
    return out


def summary_counts(checks: Sequence[Check]) -> dict[str, int]:
    """Number of checks per status, in the order of :data:`rdyn.verification.checks.record.STATUSES`."""
    from rdyn.verification.checks.record import STATUSES

    return {status: sum(c.status == status for c in checks) for status in STATUSES}


COUNTS_MARKER = "<!-- rdyn verify --quick counts -->"


def counts_line(checks: Sequence[Check]) -> str:
    """The one-line count summary the docs quote after :data:`COUNTS_MARKER`, e.g.
    ``rdyn verify --quick: Model A 66 pass, 0 fail, 3 discrepancy, 0 info; Model B ...``;
    the tests compare it with a fresh run, so the docs never quote stale counts."""
    parts = []
    for paper in PAPERS:
        own = [c for c in checks if _paper_of(c.id) == paper]
        counts = summary_counts(own)
        parts.append(f"Model {paper} " + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return "`rdyn verify --quick`: " + "; ".join(parts) + f" ({len(checks)} checks)."


def _paper_of(check_id: str) -> str:
    """The paper of a check id: its first component (``A.``, ``B.``), or for the scaling lines
    ``S.<claim>`` the claim's (``S.A.t1...``)."""
    return check_id.split(".")[1] if check_id.startswith("S.") else check_id.split(".")[0]
