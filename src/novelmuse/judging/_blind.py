"""The blind input builder: random-but-reproducible candidate ids, exact orders, expected counts, quote hints.

Everything is derived from `item_id:seed` with HMAC-SHA256, so the same item and seed give the same ids,
the same blind order and the same quote hints on any machine, while nothing in the input reveals which
arm a candidate came from. The arm map (candidate id → arm) is kept apart and sealed (hashed) before any
judge runs; it is opened only after the panel ends.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from ..book import FineOutline
from ..errors import InputError
from ..llm import Contract, TaskCall
from ..roles.judge import EVIDENCE_TYPES, JudgeReport, ScoreRequest
from ..roles.judge import TASKS as JUDGE_TASKS
from ..text import canonical_json, locate_quote, normalize_for_match, normalize_quote, sha256_hex, sha256_json
from ._rubrics import SCENE_TYPES, Rubric

SCHEMA_VERSION = "judge-input-v1"
#: A candidateQuote must have at least this many characters after normalisation (NFC, width folding,
#: whitespace removed), so that "found exactly once" locates a real passage rather than a common phrase.
QUOTE_MIN_CHARS = 8
QUOTE_HINTS_PER_CANDIDATE = 3
_HINT_MAX_CHARS = 40  # longer sentences are cut to a window of this many characters
#: The verdicts a judge may give on an assertion or constraint: pass / fail, and for an oracle panel also
#: `unknown` (the candidate does not let the judge decide; a failure of that sample's oracle, not a pass).
VERDICTS = ("pass", "fail")
VERDICTS_ORACLE = ("pass", "fail", "unknown")
_SENTENCE = re.compile(r"[^。！？!?…\n]+[。！？!?…」”』]*")


def _mac(key: str, message: str) -> str:
    return hmac.new(key.encode("utf-8"), message.encode("utf-8"), hashlib.sha256).hexdigest()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AnchorIn(_Model):
    score: float
    text: str


class DimensionIn(_Model):
    id: str
    name: str
    question: str
    critical: bool
    threshold: float | None
    criteria: list[str]
    anchors: list[AnchorIn]


class CandidateIn(_Model):
    candidateId: str
    text: str
    quoteHints: list[str]


class TargetIn(_Model):
    id: str
    text: str


class ContextIn(_Model):
    """One item of the evidence pack the writer had for the chapter (quality_gate: 上下文=writer 基线包): a fact as
    of the chapter before, an active foreshadow, a prior chapter's raw text, an excerpt. Judged against, citable as
    evidence of type `context`."""

    id: str
    kind: str
    text: str


class ScaleIn(_Model):
    min: float
    max: float
    step: float


class PolicyIn(_Model):
    """The full scoring policy metadata the judge works under (the judge executes it, never invents it)."""

    profile: str
    rubricId: str
    rubricVersion: int
    rubricSha256: str
    scale: ScaleIn
    sceneType: str | None
    quoteMinChars: int
    evidenceTypes: list[str]
    verdictValues: list[str]
    rankingRule: str
    maxCallsPerJudge: int
    aggregation: dict[str, str]


class ExpectedIn(_Model):
    """The exact array sizes a complete report has (the checker recomputes them independently)."""

    scores: int
    rankings: int
    rankingLength: int
    verdicts: int


class BlindInput(_Model):
    """What one judge sees: no arm names, no cards, only random candidate ids and the policy."""

    schemaVersion: str = SCHEMA_VERSION
    itemRef: str
    policy: PolicyIn
    candidates: list[CandidateIn]
    dimensions: list[DimensionIn]
    fineOutline: list[TargetIn] = Field(default_factory=list)
    assertions: list[TargetIn] = Field(default_factory=list)
    constraints: list[TargetIn] = Field(default_factory=list)
    context: list[ContextIn] = Field(default_factory=list)
    expected: ExpectedIn

    @property
    def candidate_ids(self) -> list[str]:
        return [c.candidateId for c in self.candidates]

    @property
    def dimension_ids(self) -> list[str]:
        return [d.id for d in self.dimensions]

    @property
    def target_ids(self) -> list[str]:
        """Oracle assertion ids then hard constraint ids: each candidate needs a verdict on each."""
        return [t.id for t in self.assertions] + [t.id for t in self.constraints]

    def text_of(self, candidate_id: str) -> str:
        for c in self.candidates:
            if c.candidateId == candidate_id:
                return c.text
        raise KeyError(candidate_id)

    def in_order(self, order: Sequence[str]) -> BlindInput:
        """The same input with candidates in `order` (a permutation of the ids); nothing else changes."""
        if sorted(order) != sorted(self.candidate_ids):
            raise ValueError("order must be a permutation of the candidate ids")
        by_id = {c.candidateId: c for c in self.candidates}
        return self.model_copy(update={"candidates": [by_id[i] for i in order]})

    def sha256(self) -> str:
        """sha256 of the canonical JSON of this input (order included)."""
        return sha256_json(self.model_dump(mode="json"))

    def outside_candidates(self) -> BlindInput:
        """The input with every candidate's text and quote hints blanked: every field a judge sees that is not the
        candidate text itself (where an arm letter may be an ordinary word, e.g. A计划)."""
        blank = [c.model_copy(update={"text": "", "quoteHints": []}) for c in self.candidates]
        return self.model_copy(update={"candidates": blank})


@dataclass(frozen=True)
class Candidate:
    """A candidate text and the arm it came from (the arm never reaches a judge)."""

    arm: str
    text: str


@dataclass(frozen=True)
class Target:
    """An oracle assertion or hard constraint every candidate gets a verdict on."""

    id: str
    text: str


@dataclass(frozen=True)
class ContextItem:
    """One evidence-pack item a quality-gate judge reads beside the candidates (see `ContextIn`)."""

    id: str
    kind: str
    text: str


#: The evidence type a judge cites an evidence-pack item with (only offered when the input has a pack).
CONTEXT_EVIDENCE = "context"


@dataclass(frozen=True)
class SealedArmMap:
    """Candidate id → arm, serialised canonically and hashed before any judge runs."""

    payload: str  # canonical JSON
    sha256: str

    def open(self, expect_sha256: str) -> dict[str, str]:
        """The map, after checking it still hashes to the value sealed into the report."""
        if sha256_hex(self.payload) != expect_sha256 or self.sha256 != expect_sha256:
            raise InputError(
                "JUDGE_ARM_MAP_TAMPERED",
                "the sealed arm map does not match its recorded sha256",
                "judge_arm_maps",
                "the panel's unblinding cannot be trusted: rerun the panel",
            )
        arms: dict[str, str] = json.loads(self.payload)["arms"]
        return arms


@dataclass(frozen=True)
class BlindItem:
    """A built item: the blind input (candidates in blind order), the sealed arm map and per-candidate hashes."""

    item_id: str
    blind: BlindInput
    arm_map: SealedArmMap
    candidate_sha256: dict[str, str]

    @property
    def arms(self) -> list[str]:
        """The item's arm labels (A, B, C or a caller's own), read from the sealed map: never shown to a judge."""
        arms: dict[str, str] = json.loads(self.arm_map.payload)["arms"]
        return sorted(set(arms.values()))


def candidate_ids(item_id: str, seed: str, count: int) -> list[str]:
    """`count` distinct ids like ``c_7f3a`` derived from `item_id:seed` (longer only on a collision)."""
    key = f"{item_id}:{seed}"
    for width in (4, 6, 8, 12, 16):
        ids = [f"c_{_mac(key, f'candidate:{i}')[:width]}" for i in range(count)]
        if len(set(ids)) == count:
            return ids
    raise AssertionError("sha256 collision in 64 bits")  # pragma: no cover


def blind_order(item_id: str, seed: str, ids: Sequence[str]) -> list[str]:
    """The order judge 1 sees: a permutation of `ids` fixed by `item_id:seed` (arm order never shows)."""
    key = f"{item_id}:{seed}"
    return sorted(ids, key=lambda i: _mac(key, f"order:{i}"))


def quote_hints(text: str, key: str, *, count: int = QUOTE_HINTS_PER_CANDIDATE) -> list[str]:
    """Verbatim passages cut deterministically from `text`, each verified to occur exactly once in it.

    Sentences are ranked by HMAC(key, sentence); a sentence longer than the window is cut to a window at
    an HMAC-chosen offset. A hint is kept only if `locate_quote` finds it exactly once with the contract's
    minimum length, so a judge that copies one has a quote the checker accepts.
    """
    pool: list[tuple[str, str]] = []
    for m in _SENTENCE.finditer(text):
        sentence = m.group(0).strip()
        if len(normalize_quote(sentence)) < QUOTE_MIN_CHARS:
            continue
        if len(sentence) > _HINT_MAX_CHARS:
            offset = int(_mac(key, f"cut:{sentence}")[:8], 16) % (len(sentence) - _HINT_MAX_CHARS + 1)
            sentence = sentence[offset : offset + _HINT_MAX_CHARS].strip()
        pool.append((_mac(key, f"hint:{sentence}"), sentence))
    hints: list[str] = []
    norm = normalize_for_match(text)  # once: every candidate hint is located in the same text
    for _, sentence in sorted(pool):
        if sentence in hints:
            continue
        if locate_quote(norm, sentence, min_chars=QUOTE_MIN_CHARS).ok:
            hints.append(sentence)
            if len(hints) == count:
                break
    return hints


def outline_items(outline: FineOutline | None) -> list[Target]:
    """A fine outline as a flat list of citable items, with the ids of book's one constraint-id space."""
    return [] if outline is None else [Target(i.id, i.text) for i in outline.items()]


