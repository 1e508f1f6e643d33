"""`muse models check`'s model-layer part: the configuration checks, each role's outcome, the report document.

The probe itself (one tiny structured call per configured role) is the `common` role's task and the check is
run by `roles.common.check_models`. Configuration checks (no request is sent for a role whose configuration
is wrong):

* every provider a role uses: its key variable is set (openai, anthropic, claude-cli: `MODEL_KEY_MISSING`),
  a claude-cli binary matches its pinned path and sha256 (`MODEL_CLI_PIN_MISMATCH`; the version is probed by
  the call itself), a scripted provider's script file reads and validates (`SCRIPT_READ`, `SCRIPT_INVALID`),
  an openai/anthropic `base_url` is an http(s) URL (`CONFIG_BASE_URL`);
* when the budget sets any limit, every role's model has a price (`MODEL_COST_UNKNOWN`: the call layer refuses
  unpriced models under a budget, so this would fail every call);
* providers no role uses are checked too, but their problems are warnings.

Each role ends as exactly one of: `passed`; `error` with a code (a config problem or a call that failed
closed); `skipped` with the reason `no model configured` — never reported as ok.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel

from ..book import (
    ROLE_NAMES,
    AnthropicProviderConfig,
    Book,
    OpenAIProviderConfig,
    ProviderConfig,
    ScriptedProviderConfig,
)
from ..errors import InputError, Outcome
from ._policy import ModelCallFailed
from ._prices import PriceTable
from ._types import ProviderError

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
    sandbox: str | None = None  # claude-cli: where the probe's process ran (bwrap / sandbox-exec / none)


class ModelsCheckReport(BaseModel):
    """The whole `muse models check --json` document."""

    status: Literal["passed", "error", "skipped"]  # skipped: no role has a model configured
    exit_code: int
    run_id: str | None
    issues: list[ConfigIssue]
    roles: list[RoleCheck]

    @staticmethod
    def outcome_of(issues: list[ConfigIssue], roles: list[RoleCheck]) -> Outcome:
        """bad_input: a configuration error; failed_closed: a role's call failed closed; ok when a role passed;
        not_evaluated when none was probed (no role has a model)."""
        if any(i.severity == "error" for i in issues):
            return "bad_input"
        if any(r.outcome == "error" for r in roles):
            return "failed_closed"
        return "ok" if any(r.outcome == "passed" for r in roles) else "not_evaluated"

    @property
    def outcome(self) -> Outcome:
        """How the check ended (see `outcome_of`)."""
        return self.outcome_of(self.issues, self.roles)


def sandbox_issues(roles: list[RoleCheck]) -> list[ConfigIssue]:
    """A warning per claude-cli provider whose probe ran with no sandbox: said plainly, never implied."""
    unconfined = dict.fromkeys(
        r.provider for r in roles if r.kind == "claude-cli" and r.sandbox == "none" and r.provider
    )
    return [
        ConfigIssue(
            code="MODEL_SANDBOX_NONE",
            severity="warning",
            what="the Claude CLI ran with no sandbox (sandbox: none, allow_unsandboxed = true): its process can read "
            "and write what your user can, outside its directory",
            where=f"[providers.{name}]",
            fix="install bubblewrap (Linux) or run on macOS (sandbox-exec), and remove allow_unsandboxed = true",
        )
        for name in unconfined
    ]


def _provider_issues(name: str, config: ProviderConfig, book_root: Path) -> list[tuple[str, str, str]]:
    """(code, what, fix) for one provider's static configuration."""
    found: list[tuple[str, str, str]] = []
    key_env = config.api_key_env if not isinstance(config, ScriptedProviderConfig) else None
    local = isinstance(config, OpenAIProviderConfig) and config.key_optional
    if key_env and not local and not os.environ.get(key_env, "").strip():
        found.append(
            (
                "MODEL_KEY_MISSING",
                f"the environment variable {key_env} is not set",
                f"export {key_env}=… (keys only ever come from the environment)",
            )
        )
    if isinstance(config, OpenAIProviderConfig | AnthropicProviderConfig):
        if config.base_url is not None:
            url = urlparse(config.base_url)
            if url.scheme not in ("http", "https") or not url.netloc:
                found.append(("CONFIG_BASE_URL", f"base_url {config.base_url!r} is not an http(s) URL", "fix it"))
            elif isinstance(config, OpenAIProviderConfig) and not url.path.rstrip("/").endswith("/v1"):
                found.append(
                    (
                        "CONFIG_BASE_URL",
                        f"base_url {config.base_url!r} does not end in /v1, where OpenAI-compatible servers answer "
                        "(Ollama's own API is /api; its OpenAI one is /v1)",
                        f"use {url.scheme}://{url.netloc}/v1 unless your server says otherwise",
                    )
                )
    elif config.kind == "claude-cli":
        from ._provider_cli import check_pin_path

        try:
            check_pin_path(config)
        except ProviderError as exc:
            found.append((exc.code, str(exc), "pin the path, sha256 and version of the installed claude binary"))
    elif config.kind == "scripted":
        from ._provider_scripted import load_script

        script = Path(config.script)
        try:  # read and validated as the provider will: the same SCRIPT_READ / SCRIPT_INVALID as every command
            load_script(script if script.is_absolute() else book_root / script)
        except InputError as exc:
            found.append((exc.code, exc.what, exc.fix))
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


def role_config_issue(book: Book, role: str, issues: list[ConfigIssue]) -> ConfigIssue | None:
    """The first configuration error that concerns `role` (its provider or its model's price): no call is sent."""
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
