"""What a certified run of Model A establishes: the certificate of each phase boundary
(:class:`EventCertificate`) and of the run (:class:`CertifiedResult`), shared by the two
certified backends (arb balls, :mod:`rdyn.reduced_dynamics.certified.arb_pass`; float64 intervals,
:mod:`rdyn.reduced_dynamics.certified.interval_pass`). Definitions: the module docstring of
:mod:`rdyn.reduced_dynamics.certified.arb_pass` (docs/models_and_conventions.md, "Phase boundaries"; Lemmas D.13, D.16).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field


class QuadratureTooLarge(ArithmeticError):
    """A step's certified quadrature would need more points than its bound
    (:data:`rdyn.reduced_dynamics.certified.strip.MAX_LATTICE`): the certified loop stops there
    with this reason (``stopped``), as at a branch point."""


@dataclass
class EventCertificate:
    """One threshold crossing: its step, whether certified, and the first ambiguous step."""

    name: str
    step: int | None = None          # event step (by the midpoint test where ambiguous)
    certified: bool = False
    overlap_step: int | None = None  # first step at which the enclosure of the test contains 0
    overlap: object = None           # that enclosure (an arb ball)
    _ambiguous: bool = False

    def observe(self, t: int, value) -> None:
        """Record the enclosure ``value`` of the test quantity at step t (event: value >= 0)."""
        if self.step is not None:
            return
        if value >= 0:            # arb: True only if certainly >= 0
            sure = True
        elif value < 0:           # certainly < 0
            return
        else:
            sure = False
            if not self._ambiguous:
                self._ambiguous = True
                self.overlap_step, self.overlap = t, value
            if not value.mid() >= 0:
                return
        self.step = t
        self.certified = sure and not self._ambiguous

    def as_dict(self) -> dict:
        return {"step": self.step, "certified": self.certified, "overlap_step": self.overlap_step,
                "overlap": None if self.overlap is None else
                {"mid": arb_to_mpf(self.overlap.mid()), "rad": arb_to_mpf(self.overlap.rad())}}


@dataclass
class CertifiedResult:
    """Outcome of :func:`certified_run`; ``state`` is the final box (arb balls)."""

    steps: int
    t1: EventCertificate
    T_star: EventCertificate
    state: tuple
    prec: int
    radius_final: float          # max relative radius of (C1, C2, C3) at the last step
    radius_at_T_star: float | None
    radius_growth: list = field(default_factory=list)  # (t, relative radius) samples
    stopped: str | None = None   # why the enclosure stopped early (branch undetermined)
    backend: str = "arb"         # "arb" (balls of ``prec`` bits) or "interval64" (float64)

    @property
    def certified(self) -> bool:
        events_ok = all(ev.certified or (ev.step is None and ev.overlap_step is None)
                        for ev in (self.t1, self.T_star))
        return events_ok and self.stopped is None

    def text(self) -> str:
        kind = (f"{self.prec}-bit arb balls" if self.backend == "arb" else
                "float64 intervals, outward-rounded")
        parts = [f"  certified: {'yes' if self.certified else 'NO'} (backend {self.backend}: {kind}; "
                 f"relative radius {self.radius_final:.3g} at step {self.steps}"
                 + (f", {self.radius_at_T_star:.3g} at T*" if self.radius_at_T_star is not None
                    else "") + ")"]
        for ev in (self.t1, self.T_star):
            if ev.overlap_step is not None:
                parts.append(f"  {ev.name} not certified: at step {ev.overlap_step} the test "
                             f"enclosure {ev.overlap} contains 0")
        if self.stopped:
            parts.append(f"  enclosure stopped: {self.stopped}")
        parts.append(f"  final enclosure (step {self.steps}): " + "  ".join(
            f"{name} in {_certain_digits(v)}" for name, v in zip(("C1", "C2", "C3"), self.state)))
        return "\n".join(parts)

    def summary(self) -> dict:
        return {"certified": self.certified, "radius": self.radius_final,
                "radius_at_T_star": self.radius_at_T_star, "prec_bits": self.prec,
                "backend": self.backend,
                "t1": self.t1.as_dict(), "T_star": self.T_star.as_dict(),
                "stopped": self.stopped,
                "final_enclosure": {name: {"mid": arb_to_mpf(v.mid()), "rad": arb_to_mpf(v.rad())}
                                    for name, v in zip(("C1", "C2", "C3"), self.state)}}


def relative_radius(state) -> float:
    """The largest relative radius rad/|mid| of a box of arb balls (exact components count 0;
    a ball centred at 0 with a radius counts inf)."""
    worst = 0.0
    for v in state:
        rad = float(v.rad())
        if rad == 0:
            continue
        mid = abs(float(v.mid()))
        worst = max(worst, rad / mid if mid > 0 else float("inf"))
    return worst


def _certain_digits(v) -> str:
    """An arb ball printed with the digits it certifies (at most 40) and its radius."""
    if not v.is_finite():
        return str(v)
    digits = max(1, min(40, int(v.rel_accuracy_bits() * 0.30103)))
    return v.str(digits, radius=True)


def arb_to_mpf(x):
    """The exact value of an exact arb (a midpoint or a radius) as an mpf, whatever mpmath's
    working precision (created at the bits of its mantissa); nan / inf for a non-finite one;
    anything else unchanged."""
    import mpmath

    flint = sys.modules.get("flint")   # an arb exists only once flint is loaded
    if flint is None or not isinstance(x, flint.arb):
        return x
    if not x.is_finite():
        return mpmath.mpf(float(x.mid()))          # nan, inf or -inf
    man, exp = x.man_exp()
    with mpmath.workprec(max(53, int(man).bit_length())):
        return mpmath.ldexp(mpmath.mpf(int(man)), int(exp))