def build_blind_item(
    *,
    item_id: str,
    seed: str,
    rubric: Rubric,
    candidates: Sequence[Candidate],
    scene_type: str | None = None,
    outline: FineOutline | None = None,
    assertions: Sequence[Target] = (),
    constraints: Sequence[Target] = (),
    context: Sequence[ContextItem] = (),
    max_calls_per_judge: int = 3,
    given_order: bool = False,
    unknown_verdicts: bool = False,
) -> BlindItem:
    """Build the blind input for one item (candidates in blind order) and seal its arm map. `context` is the
    evidence pack every candidate is judged against (the same for all: 同证独立).

    `given_order`: judge 1 sees the candidates in the order given (a replay's sealed, position-balanced order
    plan decides it) instead of the order drawn from `item_id:seed`. `unknown_verdicts`: an oracle panel (seed
    003: 逐 assertionId/constraintId 输出 pass/fail/unknown) — `unknown` is an allowed verdict, never sent back for
    correction, and it is never a pass."""
    if not candidates:
        raise InputError("JUDGE_NO_CANDIDATES", "no candidate to judge", "item " + item_id, "pass candidate files")
    arms = [c.arm for c in candidates]
    if len(set(arms)) != len(arms):
        raise InputError("JUDGE_ARM_DUPLICATE", "two candidates share an arm name", "item " + item_id)
    for c in candidates:
        if len(normalize_quote(c.text)) < QUOTE_MIN_CHARS:
            raise InputError(
                "JUDGE_CANDIDATE_EMPTY",
                f"candidate of arm {c.arm} has fewer than {QUOTE_MIN_CHARS} characters",
                "item " + item_id,
                "a judge needs text it can quote",
            )
    if rubric.needs_scene_type:
        if scene_type not in SCENE_TYPES:
            raise InputError(
                "JUDGE_SCENE_TYPE",
                f"profile {rubric.profile} needs a pre-registered scene type (got {scene_type!r})",
                "--scene-type",
                f"use one of {', '.join(SCENE_TYPES)}",
            )
    elif scene_type is not None:
        raise InputError(
            "JUDGE_SCENE_TYPE", f"profile {rubric.profile} has no scene dimension", "--scene-type", "omit it"
        )
    reference = outline_items(outline)
    if rubric.needs == "outline" and not reference:
        raise InputError(
            "JUDGE_OUTLINE_REQUIRED",
            f"{rubric.profile} scores candidates against the item's fine outline, and none (or an empty one) was given",
            "--outline",
            "pass the chapter's fine outline (outlines/NNNN.yaml format)",
        )
    if rubric.needs == "outline_or_oracle" and not (reference or assertions or constraints):
        raise InputError(
            "JUDGE_OUTLINE_REQUIRED",
            f"{rubric.profile} judges candidates against a structured standard, and none was given",
            "--outline",
            "pass the reference outline (--outline) or the oracle assertions (--assertions)",
        )
    target_ids = [t.id for t in (*assertions, *constraints)]
    if len(set(target_ids)) != len(target_ids):
        raise InputError("JUDGE_TARGET_DUPLICATE", "an assertion/constraint id is used twice", "item " + item_id)
    context_ids = [c.id for c in context]
    if len(set(context_ids)) != len(context_ids) or set(context_ids) & {*target_ids, *(t.id for t in reference)}:
        raise InputError("JUDGE_TARGET_DUPLICATE", "an evidence-pack id is used twice", "item " + item_id)

    key = f"{item_id}:{seed}"
    ids = candidate_ids(item_id, seed, len(candidates))
    by_id = dict(zip(ids, candidates, strict=True))
    order = list(ids) if given_order else blind_order(item_id, seed, ids)
    blind_candidates = [
        CandidateIn(candidateId=i, text=by_id[i].text, quoteHints=quote_hints(by_id[i].text, f"{key}:{i}"))
        for i in order
    ]
    dims: list[DimensionIn] = []
    for d in rubric.dimensions:
        question, criteria, anchors = d.question, [], d.anchors
        if d.layer == "scene" and scene_type is not None:
            scene = rubric.scene_types[scene_type]
            question, criteria, anchors = scene.question, scene.criteria, scene.anchors
        dims.append(
            DimensionIn(
                id=d.id,
                name=d.name,
                question=question,
                critical=d.critical,
                threshold=d.threshold,
                criteria=list(criteria),
                anchors=[AnchorIn(score=a.score, text=a.text) for a in anchors],
            )
        )
    n_c, n_d, n_t = len(candidates), len(dims), len(target_ids)
    policy = PolicyIn(
        profile=rubric.profile,
        rubricId=rubric.id,
        rubricVersion=rubric.version,
        rubricSha256=rubric.sha256,
        scale=ScaleIn(min=rubric.scale.min, max=rubric.scale.max, step=rubric.scale.step),
        sceneType=scene_type,
        quoteMinChars=QUOTE_MIN_CHARS,
        evidenceTypes=[*EVIDENCE_TYPES, CONTEXT_EVIDENCE] if context else list(EVIDENCE_TYPES),
        verdictValues=list(VERDICTS_ORACLE if unknown_verdicts else VERDICTS),
        rankingRule="per dimension, every candidateId exactly once, best first",
        maxCallsPerJudge=max_calls_per_judge,
        aggregation={"general": rubric.aggregation.general, "scene": rubric.aggregation.scene},
    )
    blind = BlindInput(
        itemRef="item_" + _mac(key, "item")[:12],
        policy=policy,
        candidates=blind_candidates,
        dimensions=dims,
        fineOutline=[TargetIn(id=t.id, text=t.text) for t in reference],
        assertions=[TargetIn(id=t.id, text=t.text) for t in assertions],
        constraints=[TargetIn(id=t.id, text=t.text) for t in constraints],
        context=[ContextIn(id=c.id, kind=c.kind, text=c.text) for c in context],
        expected=ExpectedIn(scores=n_c * n_d, rankings=n_d, rankingLength=n_c, verdicts=n_c * n_t),
    )
    payload = canonical_json({"itemId": item_id, "seed": seed, "arms": {i: by_id[i].arm for i in ids}})
    return BlindItem(
        item_id=item_id,
        blind=blind,
        arm_map=SealedArmMap(payload, sha256_hex(payload)),
        candidate_sha256={i: sha256_hex(by_id[i].text) for i in ids},
    )


def judge_call(blind: BlindInput, contract: Contract[JudgeReport] | None = None) -> TaskCall[JudgeReport]:
    """The call one fresh judge makes for `blind` (in its order): the profile's judge task, rendered.

    `contract` checks the report against this input; without it the call is only for looking at the messages
    (the leak check), never for sending.
    """
    policy = blind.policy
    request = ScoreRequest(
        blind_json=blind.model_dump_json(indent=1),
        scale_min=policy.scale.min,
        scale_max=policy.scale.max,
        scale_step=policy.scale.step,
        quote_min_chars=policy.quoteMinChars,
        contract=contract,
    )
    return JUDGE_TASKS[policy.profile].render(request)
