"""``rdyn prove`` held to the rules (issue 40): budgets honoured exactly or refused up front,
estimates before work, grids validated like single instances, partial sweep files and
``--resume``, a sweep's result rescued on a full disk, an HTTP-answering ``--scheduler``
refused within seconds, help that matches the program (docs/proofs.md, docs/input_rules.md).

Every refusal: exit status 2, nothing on stdout, one line on stderr naming the option.
"""
from __future__ import annotations

import errno
import json
import time

import pytest

from cli_runs import assert_refused


def _cli(*argv):
    from cli_runs import run_captured

    return run_captured(["prove", *argv])


# --------------------------------------------------------------------------- 1. --max-steps honoured
def test_max_steps_below_t0_is_refused_naming_it():
    code, out, err = _cli("--D", "9", "--K", "3", "--max-steps", "100")
    assert_refused(code, out, err, "--max-steps 100 is below T0 = ")
    assert "raise it or omit it" in err


def test_max_steps_is_honoured_exactly_by_the_engine():
    """With the CLI's exact budget the iteration stops at step N even before T* (the library's
    default raises it to T0); the statements after T* are undecided, saying why."""
    from rdyn.verification.proofs.engine import Instance, prove

    inst = Instance(D=7, K=2, activation="identity")
    report = prove(inst, ["Lemma D.19"], max_steps=500, exact_budget=True)
    assert report.T_star is None and report.region is None
    undecided = [r for r in report.results if r.verdict == "undecided"]
    assert undecided and all("step budget 500 reached" in r.reason for r in undecided)


def test_the_region_last_step_never_passes_max_steps():
    import rdyn

    T0 = rdyn.prove(D=7, K=2, activation="identity", eta=0.05, statement=["Lemma D.19"]).to_dict()["region"]["T0"]
    data = rdyn.prove(D=7, K=2, activation="identity", eta=0.05, statement=["Lemma D.18"],
                      max_steps=T0 + 3).to_dict()
    assert data["region"]["last_step"] <= T0 + 3   # D.18's printed sides would run on to 2 T* by default
    printed = [s for s in data["statements"] if s["form"] == "printed" and s["verdict"] == "undecided"]
    assert all(f"step budget {T0 + 3} reached" in (s["reason"] or "") for s in printed)


# --------------------------------------------------------------------------- 2. stops short: refused
@pytest.mark.parametrize("argv,needle", [
    (["--eta", "5e-324", "--max-steps", "100"], "--eta 5e-324: T* is over the iteration's cap"),
    (["--eta", "1e-300"], "--eta 1e-300: T* is over the iteration's cap"),
    (["--D", "30", "--K", "1", "--eta", "1e-5"], "--eta 1e-05: T* is over"),
])
def test_a_run_that_would_stop_short_of_t0_is_refused_naming_eta(argv, needle):
    t0 = time.perf_counter()
    code, out, err = _cli(*argv)
    assert_refused(code, out, err, needle)
    assert "give a larger --eta" in err
    assert time.perf_counter() - t0 < 10   # float64 probes only (about 1 s)


def test_default_eta_beyond_the_cap_names_eta_and_d():
    code, out, err = _cli("--D", "10000", "--K", "1")
    assert_refused(code, out, err, "--D 10000 --K 1 (default --eta 1e-12, the papers' condition)")
    assert "cap of 1e+09 certified steps" in err and "give a larger --eta" in err and "or a smaller --D" in err
    assert "characters left out" not in err


def test_single_instance_estimate_comes_first(monkeypatch):
    """The estimate (from the float64 T*) is printed before the first progress line."""
    import rdyn.run_time as rt

    monkeypatch.setattr(rt, "ANNOUNCE_ABOVE_S", 0.0)
    code, out, err = _cli("--D", "7", "--K", "2", "--activation", "identity", "--statement", "Lemma D.19")
    assert code == 0, err
    lines = err.strip().splitlines()
    assert lines[0].startswith("rdyn prove: about ") and "certified steps to T0" in lines[0]


# --------------------------------------------------------------------------- 3. grids: same limits
@pytest.mark.parametrize("grid,needle", [
    ("D=1000000000000000000;K=1", "--grid: D=1000000000000000000: --D must be in 2..10000"),
    ("D=12;K=20000", "--K must be in 1..10000"),
    ("D=12;vstar_norm2=1e7", "--vstar-norm2 must be in (0, 1000000]"),
    ("D=12;eta=0", "--eta must be > 0"),
    ("D=12;activation=leaky;kappa=1", "--kappa must be in [0, 1)"),
    (";;", "has no KEY=VALUES entry"),
    (" ; ", "has no KEY=VALUES entry"),
    ("D=5:1004:1000;K=1:1000:1000", "--grid has 1000000 points"),
    ("D=5;K=1;eta=0.1:0.2:100000000", "range for eta has 100000000 values"),
])
def test_grid_values_obey_the_single_instance_limits(grid, needle):
    t0 = time.perf_counter()
    code, out, err = _cli("--grid", grid)
    assert_refused(code, out, err, needle)
    assert time.perf_counter() - t0 < 5


