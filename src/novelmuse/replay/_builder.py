"""The one GateInputBuilder (唯一 GateInputBuilder, issue 12 item 4): `gate-input.json` of a replay run, built only
from what the store holds — the registered set, the run's sample and panel rows, the writer's manifests, final
drafts and strict detector reports, the judges' sealed panel reports and arm maps, and the model-call receipts.

Every artefact is re-hashed on the way (a draft, manifest, detector report or panel report that no longer
hashes to its sha256 makes its sample not ok, with a `hash` anomaly naming it — the gate then fails); a
detector verdict and a panel verdict are only ever compared for the same kind and the same id (the kind of
an id comes from the registered item's targets, never from the text); no verdict is derived from a score;
and the result is canonical, so a rebuild gives byte-identical bytes. Nothing here writes anything.

`gate_input_rebuilder(book)` is the `GateInputRebuilder` the issuer, `verify_journal`, the fine-outline guard
and promotion use for artefacts of kind ``gate_input``: a bound gate input counts only when a recorded run
rebuilds exactly it (its locator names the run).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..book import Book
from ..errors import InputError
from ..judging import PanelReport, SealedArmMap, load_rubric
from ..store import utc_now
from ..text import sha256_hex
from ..writing import DetectorReport
from ._guard import GateInputRebuilder
from ._input import (
    Anomaly,
    AnomalyCategory,
    DetectorItem,
    GateInput,
    Item,
    PanelVerdict,
    RubricBinding,
    Sample,
    gate_input_bytes,
    gate_input_sha256,
)
from ._input import Target as GateTarget
from ._outliner import OutlineSampleRow, outline_samples_of
from ._receipt import ArtefactRef
from ._runs import PanelRow, RunRow, SampleRow, load_run, panels_of, samples_of
from ._sets import RegisteredSet, SetItem, load_set
from ._spec import Arm
from ._stored import ArtefactProblem, detector_report_of, final_candidate, manifest_of, write_doc

_CATEGORY_WORDS: Final[tuple[tuple[AnomalyCategory, tuple[str, ...]], ...]] = (
    ("leak", ("LEAK",)),
    ("hash", ("CHANGED", "HASH", "TAMPERED", "CANDIDATE_", "MANIFEST_", "_MISSING")),
    ("schema", ("SCHEMA", "CONTRACT", "INVALID_JSON", "TRUNCATED")),
    ("judge", ("JUDGE", "PANEL", "INVALID", "UNSTABLE")),
)


def anomaly_category(code: str) -> AnomalyCategory:
    """The gate's anomaly category of a failure code (a model or budget failure, a timeout or a non-zero exit is
    `system`)."""
    if code == "MODEL_MISMATCH":
        return "system"
    for category, words in _CATEGORY_WORDS:
        if any(w in code for w in words):
            return category
    return "system"


_LOCATOR_HEAD: Final = ".muse/replay/runs/"
_LOCATOR_TAIL: Final = "/gate-input.json"


def gate_input_locator(run_id: str) -> str:
    """Where the gate input of run `run_id` is written, relative to the book — the locator a receipt binds and the
    rebuilder resolves to the run (the file itself is never read back: it is for people)."""
    return f"{_LOCATOR_HEAD}{run_id}{_LOCATOR_TAIL}"


def run_of_locator(locator: str) -> str | None:
    """The run id a gate-input locator names (None for any other locator)."""
    if not (locator.startswith(_LOCATOR_HEAD) and locator.endswith(_LOCATOR_TAIL)):
        return None
    run_id = locator[len(_LOCATOR_HEAD) : -len(_LOCATOR_TAIL)]
    return run_id if run_id and "/" not in run_id else None


def gate_item(item: SetItem) -> Item:
    """The pre-registered item as the gates see it: its targets (hard constraints by outline kind, then the oracle
    assertions) and new-character counts, all frozen in the registered set. An outliner item's outline is its
    reference scaffold (its hard items are the targets)."""
    outline_sha256 = item.outline_sha256 or (item.reference.sha256 if item.reference is not None else None)
    if item.scene_type is None or outline_sha256 is None:
        raise ValueError(f"item {item.item_id} is neither a writer nor an outliner item")
    targets = [GateTarget(kind=t.kind, id=t.id) for t in item.targets]
    targets += [GateTarget(kind="assertion", id=a.id) for a in item.assertions]
    return Item(
        item_id=item.item_id,
        chapter=item.chapter,
        scene_type=item.scene_type,
        outline_sha256=outline_sha256,
        targets=targets,
        new_characters=item.new_characters,
        outline_entities=item.outline_entities,
    )


def _not_ok(item_id: str, arm: Arm, code: str, detail: str = "", category: AnomalyCategory | None = None) -> Sample:
    anomaly = Anomaly(category=category or anomaly_category(code), code=code, detail=detail[:500])
    return Sample(item_id=item_id, arm=arm, ok=False, anomaly=anomaly)


def _receipts(book: Book, call_ids: Iterable[str]) -> list[str]:
    ids = sorted({c for c in call_ids if c})
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    rows = book.db.execute(f"SELECT id FROM receipts WHERE outcome = 'ok' AND call_id IN ({marks})", ids).fetchall()
    return [str(r[0]) for r in rows]


class _Panels:
    """The run's panel reports, read once each: re-hashed, unblinded read-only (the sealed arm map checked
    against the hash sealed into the report)."""

    def __init__(self, book: Book, rows: dict[str, PanelRow]):
        self.book = book
        self.rows = rows
        self.cache: dict[str, tuple[PanelReport, dict[str, str]] | ArtefactProblem] = {}

    def of(self, item_id: str) -> tuple[PanelReport, dict[str, str]]:
        if item_id not in self.cache:
            try:
                self.cache[item_id] = self._load(item_id)
            except ArtefactProblem as exc:
                self.cache[item_id] = exc
        got = self.cache[item_id]
        if isinstance(got, ArtefactProblem):
            raise got
        return got

    def _load(self, item_id: str) -> tuple[PanelReport, dict[str, str]]:
        row = self.rows.get(item_id)
        if row is None:
            raise ArtefactProblem("PANEL_NOT_RUN", "the item's panel has not run")
        if row.code is not None or row.status != "done" or row.panel_id is None:
            raise ArtefactProblem(row.code or "PANEL_NOT_RUN", row.detail or f"panel {row.status}")
        got = self.book.db.execute(
            "SELECT p.report_json, p.report_sha256, m.payload, m.sha256 FROM judge_panels p"
            " JOIN judge_arm_maps m ON m.panel_id = p.id WHERE p.id = ?",
            (row.panel_id,),
        ).fetchone()
        if got is None or got[0] is None:
            raise ArtefactProblem("PANEL_REPORT_MISSING", f"the panel report {row.panel_id} is gone")
        report = PanelReport.model_validate_json(str(got[0]))
        if not report.verify() or report.report_sha256 != got[1]:
            raise ArtefactProblem(
                "PANEL_REPORT_CHANGED", f"the panel report {row.panel_id} no longer hashes to its sha256"
            )
        try:
            arms = SealedArmMap(str(got[2]), str(got[3])).open(report.arm_map_sha256)
        except Exception as exc:  # the sealed map was edited: FailedClosed from judging
            raise ArtefactProblem("PANEL_ARM_MAP_CHANGED", f"the arm map of panel {row.panel_id}: {exc}") from exc
        return report, arms


def _not_ended(item: Item, row: SampleRow) -> Sample | None:
    """A sample that never ended, or ended with its failure's code, as not ok (None for one that ended well)."""
    if row.status == "running":
        return _not_ok(item.item_id, row.arm, "SAMPLE_UNFINISHED", "the sample never ended (resume the run)")
    if row.code is not None:
        return _not_ok(item.item_id, row.arm, row.code, row.detail or "")
    return None


