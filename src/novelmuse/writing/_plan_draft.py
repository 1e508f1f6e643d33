"""The plan agent's drafts (大纲+设定智能体): a draft of the book's plan and card drafts, on the author's desk.

`prepare_plan_draft` builds the planner's request from a premise (genre, the protagonist, the hook, the target
length, style notes — the author's own words) and what the book already has: its plan, how far it is written, the
open foreshadows and the cards' names. No model is called here: the plan stage (replay) calls the planner behind its
entry guard, and only then `store_plan_draft_answer` keeps the answer.

**A plan draft is one text, a bundle of files**, shown, revised and decided on as one::

    <!-- header: what the draft is, what it was made from (comments, never written) -->
    ===== plan/outline.md =====
    # 书名 大纲
    …
    ===== plan/settings/人物.md =====
    - 林风：……
    ===== cards/林风.yaml =====
    id: 林风
    …

A file line ``===== PATH =====`` opens each file: ``plan/outline.md`` (or the book's ``plan/大纲.md``), settings
under ``plan/settings/`` (``.md``, ``.yaml``, ``.yml``) and card drafts under ``cards/`` (``.yaml``). The outline is
in the plan's own Markdown: volumes headed ``# 第1-30章：卷名``, arcs ``## 第1-10章：段落名`` with their events and
result, foreshadows ``- 伏笔 F-id：…，埋第3章，收第25章`` (or ``未收``). Nothing reaches ``plan/`` or ``cards/``
until the author accepts the draft (`accept_plan_draft`): the bundle must parse, pass the plan lint (volumes
cover the book without gaps or overlaps, foreshadows resolved inside the plan or marked open, every character the
settings name has a card or a card draft) and the card checks, and no file it replaces may have changed since the
draft was made; then each file is written and every replaced file's old bytes are kept (`muse revisions`).
A revise (`muse drafts revise ID --from FILE`) makes the author's bundle a new draft, and accepting it writes
exactly that text.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml
from pydantic import BaseModel, ValidationError

from ..book import Book, PlanFile, atomic_write_text, load_outlines, load_plan, plan_of, read_user_file
from ..editorial import StepOutcome
from ..errors import InputError
from ..llm import StructuredResult, TaskCall
from ..memory import CardFile, load_cards, replay
from ..roles.planner import DRAFT, PlanDraft, PlanRequest
from ..store import new_id, transaction, utc_now
from ..text import chapter_label, edit_distance, heading_unit, sha256_hex, sha256_json
from ._desk import lint_steps, short_id
from ._drafts import drafts_dir
from ._outline_draft import call_figures
from ._outlines import LintProblem
from ._plan_lint import lint_plan_of

PLAN_DRAFT_SCHEMA: Final = 1
_MARK = re.compile(r"^===== (?P<path>[^\n]*?) =====[ \t]*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_SETTING = re.compile(r"^plan/(?:settings|设定)/[^/\x00-\x1f]{1,80}\.(?:md|ya?ml)$")
_CARD = re.compile(r"^cards/[^/\x00-\x1f]{1,80}\.yaml$")
_OUTLINES = ("plan/outline.md", "plan/大纲.md")
SETTING_FILES: Final = {
    "world": "世界观",
    "power": "力量体系",
    "factions": "势力",
    "places": "地点",
    "characters": "人物",
}
MAX_PREMISE_CHARS: Final = 20_000
#: The bundle header's line naming the receipts that admitted the draft (checked again when it is accepted).
PLAN_ADMISSION: Final = "准入："


class PlanDraftDoc(BaseModel):
    """`muse plan draft --json`'s `draft`: the draft, where it waits, what it was made from."""

    schema_version: int = PLAN_DRAFT_SCHEMA
    status: str  # drafted / dry_run / skipped
    reason: str = ""
    first_chapter: int
    last_chapter: int
    premise_sha256: str
    messages_sha256: str
    messages: list[dict[str, str]] | None = None  # the rendered prompt (dry run only)
    draft_id: str | None = None
    short: str | None = None
    written_to: str | None = None  # .muse/drafts/plans/<sha12>.md: never plan/ or cards/ until accepted
    files: list[str] = []  # the files an accept would write
    replaces: list[str] = []  # of them, those that exist now (kept before they are replaced)
    notes: list[str] = []
    admission: dict[str, Any] | None = None
    run_id: str | None = None
    call_id: str | None = None
    receipts: list[str] = []
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None


