"""book.toml: the typed configuration of a book project (and of the user-level config file).

Every table is a pydantic model in strict mode with unknown keys rejected (issue 18 item 4): a typo is an error
naming the key instead of a setting silently ignored, and a value of the wrong TOML type is an error instead of
a coercion — `true` is not 1, ``"3000"`` is not 3000, ``"yes"`` is not a boolean, 6000.0 is not an integer (an
integer is accepted where a decimal is expected). Numbers are finite (no ``inf``/``nan``) and bounded; the
seeds' caps (3 requests per logical call, one repair and one re-review, 3 plants per chapter) may be lowered,
never raised. Names that become environment variables and URLs have their shape checked here, not at the first
request. Secrets never live here: a provider names the environment variable that holds its key
(`api_key_env`).
"""

from __future__ import annotations

import os
import tomllib
from difflib import get_close_matches
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import InputError
from ..limits import MAX_CHAPTER_NUMBER, MAX_CONFIG_BYTES
from ._userfile import parsing_user_file, read_user_file

ROLE_NAMES = (
    "writer",
    "reviewer",
    "editor",
    "arbiter",
    "extractor",
    "normalizer",
    "detector",
    "judge",
    "outliner",
    "planner",
)

#: The seeds' bounds (non-negotiable 4: a configuration may lower them, never raise them).
MAX_ATTEMPTS_CAP = 3  # seed 000/003: at most 3 calls per logical call
MAX_REPAIR_ROUNDS = 1  # seed 004: 一轮修复一次复审
MAX_PLANTS_CAP = 3  # seed 004: 每章 plant ≤ 3
MAX_TOKENS_CAP = 10**12  # token counts and budgets: far above any real run, far below SQLite's int64
MAX_SECONDS = 7 * 24 * 3600.0  # timeouts and deadlines: a week


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=128)]


