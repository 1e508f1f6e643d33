"""The trusted orchestrator (seed 003: 可信编排器唯一持有授权、臂映射、顺序表、oracle 和预算): `muse replay run`.

This module alone holds, for one replay run, the arm map, the order plan, the oracle assertions, the budget and
the run's single model session — it is the one place outside the CLI that opens a session. The services it
drives receive none of these: the writer gets its WriterContext (one arm's, built here), the detector a
candidate and its hard constraints, the judges a blind input whose candidates carry random ids, in the order
the plan gives, with the item's assertions as text to verify and nothing else (the leak guard refuses the arm
letters, strategy words, card ids and this run's hashes in anything a judge would be sent).

A run, in order:

1. the registered set is checked against the book (`check_frozen`), every role it needs must have a model
   (and, for a model that is not the scripted provider, a successful probe receipt from `muse models check`),
   and every item's contexts are built — A and C must share one frame — before anything is written;
2. the run configuration (the writer configuration — prompts, detector, models, context, gate spec, [writing] —
   plus the rubric, the budget and the call policy) is hashed; a new run stores it with the **sealed order plan**
   (`make_order_plan` over the whole set) in one transaction before the first model call; an unfinished run of
   the set is resumed only with exactly that configuration and arms (REPLAY_CONFIG_CHANGED otherwise: 禁止换模
   或跳臂), and its plan must still verify;
3. samples (item × arm) run concurrently, at most `concurrency` at a time, on the model layer's async path:
   context → writer → detector gate (`writing.write_chapter`); then one blind panel per item over all its arms'
   candidates (writer_replay, oracle verdicts pass / fail / unknown per assertion and constraint id), judge 1
   seeing them in the plan's order. A sample that fails closed is recorded with its code and the rest go on:
   no other model is tried, no arm is skipped, and an item whose arm failed gets no partial panel;
4. finished samples and panels are never repeated: an interrupted run (Ctrl-C, kill -9) resumes with the
   same command and redoes only what was under way.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final, Literal, cast

from pydantic import BaseModel

from ..book import Book, FineOutline, parse_outline, read_chapter_file, read_user_file
from ..errors import InputError, MuseError
from ..judging import (
    Candidate,
    JudgeRequest,
    LeakGuard,
    Target,
    hidden_card_ids,
    judge_item,
    load_rubric,
    panel_bill,
)
from ..llm import Bill, ModelSession, Provider, RoleBill, TaskCall, run_spend, total_bill
from ..store import new_id, utc_now
from ..text import canonical_json, sha256_hex, sha256_json
from ..writing import (
    ContextBuild,
    PreparedDraft,
    build_context,
    draft_yaml,
    ensure_same_frame,
    outline_draft_call,
    prepare_draft,
    read_outline,
    reference_coverage,
    require_tool_less,
    vocabulary,
    write_bill,
    write_chapter,
)
from ._order import OrderPlan, make_order_plan, position_counts
from ._outliner import keep_prompt, outline_samples_of, store_outline_sample
from ._outliner_config import OUTLINER_ROLES, outliner_config
from ._runs import (
    PanelOut,
    RunRow,
    SampleOut,
    end_panel,
    end_sample,
    forget_unfinished,
    insert_run,
    load_run,
    open_run_of,
    panels_of,
    samples_of,
    set_run_status,
    start_panel,
    start_sample,
)
from ._sets import RegisteredSet, SetItem, check_frozen, load_set
from ._spec import Arm
from ._stored import final_candidate, write_doc
from ._writer_config import writer_config

RUN_CONFIG_SCHEMA: Final = "replay-run-config-v1"
MODE: Final = "offline_replay"
#: The roles a writer replay asks; an outliner replay asks the outliner and the judge; a fine-outline replay (pinned
#: drafts) only the judge.
WRITER_ROLES: Final = ("writer", "detector", "extractor", "judge")
MAX_CONCURRENCY: Final = 64
_SENTENCE_END = re.compile(r"[。！？；\n]+")
_PROFILE = {"writer": "writer_replay", "fine_outline": "fine_outline_replay", "outliner": "fine_outline_replay"}


@dataclass(frozen=True)
class Event:
    """A progress event: a sample (arm set) or an item's panel (arm None) entering a stage, or ending."""

    item_id: str
    arm: Arm | None
    stage: str  # context / write / evidence_1 / detector / repair_1 / panel / judge 2 … / done / failed
    done: bool = False


Progress = Callable[[Event], None]