@dataclass(frozen=True)
class PreparedPlan:
    """The planner's request and what it was made from (no model called yet); `base` is the accepted outline an
    extension is appended to ("" for a whole-book draft)."""

    request: PlanRequest
    premise_sha256: str
    unit: str
    outline_path: str
    base: str = ""

    def files(self, draft: PlanDraft) -> dict[str, str]:
        """The files the planner's answer would write."""
        r = self.request
        suffix = f"（{_range(self.unit, r.first_chapter, r.last_chapter)}）" if self.base else ""
        return plan_files(draft, unit=self.unit, outline_path=self.outline_path, base=self.base, suffix=suffix)


# ── the bundle ─────────────────────────────────────────────────────────────────────────────────────────────


def parse_bundle(text: str, where: str = "plan draft") -> dict[str, str]:
    """The files of a bundle (path → text), in order; PLAN_BUNDLE_INVALID (exit 2) naming the first problem."""

    def refuse(what: str) -> InputError:
        return InputError(
            "PLAN_BUNDLE_INVALID",
            what,
            where,
            "keep the bundle's shape: each file opened by a line `===== PATH =====` (plan/outline.md, "
            "plan/settings/NAME.md, cards/NAME.yaml)",
        )

    marks = list(_MARK.finditer(text))
    if not marks:
        raise refuse("no file line (`===== plan/outline.md =====`) in the text")
    if _COMMENT.sub("", text[: marks[0].start()]).strip():
        raise refuse("text before the first file line (only <!-- comments --> may stand there)")
    files: dict[str, str] = {}
    for k, m in enumerate(marks):
        path = m.group("path").strip()
        end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
        body = text[m.end() : end].strip("\n") + "\n"
        if ".." in path.split("/") or not (path in _OUTLINES or _SETTING.match(path) or _CARD.match(path)):
            raise refuse(f"{path!r} is not a plan file, a settings file or a card this draft may write")
        if path in files:
            raise refuse(f"{path} appears twice")
        if not body.strip():
            raise refuse(f"{path} is empty")
        files[path] = body
    outlines = [p for p in files if p in _OUTLINES]
    if len(outlines) != 1:
        raise refuse(f"the bundle must hold exactly one outline file (it holds {len(outlines)})")
    return files


def bundle_text(files: dict[str, str], header: list[str]) -> str:
    """The bundle of `files` under an HTML-comment `header` (see the module doc)."""
    head = "<!--\n" + "\n".join(_line(h).replace("-->", "—>") for h in header) + "\n-->\n" if header else ""
    return head + "".join(f"===== {path} =====\n{body.rstrip()}\n" for path, body in files.items())


def _range(unit: str, first: int, last: int) -> str:
    return f"第{first}{unit}" if first == last else f"第{first}-{last}{unit}"


def _card_yaml(name: str, kind: str, aliases: list[str], description: str) -> str:
    dump = json.dumps  # JSON strings and lists are YAML flow scalars and sequences
    return (
        f"# {name}: a card drafted by the plan agent (muse plan draft), written when the author accepts the plan.\n"
        f"id: {dump(name, ensure_ascii=False)}\ntype: {kind}\nname: {dump(name, ensure_ascii=False)}\n"
        f"aliases: {dump(aliases, ensure_ascii=False)}\ndescription: {dump(description, ensure_ascii=False)}\n"
        "attributes: {}\nrelations: []\n"
    )


def _line(text: str) -> str:
    """A model's text as one line of a plan file: its line breaks and runs of spaces made one space, and no file
    line (``=====``) it could smuggle into the bundle."""
    return " ".join(text.split()).replace("=====", "＝＝＝＝＝")


