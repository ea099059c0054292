"""The checks of ``rdyn verify``: the registry of check groups and the check functions.

Paper sections: every derived identity and printed constant of both papers (Model A: seed 000,
Appendices D and F; Model B: seed 003, Appendices B and C), the Theta-claims, the errata and the
statements the claims ledger needs (docs/verify.md).

Modules (import them by full path; this ``__init__`` imports nothing):

* ``registry``: the table of check groups, selectable by id (``--only``);
* ``record``: the check record (``Check``);
* ``model_a``, ``model_b``, ``activations``, ``flow``, ``scaling``: the checks of the derivations
  and iterators (ids ``A.*``, ``B.*``, ``A.act.*``, ``A.flow.*``, ``S.*``);
* ``claims_a``, ``claims_b``, ``coverage_a``, ``coverage_b``, ``errata_a``: the checks the claims
  ledger needs (``A.claim.*``, ``B.claim.*``, ``A.cover.*``, ``B.cover.*``, ``A.errata.*``).
"""
