"""Certified iteration of Model A (``rdyn teacher --certify``): enclosures that provably contain
the exact real-number trajectory, and the certificates of t1 and T* they establish.

Paper sections: Appendix D (Lemma D.2's map; the events t1, T* of Lemmas D.13 and D.16).

Modules (import them by full path; this ``__init__`` imports nothing):

* ``arb_pass``: python-flint ``arb`` balls (``certified_run``);
* ``arb_iteration``: the one certified arb iteration (``ArbIteration``), of ``arb_pass`` and ``rdyn prove``;
* ``interval_pass``: float64 interval arithmetic, compiled (``certified_run_interval``);
* ``interval``: the outward-rounded float64 interval operations it is built from;
* ``smooth``: erf and GELU on arb balls;
* ``certificate``: ``EventCertificate``, ``CertifiedResult`` (shared by the backends);
* ``exact_inputs``: a run's inputs as arb balls containing their exact values.
"""