def plan_files(draft: PlanDraft, *, unit: str, outline_path: str, base: str = "", suffix: str = "") -> dict[str, str]:
    """The files a plan draft would write (see the module doc): the outline, one settings file per topic, one card
    file per card draft. An extension (`base`: the accepted outline) appends its volumes to the outline as it is —
    never rewriting a line of it — and puts its settings in files of their own (named with `suffix`)."""
    if base:
        lines = [base.rstrip(), ""]
    else:
        lines = [
            f"# {_line(draft.title)} 大纲",
            "",
            f"全书主线：{_line(draft.main_line)}",
            "",
            f"结局：{_line(draft.ending)}",
            "",
        ]
    placed: set[str] = set()
    arcs = [(v, a) for v in draft.volumes for a in v.arcs]
    for v in draft.volumes:
        lines += [f"# {_range(unit, v.first_chapter, v.last_chapter)}：{_line(v.title)}", "", _line(v.summary), ""]
        for a in v.arcs:
            lines.append(f"## {_range(unit, a.first_chapter, a.last_chapter)}：{_line(a.title)}")
            lines += [f"- {_line(e)}" for e in a.events]
            lines.append(f"- 结果：{_line(a.result)}")
            last_arc = (v, a) == arcs[-1]
            for f in draft.foreshadows:
                inside = a.first_chapter <= f.planted_chapter <= a.last_chapter
                if f.id not in placed and (inside or last_arc):
                    placed.add(f.id)
                    end = f"收第{f.resolved_chapter}{unit}" if f.resolved_chapter is not None else "未收"
                    lines.append(f"- 伏笔 {_line(f.id)}：{_line(f.description)}，埋第{f.planted_chapter}{unit}，{end}")
            lines.append("")
    files = {outline_path: "\n".join(lines).rstrip() + "\n"}
    for setting in draft.settings:
        title = SETTING_FILES[setting.topic]
        path = f"plan/settings/{title}{suffix}.md"
        body = files.get(path, f"# {title}\n\n")
        files[path] = body + "".join(f"- {_line(e.name)}：{_line(e.text)}\n" for e in setting.entries)
    for card in draft.cards:
        name = _line(card.name).replace("/", "／")
        files[f"cards/{name}.yaml"] = _card_yaml(name, card.kind, list(card.aliases), card.description)
    return files


# ── checks ─────────────────────────────────────────────────────────────────────────────────────────────────


def _problem(code: str, message: str, where: str) -> LintProblem:
    return LintProblem(severity="error", code=code, message=message, where=where)


def _card_problems(book: Book, files: dict[str, str]) -> tuple[set[str], list[LintProblem]]:
    """The names the card drafts give, and what is wrong with them (invalid, or a name or file already taken)."""
    cards = load_cards(book)
    taken = {n for c in cards.cards.values() for n in (c.name, *c.aliases)}
    names: set[str] = set()
    problems: list[LintProblem] = []
    for path, text in files.items():
        if not path.startswith("cards/"):
            continue
        try:
            raw = yaml.safe_load(text)
            card = CardFile.model_validate(raw)
        except (yaml.YAMLError, ValidationError) as exc:
            problems.append(_problem("CARD_INVALID", f"not a valid card ({str(exc).splitlines()[0][:200]})", path))
            continue
        if card.id != Path(path).stem:
            problems.append(_problem("CARD_INVALID", f"its id {card.id!r} is not its file's name", path))
        names |= {card.name, *card.aliases}
        target = book.root / path
        if target.is_file() and target.read_bytes() == text.encode("utf-8"):
            continue  # this very card, already written (an accept killed before the rest): not a clash
        clash = sorted({card.name, *card.aliases} & taken)
        if clash or (book.root / path).exists():
            what = f"{'、'.join(clash)} already names a card" if clash else "the file exists"
            problems.append(_problem("CARD_EXISTS", f"{what}: a plan draft adds cards, it never replaces one", path))
        taken |= {card.name, *card.aliases}  # a second card draft of the same name clashes with this one
    return names, problems