def test_grid_budget_below_every_t0_is_refused_naming_max_steps():
    code, out, err = _cli("--grid", "D=5,6;K=1;eta=half_limit", "--max-steps", "1")
    assert_refused(code, out, err, "--grid: every instance is skipped before any work")
    assert "--max-steps 1" in err and "raise --max-steps or omit it" in err


def test_grid_skips_instances_the_budgets_cannot_take_and_estimates_first(monkeypatch):
    """T0 over --max-steps (D = 6: T* = 1759) is skipped with the reason; the estimate line comes
    before the first instance's progress line; without --max-tstar there is an estimate now."""
    import rdyn.run_time as rt

    monkeypatch.setattr(rt, "ANNOUNCE_ABOVE_S", 1e9)
    code, out, err = _cli("--grid", "D=5,6;K=1;eta=half_limit", "--max-steps", "2000", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["instance"]["D"] for r in data["instances"]] == [5]
    assert data["skipped"][0]["reason"].startswith("T0 = 2759 > --max-steps 2000")
    assert data["complete"] is True and data["progress"] == {"done": 1, "total": 1}
    lines = err.strip().splitlines()
    first = next(i for i, x in enumerate(lines) if "to prove" in x)
    assert first < next(i for i, x in enumerate(lines) if x.startswith("rdyn prove: 1/1 "))
    assert "1 instance to prove, 1 skipped; about " in lines[first]
    assert not any("no time estimate" in x for x in lines)


def test_grid_rows_never_pass_max_steps():
    code, out, err = _cli("--grid", "D=5;K=1;activation=identity;eta=half_limit", "--max-steps", "1700", "--json")
    assert code in (0, 1), err
    row = json.loads(out)["instances"][0]
    assert row["T_star"] == 660 and row["error"] is None


# --------------------------------------------------------------------------- 4. Model B
def test_model_b_s0_far_below_the_floor_is_refused():
    t0 = time.perf_counter()
    code, out, err = _cli("--paper", "B", "--s0", "5e-324,1")
    assert_refused(code, out, err, "--s0: LO must be at least 1e-12")
    code, out, err = _cli("--paper", "B", "--s0", "5e-324,1", "--max-boxes", "100")
    assert_refused(code, out, err, "--s0: LO must be at least 1e-12")
    assert time.perf_counter() - t0 < 10


def test_model_b_box_budget_counts_s0_boxes():
    """The library still takes any S0 > 0: the S0 boxes count against --max-boxes, so the branch
    and bound ends (it split S0 boxes for minutes before)."""
    import flint

    from rdyn.api._prove_b import instance
    from rdyn.options import typed_options, validate
    from rdyn.verification.proofs.model_b.b3 import prove_b3
    from rdyn.verification.proofs.model_b.instance import PREC_BITS, noln_constants

    inst = instance(typed_options("prove", validate("prove", {"paper": "B"})))
    old = flint.ctx.prec
    flint.ctx.prec = PREC_BITS
    try:
        t0 = time.perf_counter()
        out = prove_b3(noln_constants(inst), (5e-324, 1.0), max_boxes=500)
        assert time.perf_counter() - t0 < 10
    finally:
        flint.ctx.prec = old
    assert all(o["verdict"] == "undecided" and "--max-boxes" in o["reason"] for o in out)


def test_model_b_steps_estimate_and_progress(monkeypatch):
    import rdyn.api._prove_b as pb

    monkeypatch.setattr(pb, "STICK_BREAKING_STEP_S", {2: {"ln": 20.0, "looped": 20.0}, 3: {"ln": 40.0}})
    monkeypatch.setattr(pb, "PROGRESS_EVERY", 1)
    code, out, err = _cli("--paper", "B", "--model", "ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1,1",
                          "--steps", "3")
    assert code in (0, 1), err
    lines = err.strip().splitlines()
    assert lines[0] == "rdyn prove --paper B: about 61 s (3 certified GD steps of the ln model at about 20000 ms each)"
    assert lines[1:3] == ["rdyn prove --paper B: step 1 of 3", "rdyn prove --paper B: step 2 of 3"]