def _sample(book: Book, item: Item, set_item: SetItem, row: SampleRow, panels: _Panels) -> Sample:
    """One sample from the store (see the module doc)."""
    if (ended := _not_ended(item, row)) is not None:
        return ended
    try:
        doc = write_doc(book, row.write_id or "")
        draft, _ = final_candidate(book, doc)
        manifest = manifest_of(book, draft.manifest_sha256)
        if (
            manifest.chapter != item.chapter
            or manifest.arm != row.arm
            or manifest.outline.sha256 != item.outline_sha256
        ):
            raise ArtefactProblem("MANIFEST_FOREIGN", "the manifest is not of this item's chapter, arm and outline")
        report = detector_report_of(book, doc, doc.final_draft_id or "")
        if report.candidate_sha256 != draft.text_sha256:
            raise ArtefactProblem("DETECTOR_CANDIDATE_MISMATCH", "the detector report is on another candidate")
    except ArtefactProblem as exc:
        return _not_ok(item.item_id, row.arm, exc.code, exc.what)
    judged = _judged(item, row.arm, draft.text_sha256, panels)
    if isinstance(judged, Sample):
        return judged
    verdicts, scores, judge_calls = judged
    kinds = {t.id: t.kind for t in item.targets}
    call_ids = [
        str(r[0]) for r in book.db.execute("SELECT call_id FROM write_drafts WHERE write_id = ?", (doc.write_id,))
    ]
    call_ids += [c for r in doc.reports if r.draft_id == doc.final_draft_id for c in r.call_ids]
    return Sample(
        item_id=item.item_id,
        arm=row.arm,
        ok=True,
        candidate_sha256=draft.text_sha256,
        manifest_sha256=draft.manifest_sha256,
        detector=_detector_items(report, kinds, set_item),
        panel=verdicts,
        scores=scores,
        receipts=_receipts(book, [*call_ids, *judge_calls]),
    )


