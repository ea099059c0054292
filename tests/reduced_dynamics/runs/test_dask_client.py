"""The Dask path of the proof sweep, ``rdyn prove --grid GRID --scheduler ADDRESS``
(verify/proofs/sweep.py ``run``, reduced_dynamics/runs/dask_client.py; docs/proofs.md, "Proof sweep").

One LocalCluster of two worker *processes* (one thread each) for the module, so the grid points,
the task and the rows really cross a pickle boundary and a worker imports rdyn on its own:

* the Dask rows equal the in-process rows of the same grid (every field but ``seconds``, as JSON
  text), through the CLI (``--json``, ``--out``) and the API, in grid order although the second
  instance finishes first;
* an instance whose proof raises on a worker is an error row and the sweep goes on;
* an interrupted Dask sweep keeps the rows done in ``--out``, says so, and cancels what is left
  on the cluster;
* an unusable ``--scheduler`` is refused in one line, exit 2, before any work: a malformed
  address, nothing listening (a connect timeout, not a hang), a server that is not a Dask
  scheduler, no worker, workers that cannot import a module the tasks need or run another
  rdyn version;
* a worker that dies running an instance (``KilledWorker``) gives that instance's error row.

The interrupt message of ``rdyn prove --grid`` (both paths) is checked in process.
"""
from __future__ import annotations

import json
import threading
import time

import pytest

# D = 12 costs about ten times D = 5 (T* = 28901 and 804 at eta_limit/2; 1.4 s and 0.15 s on a warm
# worker), so with two workers the second grid point finishes first: the rows must still come back
# in grid order
GRID = "D=12,5;K=1;activation=relu;eta=half_limit"


def _cli(*argv):
    from cli_runs import run_captured

    return run_captured(["prove", *argv])


def _without_seconds(data: dict) -> str:
    """The result as JSON text, every ``seconds`` field removed (verdicts, margins and
    counterexample ratios compared as text)."""
    data = {k: v for k, v in data.items() if k != "seconds"}
    data["instances"] = [{k: v for k, v in r.items() if k != "seconds"} for r in data["instances"]]
    return json.dumps(data, sort_keys=True)


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        with distributed.Client(c.scheduler_address, set_as_default=False) as client:
            client.wait_for_workers(2, timeout=60)

            def warm():   # each worker imports rdyn and proves once (the kernels load): later timings are the proofs'
                from rdyn.verification.proofs import sweep as sw

                sw.prove_point(sw.parse("D=5;K=1;eta=half_limit")[0][0])

            client.run(warm)
        yield c


@pytest.fixture(scope="module")
def in_process(tmp_path_factory):
    code, out, err = _cli("--grid", GRID, "--json")
    assert code == 0, err
    return json.loads(out)


def test_dask_rows_equal_in_process_rows_in_grid_order(cluster, in_process, tmp_path):
    path = tmp_path / "grid.json"
    code, out, err = _cli("--grid", GRID, "--json", "--out", str(path), "--scheduler", cluster.scheduler_address)
    assert code == 0, err
    data = json.loads(out)
    assert [r["instance"]["D"] for r in data["instances"]] == [12, 5]
    assert [r["T_star"] for r in data["instances"]] == [28901, 804]
    assert _without_seconds(data) == _without_seconds(in_process)
    assert _without_seconds(json.loads(path.read_text())) == _without_seconds(in_process)
    # progress lines in the order the instances finished: D = 5 (the cheap one) first
    done = [line.split(" K=")[0].split()[-1] for line in err.splitlines() if "/2 D=" in line]
    assert done == ["D=5", "D=12"], err
    jsonschema = pytest.importorskip("jsonschema")
    import rdyn

    jsonschema.validate(data, rdyn.schema("prove"))


def test_api_with_scheduler_equals_in_process(cluster, in_process):
    import rdyn

    res = rdyn.prove(grid=GRID, scheduler=cluster.scheduler_address)
    assert _without_seconds(res.to_dict()) == _without_seconds(in_process)