def check_plan_files(book: Book, files: dict[str, str]) -> list[LintProblem]:
    """Every problem of a plan draft's files, as if they were written: the plan lint over the outline and the
    settings (the draft's and the book's others) with the card drafts counted as cards, and the card checks."""
    names, problems = _card_problems(book, files)
    outline_path = next(p for p in files if p in _OUTLINES)
    current = load_plan(book)
    settings = [PlanFile(p, sha256_hex(t), t) for p, t in files.items() if _SETTING.match(p)]
    settings += [f for f in current.settings if f.path not in files]
    plan = plan_of(PlanFile(outline_path, sha256_hex(files[outline_path]), files[outline_path]), settings)
    return problems + lint_plan_of(book, plan, extra_names=names).problems


# ── the request ────────────────────────────────────────────────────────────────────────────────────────────


def read_premise(value: str) -> str:
    """The premise `--premise` names: a file's text when it is a path to a file, else the text itself; refused when
    empty or longer than `MAX_PREMISE_CHARS`."""
    path = Path(value)
    text = value
    named = bool(value.strip()) and len(value) < 4096 and "\n" not in value  # may name a file
    if named and path.is_file():
        data = read_user_file(path, what="premise", kind="PLAN", max_bytes=4 * MAX_PREMISE_CHARS)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(
                "PLAN_PREMISE_INVALID", f"not UTF-8 (byte {exc.start})", str(path), "save the premise as UTF-8"
            ) from exc
    elif named and path.is_dir():
        raise InputError("PLAN_PREMISE_INVALID", "is a directory", value, "give the premise's file, or its text")
    text = text.strip()
    if not text or len(text) > MAX_PREMISE_CHARS:
        raise InputError(
            "PLAN_PREMISE_INVALID",
            "the premise is empty"
            if not text
            else f"the premise is {len(text)} characters (at most {MAX_PREMISE_CHARS})",
            "--premise",
            "give the genre, the protagonist, the hook, the target length and style notes, as text or a file",
        )
    return text


def check_chapters(chapters: int) -> None:
    """USAGE (exit 2) unless a plan draft's `--chapters` is 1–10000."""
    if not 1 <= chapters <= 10_000:
        raise InputError("USAGE", f"--chapters {chapters} is outside 1–10000", "--chapters", "e.g. 120")


def prepare_plan_draft(book: Book, premise: str, *, chapters: int) -> PreparedPlan:
    """The planner's request for a whole-book plan of `chapters` chapters from `premise` (see the module doc)."""
    check_chapters(chapters)
    plan = load_plan(book)
    outline_path = plan.outline.path if plan.outline is not None else _OUTLINES[0]
    written = book.chapter_paths()
    unit = heading_unit(book.read_chapter(n).heading for n in sorted(written)[:20] if n > 0) or "章"
    cards = load_cards(book)
    state = replay(book, cards=cards, upto=max(written, default=0))
    active = sorted(state.active_foreshadows(max(written, default=0)).items, key=lambda f: (not f.overdue, f.id))
    progress = f"已写到{chapter_label(unit, max(written))}" if written else ""
    check = _draft_check(book, unit, outline_path, 1, chapters, "")
    request = PlanRequest(
        task=f"写出全书规划草稿：{_range(unit, 1, chapters)}，共 {chapters} {unit}。",
        premise=premise,
        plan=plan.outline.text if plan.outline is not None else "",
        progress=progress,
        foreshadows=[f"{f.id}：{f.description}" for f in active],
        names=[f"{c.name}：{'、'.join(c.aliases) or '（无别名）'}" for c in sorted(cards.cards.values(), key=_by_id)],
        first_chapter=1,
        last_chapter=chapters,
        check=check,
    )
    return PreparedPlan(request, sha256_hex(premise), unit, outline_path)