class RunDoc(BaseModel):
    """`muse replay run/status --json`: a run, its configuration's hashes, and every sample and panel."""

    schema_version: int = 1
    ok: bool
    run_id: str
    set_sha256: str
    set_name: str
    kind: str
    mode: str
    status: str  # running / finished / abandoned / dry_run
    arms: list[Arm]
    seed: str
    plan_sha256: str
    config_sha256: str
    writer_config_sha256: str
    model_run_id: str
    resumed: bool = False
    redone: int = 0  # samples and panels an interrupted process left unfinished, redone by this one
    samples: list[SampleOut]
    panels: list[PanelOut]
    notes: list[str] = []
    spent: dict[str, Any] | None = None  # the model run's calls, tokens and cost (`muse cost --run MODEL_RUN_ID`)


# ── configuration and preflight ───────────────────────────────────────────────────────────────────────────


def roles_of(kind: str) -> tuple[str, ...]:
    """The roles a replay of a set of `kind` asks."""
    return WRITER_ROLES if kind == "writer" else OUTLINER_ROLES if kind == "outliner" else ("judge",)


def run_config(book: Book, doc: RegisteredSet, arms: Sequence[Arm], seed: str) -> dict[str, Any]:
    """Everything a run's results depend on (hashed; a resumed run must have exactly this): the configuration of
    the agent it measures — the writer's, or the outliner's for an outliner set (what a gate receipt binds as
    run_config_sha256) — the rubric, the budget, the call policy."""
    rubric = load_rubric(_PROFILE[doc.kind])
    cfg = book.config
    stage = outliner_config(book) if doc.kind == "outliner" else writer_config(book)
    key = "outliner" if doc.kind == "outliner" else "writer"
    return {
        "schema_version": RUN_CONFIG_SCHEMA,
        "kind": doc.kind,
        "set_sha256": doc.sha256,
        "arms": sorted(arms),
        "seed": seed,
        "mode": MODE,
        key: stage.model_dump(mode="json"),
        f"{key}_sha256": stage.sha256,
        "rubric": {"id": rubric.id, "version": rubric.version, "sha256": rubric.sha256},
        "budget": cfg.budget.model_dump(mode="json"),
        "calls": cfg.calls.model_dump(mode="json"),
    }


def stage_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration of the agent a run measured, as the run recorded it (the writer's or the outliner's)."""
    got = config.get("writer", config.get("outliner", {}))
    return got if isinstance(got, dict) else {}


def stage_config_sha256(config: Mapping[str, Any]) -> str:
    """The sha256 of the agent configuration a run recorded: what its receipts bind as run_config_sha256."""
    return str(config.get("writer_sha256") or config["outliner_sha256"])


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], path: str = "") -> list[str]:
    out: list[str] = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        where = f"{path}.{key}" if path else key
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, where)
        elif a != b:
            out.append(where)
    return out


def probed(book: Book, role: str, kind: str, model: str) -> bool:
    """Whether `muse models check` probed `role` successfully on exactly this provider kind and model id."""
    row = book.db.execute(
        "SELECT 1 FROM model_calls WHERE schema_name = 'models_check' AND status = 'ok' AND role = ?"
        " AND provider_kind = ? AND requested_model = ? LIMIT 1",
        (role, kind, model),
    ).fetchone()
    return row is not None


def missing_probes(book: Book, roles: Sequence[str]) -> list[str]:
    """The (role, model) pairs with no successful `muse models check` probe (seed 003: 仍需一次成功探测). The
    scripted provider serves canned answers, not a model: it needs none to run — and earns no receipt."""
    missing = []
    for role in roles:
        target = book.config.role_target(role)
        if target is None:
            continue
        kind = book.config.providers[target[0]].kind
        if kind != "scripted" and not probed(book, role, kind, target[1]):
            missing.append(f"{role} ({kind}:{target[1]})")
    return missing


def preflight(book: Book, doc: RegisteredSet, arms: Sequence[Arm], *, probes: bool) -> None:
    """Everything refused before a run writes or calls anything (each a one-line error, exit 2)."""
    available = doc.arms_available
    wrong = [a for a in arms if a not in available]
    if not arms or wrong:
        raise InputError(
            "USAGE",
            f"arm(s) {', '.join(wrong) or '(none)'} are not arms of this set (it has {', '.join(available)})",
            "--arms",
            f"use some of {','.join(available)}",
        )
    check_frozen(book, doc)
    roles = roles_of(doc.kind)
    unconfigured = [r for r in roles if book.config.role_target(r) is None]
    if unconfigured:
        raise InputError(
            "REPLAY_MODEL_NOT_CONFIGURED",
            f"no model is configured for {', '.join(unconfigured)}: a replay run needs every role it asks",
            "book.toml [roles]",
            "configure them (a dry run, --dry-run, needs none)",
        )
    if doc.kind == "writer":
        require_tool_less(book)
    if probes:
        missing = missing_probes(book, roles)
        if missing:
            raise InputError(
                "REPLAY_PROBE_MISSING",
                f"no successful probe of {', '.join(missing)}: a real run needs one per (role, model) it uses",
                "model_calls",
                "run `muse models check` first",
            )


def build_item(book: Book, item: SetItem, arms: Sequence[Arm]) -> dict[Arm, ContextBuild]:
    """Every arm's context of a writer item (no model call); arms A and C must share one frame."""
    builds = {arm: build_context(book, item.chapter, arm=arm) for arm in arms}
    if "A" in builds and "C" in builds:
        ensure_same_frame(builds["A"].context, builds["C"].context, f"item {item.item_id} (chapter {item.chapter})")
    return builds


