"""The output-path rule (docs/input_rules.md, rule 4 "Output paths"): a regular file or a new path
is written by temporary sibling and rename; a symbolic link is followed and its target written
(the link stays a link); a stream name, a device, a FIFO or a socket is refused before any work and
never replaced, by the validation and again by the writer; an output naming an input file is
refused (only ``--checkpoint F --resume F`` continues one run); and a checkpoint that cannot be
written on a full disk costs ``--certify`` and ``rdyn prove`` nothing.

Run as root (as CI is): the device node is made for the test with ``mknod``; every special file is
checked afterwards to be the same inode of the same kind."""
from __future__ import annotations

import json
import os
import socket
import stat

import pytest

from cli_runs import FILE_OUTPUTS, assert_refused, run_main

IDS = [f"{a[0]} {f}" for a, f, _ in FILE_OUTPUTS]


def _make_special(kind: str, path) -> object:
    """A special file of ``kind`` at ``path``; returns what must be closed afterwards (or None)."""
    if kind == "device":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))   # a null device of our own
        except PermissionError:
            pytest.skip("mknod needs root")
        return None
    if kind == "fifo":
        os.mkfifo(path)
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(os.fspath(path))
    return sock


@pytest.mark.parametrize("argv,flag,suffix", FILE_OUTPUTS, ids=IDS)
@pytest.mark.parametrize("kind,words", [("device", "is a character device"),
                                        ("fifo", "is a FIFO (named pipe)"),
                                        ("socket", "is a socket")])
@pytest.mark.parametrize("via_link", [False, True], ids=["direct", "symlink"])
def test_special_files_are_refused_and_left_alone(tmp_path, capsys, argv, flag, suffix, kind, words,
                                                  via_link):
    special = tmp_path / f"special{suffix}"
    keep = _make_special(kind, special)
    try:
        before = os.lstat(special)
        target = special
        if via_link:
            target = tmp_path / f"link{suffix}"
            target.symlink_to(special)
        rc, out, err = run_main(capsys, argv + [flag, str(target)])
        assert_refused(rc, out, err, f"{flag} {target} {words}")
        if via_link:
            assert f"({special})" in err and target.is_symlink()
        after = os.lstat(special)
        assert (after.st_ino, after.st_mode, after.st_rdev) == (before.st_ino, before.st_mode, before.st_rdev)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
            [special.name] + ([target.name] if via_link else []))   # no temporary, no FILE.tmp left
    finally:
        if keep is not None:
            keep.close()


@pytest.mark.parametrize("argv,flag,suffix", FILE_OUTPUTS, ids=IDS)
@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/1"])
def test_stream_names_are_refused(capsys, argv, flag, suffix, name):
    rc, out, err = run_main(capsys, argv + [flag, name])
    if argv[0] == "claims":   # its outputs must end in .md/.html/.tex: refused for that first
        assert_refused(rc, out, err, f"{flag} must end in")
    else:
        assert_refused(rc, out, err, f"{flag} {name} names a file descriptor")


def test_dev_full_is_never_replaced(capsys):
    """The issue's case: `--out /dev/full` as root turned the device into a 12 KB JSON file."""
    before = os.stat("/dev/full")
    assert_refused(*run_main(capsys, ["prove", "--grid", "D=5;K=1;eta=half_limit", "--out", "/dev/full"]),
                   "--out /dev/full is a character device, not a regular file")
    after = os.stat("/dev/full")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino


def test_a_fifo_output_does_not_hang(tmp_path, capsys):
    """Opening a FIFO for writing blocks until a reader comes: the rule refuses it without opening."""
    import threading

    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=run_main(capsys, [
        "prove", "--grid", "D=5;K=1;eta=half_limit", "--out", str(fifo)])), daemon=True)
    worker.start()
    worker.join(30)
    if worker.is_alive():   # unblock the writer so the test process can end, then fail
        with open(fifo, "rb"):
            pass
        pytest.fail("rdyn prove --out FIFO hung")
    assert_refused(*result["r"], "is a FIFO (named pipe)")


# ------------------------------------------------------------------ symbolic links are written through

