"""The planner role: the outline-and-settings agent (大纲+设定智能体) — task `DRAFT` drafts the book's plan (大纲 and
设定) and card drafts from a premise, or the plan's next part from the accepted plan and the story so far;
`novelmuse.writing` builds its request."""

from ._tasks import DRAFT, PlanCheck, PlanRequest, plan_contract
from .schema import PlanArc, PlanCard, PlanDraft, PlanEntry, PlanForeshadow, PlanSetting, PlanVolume

__all__ = [
    "DRAFT",
    "PlanArc",
    "PlanCard",
    "PlanCheck",
    "PlanDraft",
    "PlanEntry",
    "PlanForeshadow",
    "PlanRequest",
    "PlanSetting",
    "PlanVolume",
    "plan_contract",
]