# ── the dry run ────────────────────────────────────────────────────────────────────────────────────────────


class DryItem(BaseModel):
    item_id: str
    chapter: int
    scene_type: str | None
    order: list[Arm]
    manifests: dict[str, str]  # arm → the manifest sha256 its writer would start from
    targets: int  # hard constraints + oracle assertions the panel gives a verdict on


class DryRunDoc(BaseModel):
    """`muse replay run --dry-run --json`: what a run would do; nothing written, no model called."""

    schema_version: int = 1
    ok: bool = True
    status: Literal["dry_run"] = "dry_run"
    set_sha256: str
    set_name: str
    kind: str
    arms: list[Arm]
    seed: str
    plan_sha256: str
    position_counts: dict[str, list[int]]
    config_sha256: str
    roles: dict[str, str | None]  # role → provider:model
    probes_missing: list[str]
    resumes: str | None  # the unfinished run a real run would resume
    calls_at_least: int  # writer + detector + extractor (or the outliner) per sample, two judges per item
    items: list[DryItem]


def replay_dry_run(book: Book, doc: RegisteredSet, arms: Sequence[Arm], seed: str | None = None) -> DryRunDoc:
    """What `muse replay run` would do (every context built, the plan drawn), writing nothing, calling nothing."""
    preflight(book, doc, arms, probes=False)
    seed = seed or doc.sha256
    plan = make_order_plan([i.item_id for i in doc.items], list(arms), seed)
    items = []
    for item in doc.items:
        manifests: dict[str, str] = {}
        if doc.kind == "writer":
            manifests = {a: b.manifest_sha256 for a, b in build_item(book, item, arms).items()}
        elif doc.kind == "outliner":
            manifests = {
                a: messages_sha256(outline_draft_call(p)) for a, p in prepare_outliner_item(book, item, arms).items()
            }
        targets = len(item.assertions) + (len(_constraints(book, item)) if doc.kind == "writer" else len(item.targets))
        items.append(
            DryItem(
                item_id=item.item_id,
                chapter=item.chapter,
                scene_type=item.scene_type,
                order=arm_orders(plan)[item.item_id],
                manifests=manifests,
                targets=targets,
            )
        )
    config = run_config(book, doc, arms, seed)
    pending = open_run_of(book.db, doc.sha256)
    roles = {r: (":".join(t) if (t := book.config.role_target(r)) else None) for r in roles_of(doc.kind)}
    per_sample = 3 if doc.kind == "writer" else 1 if doc.kind == "outliner" else 0
    return DryRunDoc(
        set_sha256=doc.sha256,
        set_name=doc.name,
        kind=doc.kind,
        arms=sorted(arms),
        seed=seed,
        plan_sha256=plan.sha256,
        position_counts=position_counts(plan),
        config_sha256=sha256_json(config),
        roles=roles,
        probes_missing=missing_probes(book, roles_of(doc.kind)),
        resumes=pending.id if pending is not None else None,
        calls_at_least=len(doc.items) * (per_sample * len(arms) + 2),
        items=items,
    )


def _constraints(book: Book, item: SetItem) -> list[Target]:
    """The hard constraints of the item's confirmed outline (ids and texts), in outline order."""
    outline = read_outline(book, item.chapter)
    return [Target(i.id, i.text) for i in outline.items() if i.hard]


# ── the run ────────────────────────────────────────────────────────────────────────────────────────────────


@dataclass
class _Run:
    """One run in progress: what only the orchestrator holds."""

    book: Book
    doc: RegisteredSet
    row: RunRow
    order: dict[str, list[Arm]]  # the sealed plan: item → arm order (position 0 first)
    session: ModelSession
    limit: asyncio.Semaphore
    progress: Progress
    guard_secrets: list[str]
    card_ids: list[str]  # the book's card ids, hidden from every judge

    def tell(self, item_id: str, arm: Arm | None, stage: str, done: bool = False) -> None:
        self.progress(Event(item_id, arm, stage, done))


