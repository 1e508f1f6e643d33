"""`models_check(role)`: one tiny structured call that proves a role's model answers and follows an instruction.

The schema is `{"ok": true, "echo": "muse-<role>"}` and the contract requires exactly those values, so a role
passes only when the endpoint returned a schema-valid object that follows the instruction.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel

from ...llm import Contract, Violation
from .._task import RoleTask


class CheckReply(BaseModel):
    """The tiny structured output every role is asked for."""

    ok: bool
    echo: str


@dataclass(frozen=True)
class ProbeRequest:
    """Probe the model configured for `role`."""

    role: str


def expected_echo(role: str) -> str:
    """What a role's check must echo back (deterministic, so scripted providers can answer it)."""
    return f"muse-{role}"


def _contract(r: ProbeRequest) -> list[Contract[CheckReply]]:
    echo = expected_echo(r.role)

    def check(reply: CheckReply) -> list[Violation]:
        found: list[Violation] = []
        if reply.ok is not True:
            found.append(Violation("CHECK_NOT_OK", 'the field "ok" must be true'))
        if reply.echo != echo:
            found.append(Violation("CHECK_ECHO_MISMATCH", f'the field "echo" must be exactly "{echo}"'))
        return found

    return [check]


@cache
def models_check(role: str) -> RoleTask[ProbeRequest, CheckReply]:
    """The probe task of `role` (its calls go to the model configured for `role`)."""
    return RoleTask(
        role=role,
        name="models_check",
        schema=CheckReply,
        user=("common/models_check.txt",),
        fields=lambda r: {"role": r.role, "echo": expected_echo(r.role)},
        contracts=_contract,
        schema_name="models_check",
        max_output_tokens=64,
        registered_as=("common", "models_check"),
    )