def test_model_b_estimate_of_a_long_training_run():
    from rdyn.api._prove_b import train_estimate

    est = train_estimate("looped", 20000)
    assert est.seconds > 300 and est.line().startswith("rdyn prove --paper B: about 8 min")
    # three distinct eigenvalues: the looped model by the Laplace route (one integral, about 6 ms times r), the LN
    # layer by stick-breaking angles (nested 2-D, about 2 s); four: the LN layer by the Laplace route (0.6 s r^2)
    assert train_estimate("looped", 100, 3).line() == ("rdyn prove --paper B: about 3 s (100 certified GD steps "
                                                       "of the looped model at about 18 ms each)")
    assert train_estimate("ln", 100, 3).line() == ("rdyn prove --paper B: about 3 min (100 certified GD steps "
                                                   "of the ln model at about 2000 ms each)")
    assert train_estimate("ln", 10, 4).line() == ("rdyn prove --paper B: about 97 s (10 certified GD steps "
                                                  "of the ln model at about 9600 ms each)")


# --------------------------------------------------------------------------- 5. partial grid, resume
GRID = "D=5,6;K=1;eta=half_limit"


def test_interrupted_grid_is_marked_partial_and_resumes(monkeypatch, tmp_path, interrupt_second_proof):
    from rdyn.verification.proofs import sweep as sw

    calls, real = interrupt_second_proof
    path = tmp_path / "grid.json"
    code, out, err = _cli("--grid", GRID, "--out", str(path))
    assert code == 130, err
    assert "continue with: rdyn prove" in err and f"--resume {path}" in err
    partial = json.loads(path.read_text())
    assert partial["complete"] is False and partial["progress"] == {"done": 1, "total": 2}
    assert partial["counts"]["instances"] == 2 and len(partial["instances"]) == 1
    jsonschema = pytest.importorskip("jsonschema")
    import rdyn

    jsonschema.validate(partial, rdyn.schema("prove"))

    # --resume: only the missing instance is proved; the file is rewritten and complete
    calls.clear()
    monkeypatch.setattr(sw, "prove_point", lambda point, *a: (calls.append(point.instance.D), real(point, *a))[1])
    code, out, err = _cli("--grid", GRID, "--resume", str(path), "--json")
    assert code == 0, err
    assert calls == [6]
    assert "(1 already in" in err
    data = json.loads(out)
    assert data["complete"] is True and [r["instance"]["D"] for r in data["instances"]] == [5, 6]
    assert json.loads(path.read_text())["complete"] is True
    jsonschema.validate(data, rdyn.schema("prove"))
    assert data["instances"][0] == partial["instances"][0]   # the resumed row is kept as it was


@pytest.mark.slow   # a subprocess (about 7 s); the in-process interrupt above is in the default suite
def test_sigterm_mid_grid_keeps_the_rows(tmp_path):
    """A real SIGTERM to `rdyn prove --grid --out` (a subprocess): exit 143, --out holds the
    finished rows, "complete": false."""
    import os
    import signal
    import subprocess
    import sys

    path = tmp_path / "grid.json"
    # --route arb: the second instance takes seconds (the float route proves it in 0.3 s, before the signal)
    proc = subprocess.Popen([sys.executable, "-m", "rdyn", "prove", "--grid", "D=5,14;K=1;eta=half_limit",
                             "--route", "arb", "--out", str(path)], stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        for line in proc.stderr:   # wait for the first instance's row
            if line.startswith("rdyn prove: 1/2 "):
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.send_signal(signal.SIGTERM)   # a repeated signal does not break the save
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 143, rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "Traceback" not in rest
    data = json.loads(path.read_text())
    assert data["complete"] is False and data["progress"] == {"done": 1, "total": 2}


@pytest.mark.parametrize("change,needle", [
    (["--max-boxes", "5000"], "was written with --max-boxes (default), not 5000"),
    (["--statement", "Lemma D.19"], "--statement"),
])
def test_resume_with_other_options_is_refused(tmp_path, change, needle):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps({"grid": GRID, "instances": [], "complete": False,
                                "options": {"statement": None, "max_steps": None, "max_boxes": 200000,
                                            "max_tstar": None}}))
    code, out, err = _cli("--grid", GRID, "--resume", str(path), *change)
    assert_refused(code, out, err, needle)


def test_resume_of_another_grid_or_a_checkpoint_is_refused(tmp_path):
    path = tmp_path / "grid.json"
    path.write_text(json.dumps({"grid": "D=7;K=1", "instances": [], "options": {}}))
    code, out, err = _cli("--grid", GRID, "--resume", str(path))
    assert_refused(code, out, err, "holds the sweep of --grid 'D=7;K=1'")
    path.write_bytes(b"PK\x03\x04 not json")
    code, out, err = _cli("--grid", GRID, "--resume", str(path))
    assert_refused(code, out, err, "not a proof-sweep file")