def _parsable_url(value: str) -> str:
    """An http(s) URL that parses whole — host and port included (``http://[::1`` is refused here, not when the
    first request is built)."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 — reading it validates it (a port that is not a number, or out of range)
    except ValueError as exc:
        raise ValueError(f"not a URL that can be used ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http:// or https:// URL with a host")
    return value


HttpUrl = Annotated[str, Field(pattern=r"^https?://[^\s/?#]+\S*$", max_length=2048), AfterValidator(_parsable_url)]
#: The CLI's path must be absolute and resolved: the provider checks that when it pins the file (fail closed).
PathText = Annotated[str, Field(min_length=1, max_length=4096)]
Seconds = Annotated[float, Field(gt=0, le=MAX_SECONDS)]
Tokens = Annotated[int, Field(ge=0, le=MAX_TOKENS_CAP)]
#: Per million tokens; a price above a million per million tokens is a typo, not a price.
PerMillion = Annotated[float, Field(ge=0, le=1_000_000)]
#: A model's context window: tokens one request may hold (input + output).
ContextTokens = Annotated[int, Field(ge=1, le=100_000_000)]
_PROVIDER_NAME = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,63}$"


class BookMeta(_Strict):
    """[book]: what the book is called and who wrote it (the report, `muse status` and exports show it)."""

    title: str = Field(default="untitled", description="The book's title: the report's heading, the EPUB's title.")
    language: str = Field(
        default="zh",
        pattern=r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$",
        description="A language tag (`zh`, `zh-Hans`, `zh-TW`): the EPUB's language.",
    )
    author: str = Field(default="", description="The author's name, written into exports.")


class ChapterLimits(_Strict):
    """Chapter length limits, in characters excluding whitespace (`text.count_chars`)."""

    min_chars: int | None = Field(
        default=None,
        ge=0,
        le=10_000_000,
        description="A chapter shorter than this is an error finding of `muse check`; unset: not checked "
        "(the length check says skipped, never passed).",
    )
    max_chars: int | None = Field(
        default=None,
        ge=1,
        le=10_000_000,
        description="A chapter longer than this is an error finding; `muse review` refuses to send it "
        "(CHAPTER_TOO_LONG). Unset: not checked.",
    )

    @model_validator(mode="after")
    def _ordered(self) -> ChapterLimits:
        if self.min_chars is not None and self.max_chars is not None and self.min_chars > self.max_chars:
            raise ValueError(f"min_chars ({self.min_chars}) is greater than max_chars ({self.max_chars})")
        return self


class _ProviderBase(_Strict):
    timeout_s: Seconds = Field(
        default=120.0, description="Seconds one request may take before it fails (MODEL_TIMEOUT)."
    )
    max_concurrency: int = Field(
        default=4, ge=1, le=256, description="Requests this provider has in flight at once (replay runs many)."
    )


#: How an HTTP provider's requests travel: through the official SDK, or the thin client of llm/_http_direct.py
#: (same parameters, parsing and failure classes; for many concurrent calls: issue 17 item 5).
Transport = Literal["sdk", "http"]


#: Local servers speaking the OpenAI API, and where each listens by default (`kind = "ollama"` and no base_url).
LOCAL_PRESETS: dict[str, str] = {
    "ollama": "http://127.0.0.1:11434/v1",
    "lmstudio": "http://127.0.0.1:1234/v1",
    "llamacpp": "http://127.0.0.1:8080/v1",
    "vllm": "http://127.0.0.1:8000/v1",
}
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def is_loopback(url: str | None) -> bool:
    """Whether `url` names this machine (a local model server: no key is needed, none leaves the machine)."""
    host = urlsplit(url).hostname if url else None
    return host is not None and (host in LOOPBACK_HOSTS or host.startswith("127."))


class OpenAIProviderConfig(_ProviderBase):
    """Any OpenAI-compatible endpoint through the official openai SDK (or `transport = "http"`); the presets
    (ollama, lmstudio, llamacpp, vllm) are the same with their local default URL."""

    kind: Literal["openai", "ollama", "lmstudio", "llamacpp", "vllm"]
    base_url: HttpUrl | None = Field(
        default=None,
        description="The endpoint, e.g. `https://api.deepseek.com/v1`; unset: OpenAI's own, or the preset's local "
        "default (ollama http://127.0.0.1:11434/v1, lmstudio :1234/v1, llamacpp :8080/v1, vllm :8000/v1).",
    )
    api_key_env: EnvName = Field(
        default="OPENAI_API_KEY",
        description="The environment variable holding the API key (the key itself is never here). Left out for a "
        "server on this machine (127.0.0.1, localhost), no key is needed; named, it is required.",
    )
    structured: Literal["json_schema", "json_object"] = Field(
        default="json_schema",
        description="How structured output is asked for: `json_object` for endpoints without `json_schema`.",
    )
    transport: Transport = Field(
        default="sdk",
        description="`sdk`: the official SDK; `http`: a thin HTTP/1.1 client with the same requests and failure "
        "classes, cheaper per request for many concurrent calls (it does not use proxies).",
    )

    @model_validator(mode="before")
    @classmethod
    def _preset_url(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("kind") in LOCAL_PRESETS and data.get("base_url") is None:
            return {**data, "base_url": LOCAL_PRESETS[data["kind"]]}
        return data

    @property
    def key_optional(self) -> bool:
        """A server on this machine needs no key unless the book names one: with `api_key_env` left out, an unset
        OPENAI_API_KEY is then no error (a server started with a key: name its variable, and it is required)."""
        return is_loopback(self.base_url) and "api_key_env" not in self.model_fields_set


class AnthropicProviderConfig(_ProviderBase):
    """Anthropic's Messages API (or a compatible gateway) through the official anthropic SDK."""

    kind: Literal["anthropic"]
    base_url: HttpUrl | None = Field(default=None, description="The endpoint; unset: Anthropic's own.")
    api_key_env: EnvName = Field(
        default="ANTHROPIC_API_KEY",
        description="The environment variable holding the API key (the key itself is never here).",
    )
    max_tokens: int = Field(default=8192, ge=1, le=1_000_000, description="The output cap of one request.")
    structured: Literal["output_format", "tool"] = Field(
        default="output_format",
        description="How structured output is asked for: `tool` (one forced tool call carrying the schema) for "
        "Anthropic-compatible gateways without structured outputs; refused for the writer and the detector.",
    )
    transport: Transport = Field(default="sdk", description="`sdk` or `http`, as for `openai`.")


