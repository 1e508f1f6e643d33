"""`muse rules normalize`: the model reads the rules.txt lines the parser left `unparsed` and proposes rules.

Seed 004's two layers: the deterministic parser takes every well-formed line; the lines it could not
read go to the `normalizer` role, whose proposals are checked by a contract (every phrase verbatim in
its line, every rule parseable, every line answered once) inside the call's bound, then fail closed.

Proposals are only shown unless the author passes `--write`. Writing never loses the author's text:
each normalised line is kept as a `# ` comment directly above the rules that replace it; lines the
model found no rule in stay untouched. The new file must not introduce parser errors (a contradiction
with an existing rule refuses the write: RULES_NORMALIZE_CONFLICT), rules already present are not
written twice, and the write is atomic and refused when rules.txt changed since it was read
(FILE_CHANGED_ON_DISK). With no model configured the step is skipped(no model configured) and nothing
is written.

`--write` confirms what was shown: the proposals of the last run without --write are kept in
`.muse/rules-normalize.json`, bound to rules.txt's sha256, the prompt's sha256 and the role's model; while all
three are unchanged, --write applies exactly those proposals without a new model call (a model asked again may
answer differently from what the author reviewed). Otherwise --write calls the model and writes its (checked)
answer, which the report shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ValidationError

from ...book import Book, atomic_write_bytes, read_user_file
from ...errors import InputError
from ...limits import MAX_RULES_BYTES
from ...llm import ModelSession, StructuredResult
from ...rules import RuleSet, UnparsedLine, decode_rules, parse_rules
from ...text import sha256_hex
from ._contract import render_rule
from ._tasks import NORMALIZE, NormalizeRequest
from .schema import NormalizerOutput, ProposedRule, RuleKind

ROLE = "normalizer"
ORIGINAL_MARK = "# 归一化前原文: "
#: The comment a line the model found no rule in becomes on --write (the author confirmed it is not a rule).
NOT_A_RULE_MARK = "# 归一化前原文(不是规则): "
_BOM = "\ufeff"
PENDING_FILE = "rules-normalize.json"


class RuleOut(BaseModel):
    """One proposed rule as shown and written: its rendered line, and whether rules.txt already has it."""

    kind: RuleKind
    phrase: str
    limit: int | None
    rendered: str
    already_present: bool


class LineOut(BaseModel):
    """One unparsed line and what the model proposes for it (no rules: the line stays as it is)."""

    line: int
    original: str
    rules: list[RuleOut]
    note: str


class NormalizeReport(BaseModel):
    """The JSON document of `muse rules normalize --json`.

    `status` is "passed" (the model answered and the contract held) or "skipped" with `skip_reason`
    ("no model configured", "no rules.txt", "no unparsed lines"); a failed call is an error document
    (exit 3) instead. `written` says whether rules.txt was changed (only with --write).
    """

    status: Literal["passed", "skipped"]
    skip_reason: str | None = None
    rules_path: str
    rules_sha256: str | None = None
    unparsed_lines: int = 0
    proposals: list[LineOut] = []
    write_requested: bool = False
    written: bool = False
    written_rules: int = 0
    new_rules_sha256: str | None = None
    call_id: str | None = None
    shown_earlier: bool = False  # --write applied the proposals an earlier run showed (no new model call)
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None


class _Pending(BaseModel):
    """The proposals last shown, and what they are bound to (`.muse/rules-normalize.json`)."""

    version: Literal[1] = 1
    rules_sha256: str
    prompt_sha256: str
    target: str
    call_id: str
    proposals: list[LineOut]


def _load_pending(book: Book) -> _Pending | None:
    """The proposals last shown; an unreadable or foreign file counts as none (the model is asked again)."""
    try:
        return _Pending.model_validate_json(book.state_dir.joinpath(PENDING_FILE).read_bytes())
    except (OSError, ValidationError):
        return None


async def normalize_rules(
    session: ModelSession, unparsed: Sequence[UnparsedLine]
) -> StructuredResult[NormalizerOutput]:
    """Ask the normalizer about `unparsed` lines; the result holds the contract-checked output and receipts.

    Raises `ModelCallFailed` (fail closed) when no valid proposal came within the call's bound.
    """
    return await session.call(NORMALIZE.render(NormalizeRequest(unparsed)))


def _present(rules: RuleSet, rule: ProposedRule) -> bool:
    if rule.kind == "forbidden":
        return any(r.phrase == rule.phrase for r in rules.forbidden)
    if rule.kind == "fatigue":
        return any(r.phrase == rule.phrase and r.limit == rule.limit for r in rules.fatigue)
    return any(p.text == rule.phrase for p in rules.preferences)


def _lines_out(output: NormalizerOutput, unparsed: Sequence[UnparsedLine], existing: RuleSet) -> list[LineOut]:
    by_line = {p.line: p for p in output.proposals}
    out: list[LineOut] = []
    for u in unparsed:
        proposal = by_line[u.line]  # the contract guarantees every line is answered exactly once
        seen: set[str] = set()
        rules: list[RuleOut] = []
        for rule in proposal.rules:
            rendered = render_rule(rule)
            if rendered in seen:
                continue
            seen.add(rendered)
            rules.append(
                RuleOut(
                    kind=rule.kind,
                    phrase=rule.phrase,
                    limit=rule.limit,
                    rendered=rendered,
                    already_present=_present(existing, rule),
                )
            )
        out.append(LineOut(line=u.line, original=u.text, rules=rules, note=proposal.note))
    return out


def apply_proposals(text: str, proposals: Sequence[LineOut]) -> tuple[str, list[int]]:
    """rules.txt's new text: every normalised line commented out, with its new rules right below it.

    Returns the text and the (1-based) numbers of the inserted rule lines. Lines are split on ``\\n``
    exactly as the parser numbers them; a line ending in ``\\r`` keeps CRLF for the lines inserted
    after it. Rules already present are not written again (their line is still commented out: what it asks is
    enforced); a line the model found no rule in becomes a `NOT_A_RULE_MARK` comment — the author confirmed the
    proposal with --write — so no line is left parsing as no rule (`muse check` is then complete).
    """
    by_line = {p.line: p for p in proposals}
    out: list[str] = []
    inserted: list[int] = []
    for n, raw in enumerate(text.split("\n"), start=1):
        proposal = by_line.get(n)
        if proposal is None:
            out.append(raw)
            continue
        cr = "\r" if raw.endswith("\r") else ""
        mark = ORIGINAL_MARK if proposal.rules else NOT_A_RULE_MARK
        out.append(f"{mark}{raw.removesuffix(cr)}{cr}")
        for rule in (r.rendered for r in proposal.rules if not r.already_present):
            out.append(f"{rule}{cr}")
            inserted.append(len(out))
    return "\n".join(out), inserted


async def run_normalize(book: Book, session: ModelSession, *, write: bool) -> NormalizeReport:
    """The whole `muse rules normalize [--write]` step for a book, in the entry point's model session (its run
    starts only when the model is asked) — see the module docstring."""
    path = book.rules_path
    report = NormalizeReport(status="skipped", rules_path=str(path), write_requested=write)
    data = read_user_file(path, what="rules file", kind="RULES", max_bytes=MAX_RULES_BYTES, missing_ok=True)
    if data is None:
        return report.model_copy(update={"skip_reason": "no rules.txt"})
    text = decode_rules(data, str(path))
    sha = sha256_hex(data)
    rules = parse_rules(text)
    report = report.model_copy(update={"rules_sha256": sha, "unparsed_lines": len(rules.unparsed)})
    if not rules.unparsed:
        return report.model_copy(update={"skip_reason": "no unparsed lines"})
    target = book.config.role_target(ROLE)
    if target is None:
        return report.model_copy(update={"skip_reason": "no model configured"})
    binding = {"rules_sha256": sha, "prompt_sha256": NORMALIZE.ref.prompt_sha256, "target": ":".join(target)}
    pending = _load_pending(book) if write else None
    if pending is not None and pending.model_dump(include=set(binding)) == binding:
        proposals = pending.proposals  # what the author reviewed: applied as shown, no new call
        report = report.model_copy(
            update={"status": "passed", "proposals": proposals, "call_id": pending.call_id, "shown_earlier": True}
        )
    else:
        result = await normalize_rules(session, rules.unparsed)
        proposals = _lines_out(result.value, rules.unparsed, rules)
        report = report.model_copy(
            update={
                "status": "passed",
                "proposals": proposals,
                "call_id": result.call_id,
                "attempts": len(result.receipts),
                "input_tokens": result.input_tokens,
                "output_tokens": result.output_tokens,
                "cost": result.cost,
            }
        )
    pending_path = book.state_dir / PENDING_FILE
    if not write:
        shown = _Pending.model_validate({**binding, "call_id": report.call_id, "proposals": proposals})
        atomic_write_bytes(pending_path, shown.model_dump_json(indent=1).encode("utf-8"))
        return report
    new_text, inserted = apply_proposals(text, proposals)
    if new_text == text:
        pending_path.unlink(missing_ok=True)
        return report
    touched = set(inserted)
    introduced = [e for e in parse_rules(new_text).errors if touched & set(e.lines)]
    if introduced:
        raise InputError(
            "RULES_NORMALIZE_CONFLICT",
            f"the proposed rules would add {len(introduced)} error(s) to rules.txt: {introduced[0].message}",
            str(path),
            "nothing was written; edit rules.txt by hand, or resolve the conflict and rerun",
        )
    out = (_BOM if data.startswith(_BOM.encode()) else "") + new_text
    book.replace_file(  # the rules.txt it replaces is kept (`muse revisions`)
        path, out.encode("utf-8"), expect_sha256=sha, kind="rules", command="muse rules normalize --write"
    )
    pending_path.unlink(missing_ok=True)
    return report.model_copy(
        update={"written": True, "written_rules": len(inserted), "new_rules_sha256": sha256_hex(out.encode("utf-8"))}
    )
