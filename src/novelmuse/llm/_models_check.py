"""`muse models check`: validate the model configuration, then send one tiny structured call per role.

Configuration checks (no request is sent for a role whose configuration is wrong):

* every provider a role uses: its key variable is set (openai, anthropic, claude-cli: `MODEL_KEY_MISSING`),
  a claude-cli binary matches its pinned path and sha256 (`MODEL_CLI_PIN_MISMATCH`; the version is probed by
  the call itself), a scripted provider's script file exists (`MODEL_SCRIPT_MISSING`), an openai/anthropic
  `base_url` is an http(s) URL (`CONFIG_BASE_URL`);
* when the budget sets any limit, every role's model has a price (`MODEL_COST_UNKNOWN`: the call layer refuses
  unpriced models under a budget, so this would fail every call);
* providers no role uses are checked too, but their problems are warnings.

Then each configured role gets one logical call through the normal fail-closed policy (receipts, vault, budget,
bounded attempts), all roles concurrently. The schema is `{"ok": true, "echo": "muse-<role>"}` and its contract
requires exactly those values, so a role passes only when the endpoint returned a schema-valid object that
follows the instruction. Each role ends as exactly one of: `passed`; `error` with a code (a config problem or a
call that failed closed); `skipped` with the reason `no model configured` — never reported as ok.

Exit code: 2 when any configuration error was found, else 3 when any role's call failed closed, else 0.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel

from ..book import ROLE_NAMES, Book, ProviderConfig
from ..errors import EXIT_BAD_INPUT, EXIT_FAILED_CLOSED, EXIT_OK, MuseError
from ..text import sha256_hex
from ._policy import ModelCallFailed, Violation
from ._prices import PriceTable
from ._session import ModelSession
from ._types import Message, ProviderError

NO_MODEL = "no model configured"


class ConfigIssue(BaseModel):
    """One problem found in the model configuration (`severity` error → exit 2)."""

    code: str
    severity: Literal["error", "warning"]
    what: str
    where: str
    fix: str


class RoleCheck(BaseModel):
    """How one role's check ended: passed, error(code) or skipped(reason)."""

    role: str
    provider: str | None
    kind: str | None
    model: str | None
    outcome: Literal["passed", "error", "skipped"]
    code: str | None = None
    reason: str | None = None
    hint: str | None = None  # what to change, when the failure points at the configuration
    attempts: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost: float | None = None
    latency_ms: int | None = None
    call_id: str | None = None


class ModelsCheckReport(BaseModel):
    """The whole `muse models check --json` document."""

    status: Literal["passed", "error", "skipped"]  # skipped: no role has a model configured
    exit_code: int
    run_id: str | None
    issues: list[ConfigIssue]
    roles: list[RoleCheck]


class CheckReply(BaseModel):
    """The tiny structured output every role is asked for."""

    ok: bool
    echo: str


def expected_echo(role: str) -> str:
    """What a role's check must echo back (deterministic, so scripted providers can answer it)."""
    return f"muse-{role}"


def _prompt() -> tuple[str, str]:
    text = (resources.files("novelmuse.llm") / "data" / "models_check.txt").read_text(encoding="utf-8")
    body = "\n".join(line for line in text.splitlines() if not line.startswith("# version:"))
    return body, sha256_hex(text)


def _contract(role: str) -> list[Callable[[CheckReply], list[Violation]]]:
    echo = expected_echo(role)

    def check(reply: CheckReply) -> list[Violation]:
        found: list[Violation] = []
        if reply.ok is not True:
            found.append(Violation("CHECK_NOT_OK", 'the field "ok" must be true'))
        if reply.echo != echo:
            found.append(Violation("CHECK_ECHO_MISMATCH", f'the field "echo" must be exactly "{echo}"'))
        return found

    return [check]


def _provider_issues(name: str, config: ProviderConfig, book_root: Path) -> list[tuple[str, str, str]]:
    """(code, what, fix) for one provider's static configuration."""
    found: list[tuple[str, str, str]] = []
    key_env = config.api_key_env if config.kind in ("openai", "anthropic", "claude-cli") else None
    if key_env and not os.environ.get(key_env, "").strip():
        found.append(
            (
                "MODEL_KEY_MISSING",
                f"the environment variable {key_env} is not set",
                f"export {key_env}=… (keys only ever come from the environment)",
            )
        )
    if config.kind in ("openai", "anthropic"):
        if config.base_url is not None:
            url = urlparse(config.base_url)
            if url.scheme not in ("http", "https") or not url.netloc:
                found.append(("CONFIG_BASE_URL", f"base_url {config.base_url!r} is not an http(s) URL", "fix it"))
    elif config.kind == "claude-cli":
        from ._provider_cli import check_pin_path

        try:
            check_pin_path(config)
        except ProviderError as exc:
            found.append((exc.code, str(exc), "pin the path, sha256 and version of the installed claude binary"))
    elif config.kind == "scripted":
        script = Path(config.script)
        if not (script if script.is_absolute() else book_root / script).is_file():
            found.append(("MODEL_SCRIPT_MISSING", f"script file {config.script!r} not found", "create it"))
    return found


