"""docs/input_rules.md against the program (issue 40, "Help and docs tested against the
program"): what the page says is refused is refused with the message it quotes, and what it
says works runs.

* Every code block of the page that shows ``$ rdyn ...`` followed by ``rdyn CMD: error: ...``
  is run in-process through :func:`rdyn.cli.main`: exit status 2 and exactly that line.
* The tables' "refused when" column: a representative set of options that do not apply on
  their own (``--kappa`` without leaky, ``--batch`` without SGD, ...) is given alone and must
  be refused with the table's text, read from the page.
* Inline examples of the prose (a command and the message it quotes, both found in the page's
  text) and the documented acceptances ("Extreme but valid inputs work", negative numbers as
  values).
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from checkout import ROOT
PAGE = ROOT / "docs" / "input_rules.md"
TEXT = PAGE.read_text()
PROSE = " ".join(TEXT.split())   # the page with its line breaks undone (prose wraps anywhere)


def _run(argv, capsys) -> tuple[int, str, str]:
    from rdyn.cli import main

    try:
        status = main(list(argv))
    except SystemExit as exc:   # argparse's own refusals
        status = exc.code
    out, err = capsys.readouterr()
    return status, out, err


def _error_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if ": error: " in line]


# --------------------------------------------------------------------------------------------
# 1. The page's code blocks: `$ rdyn ...` and the error line it shows
# --------------------------------------------------------------------------------------------

def _block_examples() -> list[tuple[list[str], str]]:
    """(argv after `rdyn`, the error line shown) for every `$ rdyn` line of a code block that
    is followed by a `rdyn CMD: error:` line."""
    examples, in_block, pending = [], False, None
    for line in TEXT.splitlines():
        if line.lstrip().startswith("```"):
            in_block, pending = not in_block, None
            continue
        if not in_block:
            continue
        if line.startswith("$ rdyn "):
            pending = shlex.split(line[len("$ rdyn "):])
        elif pending is not None and re.match(rf"^rdyn {re.escape(pending[0])}: error: ", line):
            examples.append((pending, line))
            pending = None
    return examples


BLOCK_EXAMPLES = _block_examples()


def test_the_page_shows_refusals():
    assert len(BLOCK_EXAMPLES) >= 5, BLOCK_EXAMPLES
    commands = {argv[0] for argv, _ in BLOCK_EXAMPLES}
    assert {"teacher", "ln"} <= commands


@pytest.mark.parametrize("argv,line", BLOCK_EXAMPLES, ids=[shlex.join(a) for a, _ in BLOCK_EXAMPLES])
def test_block_example(argv, line, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    status, _, err = _run(argv, capsys)
    assert status == 2, (argv, err)
    assert _error_lines(err) == [line], err


# --------------------------------------------------------------------------------------------
# 2. The tables' "refused when" column
# --------------------------------------------------------------------------------------------

def _table_refusals() -> dict[tuple[str, str], str]:
    """(command, flag) -> the table's "refused when" text, for every row that has one."""
    found = {}
    sections = re.split(r"^### rdyn (\w+)\n", TEXT, flags=re.M)
    for name, body in zip(sections[1::2], sections[2::2]):
        for row in re.findall(r"^\| `(--[\w-]+)` \|([^|\n]*)\|([^|\n]*)\|([^|\n]*)\|([^|\n]*)\|$",
                              body, flags=re.M):
            if row[4].strip():
                found[(name, row[0])] = row[4].strip()
    return found


TABLE = _table_refusals()

# Options refused on their own (every other option at its default), with a valid value: the
# command line and the table text must agree exactly. Quick: each is refused before any work.
NOT_APPLYING = [
    (["teacher"], "--kappa", "0.5"),
    (["teacher"], "--M", "2"),
    (["teacher"], "--smooth-route", "exact"),
    (["teacher"], "--checkpoint-every", "5"),
    (["crosscheck"], "--kappa", "0.5"),
    (["crosscheck"], "--batch", "10"),
    (["crosscheck"], "--noise-std", "0.1"),
    (["ln"], "--target", "unnormalized"),
    (["ln"], "--L", "3"),
    (["ln"], "--checkpoint-every", "5"),
    (["sweep", "--grid", "D=20", "--steps", "1"], "--M", "2"),
    (["sweep", "--grid", "D=20", "--steps", "1"], "--checkpoint-every", "5"),
    (["claims"], "--dps", "30"),
    (["asymptotics"], "--dps", "30"),
    (["asymptotics"], "--M", "2"),
    (["asymptotics"], "--kappa", "0.5"),
    (["prove"], "--dps", "30"),
    (["prove"], "--model", "looped"),
    (["prove"], "--data", "spectrum"),
    (["prove"], "--d", "3"),
    (["prove"], "--L", "2"),
    (["prove"], "--steps", "10"),
]


@pytest.mark.parametrize("base,flag,value", NOT_APPLYING,
                         ids=[f"{b[0]} {f}" for b, f, _ in NOT_APPLYING])
def test_table_refusal(base, flag, value, capsys):
    documented = TABLE[(base[0], flag)]
    status, _, err = _run([*base, flag, value], capsys)
    assert status == 2, err
    assert _error_lines(err) == [f"rdyn {base[0]}: error: {documented}"], err


def test_every_table_row_names_its_option_or_a_condition():
    """The column is a refusal the user can act on: it names the option (or says when the
    optional dependency or a required option is missing)."""
    assert len(TABLE) > 40
    for (name, flag), text in TABLE.items():
        assert flag in text or text.startswith(("missing", "the optional dependency", "rdyn ",
                                                "crosscheck ", "figures ")) \
            or "--" in text, (name, flag, text)


