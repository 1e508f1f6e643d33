"""`muse models check`: validate the model configuration, then probe every configured role with one tiny call.

No request is sent for a role whose configuration is wrong (`llm.validate_model_config`). The other configured
roles each get one logical call of their `models_check` task through the normal fail-closed policy (receipts,
vault, budget, bounded attempts), all concurrently, in the session the caller opened (its run starts only
when a role is probed).

Outcome (`ModelsCheckReport.outcome_of`): bad_input when any configuration error was found, else failed_closed
when any role's call failed closed, else ok (not_evaluated when no role was probed).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Literal

from ...book import ROLE_NAMES, Book
from ...errors import FailedClosed, Outcome, exit_code
from ...llm import (
    NO_MODEL,
    ModelCallFailed,
    ModelsCheckReport,
    ModelSession,
    RoleCheck,
    failure_hint,
    role_config_issue,
    sandbox_issues,
    validate_model_config,
)
from ._tasks import ProbeRequest, models_check


async def _check_role(session: ModelSession, role: str) -> RoleCheck:
    provider, model = session.target(role) or ("", "")
    kind = session.book.config.providers[provider].kind
    start = time.monotonic()

    def ended(**fields: Any) -> RoleCheck:
        return RoleCheck(role=role, provider=provider, kind=kind, model=model, **fields)

    try:
        result = await session.call(models_check(role).render(ProbeRequest(role)))
    except ModelCallFailed as exc:
        return ended(
            outcome="error",
            code=exc.code,
            reason=exc.what,
            hint=failure_hint(exc, session.book.config.providers[provider]),
            attempts=len(exc.receipts),
            latency_ms=round((time.monotonic() - start) * 1000),
            call_id=exc.call_id or None,
            sandbox=exc.receipts[-1].sandbox if exc.receipts else None,
        )
    except FailedClosed as exc:  # the vault or the store refused; bad input (a broken script) ends the command: exit 2
        return ended(outcome="error", code=exc.code, reason=exc.what)
    return ended(
        outcome="passed",
        attempts=result.attempts,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        cost=result.cost,
        latency_ms=round((time.monotonic() - start) * 1000),
        call_id=result.call_id,
        sandbox=result.final_receipt.sandbox,
    )


async def check_models(book: Book, session: ModelSession) -> ModelsCheckReport:
    """Validate the model configuration and check every configured role with one tiny call."""
    issues = validate_model_config(book)
    roles: dict[str, RoleCheck] = {}
    to_call: list[str] = []
    for role in ROLE_NAMES:
        target = book.config.role_target(role)
        if target is None:
            roles[role] = RoleCheck(role=role, provider=None, kind=None, model=None, outcome="skipped", reason=NO_MODEL)
            continue
        provider, model = target
        kind = book.config.providers[provider].kind
        issue = role_config_issue(book, role, issues)
        if issue is not None:
            roles[role] = RoleCheck(
                role=role,
                provider=provider,
                kind=kind,
                model=model,
                outcome="error",
                code=issue.code,
                reason=issue.what,
            )
        else:
            to_call.append(role)
    run_id: str | None = None
    if to_call:
        run_id = session.start().run_id
        for check in await asyncio.gather(*(_check_role(session, role) for role in to_call)):
            roles[check.role] = check
    ordered = [roles[r] for r in ROLE_NAMES]
    issues += sandbox_issues(ordered)
    outcome = ModelsCheckReport.outcome_of(issues, ordered)
    status: dict[Outcome, Literal["passed", "error", "skipped"]] = {"ok": "passed", "not_evaluated": "skipped"}
    return ModelsCheckReport(
        status=status.get(outcome, "error"), exit_code=exit_code(outcome), run_id=run_id, issues=issues, roles=ordered
    )