def validate_model_config(book: Book) -> list[ConfigIssue]:
    """Static checks of providers, roles, keys, pins and prices (see the module docstring)."""
    cfg = book.config
    issues: list[ConfigIssue] = []
    used = {t[0] for role in ROLE_NAMES if (t := cfg.role_target(role)) is not None}
    for name, pconfig in sorted(cfg.providers.items()):
        severity: Literal["error", "warning"] = "error" if name in used else "warning"
        for code, what, fix in _provider_issues(name, pconfig, book.root):
            what = what + ("" if name in used else " (no role uses this provider)")
            issues.append(ConfigIssue(code=code, severity=severity, what=what, where=f"[providers.{name}]", fix=fix))
    budget = cfg.budget
    if any(v is not None for v in (budget.max_cost, budget.max_tokens, budget.deadline_s)):
        prices = PriceTable.load(cfg.prices)
        models = sorted({t[1] for role in ROLE_NAMES if (t := cfg.role_target(role)) is not None})
        for model in models:
            if prices.price(model) is None:
                issues.append(
                    ConfigIssue(
                        code="MODEL_COST_UNKNOWN",
                        severity="error",
                        what=f"model {model!r} has no price while [budget] sets a limit",
                        where=f'[prices."{model}"]',
                        fix=f'add [prices."{model}"] input = …, output = … (per million tokens)',
                    )
                )
    return issues


def _role_issue(book: Book, role: str, issues: list[ConfigIssue]) -> ConfigIssue | None:
    target = book.config.role_target(role)
    if target is None:
        return None
    provider, model = target
    for issue in issues:
        if issue.severity == "error" and issue.where in (f"[providers.{provider}]", f'[prices."{model}"]'):
            return issue
    return None


def failure_hint(exc: ModelCallFailed, config: ProviderConfig) -> str | None:
    """A concrete next step for failures that usually mean a configuration mistake."""
    if exc.code == "MODEL_MISMATCH":
        resolved = next((r.resolved_model for r in reversed(exc.receipts) if r.resolved_model), None)
        if resolved:
            return (
                f"the endpoint answered as model {resolved!r}: roles need the full model id the endpoint reports; "
                f"use {resolved!r} if that is the model you mean"
            )
    if exc.code == "MODEL_INVALID_REQUEST" and config.kind == "openai" and config.structured == "json_schema":
        return 'if this endpoint has no json_schema structured output (e.g. DeepSeek), set structured = "json_object"'
    if exc.code == "MODEL_INVALID_REQUEST" and config.kind == "anthropic" and config.structured == "output_format":
        return 'if this Anthropic-compatible endpoint has no structured outputs, set structured = "tool"'
    if exc.code in ("MODEL_AUTH", "MODEL_PERMISSION") and config.kind in ("openai", "anthropic"):
        return f"check the key in ${config.api_key_env} and that it may use this model"
    if exc.code == "MODEL_USAGE_MISSING":
        return "the endpoint reports no token usage, so the cost cannot be accounted; novelmuse will not use it"
    return None


async def _check_role(session: ModelSession, role: str) -> RoleCheck:
    provider, model = session.target(role) or ("", "")
    kind = session.book.config.providers[provider].kind
    body, sha = _prompt()
    text = Template(body).substitute(role=role, echo=expected_echo(role))
    start = time.monotonic()

    def ended(**fields: Any) -> RoleCheck:
        return RoleCheck(role=role, provider=provider, kind=kind, model=model, **fields)

    try:
        result = await session.call(
            role,
            CheckReply,
            [Message(role="user", content=text)],
            contracts=_contract(role),
            prompt_sha256=sha,
            max_output_tokens=64,
            schema_name="models_check",
        )
    except ModelCallFailed as exc:
        return ended(
            outcome="error",
            code=exc.code,
            reason=exc.what,
            hint=failure_hint(exc, session.book.config.providers[provider]),
            attempts=len(exc.receipts),
            latency_ms=round((time.monotonic() - start) * 1000),
            call_id=exc.call_id or None,
        )
    except MuseError as exc:
        return ended(outcome="error", code=exc.code, reason=exc.what)
    return ended(
        outcome="passed",
        attempts=result.attempts,
        input_tokens=result.input_tokens,
        output_tokens=result.output_tokens,
        cost=result.cost,
        latency_ms=round((time.monotonic() - start) * 1000),
        call_id=result.call_id,
    )


async def check_models(book: Book) -> ModelsCheckReport:
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
        issue = _role_issue(book, role, issues)
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
        async with ModelSession.open(book, run_kind="models-check") as session:
            run_id = session.run_id
            for check in await asyncio.gather(*(_check_role(session, role) for role in to_call)):
                roles[check.role] = check
    ordered = [roles[r] for r in ROLE_NAMES]
    if any(i.severity == "error" for i in issues):
        exit_code = EXIT_BAD_INPUT
    elif any(r.outcome == "error" for r in ordered):
        exit_code = EXIT_FAILED_CLOSED
    else:
        exit_code = EXIT_OK
    if exit_code != EXIT_OK:
        status: Literal["passed", "error", "skipped"] = "error"
    elif any(r.outcome == "passed" for r in ordered):
        status = "passed"
    else:
        status = "skipped"
    return ModelsCheckReport(status=status, exit_code=exit_code, run_id=run_id, issues=issues, roles=ordered)