class ClaudeCliProviderConfig(_ProviderBase):
    """The isolated Claude CLI subprocess (seed 003): pinned path, sha256 and version."""

    kind: Literal["claude-cli"]
    path: PathText = Field(description="The CLI binary: an absolute, resolved path (no symbolic link).")
    sha256: str = Field(pattern=r"^[0-9a-fA-F]{64}$", description="The binary's sha256 (`sha256sum` of `path`).")
    version: str = Field(min_length=1, max_length=64, description="What `claude --version` prints.")
    api_key_env: EnvName | None = Field(
        default="ANTHROPIC_API_KEY", description="The environment variable passed to the CLI as its key; unset: none."
    )
    allow_unsandboxed: bool = Field(
        default=False,
        description="Run the CLI unconfined where neither bubblewrap (Linux) nor sandbox-exec (macOS) is usable; "
        "off by default: without a sandbox the CLI is refused. Every receipt of an unconfined run says sandbox none.",
    )
    require_sandbox: bool | None = Field(
        default=None,
        description="Kept for older books: a sandbox is now required unless `allow_unsandboxed = true`; "
        "`require_sandbox = true` also refuses `allow_unsandboxed`.",
    )
    effort: str | None = Field(default=None, pattern=r"^[a-z]{1,16}$", description="The CLI's `--effort`, if set.")
    max_turns: int = Field(
        default=3, ge=1, le=10, description="The CLI's `--max-turns` (structured output takes a tool turn)."
    )
    max_budget_usd: float | None = Field(
        default=None, gt=0, le=1_000_000, description="The CLI's own spending cap (`--max-budget-usd`)."
    )
    sandbox_read_paths: list[PathText] = Field(
        default=[], description="Extra paths the sandbox may read (relative paths: to the book's folder)."
    )


class ScriptedProviderConfig(_ProviderBase):
    """Deterministic responses read from a file: for tests and demos; every receipt says so."""

    kind: Literal["scripted"]
    script: str = Field(
        min_length=1, max_length=4096, description="The YAML file of canned answers, relative to the book's folder."
    )


ProviderConfig = Annotated[
    OpenAIProviderConfig | AnthropicProviderConfig | ClaudeCliProviderConfig | ScriptedProviderConfig,
    Field(discriminator="kind"),
]


class Price(_Strict):
    """Price per million tokens, in the book's currency unit (pinned: a receipt records the table's hash)."""

    input: PerMillion = Field(description="Price of a million input tokens.")
    output: PerMillion = Field(description="Price of a million output tokens.")
    cache_read: PerMillion | None = Field(default=None, description="Price of a million cached input tokens read.")
    cache_write: PerMillion | None = Field(
        default=None, description="Price of a million input tokens written to a cache."
    )


class Budget(_Strict):
    """Per-run limits; a request that could exceed one is not sent (BUDGET_EXCEEDED). `confirm_above`: the bill a
    command may start on without asking."""

    max_cost: float | None = Field(
        default=None,
        ge=0,
        le=1_000_000_000,
        description="The most one command's run may spend; an unpriced model is then refused before sending.",
    )
    max_tokens: Tokens | None = Field(default=None, description="The most tokens (input + output) one run may use.")
    deadline_s: Seconds | None = Field(
        default=None, description="Seconds one run may take; later requests are not sent."
    )
    confirm_above: float | None = Field(
        default=0.5,
        ge=0,
        le=1_000_000_000,
        description="A command whose bill (its worst-case cost, shown before the first call) is above this asks "
        "before sending (in a terminal) or is refused without `--yes` (elsewhere); a paid model without a price "
        "counts as above. Scripted and local (ollama, lmstudio, llamacpp, vllm) models cost nothing. Unset: never ask.",
    )


class CallPolicy(_Strict):
    """The bound on model requests per logical call (format corrections and transient retries share it)."""

    max_attempts: int = Field(
        default=MAX_ATTEMPTS_CAP,
        ge=1,
        le=MAX_ATTEMPTS_CAP,
        description="Requests one logical call may make: format corrections and resent transient errors share it.",
    )
    max_output_tokens: int = Field(default=8192, ge=16, le=1_000_000, description="The output cap of one request.")
    concurrency: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Fact-card extractions `muse sync` keeps in flight at once (each provider's max_concurrency "
        "still applies); results are committed in chapter order. 1: each chapter's prompt lists the foreshadows of "
        "every chapter before it; with more, those of the chapters still in flight are not listed.",
    )


