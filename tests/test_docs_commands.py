"""The documentation cannot go stale silently (issue 12).

* docs/cli.md is exactly what ``python -m rdyn.cli_docs`` prints.
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

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
REGENERATE = "python -m rdyn.cli_docs > docs/cli.md"

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
RUN_QUICK = (
    "teacher --task sts --steps 200000 --record 1 --json --quiet",
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
                if not _COMMAND_LINE.match(text):
                    continue
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
    from rdyn.cli_docs import _subcommands

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
    from rdyn import cli_docs

    text = cli_docs.render()
    monkeypatch.setenv("COLUMNS", "37")  # no dependence on the terminal width
    assert cli_docs.render() == text
    current = (ROOT / "docs" / "cli.md").read_text()
    assert current == text, f"docs/cli.md is stale: regenerate it with `{REGENERATE}`"


def test_cli_reference_lists_every_subcommand_and_option(parser):
    from rdyn.cli_docs import _subcommands, render

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