def _judged(
    item: Item, arm: Arm, text_sha256: str, panels: _Panels
) -> tuple[list[PanelVerdict], dict[str, float], list[str]] | Sample:
    """The panel's verdicts on the item's targets and its scores for the candidate of `arm` (whose text must hash to
    `text_sha256`), and the judges' call ids — or the sample that is not ok, and why."""
    try:
        panel, arms = panels.of(item.item_id)
    except ArtefactProblem as exc:  # an invalid or unstable panel, or one that never ran: a judge anomaly
        category = anomaly_category(exc.code)  # … unless it is a leak or a changed artefact
        return _not_ok(item.item_id, arm, exc.code, exc.what, category if category in ("hash", "leak") else "judge")
    cids = [cid for cid, a in arms.items() if a == arm]
    ref = next((c for c in panel.candidates if cids and c.candidate_id == cids[0]), None)
    if ref is None or ref.sha256 != text_sha256:
        return _not_ok(item.item_id, arm, "PANEL_CANDIDATE_MISMATCH", "the panel judged another candidate text")
    cid = ref.candidate_id
    kinds = {t.id: t.kind for t in item.targets}
    verdicts = [
        PanelVerdict(kind=kinds[v.target_id], id=v.target_id, verdict="unknown" if v.verdict == "split" else v.verdict)
        for v in panel.verdicts
        if v.candidate_id == cid and v.target_id in kinds
    ]
    scores = {s.dimension_id: s.score for s in panel.scores if s.candidate_id == cid}
    return verdicts, scores, [j.call_id for j in panel.judges if j.call_id]


def _outline_sample(book: Book, item: Item, row: SampleRow, draft: OutlineSampleRow | None, panels: _Panels) -> Sample:
    """One sample of an outliner run from the store: the kept draft and its reference-lint verdicts, both re-hashed
    (a changed one is a `hash` anomaly), and the panel's verdicts and scores on it."""
    if (ended := _not_ended(item, row)) is not None:
        return ended
    if draft is None:
        return _not_ok(item.item_id, row.arm, "CANDIDATE_MISSING", "the sample's draft is gone from the store")
    if sha256_hex(draft.text) != draft.text_sha256:
        return _not_ok(item.item_id, row.arm, "CANDIDATE_CHANGED", "the draft no longer hashes to its sha256")
    if sha256_hex(draft.lint_json) != draft.lint_sha256:
        return _not_ok(item.item_id, row.arm, "LINT_REPORT_CHANGED", "the reference lint's verdicts were edited")
    judged = _judged(item, row.arm, draft.text_sha256, panels)
    if isinstance(judged, Sample):
        return judged
    verdicts, scores, judge_calls = judged
    kinds = {t.id: t.kind for t in item.targets}
    lint = [
        DetectorItem(kind=kinds[r["id"]], id=r["id"], verdict=r["verdict"], severity=r["severity"])
        for r in draft.lint()
        if kinds.get(r["id"]) == r["kind"]  # same kind, same id: an id the item does not list is not compared
    ]
    return Sample(
        item_id=item.item_id,
        arm=row.arm,
        ok=True,
        candidate_sha256=draft.text_sha256,
        manifest_sha256=draft.messages_sha256,
        detector=lint,
        panel=verdicts,
        scores=scores,
        receipts=_receipts(book, [draft.call_id, *judge_calls]),
    )


def _detector_items(report: DetectorReport, kinds: dict[str, str], item: SetItem) -> list[DetectorItem]:
    """The detector's constraint verdicts, each under the kind its id has in the item (same kind, same id: an
    id the item does not list is not compared; the detector never sees an oracle assertion). The detector's
    severities are high (blocks) and warning (never blocks): a warning is the gate's `low`."""
    hard = {t.id for t in item.targets}
    return [
        DetectorItem(kind=kinds[i.id], id=i.id, verdict=i.verdict, severity="high" if i.severity == "high" else "low")
        for i in report.items
        if i.check == "constraint" and i.id in hard
    ]