def _within_seed(table: str, model: BaseModel, limits: dict[str, int | float], seed: str) -> None:
    """A value above the seed's number is a config error naming the limit: the seeds' bounds are caps a book may
    lower, never raise."""
    for key, limit in limits.items():
        value = getattr(model, key)
        if value > limit:
            raise ValueError(
                f"{table}.{key} = {value} is above the limit of {limit} the method sets (a book may lower it, never "
                "raise it)"
            )


#: Seed 004's numbers: 最多一轮修复一次复审 (one repair round, one re-review), 前3章伏笔健康可给中性分 (the neutral
#: window covers at most the first three chapters).
REVIEW_SEED_LIMITS: dict[str, int | float] = {
    "repair_rounds": MAX_REPAIR_ROUNDS,
    "rereview_rounds": MAX_REPAIR_ROUNDS,
    "neutral_foreshadow_chapters": 3,
}


class ReviewConfig(_Strict):
    """Bounds of the editorial loop (seed 004): every loop is finite, and the seed's own bounds are caps."""

    repair_rounds: int = Field(
        default=1, ge=0, description="Repairs after a consistency review finds a critical or major issue."
    )
    rereview_rounds: int = Field(default=1, ge=0, description="Consistency re-reviews after a repair.")
    rewrite_rounds: int = Field(
        default=1, ge=0, le=5, description="Whole-chapter rewrites when the editor's computed verdict is rewrite."
    )
    arbiter_rounds: int = Field(default=1, ge=0, le=5, description="Arbiter calls when a rewrite still scores rewrite.")
    polish_max_paragraphs: int = Field(default=5, ge=1, le=50, description="The most paragraphs one polish may touch.")
    neutral_foreshadow_chapters: int = Field(
        default=3,
        ge=0,
        description="In chapters up to this one, 伏笔健康 without evidence is neutral and left out of the verdict.",
    )
    #: `muse review` ends with the quality gate on each final text when a judge model is configured (seed 000:
    #: 候选交付用户前评分); false leaves it out (said so: skipped(not requested), never passed)
    quality_gate: bool = Field(
        default=True,
        description="End `muse review` with the quality gate (a blind judge panel) on each final text; false "
        "leaves it out, said so as skipped, never passed.",
    )

    @model_validator(mode="after")
    def _seed_limits(self) -> ReviewConfig:
        _within_seed("review", self, REVIEW_SEED_LIMITS, "004")
        return self


#: Seed 004: 每章 plant ≤ 3 的机械上限, for fine outlines and fact cards alike.
MEMORY_SEED_LIMITS: dict[str, int | float] = {"max_plants_per_chapter": MAX_PLANTS_CAP}


class MemoryConfig(_Strict):
    max_plants_per_chapter: int = Field(
        default=MAX_PLANTS_CAP,
        ge=0,
        description="Foreshadows one chapter may plant, in fine outlines and fact cards alike; more is rejected.",
    )
    chunk_max_chars: int = Field(
        default=400, ge=50, le=100_000, description="The longest paragraph chunk the search index stores."
    )
    overdue_default_age: int | None = Field(
        default=None,
        ge=1,
        le=MAX_CHAPTER_NUMBER,
        description="A foreshadow without a payoff chapter is overdue after this many chapters; unset: never.",
    )

    @model_validator(mode="after")
    def _seed_limits(self) -> MemoryConfig:
        _within_seed("memory", self, MEMORY_SEED_LIMITS, "004")
        return self


#: Seed 003's numbers: upper bounds a book may lower, never raise (连续四章; 补证最多 3 次、累计不超过检索预算 30%;
#: 最多返修两轮).
WRITING_SEED_LIMITS: dict[str, int | float] = {
    "prior_chapters": 4,
    "evidence_rounds": 3,
    "evidence_fraction": 0.30,
    "repair_rounds": 2,
}