def test_instance_that_raises_on_a_worker_is_an_error_row(cluster):
    from rdyn.verification.proofs import sweep as sw
    from rdyn.verification.proofs.engine import Instance

    points, _ = sw.parse("D=5,6;K=1;activation=relu;eta=half_limit")
    bad = sw.GridPoint(Instance(D=5, K=1, activation="relu", kappa=0.0, vstar_norm2=1.0, eta=-0.1,
                                logit_scale="D"), "given")   # not from parse: the engine refuses eta <= 0
    seen = []
    rows = sw.run([points[0], bad, points[1]], scheduler=cluster.scheduler_address,
                  on_row=lambda rs: seen.append(len(rs)))
    assert [r["error"] for r in rows] == [None, "ValueError: eta must be > 0, got -0.1", None]
    assert rows[1]["statements"] == [] and rows[1]["instance"]["eta"] == -0.1
    assert [r["T_star"] for r in rows] == [804, None, 1759]
    assert seen == [1, 2, 3]
    res = sw.result("x", [points[0], bad, points[1]], [], rows, 0.0)
    assert res["counts"]["errors"] == 1
    assert next(t for t in res["table"] if t["key"] == "D18.corrected.lower")["certified"] == 2


def test_interrupted_dask_sweep_keeps_out_and_cancels_what_is_left(cluster, monkeypatch, tmp_path):
    """Ctrl-C as the first row is written (the CLI's --out hook raises after writing): exit 130,
    --out holds that row, the message says so, and nothing is left queued on the cluster."""
    from distributed import Client

    import rdyn.output

    real = rdyn.output.write_text_atomic

    def write_then_interrupt(path, text):
        real(path, text)
        raise KeyboardInterrupt

    monkeypatch.setattr(rdyn.output, "write_text_atomic", write_then_interrupt)
    path = tmp_path / "grid.json"
    code, out, err = _cli("--grid", "D=5,8,9,10,11,12;K=1;activation=relu;eta=half_limit", "--out", str(path),
                          "--scheduler", cluster.scheduler_address)
    assert code == 130 and out == ""
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"rdyn prove: interrupted after 1 of 6 instances; {path} holds their rows "
                           "(\"complete\": false); continue with: rdyn prove ") and last.endswith(f"--resume {path}")
    written = json.loads(path.read_text())
    assert written["complete"] is False and written["progress"] == {"done": 1, "total": 6}
    assert len(written["instances"]) == 1 and written["instances"][0]["error"] is None
    assert written["instances"][0]["instance"]["D"] in (5, 8, 9, 10, 11, 12)
    with Client(cluster.scheduler_address, set_as_default=False) as client:
        for _ in range(100):   # the running tasks finish, the queued ones are gone
            if client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0:
                break
            time.sleep(0.1)
        assert client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks)) == 0


def test_workers_without_a_module_are_refused(cluster):
    from rdyn.reduced_dynamics.runs.dask_client import SchedulerError, connect

    with pytest.raises(SchedulerError, match="^the scheduler cannot import rdyn .ModuleNotFoundError: No module "
                                             "named 'rdyn_no_such_module'"):
        with connect(cluster.scheduler_address, ("rdyn_no_such_module",)):
            pass
    with connect(cluster, ("rdyn.verification.proofs.sweep",)) as client:   # a LocalCluster is taken too
        assert len(client.scheduler_info()["workers"]) == 2


def test_other_rdyn_version_on_the_workers_is_refused(cluster, monkeypatch):
    from rdyn.reduced_dynamics import _version
    from rdyn.reduced_dynamics.runs.dask_client import SchedulerError, connect

    real = _version.__version__
    monkeypatch.setattr(_version, "__version__", "0.0.0.test")   # this process (and its in-process scheduler)
    with pytest.raises(SchedulerError, match=rf"^worker tcp://\S+ runs rdyn {real}, this is rdyn 0.0.0.test"):
        with connect(cluster.scheduler_address):
            pass


def test_scheduler_without_workers_is_refused(monkeypatch):
    distributed = pytest.importorskip("distributed")
    from rdyn.reduced_dynamics.runs import dask_client

    monkeypatch.setattr(dask_client, "WORKER_WAIT_S", 1.0)
    with distributed.LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:   # inproc://
        t0 = time.perf_counter()
        code, out, err = _cli("--grid", GRID, "--scheduler", empty.scheduler_address)
        assert time.perf_counter() - t0 < 8
    assert code == 2 and out == "" and err.strip().splitlines() == [
        f"rdyn prove: error: --scheduler {empty.scheduler_address}: no Dask worker joined the scheduler within 1 s"]


