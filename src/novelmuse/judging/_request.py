"""What a judge panel is asked: `JudgeRequest`, and building one from the files `muse judge` is given.

A request carries the candidates with their hidden arms, the item id and seed, the item's fine outline,
oracle assertions and hard constraints, the evidence pack (quality_gate), the leak guard (every token no judge may
see), the rule layer's hard blocks per arm (for an adjudicated rubric, computed by the rule layer — `writing`
fills them in) and a caller's overrides, and where each arm came from. Replay builds requests from its arms
directly; `request_from_files` is the file-based door (`muse judge`), so the CLI only parses arguments.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..book import (
    Book,
    FineOutline,
    expand_user_path,
    line_of,
    load_yaml_lines,
    parse_chapter_file,
    parse_outline,
    read_user_file,
)
from ..errors import InputError
from ..memory import load_cards
from ..rules import HardBlockReport
from ..text import sha256_hex
from ._blind import Candidate, ContextItem, Target
from ._leak import LeakGuard
from ._rubrics import Rubric, load_rubric


@dataclass
class JudgeRequest:
    """One item to judge: candidates (with their hidden arms) and everything the blind input carries.

    `sources`: arm → where the caller got it (e.g. the file path), shown after unblinding.
    `hard_blocks`: arm → the rule layer's hard-block report of that candidate (None: not evaluated, which fails an
    adjudicated gate); `hard_block_overrides`: block → "fired" from the caller (can only fire, never pass).
    `context`: the evidence pack every candidate is judged against; `evidence`: its summary (source, chapter,
    sha256, items), recorded with the report and every gate decision. `chapter`, `origin` and `record_key` are
    recorded with each gate decision (`muse review` finds a decision again by its key).
    """

    profile: str
    candidates: Sequence[Candidate]
    item_id: str
    seed: str = "0"
    scene_type: str | None = None
    outline: FineOutline | None = None
    assertions: Sequence[Target] = ()
    constraints: Sequence[Target] = ()
    guard: LeakGuard = field(default_factory=LeakGuard)
    hard_blocks: Mapping[str, HardBlockReport] | None = None
    hard_block_overrides: Mapping[str, str] = field(default_factory=dict)
    context: Sequence[ContextItem] = ()
    evidence: Mapping[str, Any] | None = None
    persist_lessons: bool = True
    sources: Mapping[str, str] = field(default_factory=dict)
    chapter: int | None = None
    origin: str = "judge"
    record_key: str | None = None
    #: the text of the target chapter N and later: no judge-visible field may quote it (fine_outline_replay)
    future_texts: Sequence[str] = ()
    #: judge 1 sees the candidates in the given order (replay's balanced order plan), not the seeded one
    given_order: bool = False
    #: an oracle panel (replay): `unknown` is an allowed verdict, never corrected, never a pass
    unknown_verdicts: bool = False


@dataclass(frozen=True)
class JudgeFiles:
    """What `muse judge` was given: candidate files (arms A, B, … in this order) and the item's other inputs."""

    profile: str
    candidates: Sequence[Path]
    outline: Path | None = None
    assertions: Path | None = None
    scene_type: str | None = None
    hard_blocks: Path | None = None
    chapter: int | None = None
    item: str | None = None
    seed: str = "0"
    secrets: Sequence[str] = ()
    strategies: Sequence[str] = ()
    manifests: Sequence[Path] = ()
    persist_lessons: bool = True


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


def _check_hard_blocks_apply(path: Path | None, rubric: Rubric) -> None:
    if path is not None and not rubric.hard_blocks:
        raise InputError(
            "JUDGE_HARD_BLOCKS_UNUSED",
            f"profile {rubric.profile} has no quality gate, so rule-layer hard blocks would be ignored",
            "--hard-blocks",
            "omit --hard-blocks, or use a profile whose rubric has hard blocks (quality_gate)",
        )


