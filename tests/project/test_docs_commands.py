"""The documentation cannot go stale silently (issue 12).

* docs/cli.md is exactly what ``python -m rdyn.cli.docs`` prints.
* Every ``rdyn ...`` command shown in a code block of README.md or docs/*.md parses with
  ``rdyn.cli.build_parser()``; a few quick ones are run in-process, and the long numbers shown
  in their example output must appear in the real output.
* The README's test command is the one .ci/run runs; relative links and anchors resolve.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from checkout import ROOT
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REGENERATE = "python -m rdyn.cli.docs > docs/cli.md"

# Subcommands that other branches add (issue 12 and its companions): a command using one of
# them is skipped, with this reason, only while build_parser() does not have it.
FUTURE_SUBCOMMANDS = {"claims": "the claims report", "asymptotics": "the flow/asymptotics command"}
# Doc pages written on other branches; a link to one is tolerated only while it is missing.
FUTURE_PAGES = {"api.md", "input_rules.md", "claims.md", "flow_and_asymptotics.md",
                "model_b.md", "long_horizons.md", "performance_startup.md"}
# Placeholders a doc may use in a command, and a sample value that parses.
PLACEHOLDERS = {"FILE": "run.npz", "DIR": "out", "PATTERN": "A.F1.*", "N": "30",
                "SECONDS": "60", "ADDRESS": "tcp://127.0.0.1:8786"}
# Commands (as shown, after `rdyn`) that are quick enough to run in the default suite.
# (The console blocks are run by test_console_example below.)
RUN_QUICK = (
    "verify --only A.invariant.*",
)
_COMMAND_LINE = re.compile(r"^\s*(?:\$\s+)?(?:.*?(?:&&|;)\s*)?(?:python3? -m )?rdyn\s")
_LONG_NUMBER = re.compile(r"-?\d+\.\d{9,}(?:e[+-]?\d+)?")


def _code_blocks(path: Path):
    """(language, [(line number, text)]) for every fenced code block of ``path``."""
    blocks, current, lang = [], None, ""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        fence = re.match(r"^\s*```+\s*(\S*)", line)
        if fence and current is None:
            current, lang = [], fence.group(1).lower()
        elif fence:
            blocks.append((lang, current))
            current = None
        elif current is not None:
            current.append((number, line))
    return blocks


def _segments(line: str) -> list[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``;``, ``|``), comments dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    segments, current = [], []
    for token in lexer:
        if token in {"&&", "||", ";", "|", "&"}:
            segments.append(current)
            current = []
        else:
            current.append(token)
    return segments + [current]


def _doc_commands():
    """(where, argv after `rdyn`, shown output lines) for every `rdyn ...` (or `python -m rdyn
    ...`) command in a code block; in ``console`` blocks only the ``$ `` lines are commands."""
    found = []
    for path in DOCS:
        for lang, lines in _code_blocks(path):
            if lang in {"python", "py", "json", "toml"}:
                continue
            for i, (number, text) in enumerate(lines):
                if lang == "console" and not text.lstrip().startswith("$ "):
                    continue
                if not _COMMAND_LINE.match(text) or re.match(r"^\s*rdyn [\w-]+: ", text):
                    continue  # not a command, or a shown message such as "rdyn teacher: error: ..."
                where = f"{path.relative_to(ROOT)}:{number}"
                output = []
                if lang == "console":
                    for _, after in lines[i + 1:]:
                        if after.lstrip().startswith("$ "):
                            break
                        output.append(after)
                try:
                    segments = _segments(text.lstrip().removeprefix("$ "))
                except ValueError as exc:
                    found.append((where, ["<unparsable>", str(exc), text], output))
                    continue
                for segment in segments:
                    if segment[:3] in (["python", "-m", "rdyn"], ["python3", "-m", "rdyn"]):
                        segment = segment[2:]
                    if segment[:1] == ["rdyn"]:
                        found.append((where, segment[1:], output))
    return found


COMMANDS = _doc_commands()


@pytest.fixture(scope="module")
def parser():
    from rdyn.cli import build_parser

    return build_parser()


def _subcommand_names(parser) -> set[str]:
    from rdyn.cli.docs import _subcommands

    return set(_subcommands(parser))


def _prepared(parser, argv: list[str]) -> list[str]:
    """argv with placeholders replaced; skips (with the reason) what cannot be checked yet."""
    if argv[:1] == ["<unparsable>"]:
        pytest.fail(f"not a valid shell line ({argv[1]}): {argv[2]}")
    if any(token.startswith(("[", "<")) or token == "..." for token in argv) \
            or argv[:1] == ["COMMAND"]:
        pytest.skip("a synopsis with placeholders, not a command")
    if argv and not argv[0].startswith("-") and argv[0] not in _subcommand_names(parser):
        if argv[0] in FUTURE_SUBCOMMANDS:
            pytest.skip(f"`rdyn {argv[0]}` ({FUTURE_SUBCOMMANDS[argv[0]]}) is not in this "
                        "build's parser yet; the check becomes active once it is")
        pytest.fail(f"unknown subcommand `rdyn {argv[0]}`")
    return [PLACEHOLDERS.get(token, token) for token in argv]


def test_docs_show_rdyn_commands():
    assert len(COMMANDS) >= 10, COMMANDS  # the extractor finds the commands of README and docs/
    shown = {" ".join(argv) for _, argv, _ in COMMANDS}
    missing = [c for c in RUN_QUICK if c not in shown]
    assert not missing, f"RUN_QUICK commands no longer shown in the docs: {missing}"


@pytest.mark.parametrize("where,argv,output", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_doc_command_parses(parser, capsys, where, argv, output):
    argv = _prepared(parser, argv)
    try:
        parser.parse_args(argv)
    except SystemExit as exc:
        err = capsys.readouterr().err.strip()
        if exc.code == 0 and ("-h" in argv or "--help" in argv):
            return
        pytest.fail(f"{where}: `rdyn {shlex.join(argv)}` does not parse: {err}")


@pytest.mark.parametrize("command", RUN_QUICK)
def test_quick_doc_command_runs(capsys, command):
    from rdyn.cli import main

    where, argv, output = next(c for c in COMMANDS if " ".join(c[1]) == command)
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, f"{where}: `rdyn {shlex.join(argv)}` exited {status}: {err[-2000:]}"
    if "--json" in argv:
        json.loads(out)
    if argv[0] == "verify":
        assert out.strip() and all(l.startswith("[pass") for l in out.splitlines()), out
        assert re.search(r"^rdyn verify: \d+ pass, 0 fail, \d+ discrepancy, \d+ info", err, re.M)
    shown = [n for line in output for n in _LONG_NUMBER.findall(line)]
    absent = [n for n in shown if n not in out]
    assert not absent, f"{where}: shown output has numbers the command no longer prints: {absent}"


def test_cli_reference_is_generated(monkeypatch):
    from rdyn.cli import docs as cli_docs

    text = cli_docs.render()
    monkeypatch.setenv("COLUMNS", "37")  # no dependence on the terminal width
    assert cli_docs.render() == text
    current = (ROOT / "docs" / "cli.md").read_text()
    assert current == text, f"docs/cli.md is stale: regenerate it with `{REGENERATE}`"


def test_cli_reference_lists_every_subcommand_and_option(parser):
    from rdyn.cli.docs import _subcommands, render

    text = render(parser)
    for name, sub in _subcommands(parser).items():
        assert f"## rdyn {name}\n" in text
        section = text.split(f"## rdyn {name}\n", 1)[1].split("\n## rdyn ", 1)[0]
        for action in sub._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in section, (name, option)


def test_readme_test_command_is_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    ci_pytest = [line.strip() for line in ci if line.strip().startswith("python -m pytest")]
    assert len(ci_pytest) == 1, ci_pytest
    readme_bash = [text.strip() for lang, lines in _code_blocks(ROOT / "README.md")
                   if lang in {"bash", "sh", "console"} for _, text in lines]
    assert f'pip install ".[test]" && {ci_pytest[0]}' in readme_bash, \
        "README's test command and .ci/run differ: keep them identical"


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def test_relative_links_and_anchors_resolve():
    broken, pending = [], []
    for path in DOCS:
        text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path
            if not resolved.exists():
                (pending if resolved.name in FUTURE_PAGES else broken).append(f"{path.name}: {target}")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{path.name}: {target} (no such heading)")
    assert not broken, broken
    if pending:
        pytest.skip(f"pages written on other branches, not here yet: {sorted(set(pending))}")


# ------------------------------------------------------------------ console examples
# Every ```console block of README.md and docs/*.md is an example that the suite runs: each
# `$ rdyn ...` line is run in-process and the lines shown under it must match what it prints
# (docs/guide.md, "How the examples are tested"). A comment on the line just above the
# opening fence changes that:
#   <!-- example: not run (REASON) -->   not run; the reason is required
#   <!-- example: slow -->                run at the stated size only with `-m slow`
#   <!-- example: reduced OPTIONS -->     the default suite runs every command with OPTIONS
#                                         (e.g. `--steps 200 --samples 4096`) replacing or
#                                         adding those options and compares the structure
#                                         only (numbers match any number of the same kind);
#                                         `-m slow` runs the stated size in full
#   <!-- example: rtol X -->              floats agree to relative X (default: to the digits
#                                         shown, i.e. half a unit in the last shown digit)
# Clauses combine with ";" (`<!-- example: slow; rtol 1e-6 -->`).
# Floats shown below ROUNDING_NOISE in magnitude (agreement figures such as max_rel_dev =
# 9.350e-16: float64 rounding, which differs between BLAS builds and machines) match any float
# below it; a value above it (a real disagreement) never does.
ROUNDING_NOISE = 1e-13
_MARKER = re.compile(r"^\s*<!--\s*example:\s*(.*?)\s*-->\s*$")
_TOKEN = re.compile(r"\.\.\.|-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|[A-Za-z_][\w]*|\S")
_NUMBER = re.compile(r"^-?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?$")


def _marker(path: Path, fence_line: int) -> dict:
    """The example marker above the fence at ``fence_line`` (1-based): {"not_run": reason,
    "slow": bool, "reduced": [options], "rtol": float}."""
    lines = path.read_text().splitlines()
    above = lines[fence_line - 2] if fence_line >= 2 else ""
    found = _MARKER.match(above)
    marker = {"not_run": None, "slow": False, "reduced": None, "rtol": None}
    if not found:
        return marker
    body = found.group(1)
    if body.startswith("not run"):  # the whole comment: the reason may contain ";"
        reason = re.fullmatch(r"not run\s*\((.+)\)", body)
        assert reason, f"{path.name}:{fence_line}: `not run` needs a (reason)"
        marker["not_run"] = reason.group(1).strip()
        return marker
    for clause in (c.strip() for c in body.split(";")):
        if clause == "slow":
            marker["slow"] = True
        elif clause.startswith("reduced "):
            marker["reduced"] = shlex.split(clause.removeprefix("reduced "))
        elif clause.startswith("rtol "):
            marker["rtol"] = float(clause.removeprefix("rtol "))
        else:
            raise AssertionError(f"{path.name}:{fence_line}: unknown example clause {clause!r}")
    return marker


def _console_examples():
    """(where, marker, [(argv, shown output lines)]) for every console block."""
    examples = []
    for path in DOCS:
        for lang, block in _code_blocks(path):
            if lang != "console" or not block:
                continue
            fence = block[0][0] - 1
            where = f"{path.relative_to(ROOT)}:{fence}"
            commands = []
            for text in (t for _, t in block):
                if text.lstrip().startswith("$ "):
                    segments = _segments(text.lstrip().removeprefix("$ "))
                    argv = segments[0]
                    if argv[:3] in (["python", "-m", "rdyn"], ["python3", "-m", "rdyn"]):
                        argv = argv[2:]
                    commands.append((argv[1:] if argv[:1] == ["rdyn"] else ["<not rdyn>", *argv],
                                     []))
                elif commands:
                    commands[-1][1].append(text)
            examples.append((where, _marker(path, fence), commands))
    return examples


EXAMPLES = _console_examples()


def _example_params():
    params = []
    for where, marker, commands in EXAMPLES:
        if marker["reduced"] is not None:
            params.append(pytest.param(where, marker, commands, True, id=f"{where}-reduced"))
            params.append(pytest.param(where, marker, commands, False, id=where,
                                       marks=pytest.mark.slow))
        else:
            params.append(pytest.param(where, marker, commands, False, id=where,
                                       marks=[pytest.mark.slow] if marker["slow"] else []))
    return params


def _with_options(argv: list[str], options: list[str]) -> list[str]:
    """``argv`` with each ``--opt value`` (or flag) of ``options`` replacing its value there, or
    added."""
    argv = list(argv)
    i = 0
    while i < len(options):
        name = options[i]
        value = options[i + 1:i + 2] if i + 1 < len(options) and not options[i + 1].startswith("--") else []
        if name in argv:
            at = argv.index(name)
            has_value = at + 1 < len(argv) and not argv[at + 1].startswith("--")
            argv[at:at + 1 + has_value] = [name, *value]
        else:
            argv += [name, *value]
        i += 1 + len(value)
    return argv


def _tokens_match(shown: list[str], actual: list[str], rtol: float | None, structure: bool) -> bool:
    """``shown`` (with ``...`` wildcards) equals ``actual`` token by token; numbers compare by
    value: integers exactly, floats to ``rtol`` or the digits shown; with ``structure`` any
    number matches a number of the same kind (integer / float)."""
    def same(s: str, a: str) -> bool:
        if not (_NUMBER.match(s) and _NUMBER.match(a)):
            return s == a
        s_int, a_int = re.fullmatch(r"-?\d+", s) is not None, re.fullmatch(r"-?\d+", a) is not None
        if structure or s_int != a_int:
            return s_int == a_int
        if s_int:
            return int(s) == int(a)
        x, y = float(s), float(a)
        if abs(x) < ROUNDING_NOISE:
            return abs(y) < ROUNDING_NOISE
        mantissa = s.lstrip("-").split("e")[0].split("E")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        exponent = int(re.split(r"[eE]", s)[1]) if re.search(r"[eE]", s) else 0
        tolerance = 0.5 * 10.0 ** (exponent - decimals) if rtol is None else rtol * abs(x)
        return abs(x - y) <= tolerance * (1 + 1e-12)

    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        if (i, j) not in memo:
            if i == len(shown):
                memo[i, j] = j == len(actual)
            elif shown[i] == "...":
                memo[i, j] = any(match(i + 1, k) for k in range(j, len(actual) + 1))
            else:
                memo[i, j] = j < len(actual) and same(shown[i], actual[j]) and match(i + 1, j + 1)
        return memo[i, j]

    return match(0, 0)


def _shown_matches(shown: list[str], out: str, err: str, json_output: bool,
                   rtol: float | None, structure: bool) -> list[str]:
    """The shown lines that the real output does not match (empty when it does)."""
    shown = [line for line in shown if line.strip()]
    if not shown:
        return []
    if json_output:  # one JSON object, wrapped over several lines in the docs
        tokens = _TOKEN.findall(" ".join(shown))
        return [] if _tokens_match(tokens, _TOKEN.findall(out), rtol, structure) else shown
    out_lines, err_lines = out.splitlines(), err.splitlines()
    missing, at = [], 0
    for line in shown:
        tokens = _TOKEN.findall(line)
        hit = next((k for k in range(at, len(out_lines))
                    if _tokens_match(tokens, _TOKEN.findall(out_lines[k]), rtol, structure)), None)
        if hit is not None:
            at = hit + 1
        elif not any(_tokens_match(tokens, _TOKEN.findall(e), rtol, structure) for e in err_lines):
            missing.append(line)
    return missing


def test_console_examples_found_and_marked():
    assert len(EXAMPLES) >= 5, EXAMPLES
    for where, marker, commands in EXAMPLES:
        assert commands, f"{where}: a console block without a `$ ` command"
        if marker["not_run"] is None:
            bad = [a for a, _ in commands if a[:1] == ["<not rdyn>"]]
            assert not bad, f"{where}: only rdyn commands can be run; mark the block not run"


@pytest.mark.parametrize("where,marker,commands,reduced", _example_params())
def test_console_example(capsys, monkeypatch, tmp_path, where, marker, commands, reduced):
    """Run the example's commands (in a temporary folder) and compare what they print with
    what the block shows."""
    from rdyn.cli import main

    if marker["not_run"] is not None:
        pytest.skip(f"{where}: marked not run ({marker['not_run']})")
    monkeypatch.chdir(tmp_path)
    for argv, shown in commands:
        argv = _with_options(argv, marker["reduced"]) if reduced else argv
        argv = [PLACEHOLDERS.get(token, token) for token in argv]
        error_shown = any(re.match(rf"^rdyn {re.escape(argv[0])}: error: ", s) for s in shown)
        status = main(argv)
        out, err = capsys.readouterr()
        assert status == (2 if error_shown else 0), \
            f"{where}: `rdyn {shlex.join(argv)}` exited {status}: {err[-2000:]}"
        missing = _shown_matches(shown, out, err, "--json" in argv, marker["rtol"], reduced)
        assert not missing, (f"{where}: `rdyn {shlex.join(argv)}` no longer prints these shown "
                             f"lines{' (structure)' if reduced else ''}:\n" + "\n".join(missing)
                             + f"\n--- it printed:\n{out}{err}")


def test_output_matcher():
    """The comparison used above: integers exact, floats to the digits shown, wildcards."""
    t = _TOKEN.findall
    assert _tokens_match(t("t1 = 26  x = 0.2222222222"), t("t1 = 26  x = 0.22222222221"), None, False)
    assert not _tokens_match(t("t1 = 26"), t("t1 = 27"), None, False)
    assert not _tokens_match(t("x = 0.2222222222"), t("x = 0.2222222232"), None, False)
    assert _tokens_match(t("x = 0.2222222222"), t("x = 0.2222222232"), 1e-8, False)
    assert _tokens_match(t("dev = 9.350e-16"), t("dev = 1.122e-15"), None, False)  # rounding noise
    assert not _tokens_match(t("dev = 9.350e-16"), t("dev = 3.1e-10"), None, False)
    assert _tokens_match(t("se 2.96e-05"), t("se 2.9649e-05"), None, False)
    assert not _tokens_match(t("se 2.96e-05"), t("se 2.97e-05"), None, False)
    assert _tokens_match(t('{"a": 1, ...}, "b": 2}'), t('{"a": 1, "c": [3]}, "b": 2}'), None, False)
    assert not _tokens_match(t("expectation=monte_carlo"), t("expectation=qmc"), None, True)
    assert _tokens_match(t("T* = 2366184 p = 0.16"), t("T* = 12 p = 0.5"), None, True)
    assert not _tokens_match(t("T* = 2366184"), t("T* = 12.5"), None, True)
    assert _with_options(["ln", "--steps", "2000", "--quiet"], ["--steps", "20", "--samples", "64"]) \
        == ["ln", "--steps", "20", "--quiet", "--samples", "64"]
