"""The judge's tasks: one per rubric profile (`TASKS[profile]`), each a blind judge's scoring of one item.

The system message is the profile's own instructions followed by the output contract every profile shares
(judge/contract.txt); the user message is the blind input as JSON. Scale and quote length come from the
rubric and the input's policy; the report's contract (coverage, ranges, verbatim quotes, evidence ids) is
checked by `novelmuse.judging`, which hands it in with the request.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ...llm import Contract
from .._task import RoleTask
from ._schema import JudgeReport

PROFILES = ("quality_gate", "fine_outline_replay", "writer_replay")


@dataclass(frozen=True)
class ScoreRequest:
    """One fresh judge's blind input (canonical JSON, candidates in that judge's order) and its policy values.

    `contract` checks the report against this input (None only when rendering to inspect the messages).
    """

    blind_json: str
    scale_min: float
    scale_max: float
    scale_step: float
    quote_min_chars: int
    contract: Contract[JudgeReport] | None = None


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


def _fields(r: ScoreRequest) -> Mapping[str, object]:
    return {
        "scale_min": _num(r.scale_min),
        "scale_max": _num(r.scale_max),
        "scale_step": _num(r.scale_step),
        "quote_min_chars": r.quote_min_chars,
        "blind_json": r.blind_json,
    }


def _task(profile: str) -> RoleTask[ScoreRequest, JudgeReport]:
    return RoleTask(
        role="judge",
        name=profile,
        schema=JudgeReport,
        system=(f"judge/{profile}.txt", "judge/contract.txt"),
        user=("judge/input.txt",),
        fields=_fields,
        contracts=lambda r: [r.contract] if r.contract is not None else [],
        schema_name="judge_report",
    )


#: Profile → its scoring task.
TASKS: Mapping[str, RoleTask[ScoreRequest, JudgeReport]] = {profile: _task(profile) for profile in PROFILES}