def test_instance_whose_worker_dies_is_an_error_row():   # about 6 s: its own one-worker cluster
    """A worker that dies running an instance (os._exit on that worker only): with no retries
    allowed the task ends in KilledWorker, which is that instance's error row; the other instance
    is proved.

    Deterministic by construction: the worker has two threads, so both instances run at once,
    and the crashing instance waits until the other one has returned (and its result has had
    time to reach the scheduler) before it kills the process. Once D = 5 is finished it is no
    longer processing on the dying worker; if its result was lost with the worker, the scheduler
    recomputes it on the restarted worker (which has no crash patch). Earlier this test used one
    thread, and when D = 6 happened to run first, D = 5 was still queued on the worker that died
    and failed with it."""
    distributed = pytest.importorskip("distributed")
    import dask

    from rdyn.verification.proofs import sweep as sw

    points, _ = sw.parse("D=5,6;K=1;activation=relu;eta=half_limit")
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), \
            distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=":0") as c, \
            distributed.Client(c.scheduler_address, set_as_default=False) as client:
        client.wait_for_workers(1, timeout=60)

        def crash_on_d6():   # on the worker: proving D = 6 kills the process once D = 5 is done
            import os
            import threading
            import time

            from rdyn.verification.proofs import sweep

            real = sweep.prove_point
            others_done = threading.Event()

            def prove_point(point, *args):
                if point.instance.D == 6:
                    others_done.wait(timeout=120)
                    time.sleep(2.0)   # the finished message of D = 5 reaches the scheduler
                    os._exit(1)
                try:
                    return real(point, *args)
                finally:
                    others_done.set()

            sweep.prove_point = prove_point

        client.run(crash_on_d6)
        rows = sw.run(points, scheduler=client)
    assert rows[0]["error"] is None and rows[0]["T_star"] == 804
    assert rows[1]["error"].startswith("KilledWorker: ") and rows[1]["statements"] == []


@pytest.fixture
def http_server():
    """A TCP server that answers like an HTTP server (what a proxy or a dashboard port says)."""
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(20)

    def serve():
        try:
            while True:
                conn, _ = server.accept()
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n")
                conn.close()
        except OSError:
            return

    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()


def test_unusable_scheduler_is_refused_before_any_work(monkeypatch, tmp_path, http_server):
    pytest.importorskip("distributed")
    from rdyn.reduced_dynamics.runs import dask_client

    monkeypatch.setattr(dask_client, "CONNECT_TIMEOUT_S", 1.0)
    out_file = tmp_path / "grid.json"
    import socket

    with socket.socket() as s:   # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    cases = [("nonsense", "must be a Dask scheduler address [PROTOCOL://]HOST:PORT"),
             ("tcp://127.0.0.1:99999", "must be a Dask scheduler address"),
             ("http://127.0.0.1:8786", "must be a Dask scheduler address"),
             (f"tcp://127.0.0.1:{free}", "cannot connect within 1 s"),
             (http_server, "no Dask scheduler answers there")]
    for address, needle in cases:
        t0 = time.perf_counter()
        code, out, err = _cli("--grid", GRID, "--out", str(out_file), "--scheduler", address)
        assert time.perf_counter() - t0 < 8, address
        assert code == 2 and out == "" and not out_file.exists(), (address, err)
        assert len(err.strip().splitlines()) == 1 and needle in err, (address, err)
        assert "Traceback" not in err
    # rdyn sweep --scheduler goes through the same connection (reduced_dynamics/model_a/batch.py)
    import contextlib
    import io

    from rdyn.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(["sweep", "--grid", "D=8;K=2", "--steps", "10", "--quiet", "--scheduler", http_server])
    assert code == 2 and err.getvalue().count("\n") == 1 and "no Dask scheduler answers there" in err.getvalue()


def test_interrupted_sweep_says_what_out_holds(tmp_path, interrupt_second_proof):
    """In process (no cluster): Ctrl-C after the first instance; --out keeps its row."""
    calls, _ = interrupt_second_proof
    path = tmp_path / "grid.json"
    code, out, err = _cli("--grid", "D=5,6;K=1;eta=half_limit", "--out", str(path))
    assert code == 130 and out == ""
    last = err.strip().splitlines()[-1]   # in process, sys.argv is pytest's: the resume command shows "..."
    assert last.startswith(f"rdyn prove: interrupted after 1 of 2 instances; {path} holds their rows "
                           "(\"complete\": false); continue with: rdyn prove ") and last.endswith(f"--resume {path}")
    assert [r["instance"]["D"] for r in json.loads(path.read_text())["instances"]] == [5]
    assert json.loads(path.read_text())["complete"] is False
    calls.clear()
    code, out, err = _cli("--grid", "D=5,6;K=1;eta=half_limit")
    assert code == 130 and err.strip().splitlines()[-1].endswith("--out FILE keeps the rows of an interrupted sweep")