def build_gate_input(book: Book, run_id: str) -> GateInput:
    """The gate input of replay run `run_id`, rebuilt from the store (see the module doc)."""
    row: RunRow = load_run(book, run_id)
    doc: RegisteredSet = load_set(book, row.set_sha256)
    if doc.kind == "fine_outline":
        raise InputError(
            "REPLAY_NOT_GATED",
            f"run {row.id} judged pinned outline drafts: the gates measure an agent's own replays — the writer's "
            "(a writer set) or the outliner's (an outliner set)",
            "muse gate",
            "run the gates on a writer or outliner set's run",
        )
    row.plan()  # the sealed order plan still verifies (ORDER_PLAN_TAMPERED …, exit 3)
    rubric = load_rubric("writer_replay" if doc.kind == "writer" else "fine_outline_replay")
    items = {i.item_id: gate_item(i) for i in doc.items}
    panels = _Panels(book, panels_of(book.db, row.id))
    rows = sorted(samples_of(book.db, row.id).items())
    if doc.kind == "writer":
        samples = [_sample(book, items[item_id], doc.item(item_id), s, panels) for (item_id, _arm), s in rows]
    else:
        drafts = outline_samples_of(book.db, row.id)
        samples = [_outline_sample(book, items[key[0]], s, drafts.get(key), panels) for key, s in rows]
    return GateInput(
        run_id=row.id,
        mode=row.mode,
        set_sha256=row.set_sha256,
        rubric=RubricBinding.of(rubric),
        arms=list(row.arms),
        items=list(items.values()),
        samples=samples,
    )


#: What the guard, promotion and the outline stage use when the caller names no rebuilder: this book's store.
FROM_STORE: Final = "store"


def rebuilder_or_store(book: Book, gate_inputs: GateInputRebuilder | str | None) -> GateInputRebuilder | None:
    """`gate_inputs` as given, or — for `FROM_STORE` — the store's GateInputBuilder (`gate_input_rebuilder`)."""
    if gate_inputs == FROM_STORE:
        return gate_input_rebuilder(book)
    return None if isinstance(gate_inputs, str) else gate_inputs


def gate_input_rebuilder(book: Book) -> GateInputRebuilder:
    """The GateInputRebuilder over this book's store: a `gate_input` ref whose locator names a recorded run is
    rebuilt from it (None for any other locator or an unknown run). A run evaluated while an artefact was damaged
    is served the gate input that evaluation saw (`keep_damaged_input`) when the rebuild no longer gives it — the
    artefact was restored since: the report verifies as what it saw."""

    def rebuild(ref: ArtefactRef) -> GateInput | None:
        run_id = run_of_locator(ref.locator)
        if run_id is None:
            return None
        if book.db.execute("SELECT 1 FROM replay_runs WHERE id = ?", (run_id,)).fetchone() is None:
            return None
        rebuilt = build_gate_input(book, run_id)
        if gate_input_sha256(rebuilt) == ref.sha256:
            return rebuilt
        return _damaged_input(book, run_id, ref.sha256) or rebuilt

    return rebuild


def has_damage(gate_input: GateInput) -> bool:
    """Whether some sample of `gate_input` saw an artefact that no longer hashed to its sha256 (a `hash` anomaly)."""
    return any(s.anomaly is not None and s.anomaly.category == "hash" for s in gate_input.samples)


def keep_damaged_input(book: Book, gate_input: GateInput) -> None:
    """Keep the gate input an evaluation saw when it recorded damage (see `gate_input_rebuilder`); a clean input is
    not kept: it must rebuild exactly from the store, so a change after its evaluation still shows."""
    if not has_damage(gate_input):
        return
    body = gate_input_bytes(gate_input).decode("utf-8")
    book.db.execute(
        "INSERT OR IGNORE INTO gate_input_snapshots VALUES (?, ?, ?, ?)",
        (sha256_hex(body.encode("utf-8")), gate_input.run_id, body, utc_now()),
    )


def _damaged_input(book: Book, run_id: str, sha256: str) -> GateInput | None:
    """The kept gate input `sha256` of run `run_id`, if it re-hashes and records damage (else None: a kept input
    can only ever stand for an evaluation that saw damage, which fails its gate)."""
    row = book.db.execute(
        "SELECT body FROM gate_input_snapshots WHERE sha256 = ? AND run_id = ?", (sha256, run_id)
    ).fetchone()
    if row is None or sha256_hex(str(row[0]).encode("utf-8")) != sha256:
        return None
    kept = GateInput.model_validate_json(str(row[0]))
    return kept if has_damage(kept) and kept.run_id == run_id else None