def _hard_block_overrides(path: Path | None, rubric: Rubric) -> dict[str, str]:
    """Hard-block overrides: a YAML mapping of some of the rubric's hard blocks → fired. The rule layer computes
    every block; an override can make one fire (recorded as such), never pass."""
    if path is None:
        return {}
    raw = _read_yaml(path)
    if not isinstance(raw, dict) or any(k not in rubric.hard_blocks or v != "fired" for k, v in raw.items()):
        raise InputError(
            "JUDGE_HARD_BLOCKS_INVALID",
            f"the hard-blocks file may only set {', '.join(rubric.hard_blocks)} to fired (the rule layer decides "
            "what passes; an override can only make a block fire)",
            str(path),
            "e.g. `source_safety: fired`",
        )
    return dict(raw)


def _read_text(path: Path, what: str) -> str:
    try:
        return read_user_file(path, what=what, kind="JUDGE_FILE").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError("JUDGE_FILE_SYNTAX", f"the {what} is not UTF-8", str(path), "save it as UTF-8") from exc


def hidden_card_ids(book: Book) -> list[str]:
    """The book's card ids (a blind input has no cards): ids that are also a card's name or alias are text."""
    if not book.cards_dir.is_dir():
        return []
    cards = load_cards(book).cards.values()
    names = {n for card in cards for n in (card.name, *card.aliases)}
    return sorted(card.id for card in cards if card.id not in names)


def _candidate(path: Path, arm: str) -> Candidate:
    data = read_user_file(path, what="candidate", kind="JUDGE_FILE")
    chapter = parse_chapter_file(0, path, data)  # a `# heading` line is dropped: headings can name arms
    return Candidate(arm, chapter.body)


def arm_names(count: int) -> list[str]:
    """The arms of `count` candidates in argument order: A, B, … Z, then A26, A27, …"""
    return [chr(ord("A") + i) if i < 26 else f"A{i}" for i in range(count)]


def _arm_labels(paths: Sequence[Path]) -> set[str]:
    """The file names, and the directory names that tell the candidates apart (replay/cards/0001.md vs
    replay/base/0001.md): the user's labels for the arms, which must not reach a judge either."""
    labels = {p.name for p in paths} | {p.stem for p in paths}
    parts = [set(p.resolve().parent.parts[1:]) for p in paths]
    shared = parts[0].intersection(*parts[1:])
    return labels | ({part for ps in parts for part in ps} - shared)


def request_from_files(book: Book, files: JudgeFiles) -> JudgeRequest:
    """The request for candidate files (arms A, B, … in order): read and checked, the hidden tokens collected.

    Hidden tokens: the candidates' file names and the directory names that tell them apart (the arm labels), the
    book's card ids, the strategy names, the manifests' lines and the secrets. The item id defaults to one
    derived from the candidates' sha256.
    """
    rubric = load_rubric(files.profile)
    _check_hard_blocks_apply(files.hard_blocks, rubric)
    paths = [expand_user_path(p) for p in files.candidates]
    arms = arm_names(len(paths))
    candidates = [_candidate(p, arm) for p, arm in zip(paths, arms, strict=True)]
    outline = parse_outline(files.outline) if files.outline is not None else None
    assertions, constraints = _targets(files.assertions)
    item_id = files.item or "item_" + sha256_hex("".join(sha256_hex(c.text) for c in candidates))[:16]
    return JudgeRequest(
        profile=files.profile,
        candidates=candidates,
        item_id=item_id,
        seed=files.seed,
        scene_type=files.scene_type,
        outline=outline,
        assertions=assertions,
        constraints=constraints,
        guard=LeakGuard(
            arm_names=sorted(_arm_labels(paths)),
            strategy_names=list(files.strategies),
            card_ids=hidden_card_ids(book),
            manifest=[_read_text(p, "manifest") for p in files.manifests],
            secrets=list(files.secrets),
        ),
        hard_block_overrides=_hard_block_overrides(files.hard_blocks, rubric),
        chapter=files.chapter,
        persist_lessons=files.persist_lessons,
        sources={arm: str(p) for arm, p in zip(arms, paths, strict=True)},
    )
