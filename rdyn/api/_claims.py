"""``rdyn.claims``: the ledger of the papers' quantitative statements, each with a verdict."""
from __future__ import annotations

import sys

from rdyn.api._common import options
from rdyn.api._signature import api_function
from rdyn.option_types import ClaimsOptions
from rdyn.result import Result


@api_function("claims")
def claims(**kwargs):
    """Every numbered or displayed quantitative statement of both papers (``paper="A"`` or
    ``"B"`` for one) with a verdict from the ``rdyn verify`` checks that decide it: ``pass``,
    ``discrepancy`` (the printed statement is contradicted; both forms in ``evidence``),
    ``fail`` (rdyn disagrees with itself), ``info`` (a measured constant), ``not_checkable``
    (with a ``reason``), ``inconclusive`` (a fitted rate the decision rule cannot settle). Every
    discrepancy has ``kind``, ``root_cause`` and, where derived, ``correction``;
    ``errata="erratum.tex"`` (or ``.md``, ``.html``) writes the erratum, whose content is also
    ``result.detail["errata"]``. ``full=True`` runs the checks at full sizes; ``report="ledger.md"``
    (or ``.html``) also writes a readable ledger. The checks run once per call, whatever is
    written; ``result.write_errata(path)`` and ``result.write_report(path)`` write the erratum and
    the report later from the ledger the result holds (no second run). Returns a
    :class:`ClaimsResult` (a :class:`rdyn.result.Result`) with key ``claims`` (list of dicts:
    paper, label, statement, verdict, checks, evidence, reason).
    """
    return run(options("claims", kwargs))


class ClaimsResult(Result):
    """The result of :func:`claims`, with the ledger it holds: ``write_errata(path)`` and
    ``write_report(path)`` write the erratum and the readable ledger from it, without running
    the checks again (the same files as ``errata=`` and ``report=``)."""

    __slots__ = ()

    def __dir__(self):
        return sorted(set(super().__dir__()) | {"write_errata", "write_report"})

    def write_errata(self, path) -> list[str]:
        """Write the erratum (``.tex``, ``.md`` or ``.html``) from this result's ledger; returns the
        files written (the document, then its plots). Bad paths raise ValueError (as ``errata=``)."""
        from rdyn.verification.claims import errata_writer

        path = options("claims", {"errata": path}).errata
        return errata_writer.write(self.detail["ledger"], str(path))

    def write_report(self, path) -> str:
        """Write the readable ledger (``.md`` or ``.html``) from this result's ledger."""
        from rdyn.verification.claims import report as claims_report

        path = str(options("claims", {"report": path}).report)
        claims_report.write(self.detail["ledger"], path)
        return path


def run(v: ClaimsOptions, progress: bool = False):
    from rdyn.output import write_rescued
    from rdyn.verification.claims import ledger as ledger_module

    if progress:
        from rdyn.run_time import announce, claims_estimate

        announce(claims_estimate(v.paper, v.full), quiet=False)
    ledger = ledger_module.evaluate(paper=v.paper or "all", quick=not v.full,
                                    progress=progress)
    if v.report is not None:
        from rdyn.verification.claims import report as claims_report

        report = write_rescued("--report", v.report,
                               lambda p: claims_report.write(ledger, p))
        if progress and report is not None:
            print(f"rdyn claims: wrote {report}", file=sys.stderr)
    from rdyn.verification.claims import errata_writer

    if v.errata is not None:
        written = []
        write_rescued("--errata", v.errata,
                      lambda p: written.extend(errata_writer.write(ledger, p)))
        if progress and written:
            print(f"rdyn claims: wrote {', '.join(written)}", file=sys.stderr)
    return ClaimsResult(ledger.to_dict(), None, detail={"ledger": ledger, "errata": errata_writer.errata_data(ledger)})
