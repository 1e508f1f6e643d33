"""`muse judge` (a blind 2+1 judge panel on candidate files) and `muse rubrics` (the registered rubrics)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..book import Book, FineOutline, line_of, load_yaml_lines, parse_chapter_file, parse_outline
from ..errors import EXIT_FAILED_CLOSED, EXIT_FINDINGS, InputError
from ..judging import (
    HARD_BLOCKS,
    PROFILES,
    Candidate,
    JudgeRequest,
    LeakGuard,
    Target,
    judge_item,
    list_rubrics,
    summarize,
)
from ..memory import load_cards
from ..reports._judge import render_judge, render_judge_summary, render_rubrics
from ..text import sha256_hex
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, in_session, open_book


class _TargetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[\w\-.:]{1,64}$")
    text: str = Field(min_length=1)
    kind: str = Field(default="assertion", pattern=r"^(assertion|constraint)$")


def _read_yaml(path: Path) -> Any:
    """A YAML input file; a syntax error names file:line (JUDGE_FILE_SYNTAX), an unreadable file JUDGE_FILE_READ."""
    return load_yaml_lines(path, code_prefix="JUDGE_FILE")


def _targets(path: Path | None) -> tuple[list[Target], list[Target]]:
    """Assertions file: a YAML list of {id, text, kind: assertion|constraint (default assertion)}."""
    if path is None:
        return [], []
    raw = _read_yaml(path)
    if not isinstance(raw, list):
        raise InputError(
            "JUDGE_ASSERTIONS_INVALID",
            "the assertions file must be a YAML list of {id, text, kind}",
            str(path),
            "e.g. `- {id: a1, text: 张飞仍然活着, kind: constraint}`",
        )
    assertions: list[Target] = []
    constraints: list[Target] = []
    for i, entry in enumerate(raw, 1):
        try:
            t = _TargetIn.model_validate(entry)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "entry"
            raise InputError(
                "JUDGE_ASSERTIONS_INVALID",
                f"entry {i}: {loc}: {first['msg']}",
                f"{path}:{line_of(raw, (i - 1, *first['loc']))}",
                "fix the entry",
            ) from exc
        (constraints if t.kind == "constraint" else assertions).append(Target(t.id, t.text))
    return assertions, constraints


def _hard_blocks(path: Path | None) -> dict[str, Any] | None:
    """Hard-block file: a YAML mapping of source_safety / output_compliance / static_contract → passed|fired."""
    if path is None:
        return None
    raw = _read_yaml(path)
    if not isinstance(raw, dict) or any(k not in HARD_BLOCKS or v not in ("passed", "fired") for k, v in raw.items()):
        raise InputError(
            "JUDGE_HARD_BLOCKS_INVALID",
            f"the hard-blocks file must map {', '.join(HARD_BLOCKS)} to passed or fired",
            str(path),
            "e.g. `source_safety: passed`",
        )
    return dict(raw)


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(
            "JUDGE_FILE_READ", f"cannot read the {what} ({exc.strerror})", str(path), "check the path"
        ) from exc
    except UnicodeDecodeError as exc:
        raise InputError("JUDGE_FILE_SYNTAX", f"the {what} is not UTF-8", str(path), "save it as UTF-8") from exc


def _card_ids(book: Book) -> list[str]:
    """The book's card ids (a blind input has no cards): ids that are also a card's name or alias are text."""
    if not book.cards_dir.is_dir():
        return []
    cards = load_cards(book).cards.values()
    names = {n for card in cards for n in (card.name, *card.aliases)}
    return sorted(card.id for card in cards if card.id not in names)


def _candidate(path: Path, arm: str) -> Candidate:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(
            "JUDGE_FILE_READ", f"cannot read the candidate ({exc.strerror})", str(path), "pass a readable text file"
        ) from exc
    chapter = parse_chapter_file(0, path, data)  # a `# heading` line is dropped: headings can name arms
    return Candidate(arm, chapter.body)


@app.command()
def judge(
    candidates: Annotated[list[Path], typer.Argument(help="Candidate text files (chapter text or fine outlines).")],
    profile: Annotated[str, typer.Option("--profile", help=f"Rubric profile: {', '.join(PROFILES)}.")],
    outline: Annotated[
        Path | None, typer.Option("--outline", help="The item's fine outline (outlines/NNNN.yaml format).")
    ] = None,
    assertions: Annotated[
        Path | None,
        typer.Option("--assertions", help="YAML list of {id, text, kind: assertion|constraint}.", show_default=False),
    ] = None,
    scene_type: Annotated[
        str | None, typer.Option("--scene-type", help="Pre-registered scene type (writer_replay).", show_default=False)
    ] = None,
    hard_blocks: Annotated[
        Path | None,
        typer.Option(
            "--hard-blocks", help="YAML: rule-layer hard blocks → passed|fired (quality_gate).", show_default=False
        ),
    ] = None,
    item: Annotated[
        str | None, typer.Option("--item", help="Item id (default: from the candidates' sha256).", show_default=False)
    ] = None,
    seed: Annotated[str, typer.Option("--seed", help="Per-item seed for the random candidate ids.")] = "0",
    secret: Annotated[
        list[str] | None,
        typer.Option("--secret", help="A token that must never reach a judge (repeatable).", show_default=False),
    ] = None,
    strategy: Annotated[
        list[str] | None,
        typer.Option("--strategy", help="An evidence-strategy name that must never reach a judge.", show_default=False),
    ] = None,
    manifest: Annotated[
        list[Path] | None,
        typer.Option("--manifest", help="A context manifest whose lines must never reach a judge.", show_default=False),
    ] = None,
    no_lessons: Annotated[bool, typer.Option("--no-lessons", help="Do not register example lessons.")] = False,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Score candidates with a blind 2+1 judge panel (seed 000). Scoring only: nothing is changed.

    Candidates get random ids; judge 1 sees the blind order, judge 2 the reverse, a third judge runs only
    when a score differs by more than 0.5. Exit 0: scored (or skipped: no judge model configured — that is
    not a pass); 1: quality_gate adjudication failed; 3: the item is invalid (a judge failed closed),
    invalid_unstable, or the input leaked a hidden token. Hidden tokens: the candidates' file names and the
    directory names that tell them apart (the arm labels), the book's card ids, --strategy, --manifest lines
    and --secret values.
    """
    b = open_book(book)
    if profile not in PROFILES:
        raise InputError(
            "JUDGE_PROFILE_UNKNOWN", f"unknown profile {profile!r}", "--profile", f"use one of {', '.join(PROFILES)}"
        )
    if hard_blocks is not None and profile != "quality_gate":
        raise InputError(
            "JUDGE_HARD_BLOCKS_UNUSED",
            f"profile {profile} has no quality gate, so rule-layer hard blocks would be ignored",
            "--hard-blocks",
            "omit --hard-blocks, or use --profile quality_gate",
        )
    paths = [p.expanduser() for p in candidates]
    arms = [chr(ord("A") + i) if i < 26 else f"A{i}" for i in range(len(paths))]
    cands = [_candidate(p, arm) for p, arm in zip(paths, arms, strict=True)]
    fine_outline: FineOutline | None = parse_outline(outline) if outline is not None else None
    asserts, constraints = _targets(assertions)
    item_id = item or "item_" + sha256_hex("".join(sha256_hex(c.text) for c in cands))[:16]
    # The file names, and the directory names that tell the candidates apart (replay/cards/0001.md vs
    # replay/base/0001.md), are the user's labels for the arms: they must not reach a judge either.
    arm_labels = {p.name for p in paths} | {p.stem for p in paths}
    parts = [set(p.resolve().parent.parts[1:]) for p in paths]
    shared = parts[0].intersection(*parts[1:])
    arm_labels |= {part for ps in parts for part in ps} - shared
    request = JudgeRequest(
        profile=profile,
        candidates=cands,
        item_id=item_id,
        seed=seed,
        scene_type=scene_type,
        outline=fine_outline,
        assertions=asserts,
        constraints=constraints,
        guard=LeakGuard(
            arm_names=sorted(arm_labels),
            strategy_names=strategy or [],
            card_ids=_card_ids(b),
            manifest=[_read_text(p, "manifest") for p in manifest or []],
            secrets=secret or [],
        ),
        hard_blocks=_hard_blocks(hard_blocks),
        persist_lessons=not no_lessons,
    )

    def progress(slot: int, state: str) -> None:
        label = {1: "judge 1 (blind order)", 2: "judge 2 (reversed order)", 3: "judge 3 (a score differed by > 0.5)"}
        err_console.print(f"{label[slot]}: {state}", markup=False, highlight=False)

    outcome = in_session(b, "judge", lambda session: judge_item(b, session, request, on_judge=progress))
    sources = {arm: str(p) for arm, p in zip(arms, paths, strict=True)}
    outcome = outcome.model_copy(update={"sources": sources})
    if json_out:
        emit_json(outcome)
    else:
        render_judge(console, outcome)
    if outcome.outcome in ("invalid", "invalid_unstable"):
        err_console.print(
            f"error[{outcome.reason or 'JUDGE_INVALID'}]: the panel is {outcome.outcome}, item {outcome.itemRef} — "
            "no scores were produced; see `muse calls` for the receipts",
            markup=False,
        )
        raise typer.Exit(EXIT_FAILED_CLOSED)
    if any(g.outcome != "passed" for g in outcome.gate):
        raise typer.Exit(EXIT_FINDINGS)