# --------------------------------------------------------------------------------------------
# 3. Inline examples of the prose: a command and its message, both in the page
# --------------------------------------------------------------------------------------------

# (the command as the page writes it, argv, a fragment of the message as the page quotes it,
# or None where the page describes the refusal without quoting; the fragment that must appear)
INLINE = [
    ("`--D 1e300`", ["teacher", "--D", "1e300"],
     "--D must be in 2..1000000000000000000, got 1.000e+300 (an integer of 301 digits)",
     "--D must be in 2..1000000000000000000, got 1.000e+300 (an integer of 301 digits)"),
    ("`--dps 5000` is refused", ["teacher", "--dps", "5000"], None, "supported maximum 4000"),
    ("`rdyn claims --report same.md --errata same.md`",
     ["claims", "--report", "same.md", "--errata", "same.md"],
     "--errata same.md names the same file as --report; give each output its own file",
     "--errata same.md names the same file as --report; give each output its own file"),
    ("`--activation relu --activation-expr 'x+tanh(x)'`",
     ["teacher", "--activation", "relu", "--activation-expr", "x+tanh(x)"], None,
     "--activation-expr goes with --activation expr (or no --activation)"),
    ("`eta=0.1:0.3:100000000` is refused at once",
     ["sweep", "--grid", "eta=0.1:0.3:100000000", "--steps", "1"], None,
     "a sweep takes at most 1000000 configurations"),
    ("`--mode sgd --batch 1e12` is refused naming `--batch`",
     ["crosscheck", "--mode", "sgd", "--batch", "1e12"], None, "error: --batch 1000000000000"),
    ("`crosscheck --mode sgd --d 1e9` blames `--d`", ["crosscheck", "--mode", "sgd", "--d", "1e9"],
     None, "error: --d 1000000000 (with --batch 100"),
    ("`ln --model looped --data spectrum --d 3 --spectrum 4,3,2 --L 1000000`",
     ["ln", "--model", "looped", "--data", "spectrum", "--d", "3", "--spectrum", "4,3,2",
      "--L", "1000000"], "use --expectation qmc", "use --expectation qmc"),
    ("`--eta -inf` and `--alpha0 -1e-3` parse (and `-inf` is then refused as not finite)",
     ["teacher", "--eta", "-inf"], None, "--eta must be a finite number, got -inf"),
    ("`prove --paper B --s0 -1,2`", ["prove", "--paper", "B", "--s0", "-1,2"], None, "--s0"),
    ("`--eta --steps 10` still says that `--eta` expects a value", ["teacher", "--eta", "--steps", "10"],
     None, "argument --eta: expected one argument"),
    ("(without `--steps`, `teacher --record` steps must be at most 1000",
     ["teacher", "--record", "2000"], None, "--record: step 2000 needs --steps"),
]


@pytest.mark.parametrize("documented,argv,quoted,fragment", INLINE, ids=[i[0][:40] for i in INLINE])
def test_inline_refusal(documented, argv, quoted, fragment, capsys, tmp_path, monkeypatch):
    assert " ".join(documented.split()) in PROSE, f"the page no longer says {documented!r}"
    if quoted is not None:
        assert quoted in PROSE, f"the page no longer quotes {quoted!r}"
    monkeypatch.chdir(tmp_path)
    status, _, err = _run(argv, capsys)
    assert status == 2, err
    lines = _error_lines(err)
    assert len(lines) == 1 and lines[0].startswith(f"rdyn {argv[0]}: error: "), err
    assert fragment in lines[0], err


def test_groups_entries_must_be_integers(capsys, tmp_path):
    assert '"indices must be integers"' in PROSE
    groups = tmp_path / "groups.json"
    groups.write_text("[[0, 1], [1, 0.5], [2, 3], [3, 0]]")
    status, _, err = _run(["teacher", "--D", "4", "--K", "2", "--groups", str(groups),
                           "--steps", "1"], capsys)
    assert status == 2 and "indices must be integers" in err, err


def test_output_path_under_a_regular_file(capsys, tmp_path):
    assert "X is not a directory" in PROSE
    plain = tmp_path / "plain"
    plain.write_text("")
    status, _, err = _run(["sweep", "--grid", "D=20", "--steps", "1", "--out",
                           str(plain / "rows.csv")], capsys)
    assert status == 2 and f"{plain} is not a directory" in err, err


# --------------------------------------------------------------------------------------------
# 4. Documented acceptances
# --------------------------------------------------------------------------------------------

ACCEPTED = [
    ("`teacher --D 2 --K 1`", ["teacher", "--D", "2", "--K", "1", "--steps", "10"]),
    ("`teacher --D 1e9 --K 4 --steps 10`", ["teacher", "--D", "1e9", "--K", "4", "--steps", "10"]),
    ("`--eta 1e-12`", ["teacher", "--eta", "1e-12", "--steps", "10"]),
    ("`--alpha0 -1e-3` parse", ["ln", "--alpha0", "-1e-3", "--steps", "3", "--samples", "64",
                                "--quiet"]),
    ("`--activation-expr '-x*tanh(x)/4+x'`",
     ["teacher", "--activation-expr", "-x*tanh(x)/4+x", "--D", "8", "--K", "2", "--M", "2",
      "--eta", "0.2", "--steps", "5", "--quiet"]),
]


@pytest.mark.parametrize("documented,argv", ACCEPTED, ids=[a[0][:40] for a in ACCEPTED])
def test_documented_acceptance(documented, argv, capsys):
    assert " ".join(documented.split()) in PROSE, f"the page no longer says {documented!r}"
    status, out, err = _run(argv, capsys)
    assert status == 0, err
    assert out.strip() and not _error_lines(err), err