def prepare_plan_extend(book: Book, *, chapters: int) -> PreparedPlan:
    """The planner's request for the plan's next part — `chapters` chapters after the last one the accepted plan
    covers — from the plan as it is and the memory as of the last written chapter: how far the book is written,
    what the last outlines say happened, the open foreshadows (overdue first). The accepted outline is kept as it
    is and the new volumes appended (`plan_files`); PLAN_MISSING without a plan to extend."""
    check_chapters(chapters)
    plan = load_plan(book)
    if plan.outline is None or not lint_plan_of(book, plan).volumes:
        raise InputError(
            "PLAN_MISSING",
            "the book has no plan to extend"
            if plan.outline is None
            else "the plan has no volume to extend (no heading names chapters)",
            plan.outline.path if plan.outline is not None else _OUTLINES[0],
            "draft the whole plan first (`muse plan draft --premise …`) or head its parts like `# 第1-30章：卷名`",
        )
    last_planned = max(s.own[1] for s in plan.sections if s.own is not None)
    base = (book.root / plan.outline.path).read_text(encoding="utf-8-sig")  # as written, comments and all
    first, last = last_planned + 1, last_planned + chapters
    whole = prepare_plan_draft(book, "", chapters=1)
    unit = whole.unit
    outlines = load_outlines(book)
    recent = [
        f"{chapter_label(unit, n)}《{o.title}》{o.goal}；钩子：{o.hook}" for n, o in sorted(outlines.items())[-5:]
    ]
    progress = "\n".join([whole.request.progress, *recent]).strip()
    request = dataclasses.replace(
        whole.request,
        task=f"续写规划：{_range(unit, first, last)}，共 {chapters} {unit}，接在已确认的规划之后（已有部分一字不改）。",
        premise="",
        progress=progress,
        first_chapter=first,
        last_chapter=last,
        check=_draft_check(book, unit, whole.outline_path, first, last, base),
    )
    return PreparedPlan(request, sha256_hex(base), unit, whole.outline_path, base=base)


def _by_id(card: Any) -> str:
    return str(card.id)


def _draft_check(book: Book, unit: str, outline_path: str, first: int, last: int, base: str) -> Any:
    suffix = f"（{_range(unit, first, last)}）" if base else ""

    def check(draft: PlanDraft) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        starts, ends = min(v.first_chapter for v in draft.volumes), max(v.last_chapter for v in draft.volumes)
        if (starts, ends) != (first, last):
            found.append(("PLAN_DRAFT_RANGE", f"the volumes cover {starts}–{ends}; they must cover {first}–{last}"))
        files = plan_files(draft, unit=unit, outline_path=outline_path, base=base, suffix=suffix)
        problems = check_plan_files(book, files)
        found += [(p.code, f"{p.where}: {p.message}") for p in problems if p.severity == "error"]
        return found

    return check


def plan_draft_call(prepared: PreparedPlan) -> TaskCall[PlanDraft]:
    """The planner's call (the caller — the plan stage, behind its entry guard — makes it)."""
    return DRAFT.render(prepared.request)


def plan_dry_run(prepared: PreparedPlan) -> PlanDraftDoc:
    """What a real plan draft would send (the rendered prompt); no model call, nothing written."""
    messages = [m.model_dump(mode="json") for m in plan_draft_call(prepared).messages]
    return PlanDraftDoc(
        status="dry_run",
        first_chapter=prepared.request.first_chapter,
        last_chapter=prepared.request.last_chapter,
        premise_sha256=prepared.premise_sha256,
        messages_sha256=sha256_json(messages),
        messages=messages,
    )


# ── the desk ───────────────────────────────────────────────────────────────────────────────────────────────


def _bases(book: Book, files: dict[str, str]) -> dict[str, str]:
    out = {}
    for path in files:
        target = book.root / path
        out[path] = sha256_hex(target.read_bytes()) if target.is_file() else ""
    return out


def store_plan_draft(
    book: Book,
    text: str,
    *,
    kind: str = "draft",
    revises: str | None = None,
    bases: dict[str, str] | None = None,
    premise_sha256: str | None = None,
    run_id: str | None = None,
    call_id: str | None = None,
) -> str:
    """Keep a plan draft (a copy under ``.muse/drafts/plans/`` + a row), bound to the files it would replace as they
    are now (or to `bases`, those its original was bound to); its id."""
    files = parse_bundle(text)
    sha = sha256_hex(text)
    path = drafts_dir(book) / "plans" / f"{sha[:12]}.md"
    if not (path.is_file() and sha256_hex(path.read_bytes()) == sha):
        atomic_write_text(path, text)
    base = {**_bases(book, files), **(bases or {})}
    draft_id = new_id("P")
    with transaction(book.db) as conn:
        conn.execute(
            "INSERT INTO plan_drafts (id, kind, revises_id, text, text_sha256, base_json, premise_sha256, run_id,"
            " call_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (draft_id, kind, revises, text, sha, json.dumps(base), premise_sha256, run_id, call_id, utc_now()),
        )
    return draft_id