def _new_or_resumed(
    book: Book, doc: RegisteredSet, arms: Sequence[Arm], seed: str | None, new: bool
) -> tuple[RunRow, bool]:
    """The run to work on: the set's unfinished run when its configuration is exactly this one's (else refused),
    or a new run whose plan and configuration are sealed now, before any model call."""
    conn = book.db
    pending = open_run_of(conn, doc.sha256)
    if pending is not None and not new:
        config = run_config(book, doc, arms, seed or pending.seed)
        if sha256_json(config) != pending.config_sha256:
            changed = _differences(pending.config, config)
            raise InputError(
                "REPLAY_CONFIG_CHANGED",
                f"run {pending.id} of this set was started with another configuration (changed: "
                f"{', '.join(changed[:6])}{' …' if len(changed) > 6 else ''}); a resumed run may not swap a model, "
                "a prompt, the rubric, the gate spec, the budget or the arms",
                "replay_runs",
                "restore the configuration to resume it, or start a new run with --new",
            )
        pending.plan()  # still sealed and balanced (ORDER_PLAN_TAMPERED …, exit 3)
        return pending, True
    if pending is not None:
        set_run_status(conn, pending.id, "abandoned")
    seed = seed or doc.sha256
    config = run_config(book, doc, arms, seed)
    plan = make_order_plan([i.item_id for i in doc.items], list(arms), seed)
    row = RunRow(
        id=new_id("RR"),
        set_sha256=doc.sha256,
        kind=doc.kind,
        mode=MODE,
        arms=sorted(arms),
        seed=seed,
        config_sha256=sha256_json(config),
        config=config,
        writer_config_sha256=stage_config_sha256(config),
        plan_sha256=plan.sha256,
        plan_json=canonical_json(plan.model_dump(mode="json")),
        model_run_id=new_id("run_"),
        status="running",
        started_at=utc_now(),
        ended_at=None,
    )
    insert_run(conn, row)  # sealed: the plan and the configuration are stored before the first model call
    return row, False


async def run_replay(
    book: Book,
    doc: RegisteredSet,
    arms: Sequence[Arm],
    *,
    concurrency: int = 4,
    seed: str | None = None,
    new: bool = False,
    progress: Progress | None = None,
    providers: Mapping[str, Provider] | None = None,
    on_plan: Callable[[Bill], None] | None = None,
) -> RunDoc:
    """Run (or resume) a replay of the registered set `doc` with `arms` (see the module doc). `providers` injects
    ready provider objects by name (tests and benchmarks), as `ModelSession.open` does. `on_plan` hears the bill
    of what is still to do before the first call (and may refuse it by raising)."""
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise InputError(
            "USAGE", f"--concurrency {concurrency} is outside 1–{MAX_CONCURRENCY}", "--concurrency", "e.g. 4"
        )
    preflight(book, doc, arms, probes=True)
    builds: dict[str, dict[Arm, ContextBuild]] = {}
    prepared: dict[str, dict[Arm, PreparedDraft]] = {}
    if doc.kind == "writer":  # every context before anything is written: a broken item refuses the run
        builds = {item.item_id: build_item(book, item, arms) for item in doc.items}
    elif doc.kind == "outliner":  # every outliner input before anything is drafted, likewise
        prepared = {item.item_id: prepare_outliner_item(book, item, arms) for item in doc.items}
    row, resumed = _new_or_resumed(book, doc, arms, seed, new)
    plan = row.plan()
    redone = forget_unfinished(book.db, row.id)
    order = arm_orders(plan)
    secrets = [row.plan_sha256, row.config_sha256, row.set_sha256, row.seed]
    async with ModelSession.open(book, run_kind="replay", run_id=row.model_run_id, providers=providers) as session:
        if on_plan is not None:
            on_plan(replay_bill(book, session, doc, row.id, order, builds, prepared))
        session.start()
        limit = asyncio.Semaphore(concurrency)
        run = _Run(book, doc, row, order, session, limit, progress or _quiet, secrets, hidden_card_ids(book))
        if doc.kind == "writer":
            await asyncio.gather(*(_writer_item(run, item, builds[item.item_id]) for item in doc.items))
        elif doc.kind == "outliner":
            await asyncio.gather(*(_outliner_item(run, item, prepared[item.item_id]) for item in doc.items))
        else:
            await asyncio.gather(*(_fine_outline_item(run, item) for item in doc.items))
    set_run_status(book.db, row.id, "finished")
    out = run_doc(book, row.id)
    return out.model_copy(update={"resumed": resumed, "redone": redone})