class WritingConfig(_Strict):
    """The writer's context budgets and loop bounds (seed 003), in characters counted by `text.count_chars`.

    `context_chars` bounds everything the writer is given (outline, facts, rules, prior chapters, retrieved
    text); `retrieval_chars` is the part reserved for retrieved raw text (arms A and C get the same); the
    evidence-request reserve is `evidence_fraction` of it. `fact_cards = "optional"` lets a book without an
    extractor be written from the author's cards alone (chapters without fact cards are then listed in the
    manifest); by default a chapter before N without a current fact card is CONTEXT_MEMORY_STALE.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    prior_chapters: int = Field(
        default=4, ge=0, description="The chapters before N whose raw text the writer reads whole (the window)."
    )
    retrieval_chars: int = Field(
        default=6_000,
        ge=0,
        le=1_000_000,
        description="Raw text retrieved from earlier chapters (readback and style evidence): the same for arms A "
        "and C.",
    )
    context_chars: int = Field(
        default=40_000,
        ge=1,
        le=4_000_000,
        description="Everything the writer is given except its fixed instructions; the protected blocks never "
        "shrink (CONTEXT_OVER_BUDGET instead).",
    )
    evidence_rounds: int = Field(default=3, ge=0, description="Evidence rounds the writer may ask for.")
    evidence_fraction: float = Field(
        default=0.30,
        ge=0,
        allow_inf_nan=False,
        description="The share of `retrieval_chars` all evidence rounds together may add.",
    )
    repair_rounds: int = Field(default=2, ge=0, description="Repairs of a draft the detector gate blocked.")
    fact_cards: Literal["required", "optional"] = Field(
        default="required",
        description="`optional`: write from the author's cards alone; chapters without a current fact card are "
        "listed in the manifest instead of refused (CONTEXT_MEMORY_STALE).",
    )

    @model_validator(mode="after")
    def _seed_limits(self) -> WritingConfig:
        _within_seed("writing", self, WRITING_SEED_LIMITS, "003")
        return self


#: The seeds' numbers by table and key (the configuration reference lists them): a book may lower them, never
#: raise them.
SEED_CAPS: dict[str, dict[str, int | float]] = {
    "calls": {"max_attempts": MAX_ATTEMPTS_CAP},
    "review": REVIEW_SEED_LIMITS,
    "memory": MEMORY_SEED_LIMITS,
    "writing": WRITING_SEED_LIMITS,
}


class GateConfig(_Strict):
    """[gate]: `signer` is the public key that signs this book's gate receipts (book.toml); `key_path` is where
    the private key lives (user config only — the key is the user's and never inside a book)."""

    signer: str | None = Field(
        default=None,
        pattern=r"^ed25519:[A-Za-z0-9+/]{43}=$",
        description="The public key that signs this book's gate receipts, as `muse gate keygen` prints it.",
    )
    key_path: str | None = Field(
        default=None,
        description="Where the private signing key lives (user config only); unset: `keys/gate_ed25519.pem` "
        "beside the user config.",
    )


class BookConfig(_Strict):
    """The whole of book.toml."""

    book: BookMeta = Field(default=BookMeta(), description="The book itself.")
    chapters: ChapterLimits = Field(default=ChapterLimits(), description="Chapter length limits.")
    providers: dict[Annotated[str, Field(pattern=_PROVIDER_NAME)], ProviderConfig] = Field(
        default={}, description="Model endpoints by a name of your choice; `kind` says which kind of provider."
    )
    roles: dict[str, str] = Field(
        default={},
        description="Which model plays each role, as `provider:full-model-id`; `default` covers every role not named.",
    )
    prices: dict[Annotated[str, Field(min_length=1, max_length=256)], Price] = Field(
        default={}, description="Prices per million tokens by model id; a model without a price has an unknown cost."
    )
    #: "provider:full-model-id" → the model's context window in tokens (input + output) at that endpoint; over
    #: llm/data/context_windows.toml (e.g. an Ollama model served with a smaller num_ctx)
    context_windows: dict[Annotated[str, Field(min_length=1, max_length=300)], ContextTokens] = Field(
        default={},
        description="Tokens one request may hold (input + output) at an endpoint, by `provider:full-model-id`, "
        "over the built-in table; unknown windows are not checked.",
    )
    budget: Budget = Field(
        default=Budget(),
        description="Limits of one command's run; a request that could exceed one is not sent (BUDGET_EXCEEDED).",
    )
    calls: CallPolicy = Field(default=CallPolicy(), description="The bound on requests per model call.")
    review: ReviewConfig = Field(
        default=ReviewConfig(), description="Bounds of `muse review`'s loop: every loop is finite."
    )
    memory: MemoryConfig = Field(
        default=MemoryConfig(), description="Story memory: the foreshadow ledger and the search index."
    )
    writing: WritingConfig = Field(
        default=WritingConfig(),
        description="The writer's context budgets and loop bounds, in characters without whitespace.",
    )
    gate: GateConfig = Field(default=GateConfig(), description="Signing gate receipts.")

    @model_validator(mode="after")
    def _roles_valid(self) -> BookConfig:
        for role, target in self.roles.items():
            if role != "default" and role not in ROLE_NAMES:
                raise ValueError(f"unknown role {role!r} in [roles] (known: default, {', '.join(ROLE_NAMES)})")
            provider, sep, model = target.partition(":")
            if not sep or not provider or not model:
                raise ValueError(f"role {role!r} = {target!r} must be 'provider:full-model-id'")
            if provider not in self.providers:
                raise ValueError(f"role {role!r} names provider {provider!r}, which is not in [providers]")
        for key in self.context_windows:
            provider, sep, model = key.partition(":")
            if not sep or not provider or not model:
                raise ValueError(f"[context_windows] key {key!r} must be 'provider:full-model-id', as in [roles]")
            if provider not in self.providers:
                raise ValueError(f"[context_windows] key {key!r} names provider {provider!r}, not in [providers]")
        return self

    def role_target(self, role: str) -> tuple[str, str] | None:
        """(provider name, full model id) for a role, falling back to `default`; None if unconfigured."""
        target = self.roles.get(role) or self.roles.get("default")
        if not target:
            return None
        provider, _, model = target.partition(":")
        return provider, model

    def role_costs_nothing(self, role: str) -> bool:
        """Whether the role's model costs nothing to call: canned answers (scripted) or a local server preset
        (ollama, lmstudio, llamacpp, vllm). Any other endpoint may charge, priced or not."""
        target = self.role_target(role)
        if target is None:
            return True
        kind = getattr(self.providers.get(target[0]), "kind", None)
        return kind == "scripted" or kind in LOCAL_PRESETS


def _read_toml(path: Path) -> dict[str, Any]:
    raw = read_user_file(path, what=path.name, kind="CONFIG", max_bytes=MAX_CONFIG_BYTES, contained=False)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        offset = exc.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0)  # utf-8-sig's offset skips the BOM
        raise InputError("CONFIG_SYNTAX", f"not UTF-8 at byte {offset}", str(path), "save the file as UTF-8") from exc
    with parsing_user_file("CONFIG_SYNTAX", str(path), path.name):
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:  # a ValueError too: named here, before the generic mapping
            raise InputError("CONFIG_SYNTAX", f"invalid TOML ({exc})", str(path), "fix the TOML syntax") from exc


