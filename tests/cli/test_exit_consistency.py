"""One bad input, one exit code: each broken input is fed to every command that reads it (issue 18 item 3).

For every case the commands that read the input must agree: exit 2 (bad input, nothing changed) with the same
error code in the JSON error document. The only commands allowed to differ are named here, each for its
documented reason: a lint whose job is to find the problem (exit 1 with the problem listed), `muse status` and
`muse report` (the problems are their content), and the look-up commands that leave one invalid card out with a
warning (`search`, `mentions`).

A step that fails closed is a model's or a gate's failure (exit 3); a broken input met in the middle of a
command is still bad input — services never record it as a failed step (the static guard at the end).
"""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_BOOK

SCRIPTED = '\n[providers.script]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\ndefault = "script:demo-model"\n'

#: Every command of the CLI with the arguments it needs on the sample book (a model step may be reached).
ALL = {
    "check": ["check"],
    "rules lint": ["rules", "lint"],
    "rules show": ["rules", "show"],
    "rules normalize": ["rules", "normalize"],
    "review": ["review", "2"],
    "judge": ["judge", "--profile", "quality_gate", "--chapter", "2", "{book}/a.md", "{book}/b.md"],
    "judge-summary": ["judge-summary"],
    "ledger": ["ledger"],
    "search": ["search", "刘备", "--before", "5"],
    "mentions": ["mentions", "刘备"],
    "sync": ["sync"],
    "calls": ["calls"],
    "cost": ["cost"],
    "report": ["report"],
    "status": ["status"],
    "export": ["export", "--format", "txt", "--out", "{book}/out.txt", "--force"],
    "context": ["context", "11"],
    "context verify": ["context", "verify", "11"],
    "gate verify": ["gate", "verify"],
    "gate show": ["gate", "show"],
    "cards show": ["cards", "show", "刘备"],
    "cards lint": ["cards", "lint"],
    "facts extract": ["facts", "extract", "2"],
    "facts show": ["facts", "show", "2"],
    "vault recover": ["vault", "recover"],
    "models check": ["models", "check"],
    "outline show": ["outline", "show", "11"],
    "outline lint": ["outline", "lint", "11"],
}


def _names(commands: str) -> list[str]:
    return commands.split(", ")


def _write(path: str, data: bytes) -> Callable[[Path], None]:
    def plant(book: Path) -> None:
        (book / path).write_bytes(data)

    return plant


def _remove(path: str) -> Callable[[Path], None]:
    return lambda book: (book / path).unlink()


#: case → (how to break the book, the commands that read it, the error code they must all give)
CASES: dict[str, tuple[Callable[[Path], None], list[str], str]] = {
    "book.toml syntax": (_write("book.toml", b"[book\ntitle = 1\n"), list(ALL), "CONFIG_SYNTAX"),
    "no book": (_remove("book.toml"), list(ALL), "BOOK_NOT_FOUND"),
    "script syntax": (
        _write("script.yaml", b"reviewer: [\n  - {output\n"),
        _names("review, judge, sync, facts extract, rules normalize, models check"),
        "SCRIPT_INVALID",
    ),
    "script missing": (
        _remove("script.yaml"),
        _names("review, judge, sync, facts extract, rules normalize, models check"),
        "SCRIPT_READ",
    ),
    "card syntax": (
        _write("cards/liu-bei.yaml", b"id: [unclosed\n"),
        _names("review, ledger, sync, cards show, facts extract, facts show, outline lint, judge")
        + _names("cards lint, search, status, report"),
        "CARD_SYNTAX",
    ),
    "outline syntax": (
        _write("outlines/0011.yaml", b"chapter: [unclosed\n"),
        _names(
            "review, ledger, sync, context, cards show, facts extract, facts show, outline show, outline lint, status"
        ),
        "OUTLINE_SYNTAX",
    ),
    "chapter not UTF-8": (
        _write("chapters/0002.md", b"# \xe7\xac\xac\n\xff\xfe bad bytes\n"),
        _names("check, review, search, mentions, sync, report, status, export, cards lint, facts extract, facts show"),
        "CHAPTER_ENCODING",
    ),
    "rules contradiction": (
        _write("rules.txt", "禁止:刘备\n疲劳词:刘备≤2\n".encode()),
        _names("check, rules show, review, report, rules lint, status"),
        "RULES_CONTRADICTION",
    ),
}