# --------------------------------------------------------------------------- 6. full disk: rescued
def test_full_disk_out_is_rescued_and_the_table_still_printed(monkeypatch, tmp_path):
    import tempfile

    import rdyn.output

    real = rdyn.output.write_text_atomic
    path = tmp_path / "grid.json"

    def full_disk(p, text):
        if str(p) == str(path):
            raise OSError(errno.ENOSPC, "No space left on device", str(p))
        return real(p, text)

    monkeypatch.setattr(rdyn.output, "write_text_atomic", full_disk)
    rescue_dir = tmp_path / "tmp"
    rescue_dir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(rescue_dir))
    code, out, err = _cli("--grid", "D=5;K=1;eta=half_limit", "--out", str(path))
    assert code == 0, err
    assert out.startswith("| statement | key | form |")   # the table, still printed
    assert f"cannot write --out {path} (No space left on device)" in err
    rescued = list(rescue_dir.glob("rdyn-rescued-*.json"))
    assert len(rescued) == 1 and f"saved to {rescued[0]} instead" in err
    data = json.loads(rescued[0].read_text())
    assert data["complete"] is True and len(data["instances"]) == 1
    assert not path.exists()


# --------------------------------------------------------------------------- 7. HTTP scheduler
def test_http_answering_scheduler_is_refused_within_seconds(monkeypatch, tmp_path):
    pytest.importorskip("distributed")
    import http.server
    import threading

    from rdyn.reduced_dynamics.runs import dask_client

    monkeypatch.setattr(dask_client, "HANDSHAKE_WAIT_S", 1.0)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        address = f"tcp://127.0.0.1:{server.server_address[1]}"
        t0 = time.perf_counter()
        code, out, err = _cli("--grid", "D=5;K=1;eta=half_limit", "--scheduler", address,
                              "--out", str(tmp_path / "g.json"))
        assert time.perf_counter() - t0 < 8
        assert_refused(code, out, err, f"--scheduler {address}: no Dask scheduler answers there")
        assert not (tmp_path / "g.json").exists()
    finally:
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- 8. help and table
def test_help_matches_the_program(capsys):
    from rdyn.options import COMMANDS, help_text

    prove, asym = COMMANDS["prove"], COMMANDS["asymptotics"]
    for cmd in (prove, asym):
        text = help_text(cmd.option("dps"))
        assert "5..4000" not in text and text.startswith("not accepted here")
    resume = help_text(prove.option("resume"))
    assert "--steps" not in resume and "bit-identical" not in resume and "--grid" in resume
    code, out, err = _cli("--dps", "30")
    assert_refused(code, out, err, "--dps does not apply to rdyn prove")


def test_sweep_table_sorted_by_label_then_form_with_a_legend():
    from rdyn.verification.proofs import statements as st
    from rdyn.verification.proofs import sweep as sw

    row = {"statements": [{"key": s.key, "verdict": "certified"} for s in st.STATEMENTS],
           "superseded": [{"key": s.key, "verdict": "refuted"} for s in st.SUPERSEDED], "error": None}
    table = sw.table([row])
    keys = [sw.label_order(t["label"]) for t in table]
    assert keys == sorted(keys)
    assert [t["label"] for t in table][:2] == ["Lemma D.4", "Lemma D.4"]
    assert table[-1]["form"] == "superseded" and table[-1]["label"] == "Lemma D.19"
    for label in {t["label"] for t in table}:
        forms = [sw.FORM_ORDER[t["form"]] for t in table if t["label"] == label]
        assert forms == sorted(forms)
    text = sw.markdown_table({"table": table, "complete": False, "progress": {"done": 1, "total": 3}})
    assert "superseded: an earlier correction" in text and "Partial sweep: 1 of 3 instances." in text


@pytest.mark.slow   # a subprocess (about 8 s)
def test_sigterm_during_model_b_training_exits_143_not_a_crash():
    """SIGTERM while acb.integral runs its Python integrand once crashed the process (exit 139);
    the signals are now held during each step's integral."""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "rdyn", "prove", "--paper", "B", "--model", "looped", "--data",
                             "spectrum", "--d", "3", "--spectrum", "4,1,1", "--steps", "20000"],
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        assert first.startswith("rdyn prove --paper B: about ")
        time.sleep(3)
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        assert proc.wait(timeout=60) == 143, rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rest.strip() == "rdyn prove: interrupted"


def test_max_boxes_is_one_budget_for_the_region():
    """The region's branch and bound evaluates at most --max-boxes boxes in all (the wider bands tried
    after a failed one share the budget), and says the budget ran out."""
    from rdyn.verification.proofs.engine import Instance, prove

    report = prove(Instance(D=7, K=2, activation="identity"), ["Lemma D.19"], max_boxes=10)
    assert report.region["boxes"] <= 10 and "box budget 10 exhausted" in report.region["reason"]
    corrected = [r for r in report.results if r.statement.form == "corrected"]
    assert corrected and all(r.verdict == "undecided" and "box budget" in r.reason for r in corrected)
