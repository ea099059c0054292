"""Shared by the in-process command-line tests (rdyn/cli/test_hostile_inputs.py,
rdyn/test_output_paths.py, rdyn/test_run_time.py, rdyn/cli/test_sweep.py,
verify/proofs/test_sweep.py, reduced_dynamics/runs/test_dask_client.py): run ``rdyn ARGV`` in this
process and check a one-line refusal."""
from __future__ import annotations

from rdyn import cli

SPECTRUM = ["--data", "spectrum", "--d", "3", "--spectrum", "4,1,1"]
FILE_OUTPUTS = [  # (argv before the path, flag, suffix): every output option that names a file
    (["sweep", "--grid", "D=20", "--steps", "10"], "--out", ".csv"),
    (["sweep", "--grid", "D=20", "--steps", "10"], "--checkpoint", ".npz"),
    (["scaling", "--quick"], "--out", ".json"),
    (["claims", "--paper", "A"], "--report", ".md"),
    (["claims", "--paper", "A"], "--errata", ".tex"),
    (["teacher", "--steps", "10"], "--checkpoint", ".npz"),
    (["ln", "--steps", "10", *SPECTRUM], "--checkpoint", ".npz"),
    (["prove", "--grid", "D=5;K=1;eta=half_limit"], "--out", ".json"),
    (["prove", "--D", "5", "--K", "1"], "--checkpoint", ".npz"),
]


def run_main(capsys, argv):
    """(exit status, stdout, stderr) of ``rdyn ARGV`` in-process (argparse errors exit)."""
    try:
        rc = cli.main(argv)
    except SystemExit as exc:
        rc = exc.code
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def run_captured(argv):
    """(exit status, stdout, stderr) of ``rdyn ARGV`` in-process, captured by redirection (for tests that
    run it from threads or without the capsys fixture)."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def assert_refused(rc, out, err, needle=""):
    """Exit status 2, nothing on stdout, one line on stderr containing ``needle``."""
    assert rc == 2, err
    assert out == "" and "Traceback" not in err
    assert err.count("\n") == 1, err
    assert needle in err, err
