"""The `scripted` provider: deterministic responses read from a YAML/JSON file, for tests and demos.

Script format (a mapping of role → list of entries; ``default:`` serves roles without their own list)::

    reviewer:
      - output: {issues: []}          # the structured object, sent as JSON text
      - raw_text: "not json"          # literal text instead
      - error: {code: MODEL_TRANSIENT, status: 500}     # a classified provider failure
      - output: {...}
        model: other-model-id         # resolved model (default: the requested id) → MODEL_MISMATCH
        usage: null                   # missing usage → MODEL_USAGE_MISSING
        finish: length                # → MODEL_TRUNCATED (default: stop)
        is_error: true                # the response's error flag
        match: "第3章"                 # served only to a request whose messages contain this substring
        delay_s: 0.2                  # wait before answering (concurrency tests)

Entries of a role are consumed in order, each at most once: a request gets the first unconsumed
entry of its role's list whose ``match`` (if any) occurs in the request's message text. ``match`` makes
scripts robust when several calls of one role run concurrently (judges, reviewers of many chapters).
When no entry fits, the request fails closed with MODEL_SCRIPT_EXHAUSTED (never retried).

Usage, when not given, is counted from characters: input = characters of all message contents,
output = characters of the output text (one token per character; deterministic, roughly right
for Chinese). Error entries: ``transient`` defaults to true for MODEL_TRANSIENT, MODEL_RATE_LIMITED,
MODEL_TIMEOUT and MODEL_CONNECTION; ``cost_known`` defaults to true.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..book import ScriptedProviderConfig, load_bounded_yaml, parsing_user_file, read_user_file
from ..errors import InputError
from ._types import Finish, ProviderError, ProviderRequest, ProviderResponse, Usage

_SEE_SCRIPT = "see docs/guide/models.md#the-scripted-provider for the script's format"

TRANSIENT_CODES = frozenset({"MODEL_TRANSIENT", "MODEL_RATE_LIMITED", "MODEL_TIMEOUT", "MODEL_CONNECTION"})


class _ScriptError(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: str
    status: int | None = None
    message: str = "scripted provider error"
    transient: bool | None = None
    cost_known: bool = True


class _ScriptUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(ge=0)
    output_tokens: int = Field(ge=0)
    cache_read_tokens: int = Field(default=0, ge=0)
    cache_write_tokens: int = Field(default=0, ge=0)


class ScriptEntry(BaseModel):
    """One scripted response."""

    model_config = ConfigDict(extra="forbid")

    output: Any = None  # given or not: see model_fields_set (null is a legal output)
    raw_text: str | None = None
    error: _ScriptError | None = None
    model: str | None = None
    usage: _ScriptUsage | None = None  # absent → counted; explicit null → missing usage
    finish: Finish = "stop"
    is_error: bool = False
    match: str | None = None
    delay_s: float = Field(default=0.0, ge=0, le=60)

    def kinds(self) -> int:
        return sum(("output" in self.model_fields_set, self.raw_text is not None, self.error is not None))


def load_script(path: Path) -> dict[str, list[ScriptEntry]]:
    """Parse and validate a script file (YAML or JSON); errors name the role and entry."""
    try:
        with parsing_user_file("SCRIPT_INVALID", str(path), "script"):
            data = load_bounded_yaml(read_user_file(path, what="script", kind="SCRIPT").decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError("SCRIPT_INVALID", f"not UTF-8 (byte {exc.start})", str(path), "save it as UTF-8") from exc
    except yaml.YAMLError as exc:  # one line (the CLI prints one error line): the problem and where it is
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise InputError("SCRIPT_INVALID", f"not valid YAML/JSON ({problem})", where, "fix the script") from exc
    if not isinstance(data, dict):
        raise InputError("SCRIPT_INVALID", "the script must map role names to lists", str(path), _SEE_SCRIPT)
    script: dict[str, list[ScriptEntry]] = {}
    for role, entries in data.items():
        if not isinstance(entries, list):
            raise InputError("SCRIPT_INVALID", f"role {role!r} must hold a list of entries", str(path), _SEE_SCRIPT)
        parsed = []
        for i, entry in enumerate(entries, 1):
            try:
                item = ScriptEntry.model_validate(entry)
            except ValidationError as exc:
                first = exc.errors()[0]
                loc = ".".join(str(p) for p in first["loc"])
                raise InputError(
                    "SCRIPT_INVALID", f"{role} entry {i}: {first['msg']} at {loc}", str(path), "fix the entry"
                ) from exc
            if item.kinds() != 1:
                raise InputError(
                    "SCRIPT_INVALID",
                    f"{role} entry {i} must have exactly one of output, raw_text, error",
                    str(path),
                    "fix the entry",
                )
            parsed.append(item)
        script[str(role)] = parsed
    return script


class ScriptedProvider:
    """Serves scripted responses per role, in order (see the module docstring)."""

    kind = "scripted"

    def __init__(self, name: str, config: ScriptedProviderConfig, book_root: Path):
        self.name = name
        self.config = config
        self.max_concurrency = config.max_concurrency
        path = Path(config.script)
        self.path = path if path.is_absolute() else book_root / path
        self.script = load_script(self.path)
        self._used: dict[str, set[int]] = {}
        self.requests: list[ProviderRequest] = []  # what was received, in order (for tests)

    def _pick(self, request: ProviderRequest) -> ScriptEntry | None:
        role = request.role if request.role in self.script else "default"
        entries = self.script.get(role, [])
        used = self._used.setdefault(role, set())
        text = "\n".join(m.content for m in request.messages)
        for i, entry in enumerate(entries):
            if i in used:
                continue
            if entry.match is not None and entry.match not in text:
                continue
            used.add(i)
            return entry
        return None

    async def send(self, request: ProviderRequest) -> ProviderResponse:
        """Answer one request with the next fitting entry of its role."""
        self.requests.append(request)
        entry = self._pick(request)
        if entry is None:
            raise ProviderError(
                "MODEL_SCRIPT_EXHAUSTED",
                f"no scripted response left for role {request.role or 'default'!r}",
                transient=False,
                cost_known=True,
            )
        if entry.delay_s:
            await asyncio.sleep(entry.delay_s)
        if entry.error is not None:
            err = entry.error
            transient = err.transient if err.transient is not None else err.code in TRANSIENT_CODES
            body = json.dumps({"error": {"code": err.code, "status": err.status}}).encode()
            raise ProviderError(
                err.code, err.message, transient=transient, cost_known=err.cost_known, raw=body, status=err.status
            )
        text = entry.raw_text if entry.raw_text is not None else json.dumps(entry.output, ensure_ascii=False)
        if "usage" not in entry.model_fields_set:
            usage: Usage | None = Usage(sum(len(m.content) for m in request.messages), len(text))
        elif entry.usage is None:
            usage = None
        else:
            usage = Usage(**entry.usage.model_dump())
        resolved = entry.model or request.model
        raw = json.dumps(
            {
                "model": resolved,
                "text": text,
                "finish": entry.finish,
                "is_error": entry.is_error,
                "usage": None if usage is None else usage.__dict__,
            },
            ensure_ascii=False,
            sort_keys=True,
        ).encode()
        return ProviderResponse(
            text=text, raw=raw, resolved_model=resolved, finish=entry.finish, usage=usage, is_error=entry.is_error
        )

    async def aclose(self) -> None:
        """Nothing to release."""
