"""verify/proofs/model_b/prove.py: the report of one Model B instance is the API's."""
from __future__ import annotations

import rdyn
from rdyn.verification.proofs.model_b.instance import BInstance
from rdyn.verification.proofs.model_b.prove import prove_model_b


def test_the_report_is_what_rdyn_prove_prints_and_restores_the_precision():
    import flint

    before = flint.ctx.prec
    report = prove_model_b(BInstance(model="ln", data="spectrum", d=3, n=6, spectrum=(4.0, 1.0, 1.0),
                                     gamma_range=(0.5, 1.0)))
    assert flint.ctx.prec == before
    api = rdyn.prove(paper="B", model="ln", data="spectrum", d=3, spectrum="4,1,1", gamma="0.5,1").to_dict()
    strip = lambda r: [{k: v for k, v in s.items() if k != "certificate"} for s in r["statements"]]
    assert strip(report) == strip(api) and report["instance"] == api["instance"]