def user_config_path() -> Path:
    """The user-level config: $MUSE_CONFIG, else $XDG_CONFIG_HOME/novelmuse/config.toml."""
    if env := os.environ.get("MUSE_CONFIG"):
        return Path(env)
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "novelmuse" / "config.toml"


#: The tables a user-level config may hold (the book's own tables win per key).
USER_TABLES = ("providers", "roles", "prices", "context_windows", "budget", "calls", "gate")


class _UserConfig(_Strict):
    """The tables a user-level config may hold, validated on their own so that an error names that file (the
    cross-check of [roles] against [providers] runs on the merged configuration)."""

    providers: dict[Annotated[str, Field(pattern=_PROVIDER_NAME)], ProviderConfig] = {}
    roles: dict[str, str] = {}
    prices: dict[Annotated[str, Field(min_length=1, max_length=256)], Price] = {}
    context_windows: dict[Annotated[str, Field(min_length=1, max_length=300)], ContextTokens] = {}
    budget: Budget = Budget()
    calls: CallPolicy = CallPolicy()
    gate: GateConfig = GateConfig()


def _invalid(exc: ValidationError, path: Path) -> InputError:
    """CONFIG_INVALID naming the key as written (``chapters.min_char``), the value given, its line in the file and,
    for an unknown key, the known keys it resembles."""
    first = exc.errors()[0]
    loc = tuple(p for p in first["loc"] if not (isinstance(p, str) and p in _PROVIDER_KINDS))
    key = ".".join(str(p) for p in loc) or "(top level)"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    if first["type"] == "extra_forbidden":
        msg = f"unknown key {str(loc[-1])!r}"
        near = get_close_matches(str(loc[-1]), _known_keys(loc[:-1]), n=1, cutoff=0.6)
        hint = f"did you mean {near[0]!r}? " if near else ""
    else:
        shown = repr(first["input"])
        plain = first["msg"].removeprefix("Value error, ").replace("Input should be", "must be")
        said = _PLAIN.get(first["type"], plain.replace("String should", "must").replace("List should", "must"))
        msg = f"{said} (got {shown if len(shown) <= 60 else shown[:57] + '…'})"
        hint = ""
    line = _line_of(path, loc)
    where = f"{path}:{line}" if line else str(path)
    return InputError(
        "CONFIG_INVALID", f"{msg} at {key}{more}", where, f"{hint}fix {path.name} (see docs/reference/configuration.md)"
    )


