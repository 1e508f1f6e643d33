"""Accept: accept_preflight, then confirm — the one way a draft becomes the book's text.

The preflight, in this order (the paid step last, and only when everything before it held):

1. **file** — the chapter (or outline) file is what the author had when the draft was made (its sha256 was bound
   then): an edit made since is FILE_CHANGED_ON_DISK (exit 2) naming both hashes. A file that exists is the
   author's text, replaced only when the author says `--replace-author-text` (AUTHOR_TEXT_EXISTS otherwise).
2. **manifest** (a writer's draft) — the context rebuilds today exactly as the draft was written from it: the
   first build and each evidence round again, their manifest sha256 compared; when the memory changed since, the
   differences are named and the accept needs `--accept-changed-memory`.
3. **detector** — the detector gate passed on exactly this text (its report binds the text's sha256). An author's
   revision passed the detector's deterministic part when it was made; the semantic detector runs on it now when
   a detector model is configured, else the decision records that it did not.
4. **rules** — the hard rules (forbidden phrases, the chapter length) hold on the text; for an outline, its lint,
   and first its **admission**: a drafted outline's header names the Gate A/B receipts that admitted the run that
   drafted it, re-verified now (a pass revoked since, or earned by another writer configuration, refuses it).
5. **quality gate** — the gate `muse review` runs (blind judges against the chapter's evidence): passed, or the
   accept is refused (failed: exit 1; failed closed: exit 3). No judge model: not evaluated, exit 4, nothing is
   written — unless `--without-gate`, which the decision records.

Confirm: the file is written atomically through the revision store (the replaced bytes kept; `muse revisions`),
in the book's own heading style, keeping the chapter's title (an existing heading line stays byte for byte; a new
chapter gets its outline's title), together with the decision row — a kill at any moment leaves either the old
file and no decision, or the new file with its revision and decision. An accepted fine outline is then confirmed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..book import Book, read_chapter_file
from ..editorial import (
    NO_MODEL,
    StepOutcome,
    mark_revision_applied,
    revision_bytes,
    stored_revision,
)
from ..errors import FailedClosed, InputError, MuseError
from ..roles.detector import DETECT, DetectRequest
from ..rules import CompiledRules, load_book_rules
from ..store import transaction
from ..text import sha256_hex
from ._build import ContextBuild, build_context
from ._desk import (
    DraftRef,
    Loaded,
    decision_row,
    deterministic_failures,
    insert_decision,
    lint_outline_text,
    lint_steps,
    load,
    refuse_rejected,
    resolve,
    settle,
)
from ._desk_doc import AcceptDoc, DecisionMode, Override
from ._drafts import DraftDoc, heading_for, store_report
from ._evidence import answer_requests
from ._gate import gate_for
from ._manifest import Manifest
from ._outlines import ADMISSION_LINE, AdmissionCheck, confirm_outline, read_outline
from ._store import _diff

if TYPE_CHECKING:  # the model layer is loaded only when a model may be called
    from ..llm import Bill, ModelSession, RoleBill

JUDGE_ROLE = "judge"
#: The gate left out by the author's choice (`--no-gate`, `[review] quality_gate = false`).
NOT_REQUESTED = "not requested ([review] quality_gate = false or --no-gate)"


@dataclass(frozen=True)
class AcceptOptions:
    """What the author allowed: each lets one failed check through, and is recorded in the decision."""

    without_gate: bool = False  # the quality gate could not run (no judge model)
    accept_changed_memory: bool = False  # the context no longer rebuilds as the draft was written
    replace_author_text: bool = False  # the chapter has a file (the author's) that the accept replaces
    gate: bool = True  # False: the author asked for no gate (`--no-gate`, [review] quality_gate = false): recorded


@dataclass
class _Preflight:
    steps: list[StepOutcome] = field(default_factory=list)
    overrides: list[Override] = field(default_factory=list)
    build: ContextBuild | None = None

    def add(self, step: StepOutcome, override: Override | None = None, allowed: bool = False) -> None:
        self.steps.append(step)
        if override is not None and allowed and step.status in ("failed", "skipped"):
            self.overrides.append(override)

    @property
    def blocked(self) -> list[StepOutcome]:
        """The checks that failed (or could not run) and no option let through."""
        let = {"file": "replace_author_text", "manifest": "accept_changed_memory", "quality_gate": "without_gate"}
        return [s for s in self.steps if s.status != "passed" and let.get(s.step) not in self.overrides]


def _file_check(book: Book, loaded: Loaded, options: AcceptOptions) -> tuple[StepOutcome, str | None]:
    """(the file step, the file's sha256 now); raises FILE_CHANGED_ON_DISK / AUTHOR_TEXT_EXISTS."""
    d = loaded.draft
    path = loaded.path
    now = sha256_hex(path.read_bytes()) if path.is_file() else None
    rel = path.relative_to(book.root).as_posix()
    what = "outline" if d.kind == "outline" else book.chapter_label(d.chapter)
    if d.kind == "review" and now is not None and now == loaded.bound_sha256:
        return StepOutcome.passed("file", f"{rel} is the text the review read ({_sha(now)})"), now
    if now != loaded.bound_sha256:
        if not options.replace_author_text:
            raise InputError(
                "FILE_CHANGED_ON_DISK",
                f"{rel} changed since draft {d.short} was made (then {_sha(loaded.bound_sha256)}, now {_sha(now)});"
                " nothing was written",
                rel,
                f"compare them with `muse drafts diff {d.short}`; `--replace-author-text` replaces your text (kept as"
                " a revision)",
            )
        return StepOutcome.failed(
            "file", f"{rel} changed since the draft ({_sha(loaded.bound_sha256)} → {_sha(now)})"
        ), now
    if now is not None:
        if not options.replace_author_text:
            raise InputError(
                "AUTHOR_TEXT_EXISTS",
                f"{rel} holds the author's text of {what}: accepting draft {d.short} would replace it",
                rel,
                f"compare with `muse drafts diff {d.short}`; say `--replace-author-text` to replace it (your text is"
                " kept: `muse revisions`)",
            )
        return StepOutcome.failed("file", f"{rel} is the author's text ({_sha(now)}): replaced on request"), now
    return StepOutcome.passed("file", f"{rel} does not exist yet"), now


def _sha(sha: str | None) -> str:
    return f"{sha[:12]}…" if sha else "no file"


def _manifest_check(book: Book, loaded: Loaded) -> tuple[StepOutcome, ContextBuild | None]:
    """Rebuild the draft's context (round 0, then every evidence round the run served) and compare manifests."""
    run = loaded.run
    assert run is not None and loaded.manifest_sha256 is not None
    first = book.db.execute("SELECT body FROM context_manifests WHERE sha256 = ?", (run["manifest_sha256"],)).fetchone()
    choice = Manifest.model_validate_json(first[0]).arm_choice if first is not None else None
    try:
        build = build_context(book, loaded.draft.chapter, arm=run["arm"], arm_choice=choice)
    except MuseError as exc:
        return StepOutcome.failed("manifest", f"the context no longer builds: {exc.code}: {exc.what}"), None
    target = loaded.manifest_sha256
    stored_first = run["manifest_sha256"]
    if build.manifest_sha256 == stored_first and target != stored_first:
        rounds = [
            DraftDoc.model_validate_json(r[0])
            for r in book.db.execute(
                "SELECT body FROM write_drafts WHERE write_id = ? AND purpose IN ('draft', 'evidence') ORDER BY seq",
                (run["id"],),
            )
        ]
        for k, doc in enumerate(rounds, 1):
            if build.manifest_sha256 == target or not doc.evidence_requests:
                break
            allow = k < book.config.writing.evidence_rounds
            build = answer_requests(build, doc.evidence_requests, k, allow_requests=allow).build
    if build.manifest_sha256 == target:
        return StepOutcome.passed("manifest", f"rebuilds identically ({target[:12]}…)"), build
    stored = book.db.execute("SELECT body FROM context_manifests WHERE sha256 = ?", (target,)).fetchone()
    differences: list[Any] = []
    if stored is not None:
        _diff(json.loads(stored[0]), json.loads(build.manifest_body), "", differences)
    named = ", ".join(sorted({re.split(r"[.\[]", d.path)[0] for d in differences})[:8])
    return (
        StepOutcome.failed(
            "manifest",
            f"the memory changed since the draft was written: manifest {target[:12]}… rebuilds as "
            f"{build.manifest_sha256[:12]}…" + (f"; changed: {named}" if named else ""),
        ),
        build,
    )


async def _detector_check(
    book: Book, session: ModelSession | None, loaded: Loaded, build: ContextBuild | None, pre: _Preflight
) -> StepOutcome:
    report = loaded.report
    if loaded.draft.origin != "author_revision":
        if report is None:
            return StepOutcome.failed("detector", "no detector report on exactly this text")
        out = report.outcome
        if out.status == "passed":
            return StepOutcome.passed("detector", f"passed on this text ({loaded.report_sha256 or ''}"[:40] + "…)")
        return StepOutcome.failed("detector", f"the detector gate did not pass on this text: {out.label}")
    if report is None:
        return StepOutcome.failed("detector", "the author's revision was never checked")
    failures = deterministic_failures(report)
    if failures:
        return StepOutcome.failed("detector", f"{len(failures)} blocking: " + "; ".join(failures[:5]))
    if session is None or not session.is_configured("detector") or build is None:
        why = NO_MODEL if build is not None else "the context does not rebuild"
        return StepOutcome.passed("detector", f"the deterministic checks hold; semantic detector not run ({why})")
    gate = gate_for(build)
    text = loaded.text
    call = DETECT.render(
        DetectRequest(candidate=text, candidate_sha256=sha256_hex(text), constraints=gate.constraint_lines())
    )
    result = await session.call(call)
    full = gate.report(
        text, loaded.declared, result.value, StepOutcome.passed("detector"), None,
        StepOutcome.skipped("extractor", "not run on the author's revision"),
    )  # fmt: skip
    full = full.model_copy(update={"manifest_sha256": loaded.manifest_sha256 or full.manifest_sha256})
    assert loaded.run is not None
    store_report(book, loaded.run["id"], loaded.draft.id, full)
    blocking = [i for i in full.items if i.blocks and i.check != "undeclared_fact" and i.source != "extractor"]
    if blocking:
        return StepOutcome.failed(
            "detector", f"{len(blocking)} blocking: " + "; ".join(f"[{i.id}] {i.detail}" for i in blocking[:5])
        )
    return StepOutcome.passed("detector", "the deterministic checks and the semantic detector hold")


def _rules_check(book: Book, text: str) -> StepOutcome:
    length, findings = CompiledRules(load_book_rules(book).effective).check_body(text)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        shown = "; ".join(
            f"{f.rule} {f.target}" + (f" ×{f.actual}" if f.rule != "length" else f" ({f.actual})") for f in errors[:5]
        )
        return StepOutcome.failed("rules", f"{len(errors)} error(s): {shown}")
    return StepOutcome.passed("rules", f"{length.chars} characters, no rule error")


def _chapter_bytes(book: Book, loaded: Loaded, build: ContextBuild | None) -> bytes:
    """The chapter file to write: the existing heading line kept byte for byte (BOM, line endings), or a new
    heading in the book's style with the outline's title; a review's text is its stored file exactly."""
    d = loaded.draft
    if d.kind == "review":
        row = book.db.execute("SELECT sha256 FROM revisions WHERE id = ?", (d.id,)).fetchone()
        return stored_revision(book.db, d.id, row[0])
    body = loaded.text.rstrip("\n") + "\n"
    found = book.probe_chapter_file(d.chapter)
    if found is not None:
        chapter = read_chapter_file(d.chapter, found)
        return revision_bytes(chapter, found.read_bytes(), body)
    title = build.inputs.outline.title if build is not None else read_outline(book, d.chapter).title
    return f"# {heading_for(book, d.chapter, title)}\n{body}".encode()


def _spent(session: ModelSession | None) -> Any:
    """What the session's run spent so far (a `CostLine`), or None before it started."""
    if session is None or not session.started:
        return None
    from ..llm import run_spend

    return run_spend(session.conn, session.run_id)


def accept_bill(book: Book, session: ModelSession, token: str) -> Bill:
    """What accepting a draft may cost at most: the quality gate's panel (nothing when a decision on the same
    inputs is stored) and, for an author's revision, one semantic detector call."""
    loaded = load(book, resolve(book, token))
    parts: list[RoleBill] = []
    if loaded.draft.kind != "outline" and session.is_configured(JUDGE_ROLE):
        from ._quality_gate import gate_bill  # the judges' layer is loaded only when a judge may be called

        parts += gate_bill(book, session, loaded.draft.chapter, loaded.text)
    if (
        loaded.draft.origin == "author_revision"
        and loaded.draft.kind == "chapter"
        and session.is_configured("detector")
    ):
        detect = DETECT.render(
            DetectRequest(candidate=loaded.text, candidate_sha256=loaded.draft.text_sha256, constraints=[])
        )
        parts.append(session.bill(detect, 1, extra_input_tokens=4096))
    from ..llm import total_bill

    return total_bill(parts)


def _admission_step(book: Book, text: str, admission: AdmissionCheck | None) -> StepOutcome:
    """An outline the fine-outline stage drafted names the receipts that admitted its run (its ``准入`` header line):
    they are re-verified now (`admission`, the stage's check), so a draft made before a failed evaluation revoked
    the pass, or under another writer configuration, is not confirmed. Fails closed when no check is given."""
    if ADMISSION_LINE not in text:
        return StepOutcome.passed("admission", "no admission claimed (the author's outline)")
    if admission is None:
        return StepOutcome.error(
            "admission", "ADMISSION_UNVERIFIED", "the draft's admitting receipts cannot be checked here"
        )
    problems = admission(book, text)
    if problems:
        return StepOutcome.failed("admission", "; ".join(problems[:5]))
    return StepOutcome.passed("admission", "the admitting receipts verify")


def _checked_in_preflight(book: Book, text: str) -> list[str]:
    """The admission of an accepted outline draft: already checked on these bytes by the preflight."""
    return []


async def accept_draft(
    book: Book,
    session: ModelSession | None,
    token: str | DraftRef,
    options: AcceptOptions = AcceptOptions(),
    *,
    mode: DecisionMode = "manual",
    command: str | None = None,
    on_bill: Callable[[Bill], None] | None = None,
    admission: AdmissionCheck | None = None,
) -> AcceptDoc:
    """Run accept_preflight on the draft and, when it holds, confirm it into the book (see the module docstring).
    The returned document says how it ended: accepted, refused (a check failed: exit 1), not_evaluated (the gate
    could not run: exit 4) or error (a call failed closed: exit 3); nothing is written unless accepted.
    `on_bill` is told the most the preflight's calls may cost, before the first one."""
    settle(book)
    spent = _spent(session)
    ref = resolve(book, token) if isinstance(token, str) else token
    loaded = load(book, ref)
    d = loaded.draft
    refuse_rejected(book, ref)
    if d.decision is not None and d.decision.decision == "accept":
        raise InputError(
            "DRAFT_ALREADY_ACCEPTED",
            f"draft {d.short} was accepted on {d.decision.decided_at[:19]}",
            "muse drafts accept",
            f"`muse revisions {d.chapter}` lists the versions of the file",
        )
    if d.kind == "chapter" and d.status in ("writing", "interrupted"):
        raise InputError(
            "DRAFT_NOT_FINISHED",
            f"draft {d.short} belongs to a write that is {d.status}",
            "muse drafts accept",
            f"let it finish, or resume it with `muse write {d.chapter}`",
        )
    if d.kind == "plan":
        command = command or f"muse drafts accept {d.short}"
        return _accept_plan(book, loaded, mode=mode, command=command, admission=admission)
    pre = _Preflight()
    step, now = _file_check(book, loaded, options)
    pre.add(step, "replace_author_text", options.replace_author_text)
    if d.kind == "outline":
        pre.add(_admission_step(book, loaded.text, admission))
        pre.steps += lint_steps(lint_outline_text(book, d.chapter, loaded.text))
    else:
        if d.kind == "chapter":
            step, pre.build = _manifest_check(book, loaded)
            pre.add(step, "accept_changed_memory", options.accept_changed_memory)
        if session is not None and on_bill is not None:
            on_bill(accept_bill(book, session, d.id))
        if d.kind == "chapter":
            try:
                pre.add(await _detector_check(book, session, loaded, pre.build, pre))
            except FailedClosed as exc:
                pre.add(StepOutcome.error("detector", exc.code, exc.what))
        pre.add(_rules_check(book, loaded.text))
        pre.add(await _gate_check(book, session, loaded, options, pre))
    doc = _finish(book, session, loaded, pre, now, mode=mode, command=command or f"muse drafts accept {d.short}")
    if session is None or not session.started:
        return doc
    after = _spent(session)
    assert after is not None
    calls, tokens_in, tokens_out, cost_before = (
        (spent.calls, spent.input_tokens, spent.output_tokens, spent.cost) if spent is not None else (0, 0, 0, 0.0)
    )
    cost = None if after.cost is None or cost_before is None else after.cost - cost_before
    return doc.model_copy(
        update={
            "run_id": session.run_id,
            "calls": after.calls - calls,
            "input_tokens": after.input_tokens - tokens_in,
            "output_tokens": after.output_tokens - tokens_out,
            "cost": cost,
        }
    )


def _accept_plan(
    book: Book, loaded: Loaded, *, mode: DecisionMode, command: str, admission: AdmissionCheck | None
) -> AcceptDoc:
    """Accept a plan draft (`writing._plan_draft`): its preflight — the admitting receipts its header names checked
    again (`admission`: a failed evaluation since, or another outliner configuration, refuses it), the bundle, the
    plan lint and card checks, the files unchanged since — then every file that differs written: card drafts, then
    settings, the outline last, each replaced file's bytes kept first. The decision is recorded with the last file
    written (a kill before it leaves the files written so far, each with its kept version, and no decision:
    accepting again writes the rest)."""
    from ._plan_draft import PLAN_ADMISSION, plan_preflight

    d = loaded.draft
    files, steps = plan_preflight(book, loaded.text, loaded.bases or {})
    claimed = loaded.text.startswith("<!--") and any(
        line.startswith(PLAN_ADMISSION) for line in loaded.text.split("-->", 1)[0].splitlines()
    )
    if not claimed:
        steps.insert(0, StepOutcome.passed("admission", "no admission claimed (the author's plan)"))
    elif admission is None:
        steps.insert(
            0, StepOutcome.error("admission", "ADMISSION_UNVERIFIED", "the admitting receipts cannot be checked here")
        )
    elif problems := admission(book, loaded.text):
        steps.insert(0, StepOutcome.failed("admission", "; ".join(problems[:5])))
    else:
        steps.insert(0, StepOutcome.passed("admission", "the admitting receipts verify"))
    base = AcceptDoc(ok=False, draft=d, status="refused", preflight=steps)
    failed = [s for s in steps if s.status != "passed"]
    if failed:
        first = failed[0]
        if first.status == "error":
            return base.model_copy(
                update={"status": "error", "error_code": first.code, "reason": f"{first.step}: {first.detail}"}
            )
        return base.model_copy(
            update={"reason": f"{first.step}: {first.detail}", "error_code": "ACCEPT_PREFLIGHT_FAILED"}
        )
    row = decision_row(
        kind="plan", draft_id=d.id, chapter=0, text_sha256=d.text_sha256, decision="accept", mode=mode,
        preflight=steps,
    )  # fmt: skip
    order = sorted(files, key=lambda p: (0 if p.startswith("cards/") else 1 if "/settings/" in p else 2, p))
    pending = []
    for path in order:
        target = book.root / path
        now = target.read_bytes() if target.is_file() else None
        data = files[path].encode("utf-8")
        if now != data:
            pending.append((path, data, sha256_hex(now) if now is not None else ""))
    revision = None
    for k, (path, data, expect) in enumerate(pending):
        target = book.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        last = k == len(pending) - 1
        revision = book.replace_file(
            target,
            data,
            expect_sha256=expect,
            kind="card" if path.startswith("cards/") else "plan",
            command=command,
            note=f"draft {d.id}",
            also=(lambda conn, rid: insert_decision(conn, {**row, "file_revision_id": rid})) if last else None,
        )
    if revision is None:  # every file already holds the draft's bytes: the decision alone
        with transaction(book.db) as conn:
            insert_decision(conn, row)
    decision = load(book, DraftRef("plan", d.id)).draft.decision
    return base.model_copy(
        update={
            "ok": True,
            "status": "accepted",
            "draft": d.model_copy(update={"decision": decision}),
            "written": ", ".join(p for p, _, _ in pending) or None,
            "file_revision_id": revision.id if revision is not None else None,
            "decision": decision,
        }
    )


async def _gate_check(
    book: Book, session: ModelSession | None, loaded: Loaded, options: AcceptOptions, pre: _Preflight
) -> StepOutcome:
    if pre.blocked:
        return StepOutcome.skipped("quality_gate", "not run: an earlier check failed")
    if not options.gate:
        step = StepOutcome.skipped("quality_gate", NOT_REQUESTED)
    elif session is None or not session.is_configured(JUDGE_ROLE):
        step = StepOutcome.skipped("quality_gate", NO_MODEL)
    else:
        from ._quality_gate import gate_chapter  # the judges' layer is loaded only when a judge may be called

        gate = await gate_chapter(book, session, loaded.draft.chapter, loaded.text)
        detail = "reused: decided on the same inputs before" if gate.resumed else ""
        if gate.status == "passed":
            step = StepOutcome.passed("quality_gate", detail)
        elif gate.status == "failed":
            reasons = "; ".join(gate.decision.reasons[:3]) if gate.decision else ""
            step = StepOutcome.failed("quality_gate", reasons or detail)
        elif gate.status == "error":
            step = StepOutcome.error("quality_gate", gate.code or "JUDGE_INVALID")
        else:
            step = StepOutcome.skipped("quality_gate", gate.reason or NO_MODEL)
    if step.status == "skipped" and (options.without_gate or not options.gate):
        pre.overrides.append("without_gate")  # the author's choice: --without-gate, --no-gate or the book's config
    return step


def _finish(
    book: Book,
    session: ModelSession | None,
    loaded: Loaded,
    pre: _Preflight,
    now: str | None,
    *,
    mode: DecisionMode,
    command: str,
) -> AcceptDoc:
    d = loaded.draft
    run_id = session.run_id if session is not None and session.started else None
    base = AcceptDoc(ok=False, draft=d, status="refused", preflight=pre.steps, overrides=pre.overrides, run_id=run_id)
    blocked = pre.blocked
    if any(s.status == "error" for s in blocked):
        first = next(s for s in blocked if s.status == "error")
        return base.model_copy(
            update={"status": "error", "error_code": first.code, "reason": f"{first.step}: {first.detail}"}
        )
    if any(s.status == "failed" for s in blocked):
        first = next(s for s in blocked if s.status == "failed")
        return base.model_copy(
            update={"reason": f"{first.step}: {first.detail}", "error_code": "ACCEPT_PREFLIGHT_FAILED"}
        )
    if blocked:  # a check that could not run (the quality gate without a judge model)
        first = blocked[0]
        return base.model_copy(
            update={
                "status": "not_evaluated",
                "reason": f"{first.step}: {first.label}",
                "error_code": "ACCEPT_NOT_EVALUATED",
            }
        )
    row = decision_row(
        kind=d.kind,
        draft_id=d.id,
        chapter=d.chapter,
        text_sha256=d.text_sha256,
        decision="accept",
        mode=mode,
        preflight=pre.steps,
        overrides=pre.overrides,
        run_id=run_id,
    )

    def record(conn: Any, revision_id: str) -> None:
        insert_decision(conn, {**row, "file_revision_id": revision_id})
        if d.kind == "review":
            mark_revision_applied(conn, d.id)

    outline = d.kind == "outline"
    revision = book.replace_file(
        loaded.path,
        loaded.text.encode("utf-8") if outline else _chapter_bytes(book, loaded, pre.build),
        expect_sha256=now or "",
        kind="outline" if outline else "chapter",
        chapter=d.chapter,
        command=command,
        note=f"draft {d.id}",
        also=record,
    )
    if d.kind == "outline":  # these exact bytes passed the preflight's admission step a moment ago
        confirm_outline(book, d.chapter, admission=_checked_in_preflight)
    decision = load(book, DraftRef(d.kind, d.id)).draft.decision
    return base.model_copy(
        update={
            "ok": True,
            "status": "accepted",
            "draft": d.model_copy(update={"decision": decision}),
            "written": loaded.path.relative_to(book.root).as_posix(),
            "file_revision_id": revision.id,
            "replaced_sha256": revision.old_sha256,
            "decision": decision,
        }
    )
