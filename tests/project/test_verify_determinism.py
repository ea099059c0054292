"""Every verdict of ``rdyn verify`` is a pure function of its check (issue 9).

The default suite runs the quick checks in one fresh process (shuffled order, a non-default
``PYTHONHASHSEED``): no check may fail and the docs must quote the counts of this run; the
derived expressions must be identical under two hash seeds. The slow suite runs the quick checks
in two processes (table order and shuffled, different hash seeds) whose records must agree bit for
bit (every float compared by ``repr``), and the same for the full report and more hash seeds.
"""
import json
import os
import random
import re
import subprocess
import sys

import pytest

from rdyn.verification.checks import registry

from checkout import ROOT

RUNNER = r"""
import json, sys
from rdyn.verification.checks.registry import GROUPS
names, quick = json.loads(sys.argv[1]), sys.argv[2] == "quick"
by_name = {g.name: g for g in GROUPS}
records = {}
for name in names:
    for check in by_name[name].call(quick):
        assert check.id not in records, check.id
        records[check.id] = check.as_dict()
print(json.dumps(records, sort_keys=True, default=repr))
"""


def _start(names, quick: bool, hash_seed: int) -> subprocess.Popen:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(names),
                             "quick" if quick else "full"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _collect(process: subprocess.Popen) -> dict:
    out, err = process.communicate()
    assert process.returncode == 0, err[-3000:]
    return json.loads(out)


def _group_names(quick: bool) -> list[str]:
    return [g.name for g in registry.select_groups("all", quick)]


def _compare(reference: dict, other: dict) -> None:
    assert sorted(reference) == sorted(other)
    differing = [k for k in reference if reference[k] != other[k]]
    assert not differing, {k: (reference[k], other[k]) for k in differing[:3]}


def _docs_counts_line() -> str | None:
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip() == registry.COUNTS_MARKER:
                return lines[i + 1].strip()
    return None


def _as_checks(records: dict):
    from rdyn.verification.checks.record import Check

    return [Check(**{k: v for k, v in r.items()}) for r in records.values()]


def _non_finite(value, path=""):
    """Paths of non-finite floats in a record (JSON would print them as null: a check that
    overflows must say so in words, not leave a null)."""
    if isinstance(value, float):
        return [] if value == value and abs(value) != float("inf") else [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _non_finite(v, f"{path}.{k}")]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in _non_finite(v, f"{path}[{i}]")]
    return []


def _shuffled(names: list[str]) -> list[str]:
    shuffled = names[:]
    random.Random(9).shuffle(shuffled)
    assert shuffled != names
    return shuffled


def test_quick_verify_has_no_failures():
    """One fresh process, the groups in a shuffled order under a non-default hash seed: no
    check fails, the pinned verdicts come out, the docs quote this run's counts."""
    _assert_quick_verdicts(_collect(_start(_shuffled(_group_names(quick=True)), True, 977)))


@pytest.mark.slow
def test_quick_verify_is_reproducible_across_processes():
    names = _group_names(quick=True)
    first, second = _start(names, True, 1), _start(_shuffled(names), True, 977)
    reference, other = _collect(first), _collect(second)
    _compare(reference, other)
    _assert_quick_verdicts(reference)


def _assert_quick_verdicts(reference: dict) -> None:
    failing = sorted(k for k, r in reference.items() if r["status"] == "fail")
    assert not failing, failing
    assert not _non_finite(reference)
    status = {k: r["status"] for k, r in reference.items()}
    # verdicts that could come out otherwise: the printed forms the derivation contradicts ...
    for k in ("A.A_of_t.relu", "A.A_of_t.leaky", "A.gradWKQ.identity", "B.noln.eta_max"):
        assert status[k] == "discrepancy", k
    assert reference["A.gradWKQ.identity"]["detail"]["derived_equals_printed_with_minus_p_F1"]
    # ... and those it confirms, including the independent Monte Carlo route
    for k in ("A.C1star.identity", "A.loss.section5", "A.F1.identity", "A.F3.identity",
              "A.F5.identity", "A.lemmaD5.factor", "A.gauss.s_s.relu", "A.gauss.u_s_ds.leaky"):
        assert status[k] == "pass", k
    assert sum(k.startswith("A.map.mc.") and v == "pass" for k, v in status.items()) == 6
    assert sum(k.startswith(("A.invariant.", "A.first_step.")) and v == "pass"
               for k, v in status.items()) == 6
    # the docs quote the counts of this very run (regenerate: see docs/verify.md)
    expected = registry.counts_line(_as_checks(reference))
    assert _docs_counts_line() == expected, f"update the docs line to:\n{expected}"


@pytest.mark.slow
def test_full_verify_is_reproducible_under_many_hash_seeds():
    names = _group_names(quick=False)
    runs = []
    for seed, order in ((0, names), (12345, names[::-1])):
        runs.append(_collect(_start(order, False, seed)))
    _compare(runs[0], runs[1])
    assert not [k for k, r in runs[0].items() if r["status"] == "fail"]
    assert not _non_finite(runs[0])
    # the historically flaky group, alone, under more hash seeds
    processes = [_start(["A.bivariate_quadrature"], True, seed) for seed in (3, 4, 6, 9)]
    for p in processes:
        alone = _collect(p)
        _compare({k: runs[0][k] for k in alone}, alone)


DERIVE = r"""
import hashlib, sys
import sympy as sp
from rdyn.derivations import gaussian as g
from rdyn.derivations.model_a.catalog import derive_model_a
h = hashlib.sha256()
for activation, scale in (("relu", "D"), ("leaky", "sqrtD")):
    for name, expr in sorted(derive_model_a(activation, scale).items()):
        h.update(f"{activation}/{scale}/{name}={sp.srepr(expr)}\n".encode())
for activation in ("identity", "relu", "leaky"):
    for name in sorted(g.BIVARIATE_INTEGRANDS):
        h.update(sp.srepr(g.bivariate_form(name, activation)).encode())
    for name in sorted(g.APPENDIX_F):
        h.update(sp.srepr(g.appendix_f(name, activation)).encode())
print(h.hexdigest())
"""


def test_derived_expressions_are_identical_across_hash_seeds():
    """Fresh derivations (not the catalog) hash to the same value under three hash seeds,
    and the catalog's cached expressions equal the fresh ones (srepr)."""
    digests = set()
    processes = []
    for seed in (2, 4099):
        env = {**os.environ, "PYTHONHASHSEED": str(seed), "PYTHONPATH": str(ROOT)}
        processes.append(subprocess.Popen([sys.executable, "-c", DERIVE], cwd=ROOT, env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True))
    for p in processes:
        out, err = p.communicate()
        assert p.returncode == 0, err[-2000:]
        digests.add(out.strip())
    assert len(digests) == 1 and re.fullmatch(r"[0-9a-f]{64}", digests.pop())