#: Pydantic's wording of the common type errors, said the way a book.toml is written.
_PLAIN = {
    "int_type": "must be a whole number, without quotes",
    "int_parsing": "must be a whole number, without quotes",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number, without quotes",
    "string_type": "must be text, in quotes",
    "bool_type": "must be true or false, without quotes",
    "dict_type": "must be a table",
    "list_type": "must be a list, in [ ]",
    "missing": "is required",
}
_PROVIDER_KINDS = frozenset({"openai", "anthropic", "claude-cli", "scripted", *LOCAL_PRESETS})


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the table at `loc` may hold (for a did-you-mean); [] where they are free (providers, roles)."""
    model: Any = BookConfig
    for part in loc:
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        model = field.annotation
    return list(getattr(model, "model_fields", {}))


def _line_of(path: Path, loc: tuple[Any, ...]) -> int | None:
    """The line of `path` where the key at `loc` is written (its table header for a table), or None."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    table: tuple[str, ...] = ()
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if line.startswith("[") and not line.startswith("[["):
            table = tuple(part.strip().strip('"') for part in line.strip("[]").split("."))
            if table == tuple(str(p) for p in loc):
                return number
            continue
        key = line.split("=", 1)[0].strip().strip('"')
        if "=" in line and (*table, key) == tuple(str(p) for p in loc[: len(table) + 1]):
            return number
    return None


def _user_tables(user: Path) -> dict[str, Any]:
    """The user config's tables, validated strictly on their own (errors name the user config)."""
    if not user.is_file():
        return {}
    user_data = _read_toml(user)
    unknown = set(user_data) - set(USER_TABLES)
    if unknown:
        raise InputError(
            "CONFIG_INVALID",
            f"the user config may only hold {', '.join(USER_TABLES)}; found {', '.join(sorted(unknown))}",
            str(user),
            "move book settings into book.toml",
        )
    try:
        _UserConfig.model_validate(user_data)
    except ValidationError as exc:
        raise _invalid(exc, user) from exc
    return user_data


def _validate(data: dict[str, Any], path: Path) -> BookConfig:
    try:
        return BookConfig.model_validate(data)
    except ValidationError as exc:
        raise _invalid(exc, path) from exc


def load_config(path: Path, *, user_config: Path | None = None) -> BookConfig:
    """Load book.toml, layered over the user-level config's model tables (the book wins per key).

    Both files are validated strictly; an error names the file it is in."""
    data = _read_toml(path)
    if isinstance(data.get("gate"), dict) and "key_path" in data["gate"]:
        raise InputError(
            "CONFIG_INVALID",
            "[gate] key_path belongs in the user config, not in book.toml (the private key never lives with a book)",
            str(path),
            "move key_path to the user config (see `muse gate keygen --help`)",
        )
    user_data = _user_tables(user_config if user_config is not None else user_config_path())
    for table in USER_TABLES:
        if table not in user_data:
            continue
        if not isinstance(data.get(table, {}), dict):
            raise InputError("CONFIG_INVALID", f"[{table}] must be a table at {table}", str(path), f"fix {path.name}")
        data[table] = {**user_data[table], **data.get(table, {})}
    return _validate(data, path)


def load_user_config(user_config: Path | None = None) -> BookConfig:
    """The user-level config alone, for commands that also run outside a book (`muse gate keygen`)."""
    user = user_config if user_config is not None else user_config_path()
    return _validate(_user_tables(user), user)