def test_teacher_checkpoint_through_a_symlink_writes_the_target(tmp_path, capsys):
    target = tmp_path / "real" / "run.npz"
    target.parent.mkdir()
    link = tmp_path / "run.npz"
    link.symlink_to(target)    # dangling: the write creates the target
    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "50", "--json"]
    reference = run_main(capsys, argv)[1]
    rc, out, err = run_main(capsys, argv + ["--checkpoint", str(link)])
    assert rc == 0 and out == reference, err
    assert link.is_symlink() and os.readlink(link) == str(target) and target.is_file()
    assert sorted(os.listdir(target.parent)) == ["run.npz"]   # no run.npz.tmp beside it
    rc, again, err = run_main(capsys, argv + ["--checkpoint", str(link), "--resume", str(link)])
    assert rc == 0 and again == reference and link.is_symlink(), err


def test_certify_companion_checkpoint_goes_beside_the_link_target(tmp_path, capsys):
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "cc.npz"
    link = tmp_path / "cc.npz"
    link.symlink_to(target)
    argv = ["teacher", "--D", "6", "--K", "2", "--eta", "0.05", "--certify", "--quiet", "--json"]
    rc, _, err = run_main(capsys, argv + ["--checkpoint", str(link)])
    assert rc == 0, err
    assert sorted(os.listdir(tmp_path / "real")) == ["cc.certify.npz", "cc.npz"]
    assert sorted(os.listdir(tmp_path)) == ["cc.npz", "real"] and link.is_symlink()


def test_sweep_out_through_a_relative_symlink(tmp_path, capsys, monkeypatch):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "rows.csv"
    target.write_text("old rows\n")
    (tmp_path / "work").mkdir()
    link = tmp_path / "work" / "rows.csv"
    link.symlink_to(os.path.join("..", "data", "rows.csv"))
    monkeypatch.chdir(tmp_path / "work")
    rc, _, err = run_main(capsys, ["sweep", "--grid", "D=20", "--steps", "10", "--quiet", "--out", "rows.csv"])
    assert rc == 0, err
    rows = target.read_text()
    assert link.is_symlink() and rows != "old rows\n" and rows.count("\n") == 2   # header, one row
    assert sorted(os.listdir(tmp_path / "work")) == ["rows.csv"]
    assert sorted(os.listdir(tmp_path / "data")) == ["rows.csv"]


def test_atomic_write_follows_links_and_refuses_files_made_special_after_validation(tmp_path):
    from rdyn.output import write_rescued
    from rdyn.reduced_dynamics.runs.atomic_files import AtomicFiles, write_text_atomic

    target = tmp_path / "t.txt"
    link = tmp_path / "l.txt"
    link.symlink_to(target)
    write_text_atomic(link, "through\n")
    assert link.is_symlink() and target.read_text() == "through\n"

    fifo = tmp_path / "became-a-fifo.json"    # validated as a new path, a FIFO at write time
    with AtomicFiles() as files:
        tmp = files.path(fifo)
        open(tmp, "w").write("{}\n")
        os.mkfifo(fifo)
        with pytest.raises(OSError, match="is a FIFO .named pipe., not a regular file; not replaced"):
            files.__exit__(None, None, None)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["became-a-fifo.json", "l.txt", "t.txt"]
    rescued = write_rescued("--out", fifo, lambda p: write_text_atomic(p, "{}\n"))
    try:
        assert rescued != str(fifo) and open(rescued).read() == "{}\n"
    finally:
        os.remove(rescued)
    sibling = tmp_path / "c.npz.tmp"   # a checkpoint's fixed temporary that is a link: not followed
    sibling.symlink_to(target)
    with pytest.raises(OSError, match="c.npz.tmp is a symbolic link"):
        with AtomicFiles(fixed_suffix=".tmp") as files:
            files.path(tmp_path / "c.npz")
    assert target.read_text() == "through\n"


# ------------------------------------------------------------------ an output never replaces an input

def test_output_naming_an_input_is_refused(tmp_path, capsys):
    groups = tmp_path / "g2.json"
    groups.write_text(json.dumps([[i, (i + 1) % 6] for i in range(6)]))
    before = groups.read_text()
    argv = ["teacher", "--D", "6", "--K", "2", "--steps", "10", "--groups", str(groups)]
    assert_refused(*run_main(capsys, argv + ["--checkpoint", str(groups)]),
                   f"--checkpoint {groups} names the input file of --groups")
    link = tmp_path / "link.npz"          # the same file through a link and a relative path
    link.symlink_to(groups)
    assert_refused(*run_main(capsys, argv + ["--checkpoint", str(link)]), "names the input file of --groups")
    assert groups.read_text() == before and link.is_symlink()