def replay_bill(
    book: Book,
    session: ModelSession,
    doc: RegisteredSet,
    run_id: str,
    order: dict[str, list[Arm]],
    builds: dict[str, dict[Arm, ContextBuild]],
    prepared: dict[str, dict[Arm, PreparedDraft]] | None = None,
) -> Bill:
    """The most what is left of run `run_id` may cost: each sample not yet written (a whole write: `write_bill`;
    an outliner draft: its call with every correction) and each panel not yet judged (the 2+1 judges over the
    item's candidates — for a writer or outliner item, each as long as the output cap allows; for a fine-outline
    item, its pinned drafts)."""
    done, judged = samples_of(book.db, run_id), panels_of(book.db, run_id)
    longest = "字" * (book.config.calls.max_output_tokens * 4 // 3)
    parts: list[RoleBill] = []
    for item in doc.items:
        arms = order[item.item_id]
        if doc.kind == "writer":
            for arm in arms:
                if (item.item_id, arm) not in done:
                    parts += write_bill(session, builds[item.item_id][arm]).roles
            texts = {arm: longest for arm in arms}
            outline = builds[item.item_id][arms[0]].inputs.outline
        elif doc.kind == "outliner":
            for arm in arms:
                if (item.item_id, arm) not in done and session.is_configured("outliner"):
                    parts.append(session.bill(outline_draft_call((prepared or {})[item.item_id][arm])))
            texts = {arm: longest for arm in arms}
            assert item.reference is not None
            outline = parse_outline(book.root / item.reference.path)
        else:
            texts = {}
            for arm in arms:
                pin = item.drafts[arm]
                data = read_user_file(book.root / pin.path, what="outline draft", kind="REPLAY_DRAFT", missing_ok=True)
                texts[arm] = data.decode("utf-8-sig", errors="replace") if data is not None else ""
            assert item.reference is not None
            outline = parse_outline(book.root / item.reference.path)
        if item.item_id in judged:
            continue
        request = JudgeRequest(
            profile=_PROFILE[doc.kind],
            candidates=[Candidate(arm, texts[arm]) for arm in arms],
            item_id=item.item_id,
            seed="bill",
            scene_type=item.scene_type if doc.kind == "writer" else None,
            outline=outline,
            assertions=[Target(a.id, a.text) for a in item.assertions],
            constraints=[Target(i.id, i.text) for i in outline.items() if i.hard] if doc.kind != "fine_outline" else [],
        )
        parts += panel_bill(book, session, request)
    return total_bill(parts)


def arm_orders(plan: OrderPlan) -> dict[str, list[Arm]]:
    """Item → its arm order (position 0 first), from a verified plan (made from arms A, B, C only)."""
    return {o.item_id: [cast(Arm, a) for a in o.order] for o in plan.orders}


def _quiet(_: Event) -> None:
    return None


async def _writer_sample(run: _Run, item: SetItem, arm: Arm, build: ContextBuild) -> bool:
    """Write one sample (context → writer → detector gate); True when it has a candidate for the panel."""
    conn = run.book.db
    async with run.limit:
        start_sample(conn, run.row.id, item.item_id, arm, run.order[item.item_id].index(arm))
        run.tell(item.item_id, arm, "write")
        try:
            doc = await write_chapter(
                run.book,
                run.session,
                item.chapter,
                arm=arm,
                build=build,
                progress=lambda step: run.tell(item.item_id, arm, step.split(":", 1)[0]),
                shadow=True,  # a replay writes chapters the book has: its drafts are experiments, never the book's
                resume="never",  # an interrupted sample is written again (the run resumes per sample)
                origin="replay",
            )
        except MuseError as exc:  # e.g. an evidence round refused as input: the sample failed, the run goes on
            end_sample(conn, run.row.id, item.item_id, arm, "failed", code=exc.code, detail=exc.what[:500])
            run.tell(item.item_id, arm, "failed", done=True)
            return False
        code = doc.error_code if doc.status == "error" else "NOT_EVALUATED" if doc.status == "skipped" else None
        detail = (doc.error or doc.reason or "")[:500] if code else None
        end_sample(conn, run.row.id, item.item_id, arm, "done", write_id=doc.write_id, code=code, detail=detail)
        run.tell(item.item_id, arm, "failed" if code else "done", done=True)
        return code is None and doc.final_draft_id is not None


async def _writer_item(run: _Run, item: SetItem, builds: dict[Arm, ContextBuild]) -> None:
    """An item's samples (concurrently, in the plan's order of starting), then its panel."""
    done = samples_of(run.book.db, run.row.id)
    order = run.order[item.item_id]
    pending = [a for a in order if (item.item_id, a) not in done]
    await asyncio.gather(*(_writer_sample(run, item, arm, builds[arm]) for arm in pending))
    if item.item_id in panels_of(run.book.db, run.row.id):
        return  # judged already (a resumed run never judges twice)
    samples = samples_of(run.book.db, run.row.id)
    failed = [a for a in order if samples[(item.item_id, a)].code is not None]
    if failed:
        _panel_not_run(run, item, failed)
        return
    candidates = []
    for arm in order:
        text = final_candidate(run.book, write_doc(run.book, samples[(item.item_id, arm)].write_id or ""))[1]
        candidates.append(Candidate(arm, text))
    outline = builds[order[0]].inputs.outline
    constraints = [Target(i.id, i.text) for i in outline.items() if i.hard]
    manifests = [b.manifest_sha256 for b in builds.values()]
    await _panel(run, item, candidates, outline, constraints, secrets=manifests)


def _panel_not_run(run: _Run, item: SetItem, failed: list[Arm]) -> None:
    conn = run.book.db
    start_panel(conn, run.row.id, item.item_id)
    detail = f"arm(s) {', '.join(failed)} of this item failed: a panel never judges part of an item's arms"
    end_panel(conn, run.row.id, item.item_id, "not_run", code="PANEL_NOT_RUN", detail=detail)
    run.tell(item.item_id, None, "panel not run", done=True)


@cache
def strategy_words() -> list[str]:
    """The writer vocabulary's strategy words a judge may not see — less those novelmuse's own judge templates
    say (the contract tells every judge the blind input has no 知识卡 / card_index; that is not a leak)."""
    folder = resources.files("novelmuse.roles") / "judge"
    own = "\n".join(f.read_text(encoding="utf-8") for f in folder.iterdir() if f.name.endswith(".txt"))
    return [w for w in vocabulary().strategy_words if w not in own]


def _guard(run: _Run, texts: Sequence[str], secrets: Sequence[str]) -> LeakGuard:
    """Everything a judge of this run may not see: the arm letters, the strategy words, the book's card ids, this
    run's hashes and seed, the item's own manifest hashes (`secrets`), and `texts` (the target chapter's
    sentences, for a fine-outline item)."""
    return LeakGuard(
        arm_names=["A", "B", "C"],
        strategy_names=strategy_words(),
        card_ids=run.card_ids,
        manifest=list(texts),
        secrets=[*run.guard_secrets, *secrets],
    )


async def _panel(
    run: _Run,
    item: SetItem,
    candidates: list[Candidate],
    outline: FineOutline,
    constraints: list[Target],
    texts: Sequence[str] = (),
    secrets: Sequence[str] = (),
    future: Sequence[str] = (),
) -> None:
    """One blind oracle panel over all the item's candidates (judge 1 in the plan's order); `future` is the text of
    the target chapter and later ones, of which no run of 20 characters may reach a judge (as in `muse judge`)."""
    conn = run.book.db
    async with run.limit:
        start_panel(conn, run.row.id, item.item_id)
        run.tell(item.item_id, None, "panel")
        request = JudgeRequest(
            profile=_PROFILE[run.doc.kind],
            candidates=candidates,
            item_id=item.item_id,
            seed=run.row.seed,
            scene_type=item.scene_type if run.doc.kind == "writer" else None,
            outline=outline,
            assertions=[Target(a.id, a.text) for a in item.assertions],
            constraints=constraints,
            guard=_guard(run, texts, secrets),
            future_texts=future,
            given_order=True,
            unknown_verdicts=True,
            sources={c.arm: f"{item.item_id}/{c.arm}" for c in candidates},
        )
        try:
            outcome = await judge_item(
                run.book,
                run.session,
                request,
                on_judge=lambda slot, state: run.tell(item.item_id, None, f"judge {slot} {state}"),
            )
        except MuseError as exc:  # a leak refused before sending, a candidate a judge cannot quote, …
            end_panel(conn, run.row.id, item.item_id, "failed", code=exc.code, detail=exc.what[:500])
            run.tell(item.item_id, None, "panel failed", done=True)
            return
        report = outcome.report
        if report is None:  # no judge model: refused by the preflight, so only a bug gets here
            end_panel(conn, run.row.id, item.item_id, "failed", code="NOT_EVALUATED", detail=outcome.reason)
            return
        code = None if report.status == "stable" else report.error_code or report.status.upper()
        end_panel(conn, run.row.id, item.item_id, "done", panel_id=report.panel_id, code=code)
        run.tell(item.item_id, None, "panel " + report.status, done=True)


async def _fine_outline_item(run: _Run, item: SetItem) -> None:
    """A fine-outline item: each arm's pinned draft is its candidate (re-hashed), judged blind against the
    reference scaffold and the oracle assertions — never the target chapter: no run of 20 characters of chapter N
    or a later one (when the book has them) may reach a judge — the rule of `muse judge` — and every sentence of
    chapter N is also a hidden token of the leak guard."""
    conn = run.book.db
    done = samples_of(conn, run.row.id)
    order = run.order[item.item_id]
    texts: dict[Arm, str] = {}
    for arm in order:
        pin = item.drafts[arm]
        data = read_user_file(run.book.root / pin.path, what="outline draft", kind="REPLAY_DRAFT", missing_ok=True)
        ok = data is not None and sha256_hex(data) == pin.sha256
        if ok and data is not None:
            texts[arm] = data.decode("utf-8-sig")
        if (item.item_id, arm) in done:
            continue
        start_sample(conn, run.row.id, item.item_id, arm, order.index(arm))
        if ok:
            end_sample(conn, run.row.id, item.item_id, arm, "done")
        else:
            what = f"the draft {pin.path} is gone or no longer has the sha256 the set pins"
            end_sample(conn, run.row.id, item.item_id, arm, "failed", code="REPLAY_DRAFT_CHANGED", detail=what)
    if item.item_id in panels_of(conn, run.row.id):
        return
    failed = [a for a in order if a not in texts]
    if failed:
        _panel_not_run(run, item, failed)
        return
    assert item.reference is not None
    reference = parse_outline(run.book.root / item.reference.path)
    if reference.sha256 != item.reference.sha256:
        start_panel(conn, run.row.id, item.item_id)
        what = f"the reference scaffold {item.reference.path} no longer has the sha256 the set pins"
        end_panel(conn, run.row.id, item.item_id, "failed", code="REPLAY_REFERENCE_CHANGED", detail=what)
        return
    future = {n: read_chapter_file(n, p).body for n, p in run.book.chapter_paths().items() if n >= item.chapter}
    body = future.get(item.chapter, "")
    target = [s for s in _SENTENCE_END.split(body) if s.strip()]  # each sentence of chapter N is a hidden token
    candidates = [Candidate(arm, texts[arm]) for arm in order]
    await _panel(run, item, candidates, reference, [], target, future=list(future.values()))


def prepare_outliner_item(book: Book, item: SetItem, arms: Sequence[Arm]) -> dict[Arm, PreparedDraft]:
    """Every arm's outliner input of an outliner item (no model call): A, the baseline, without the story memory;
    C with it (`writing.prepare_draft`)."""
    return {arm: prepare_draft(book, item.chapter, arm="A" if arm == "A" else "C") for arm in arms}


def messages_sha256(call: TaskCall[Any]) -> str:
    """The sha256 of a rendered call's messages: an outliner sample's manifest (what its draft was made from)."""
    return sha256_json([m.model_dump(mode="json") for m in call.messages])


def _reference(book: Book, item: SetItem) -> FineOutline | None:
    """The item's reference scaffold, or None when its file no longer has the sha256 the set pins."""
    assert item.reference is not None
    data = read_user_file(book.root / item.reference.path, what="reference", kind="REPLAY_DRAFT", missing_ok=True)
    if data is None or sha256_hex(data) != item.reference.sha256:
        return None
    return parse_outline(book.root / item.reference.path, data.decode("utf-8-sig"))


async def _outliner_sample(run: _Run, item: SetItem, arm: Arm, prepared: PreparedDraft, reference: FineOutline) -> None:
    """Draft one arm's fine outline of an item (the outliner's call, its contract running the book's lint), lint it
    against the reference scaffold and keep both; a call that fails closed fails the sample and the run goes on."""
    conn = run.book.db
    async with run.limit:
        start_sample(conn, run.row.id, item.item_id, arm, run.order[item.item_id].index(arm))
        run.tell(item.item_id, arm, "draft")
        call = outline_draft_call(prepared)
        try:
            result = await run.session.call(call)
        except MuseError as exc:
            end_sample(conn, run.row.id, item.item_id, arm, "failed", code=exc.code, detail=exc.what[:500])
            run.tell(item.item_id, arm, "failed", done=True)
            return
        outline = result.value.to_outline(item.chapter)
        basis = {f"E{i + 1}": list(e.basis) for i, e in enumerate(result.value.hard_events)}
        store_outline_sample(
            conn,
            run.row.id,
            item.item_id,
            arm,
            text=draft_yaml(outline, [], basis),
            messages_sha256=keep_prompt(run.book, run.row.id, [m.model_dump(mode="json") for m in call.messages]),
            call_id=result.call_id,
            lint=reference_coverage(outline, reference),
        )
        end_sample(conn, run.row.id, item.item_id, arm, "done")
        run.tell(item.item_id, arm, "done", done=True)


async def _outliner_item(run: _Run, item: SetItem, prepared: dict[Arm, PreparedDraft]) -> None:
    """An outliner item: each arm drafts the chapter's fine outline (concurrently, in the plan's order of
    starting), then one blind panel judges the drafts against the reference scaffold — never the target chapter,
    as for a fine-outline item."""
    conn = run.book.db
    order = run.order[item.item_id]
    reference = _reference(run.book, item)
    if reference is None:
        for arm in order:
            if (item.item_id, arm) not in samples_of(conn, run.row.id):
                start_sample(conn, run.row.id, item.item_id, arm, order.index(arm))
                what = "the reference scaffold is gone or no longer has the sha256 the set pins"
                end_sample(conn, run.row.id, item.item_id, arm, "failed", code="REPLAY_REFERENCE_CHANGED", detail=what)
        reference_failed = True
    else:
        done = samples_of(conn, run.row.id)
        pending = [a for a in order if (item.item_id, a) not in done]
        await asyncio.gather(*(_outliner_sample(run, item, a, prepared[a], reference) for a in pending))
        reference_failed = False
    if item.item_id in panels_of(conn, run.row.id):
        return
    samples = samples_of(conn, run.row.id)
    failed = [a for a in order if samples[(item.item_id, a)].code is not None]
    if failed or reference_failed or reference is None:
        _panel_not_run(run, item, failed or list(order))
        return
    drafts = outline_samples_of(conn, run.row.id)
    candidates = [Candidate(arm, drafts[(item.item_id, arm)].text) for arm in order]
    future = {n: read_chapter_file(n, p).body for n, p in run.book.chapter_paths().items() if n >= item.chapter}
    target = [s for s in _SENTENCE_END.split(future.get(item.chapter, "")) if s.strip()]
    constraints = [Target(i.id, i.text) for i in reference.items() if i.hard]
    manifests = [drafts[(item.item_id, arm)].messages_sha256 for arm in order]
    await _panel(run, item, candidates, reference, constraints, target, manifests, list(future.values()))


# ── the run as a document ──────────────────────────────────────────────────────────────────────────────────


def run_doc(book: Book, run_id: str) -> RunDoc:
    """The run as stored: configuration hashes, every sample (pending ones too) and panel (`muse replay status`)."""
    row = load_run(book, run_id)
    doc = load_set(book, row.set_sha256)
    order = arm_orders(row.plan())
    samples = samples_of(book.db, row.id)
    panels = panels_of(book.db, row.id)
    items = sorted(doc.items, key=lambda i: (i.chapter, i.item_id))  # in chapter order: ch89 before ch100
    out: list[SampleOut] = []
    for item in items:
        for arm in order[item.item_id]:
            s = samples.get((item.item_id, arm))
            entry = SampleOut(
                item_id=item.item_id,
                chapter=item.chapter,
                arm=arm,
                position=order[item.item_id].index(arm),
                status="pending" if s is None else s.status,
            )
            if s is not None:
                entry = entry.model_copy(update={"write_id": s.write_id, "code": s.code, "detail": s.detail})
                if s.write_id:
                    wd = write_doc(book, s.write_id)
                    cand = final_candidate(book, wd, check=False) if wd.final_draft_id else None
                    entry = entry.model_copy(
                        update={
                            "write_status": wd.status,
                            "candidate_sha256": cand[0].text_sha256 if cand else None,
                            "manifest_sha256": cand[0].manifest_sha256 if cand else None,
                        }
                    )
            out.append(entry)
    panel_out = []
    for item in items:
        p = panels.get(item.item_id)
        status = "pending" if p is None else p.status
        panel_status = None
        if p is not None and p.panel_id:
            r = book.db.execute("SELECT status FROM judge_panels WHERE id = ?", (p.panel_id,)).fetchone()
            panel_status = r[0] if r else None
        panel_out.append(
            PanelOut(
                item_id=item.item_id,
                status=status,
                panel_id=p.panel_id if p else None,
                panel_status=panel_status,
                code=p.code if p else None,
                detail=p.detail if p else None,
            )
        )
    finished = row.status == "finished"
    ok = finished and all(s.code is None for s in out) and all(p.code is None for p in panel_out)
    notes = []
    if doc.kind == "writer" and not {"A", "C"} <= set(row.arms):
        notes.append("arms A and C were not both run: Gate A and Gate B will say ARM_NOT_RUN (failed)")
    return RunDoc(
        spent=run_spend(book.db, row.model_run_id).spend,
        ok=ok,
        run_id=row.id,
        set_sha256=row.set_sha256,
        set_name=doc.name,
        kind=row.kind,
        mode=row.mode,
        status=row.status,
        arms=row.arms,
        seed=row.seed,
        plan_sha256=row.plan_sha256,
        config_sha256=row.config_sha256,
        writer_config_sha256=row.writer_config_sha256,
        model_run_id=row.model_run_id,
        samples=out,
        panels=panel_out,
        notes=notes,
    )
