"""`muse judge` (a blind 2+1 judge panel on candidate files) and `muse rubrics` (the registered rubrics)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..judging import PROFILES, JudgeFiles, list_rubrics, summarize
from ..reports import judge_error, judge_outcome, render_judge, render_judge_summary, render_rubrics, rubrics_doc
from ._app import app
from ._common import BookOpt, JsonOpt, console, emit_json, err_console, finish, in_session, open_book


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
    chapter: Annotated[
        int | None,
        typer.Option(
            "--chapter",
            help="The chapter the candidates are for (quality_gate: its evidence pack and hard blocks; "
            "fine_outline_replay: nothing of chapter N or later may reach a judge).",
            show_default=False,
        ),
    ] = None,
    hard_blocks: Annotated[
        Path | None,
        typer.Option(
            "--hard-blocks",
            help="YAML overrides: hard block → fired (quality_gate; can only fire a block, never pass one).",
            show_default=False,
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
    """Score candidates with a blind 2+1 judge panel. Scoring only: nothing is changed.

    quality_gate needs --chapter N: the judges read chapter N's evidence pack (the writer's context, or the
    memory as of N−1) and the rule layer computes each candidate's hard blocks (source_safety,
    output_compliance, static_contract); --hard-blocks can only add a fired block.

    Candidates get random ids; judge 1 sees the blind order, judge 2 the reverse, a third judge runs only
    when a score differs by more than 0.5. Exit 0: scored; 1: quality_gate adjudication failed; 3: the item is
    invalid (a judge failed closed), invalid_unstable, or the input leaked a hidden token; 4: not evaluated
    (no judge model configured — never a pass). Hidden tokens: the candidates' file names and the
    directory names that tell them apart (the arm labels), the book's card ids, --strategy, --manifest lines
    and --secret values.
    """
    b = open_book(book)
    files = JudgeFiles(
        profile=profile,
        candidates=candidates,
        outline=outline,
        assertions=assertions,
        scene_type=scene_type,
        hard_blocks=hard_blocks,
        chapter=chapter,
        item=item,
        seed=seed,
        secrets=secret or [],
        strategies=strategy or [],
        manifests=manifest or [],
        persist_lessons=not no_lessons,
    )

    def progress(slot: int, state: str) -> None:
        label = {1: "judge 1 (blind order)", 2: "judge 2 (reversed order)", 3: "judge 3 (a score differed by > 0.5)"}
        err_console.print(f"{label[slot]}: {state}", markup=False, highlight=False)

    from ..writing import judge_files  # the writer's evidence for the quality gate: loaded by `judge` only

    doc = in_session(b, "judge", lambda session: judge_files(b, session, files, on_judge=progress))
    outcome = judge_outcome(doc)
    if json_out:
        emit_json(doc, outcome)
    else:
        render_judge(console, doc)
    if (error := judge_error(doc)) is not None:
        err_console.print(error, markup=False)
    finish(outcome)


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
    doc = summarize(open_book(book), run_ids=run or [], profile=profile)
    if json_out:
        emit_json(doc)
    else:
        render_judge_summary(console, doc)


@app.command()
def rubrics(json_out: JsonOpt = False) -> None:
    """List the registered rubrics (profile, id, version, sha256); each is loaded and hash-checked."""
    loaded = list_rubrics()
    if json_out:
        emit_json(rubrics_doc(loaded))
    else:
        render_rubrics(console, loaded)