#: (case, command) → the exit code of a command whose job is to report this problem (its document lists it).
REPORTERS = {
    ("card syntax", "cards lint"): 1,
    ("card syntax", "search"): 0,  # the card is left out with a warning
    ("card syntax", "status"): 0,
    ("card syntax", "report"): 0,
    ("outline syntax", "outline lint"): 1,
    ("outline syntax", "status"): 0,
    ("rules contradiction", "rules lint"): 1,
    ("rules contradiction", "status"): 0,
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample book with the scripted provider of the demo configured and two judge candidates."""
    book = tmp_path_factory.mktemp("consistency") / "book"
    shutil.copytree(SAMPLE_BOOK, book, ignore=shutil.ignore_patterns(".muse"))
    shutil.copy(ROOT / "examples" / "demo-script.yaml", book / "script.yaml")
    with (book / "book.toml").open("a", encoding="utf-8") as fh:
        fh.write(SCRIPTED)
    (book / "a.md").write_text("甲" * 60, encoding="utf-8")
    (book / "b.md").write_text("乙" * 60, encoding="utf-8")
    return book


@pytest.mark.parametrize("case", list(CASES))
def test_one_bad_input_gives_one_exit_code_in_every_command(muse, template: Path, tmp_path: Path, case: str) -> None:  # type: ignore[no-untyped-def]
    plant, commands, code = CASES[case]
    book = tmp_path / "book"
    shutil.copytree(template, book)
    plant(book)
    seen: dict[str, tuple[int, str | None]] = {}
    for name in commands:
        args = [a.replace("{book}", str(book)) for a in ALL[name]]
        r = muse(*args, "--book", book, "--json", cwd=tmp_path)
        doc = json.loads(r.stdout) if r.stdout.strip() else {}
        error = doc.get("error") if isinstance(doc.get("error"), dict) else None
        issues = [i["code"] for i in doc.get("issues", []) if i["severity"] == "error"]  # models check lists them
        got = error["code"] if error else issues[0] if issues else None
        seen[name] = (r.exit_code, got)
        assert "INTERNAL" not in r.stderr, (name, r.stderr)
    expected = {name: (REPORTERS[case, name], None) if (case, name) in REPORTERS else (2, code) for name in commands}
    assert seen == expected


#: Modules that may turn a MuseError into a recorded problem instead of letting it end the command: reporters
#: and checkers whose content the problems are. Everywhere else a step catches only what fails closed.
MAY_RECORD_INPUT_ERRORS = {
    "reports/_status.py": "muse status lists every problem as its content",
    "reports/html/_render.py": "the report shows what could not be read on its page",
    "reports/html/_judging.py": "an arm map that cannot be opened is shown as such",
    "memory/_cards.py": "card lint collects every problem of every file",
    "writing/_outlines.py": "outline lint collects every problem",
    "replay/_receipt.py": "gate verification names every problem by seq",
    "replay/_verify.py": "gate verification names every problem by seq",
    "book/_project.py": "the heading unit is sampled; reading the chapter for real reports the problem",
    "reports/_check.py": "muse check's notes about reviews never fail the check",
    "rules/_check.py": "muse check on a read-only book checks and says the registry update was skipped",
    "llm/_models_check.py": "models check lists a broken script among its configuration errors (exit 2 too)",
    "reports/_locations.py": "a location falls back to the offsets when the chapter cannot be read",
    "reports/_review.py": "a review's locations fall back to the offsets when a file cannot be read",
    "writing/_gate_evidence.py": "the gate's evidence pack says why the writer's context or memory is missing",
    "llm/_call_detail.py": "a vault object that cannot be read is shown as missing; its receipt still names it",
    "replay/_journal.py": "a signing key that cannot be loaded leaves GATE_SIGNER_MISSING its generic fix",
    "replay/_guard.py": "the entry guard lists why the journal cannot be verified among its refusal's findings",
    "replay/_orchestrator.py": "a failed replay sample or panel is recorded not ok with its code (seed 003)",
    "studio/_app.py": "the studio, a face like the CLI, shows an error as its page (the error line, with a 4xx status)",
    "writing/_accept.py": "accept_preflight names a context that no longer builds as its failed manifest check",
    "writing/_desk.py": "an outline draft's lint lists its YAML error among its problems",
    "writing/_stretch.py": "a stretch names every chapter whose outline cannot be read in its one refusal",
    "writing/_plan_draft.py": "a plan draft's accept preflight names a bundle that no longer parses as its failed step",
}


def test_services_never_record_bad_input_as_a_failed_step() -> None:
    """`except MuseError` / `except InputError` that raises nothing turns bad input into a step's error(CODE) —
    exit 3, or 0 with the input silently left out — where every other command says exit 2. Only the modules above
    may, for the reason given; the CLI and the studio are the faces that show an error (its code) to the author."""
    src = ROOT / "src" / "novelmuse"
    offenders = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith(("cli/", "studio/")) or rel in MAY_RECORD_INPUT_ERRORS:  # the faces show every error
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            names = {n.id for n in ast.walk(node.type) if isinstance(n, ast.Name)}
            raises = any(isinstance(n, ast.Raise) for n in ast.walk(node))  # re-raised, or raised as another error
            if names & {"MuseError", "InputError"} and not raises:
                offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []
