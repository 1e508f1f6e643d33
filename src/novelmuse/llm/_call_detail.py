"""`muse calls show ID` / `muse calls --last`: one logical call whole — each attempt's request in brief and the raw
answer as the vault keeps it (already scrubbed of any key), so a contract failure can be read, not only its code."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import InputError, MuseError
from ._receipts import CallRecord, list_calls, list_receipts
from ._vault import Vault

#: The answer text shown per attempt (the whole object stays in the vault, addressed by its sha256).
SHOWN_ANSWER_CHARS = 4000


class AttemptDetail(BaseModel):
    """One attempt: its receipt's figures, the request in brief and the answer as received."""

    attempt: int
    outcome: str
    error_code: str | None
    requested_model: str
    resolved_model: str | None
    input_tokens: int | None
    output_tokens: int | None
    request_sha256: str
    messages: list[dict[str, Any]]  # role and characters of each message (the prompt itself stays in the vault)
    schema_name: str | None
    response_sha256: str | None
    answer: str | None  # the raw answer (cut at SHOWN_ANSWER_CHARS), None when nothing came back
    answer_chars: int


class CallDetail(BaseModel):
    """`muse calls show --json`: the call, its diagnostics and every attempt."""

    ok: bool = True
    call_id: str
    run_id: str
    role: str
    provider: str
    status: str
    schema_name: str
    diagnostics: dict[str, Any]
    attempts: list[AttemptDetail]


def call_detail(conn: sqlite3.Connection, vault_dir: Path, call_id: str | None) -> CallDetail:
    """The call `call_id` (the latest when None) with each attempt's request summary and raw answer."""
    calls = list_calls(conn)
    if not calls:
        raise InputError("CALL_NOT_FOUND", "no model call was made in this book yet", "model_calls", "")
    call = calls[-1] if call_id is None else next((c for c in calls if c.id == call_id.strip()), None)
    if call is None:
        raise InputError(
            "CALL_NOT_FOUND", f"no model call {call_id!r}", "model_calls", "list the calls with `muse calls`"
        )
    vault = Vault(vault_dir)
    return CallDetail(
        call_id=call.id,
        run_id=call.run_id,
        role=call.role,
        provider=call.provider,
        status=call.status,
        schema_name=call.schema_name,
        diagnostics=call.diagnostics,
        attempts=[_attempt(vault, call, r) for r in list_receipts(conn, call_id=call.id)],
    )


def _attempt(vault: Vault, call: CallRecord, r: Any) -> AttemptDetail:
    request = _object(vault, r.request_sha256)
    messages: list[dict[str, Any]] = []
    schema: str | None = None
    if request is not None:
        try:
            body = json.loads(request)
            messages = [{"role": m.get("role"), "chars": len(m.get("content", ""))} for m in body.get("messages", [])]
            schema = body.get("schema_name") or call.schema_name
        except (ValueError, AttributeError):
            messages = []
    answer_bytes = _object(vault, r.response_sha256) if r.response_sha256 else None
    answer = answer_bytes.decode("utf-8", "replace") if answer_bytes is not None else None
    return AttemptDetail(
        attempt=r.attempt,
        outcome=r.outcome,
        error_code=r.error_code,
        requested_model=r.requested_model,
        resolved_model=r.resolved_model,
        input_tokens=r.input_tokens,
        output_tokens=r.output_tokens,
        request_sha256=r.request_sha256,
        messages=messages,
        schema_name=schema,
        response_sha256=r.response_sha256,
        answer=answer[:SHOWN_ANSWER_CHARS] if answer is not None else None,
        answer_chars=len(answer or ""),
    )


def _object(vault: Vault, digest: str | None) -> bytes | None:
    if not digest:
        return None
    try:
        return vault.read(digest)
    except MuseError:  # gone or unreadable: the receipt still says what was sent and received, by its sha256
        return None