@app.command("judge-summary")
def judge_summary(
    run: Annotated[
        list[str] | None, typer.Option("--run", help="Only panels of this run id (repeatable).", show_default=False)
    ] = None,
    profile: Annotated[str | None, typer.Option("--profile", help="Only this profile.", show_default=False)] = None,
    book: BookOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Aggregate stored judge panels per rubric version: per-arm means (general dimensions across chapters,
    scene dimensions within one scene type), B−A and C−A deltas, and judge reliability.

    Arms are the letters `muse judge` gave its candidate files in argument order (A = the first file):
    pass the baseline first. invalid and invalid_unstable items are listed, never averaged.
    """
    if profile is not None and profile not in PROFILES:
        raise InputError(
            "JUDGE_PROFILE_UNKNOWN", f"unknown profile {profile!r}", "--profile", f"use one of {', '.join(PROFILES)}"
        )
    doc = summarize(open_book(book), run_ids=run or [], profile=profile)
    if json_out:
        emit_json(doc)
    else:
        render_judge_summary(console, doc)


class _RubricRow(BaseModel):
    profile: str
    id: str
    version: int
    sha256: str
    file: str
    scale: dict[str, float]
    dimensions: list[str]
    critical: list[str]
    sceneTypes: list[str]
    hardBlocks: list[str]


@app.command()
def rubrics(json_out: JsonOpt = False) -> None:
    """List the registered rubrics (profile, id, version, sha256); each is loaded and hash-checked."""
    loaded = list_rubrics()
    if json_out:
        emit_json(
            {
                "rubrics": [
                    _RubricRow(
                        profile=r.profile,
                        id=r.id,
                        version=r.version,
                        sha256=r.sha256,
                        file=r.file,
                        scale={"min": r.scale.min, "max": r.scale.max, "step": r.scale.step},
                        dimensions=r.dimension_ids,
                        critical=r.critical_ids,
                        sceneTypes=list(r.scene_types),
                        hardBlocks=r.hard_blocks,
                    ).model_dump()
                    for r in loaded
                ]
            }
        )
    else:
        render_rubrics(console, loaded)