def test_sweep_output_naming_its_resume_file_is_refused(tmp_path, capsys):
    ck = tmp_path / "c.npz"
    argv = ["sweep", "--grid", "D=20", "--steps", "10", "--quiet"]
    assert run_main(capsys, argv + ["--checkpoint", str(ck)])[0] == 0
    before = ck.read_bytes()
    assert_refused(*run_main(capsys, argv + ["--resume", str(ck), "--out", str(ck)]),
                   f"--out {ck} names the input file of --resume")
    assert ck.read_bytes() == before
    # continuing one run: --checkpoint F --resume F is the command an interruption prints
    rc, _, err = run_main(capsys, argv + ["--resume", str(ck), "--checkpoint", str(ck)])
    assert rc == 0, err


def test_validation_compares_every_output_with_every_input():
    """The rule is the table's: for every command, each file output against each input option."""
    from rdyn.options import COMMANDS, OUTPUT_MAY_BE_INPUT

    pairs = {(o.name, i.name) for cmd in COMMANDS.values() for o in cmd.options if o.output == "file"
             for i in cmd.options if i.kind == "path"}
    assert OUTPUT_MAY_BE_INPUT <= pairs and ("checkpoint", "groups") in pairs


# ------------------------------------------------------------------ a full disk costs no result

def _left(disk) -> set:
    return set(os.listdir(disk)) - {".filler"}


def test_certify_checkpoint_on_a_full_disk_prints_the_certificate(full_disk, capsys):
    """The issue's case: `teacher --certify --checkpoint small/cc.npz` ended, after the whole
    certify pass, with exit 2 and nothing printed."""
    disk, fill = full_disk
    argv = ["teacher", "--D", "6", "--K", "2", "--eta", "0.05", "--certify", "--json", "--quiet"]
    reference = json.loads(run_main(capsys, argv)[1])
    fill(0)
    rc, out, err = run_main(capsys, argv + ["--checkpoint", str(disk / "cc.npz")])
    assert rc == 0, err
    assert json.loads(out) == reference and reference["certificate"]["certified"] is True
    assert f"cannot write checkpoint {disk / 'cc.certify.npz'}: No space left on device" in err
    assert "Traceback" not in err and _left(disk) <= {"cc.npz"}


def test_prove_checkpoint_on_a_full_disk_prints_the_verdicts(full_disk, capsys):
    """The issue's case: `rdyn prove --checkpoint` on a full disk exited 2 after proving, with
    nothing printed."""
    disk, fill = full_disk
    argv = ["prove", "--D", "5", "--K", "1", "--eta", "0.05", "--statement", "Lemma D.4", "--json"]

    def verdicts(text):
        return [(s["label"], s["form"], s["side"], s["verdict"]) for s in json.loads(text)["statements"]]

    rc, reference, _ = run_main(capsys, argv)
    assert rc == 0
    fill(0)
    rc, out, err = run_main(capsys, argv + ["--checkpoint", str(disk / "p.npz")])
    assert rc == 0, err
    assert verdicts(out) == verdicts(reference)
    assert f"cannot write checkpoint {disk / 'p.npz'}: No space left on device" in err
    assert "Traceback" not in err and _left(disk) == set()


# ------------------------------------------------------------------ an input file is data of bounded size

@pytest.mark.parametrize("text,needle", [
    ("[" * 100000 + "]" * 100000, "lists nested too deeply"),
    ("[[" + "9" * 5000 + "]]", "an index of 5000 digits"),
    ("[[1e400]]", "indices must be integers; group 0 has inf"),
    ("[[NaN]]", "indices must be integers; group 0 has nan"),
], ids=["deep", "huge-integer", "overflowing-float", "nan"])
def test_hostile_groups_files_are_refused_in_one_line(tmp_path, capsys, text, needle):
    path = tmp_path / "g.json"
    path.write_text(text)
    assert_refused(*run_main(capsys, ["teacher", "--groups", str(path), "--steps", "5"]), needle)


def test_groups_file_memory_is_estimated_before_it_is_read(tmp_path, capsys, monkeypatch):
    import rdyn.options.memory

    path = tmp_path / "g.json"
    path.write_text(json.dumps([[i, (i + 1) % 50] for i in range(50)]))
    monkeypatch.setattr(rdyn.options.memory, "available_memory", lambda: 1000)
    assert_refused(*run_main(capsys, ["teacher", "--groups", str(path), "--steps", "5"]),
                   f"--groups {path} ({path.stat().st_size} bytes): this job needs about")