def store_plan_draft_answer(
    book: Book, prepared: PreparedPlan, result: StructuredResult[PlanDraft], admission: dict[str, Any], run_id: str
) -> PlanDraftDoc:
    """Keep the planner's answer as a plan draft on the author's desk, its provenance in the bundle's header."""
    draft = result.value
    files = prepared.files(draft)
    receipts = "，".join(f"Gate {g} 回执 seq {s}" for g, s in sorted(admission.get("receipts", {}).items()))
    header = [
        (
            "规划续写草稿 — 大纲+设定智能体（muse plan extend）"
            if prepared.base
            else "全书规划草稿 — 大纲+设定智能体（muse plan draft）"
        )
        + "生成，尚未接受。",
        "这是作者案头的草稿：`muse drafts show` 审阅，`muse drafts accept` 接受",
        "（写入 plan/ 与 cards/，被替换的文件先留底），`muse drafts revise` 改后接受，`muse drafts reject` 退回。",
        f"前提 sha256 {prepared.premise_sha256[:12]}…；运行 {run_id}",
        f"{PLAN_ADMISSION}{receipts}（细纲配置 {str(admission.get('outliner_config_sha256', ''))[:12]}…；"
        f"规划模型 {admission.get('planner', '无')}）",
        *(f"给作者的说明：{n}" for n in draft.notes),
    ]
    text = bundle_text(files, header)
    draft_id = store_plan_draft(
        book, text, premise_sha256=prepared.premise_sha256, run_id=run_id, call_id=result.call_id
    )
    messages = [m.model_dump(mode="json") for m in plan_draft_call(prepared).messages]
    return PlanDraftDoc(
        status="drafted",
        first_chapter=prepared.request.first_chapter,
        last_chapter=prepared.request.last_chapter,
        premise_sha256=prepared.premise_sha256,
        messages_sha256=sha256_json(messages),
        draft_id=draft_id,
        short=short_id(draft_id),
        written_to=(drafts_dir(book) / "plans" / f"{sha256_hex(text)[:12]}.md").relative_to(book.root).as_posix(),
        files=list(files),
        replaces=[p for p in files if (book.root / p).exists()],
        notes=list(draft.notes),
        admission=admission,
        run_id=run_id,
        **call_figures(result),
    )


def plan_preflight(book: Book, text: str, bases: dict[str, str]) -> tuple[dict[str, str], list[StepOutcome]]:
    """The accept preflight of a plan draft: the bundle parses, passes the plan lint and the card checks, and no file
    it replaces changed since the draft was made (`bases`)."""
    try:
        files = parse_bundle(text)
    except InputError as exc:
        return {}, [StepOutcome.failed("bundle", exc.what)]
    steps = [StepOutcome.passed("bundle", f"{len(files)} file(s)")]
    # a file already holding the draft's bytes is not an edit (an accept killed after writing it, or the same change
    # made by hand): accepting again writes the rest
    now = _bases(book, files)
    changed = [p for p in files if now[p] not in (bases.get(p, ""), sha256_hex(files[p].encode("utf-8")))]
    if changed:
        steps.append(
            StepOutcome.failed(
                "file",
                f"{', '.join(changed)} changed since the draft was made: an accept never overwrites an edit it did "
                "not see — revise the draft against the files as they are (`muse drafts revise ID --from FILE`)",
            )
        )
    else:
        steps.append(StepOutcome.passed("file", "every file it replaces is as it was when drafted"))
    return files, steps + lint_steps(check_plan_files(book, files))


def revise_steps(book: Book, text: str) -> list[StepOutcome]:
    """The checks a revised plan bundle gets at once (the bundle parses, the plan lint and card checks)."""
    try:
        files = parse_bundle(text)
    except InputError as exc:
        return [StepOutcome.failed("bundle", exc.what)]
    return lint_steps(check_plan_files(book, files))


def plan_edit_chars(old: str, new: str) -> int:
    """The character edit distance between two bundles."""
    return edit_distance(old, new)
