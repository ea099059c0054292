"""The on-disk kernel cache (rdyn.reduced_dynamics.runs.kernel_cache): keys, integrity, concurrency,
cold/warm behaviour of the CLI, lazy imports, and hash-seed independence of generated source.

Every test that looks at cold behaviour uses its own temporary RDYN_CACHE_DIR.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rdyn.reduced_dynamics.runs import kernel_cache

from checkout import ROOT
COMPILING = "rdyn: compiling"


def _env(cache: Path, **extra) -> dict:
    env = dict(os.environ, RDYN_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **extra)
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    return env


def _python(code: str, cache: Path, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=_env(cache, **extra),
                          capture_output=True, text=True, timeout=300)


def _rdyn(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rdyn", *args], cwd=ROOT, env=_env(cache),
                          capture_output=True, text=True, timeout=300)


# ----------------------------------------------------------------------------------- keys

def test_module_key_changes_with_source():
    a = "def f(x):\n    return x + 1\n"
    assert kernel_cache.module_key(a) == kernel_cache.module_key(a)
    assert kernel_cache.module_key(a) != kernel_cache.module_key(a.replace("1", "2"))
    assert kernel_cache.module_key(a) != kernel_cache.module_key(a + "\n")


def test_module_key_depends_on_numba_version(monkeypatch):
    import numba

    a = "def f(x):\n    return x\n"
    before = kernel_cache.module_key(a)
    monkeypatch.setattr(numba, "__version__", numba.__version__ + ".post-test")
    assert kernel_cache.module_key(a) != before


def test_source_key_depends_on_inputs_and_package():
    k = kernel_cache.source_key("model_a", ("relu", "D"))
    assert k == kernel_cache.source_key("model_a", ("relu", "D"))
    assert k != kernel_cache.source_key("model_a", ("relu", "sqrtD"))
    assert k != kernel_cache.source_key("model_a_batch", ("relu", "D"))
    assert len(kernel_cache.package_fingerprint()) == 64


# ------------------------------------------------------------------------- source cache

def test_source_cache_rebuilds_corrupt_entries(tmp_path, monkeypatch):
    monkeypatch.setenv("RDYN_CACHE_DIR", str(tmp_path))
    calls = []

    def generate():
        calls.append(1)
        return "def f():\n    return 42\n"

    body = kernel_cache.cached_source("unit", (1,), generate)
    assert body == "def f():\n    return 42\n" and len(calls) == 1
    path = kernel_cache.source_path("unit", (1,))
    assert path.parent.parent == tmp_path
    assert kernel_cache.cached_source("unit", (1,), generate) == body and len(calls) == 1  # warm
    good = path.read_bytes()
    corruptions = [good[:-5],                                   # truncated
                   good.replace(b"42", b"43"),                  # wrong content, old hash
                   b"",                                         # empty
                   b"\xff\xfe" + good]                          # not text
    for n, bad in enumerate(corruptions, start=2):
        path.write_bytes(bad)
        assert kernel_cache.cached_source("unit", (1,), generate) == body
        assert len(calls) == n, "a corrupt entry must be regenerated, never used"
        assert path.read_bytes() == good
    assert not list(path.parent.glob("*.tmp")), "temporary files must not be left behind"


# ------------------------------------------------------------------- compiled modules

_TINY = """
import math

from rdyn.reduced_dynamics.runs.kernel_cache import njit


@njit
def f(x, n):
    s = 0.0
    for i in range(n):
        s += math.exp(-x * i)
    return s
"""

_CALL_TINY = ("from rdyn.reduced_dynamics.runs import kernel_cache\n"
              f"m = kernel_cache.load_module('unit_tiny', {_TINY!r}, 'test kernel')\n"
              "print(repr(m.f(0.25, 7)))\n")
_EXPECTED_TINY = repr(sum(__import__("math").exp(-0.25 * i) for i in range(7)))


def test_concurrent_cold_processes_and_corrupt_numba_files(tmp_path):
    """Three processes compile the same entry at once into an empty cache: all get the right
    value and leave intact files; a warm run is silent; corrupted numba cache files and a
    corrupted module file are detected, recompiled (with the message) and still right."""
    procs = [subprocess.Popen([sys.executable, "-c", _CALL_TINY], cwd=ROOT,
                              env=_env(tmp_path), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert out.strip() == _EXPECTED_TINY
    warm = _python(_CALL_TINY, tmp_path)
    assert warm.returncode == 0 and warm.stdout.strip() == _EXPECTED_TINY
    assert COMPILING not in warm.stderr
    kernels = tmp_path / "kernels"
    assert not list(kernels.rglob("*.tmp*"))
    data_files = list((kernels / "__pycache__").glob("rdyn_unit_tiny_*.nbc"))
    index_files = list((kernels / "__pycache__").glob("rdyn_unit_tiny_*.nbi"))
    assert data_files and index_files

    for corrupt in ("truncate data", "garble index"):
        target = data_files[0] if "data" in corrupt else index_files[0]
        raw = target.read_bytes()
        target.write_bytes(raw[: len(raw) // 2] if "truncate" in corrupt
                           else raw[:40] + bytes(b ^ 0x5A for b in raw[40:80]) + raw[80:])
        run = _python(_CALL_TINY, tmp_path)
        assert run.returncode == 0, run.stderr
        assert run.stdout.strip() == _EXPECTED_TINY
        assert COMPILING in run.stderr, f"{corrupt}: the entry must be rebuilt"

    (module,) = kernels.glob("rdyn_unit_tiny_*.py")
    module.write_text(module.read_text().replace("-x * i", "x * i"))  # wrong content
    run = _python(_CALL_TINY, tmp_path)
    assert run.stdout.strip() == _EXPECTED_TINY, "a modified module file must not be used"
    assert "-x * i" in module.read_text()
    again = _python(_CALL_TINY, tmp_path)
    assert again.stdout.strip() == _EXPECTED_TINY and COMPILING not in again.stderr


# ------------------------------------------------------------------------ the CLI, cold/warm

_FORBIDDEN = ("sympy", "matplotlib", "scipy.linalg", "rdyn.reduced_dynamics.model_b.run", "flint")


def _modules_after(args: list[str], cache: Path, modules=_FORBIDDEN) -> subprocess.CompletedProcess:
    code = ("import io, json, sys, contextlib\n"
            "from rdyn.cli import main\n"
            "buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            f"    status = main({args!r})\n"
            f"print(json.dumps({{'status': status, 'out': buf.getvalue(), 'loaded': "
            f"[m for m in {tuple(modules)!r} if m in sys.modules]}}))\n")
    return _python(code, cache)


def test_teacher_cold_then_warm(tmp_path):
    args = ["teacher", "--steps", "50", "--json"]
    cold = _rdyn(args, tmp_path)
    assert cold.returncode == 0, cold.stderr
    lines = [line for line in cold.stderr.splitlines() if COMPILING in line]
    assert len(lines) == 1 and "float64 Model A kernel" in lines[0] and str(tmp_path) in lines[0]
    warm = _modules_after(args, tmp_path)
    assert warm.returncode == 0, warm.stderr
    assert COMPILING not in warm.stderr
    report = json.loads(warm.stdout)
    assert report["status"] == 0
    assert report["loaded"] == [], f"a warm Model A run imported {report['loaded']}"
    assert json.loads(report["out"]) == json.loads(cold.stdout)
    # every source entry corrupted: regenerated (sympy), same result
    for path in (tmp_path / "sources").glob("*.py"):
        path.write_bytes(path.read_bytes()[:-10])
    rebuilt = _rdyn(args, tmp_path)
    assert rebuilt.returncode == 0 and rebuilt.stdout == cold.stdout


@pytest.mark.slow  # compiles the parallel batch kernel (~10 s)
def test_sweep_cold_then_warm(tmp_path):
    sweep = ["sweep", "--grid", "D=20,36;K=2", "--steps", "30", "--quiet", "--json"]
    cold = _rdyn(sweep, tmp_path)
    assert cold.returncode == 0, cold.stderr
    assert sum(COMPILING in line for line in cold.stderr.splitlines()) == 1
    warm = _modules_after(sweep, tmp_path)
    report = json.loads(warm.stdout)
    assert COMPILING not in warm.stderr and report["status"] == 0
    assert report["loaded"] == [] and json.loads(report["out"]) == json.loads(cold.stdout)


def test_ln_imports(tmp_path):
    """Model B on an exact two-level spectrum needs neither numba nor sympy nor scipy.linalg."""
    run = _modules_after(["ln", "--data", "spectrum", "--spectrum", "4,1,1", "--d", "3",
                          "--steps", "5", "--json"], tmp_path, _FORBIDDEN + ("numba",))
    report = json.loads(run.stdout)
    assert report["status"] == 0 and json.loads(report["out"])["gamma"] is not None
    assert [m for m in report["loaded"] if m != "rdyn.reduced_dynamics.model_b.run"] == []


# ------------------------------------------------------------------ hash-seed independence

_SOURCES = """
import hashlib
from rdyn.reduced_dynamics.model_a import kernels as k
from rdyn.reduced_dynamics.model_a.dynamics import advance_module_source
from rdyn.reduced_dynamics.model_a.batch import batch_module_source
texts = []
for activation, scale in (("leaky", "sqrtD"),):
    texts += [k.kernel_source(activation, scale), k.batch_kernel_source(activation, scale),
              k.eta_limit_source(activation), advance_module_source(activation, scale),
              batch_module_source(activation, scale, fast=True)]
print(hashlib.sha256("\\0".join(texts).encode()).hexdigest())
"""


def test_generated_source_is_independent_of_hash_seed(tmp_path):
    """Generated afresh (empty cache each time) under three hash seeds: identical bytes."""
    digests = set()
    for seed in ("0", "1", "12345"):
        run = _python(_SOURCES, tmp_path / f"seed{seed}", PYTHONHASHSEED=seed)
        assert run.returncode == 0, run.stderr
        digests.add(run.stdout.strip())
        sources = list((tmp_path / f"seed{seed}" / "sources").glob("*.py"))
        assert sources, "the sources must have been generated, not read from a shared cache"
    assert len(digests) == 1


def test_eta_limit_fraction_equals_sympy():
    from fractions import Fraction

    from rdyn.reduced_dynamics.model_a.dynamics import (TeacherConfig, eta_limit, eta_limit_exact,
                                          eta_limit_fraction)

    for activation, kappa in (("identity", 0.1), ("relu", 0.1), ("leaky", 0.1),
                              ("leaky", 0.37), ("leaky", 0.0)):
        for D, K in ((36, 4), (20, 3), (1000, 999), (7, 1)):
            cfg = TeacherConfig(D=D, K=K, activation=activation, kappa=kappa)
            exact = eta_limit_exact(cfg)
            frac = eta_limit_fraction(cfg)
            assert frac == Fraction(int(exact.p), int(exact.q))
            assert eta_limit(cfg) == float(exact)
    # a value that could be wrong: leaky, D=36, K=4, kappa=0.1 -> 4K/(D(1+kappa^2)) = 400/909
    assert eta_limit_fraction(TeacherConfig(D=36, K=4, activation="leaky", kappa=0.1)) \
        == Fraction(400, 909)
