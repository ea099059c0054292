"""The claims ledger (``rdyn claims``): the papers' statements, their verdicts, the errata.

Paper sections: every numbered or displayed quantitative statement of both papers (docs/claims.md).

Modules (import them by full path; this ``__init__`` imports nothing):

* ``ledger``: the ledger data (``LEDGER``) and its verdicts;
* ``fit_rule``: the one decision rule for a rate known only from a finite-size fit;
* ``errata``, ``errata_writer``: the classification of discrepancies and the erratum files;
* ``report``: the readable ledger (Markdown/HTML);
* ``notation``, ``page``: the notation and prose typesetting of the erratum and the report; the HTML pages' style;
* ``trajectories``: recorded Model A trajectories the ledger's checks share.
"""
