"""The outliner role: the fine-outline agent (细纲智能体, seed 003) — task `DRAFT` drafts one chapter's fine outline
from the author's plan and the story memory as of the chapter before; `novelmuse.writing` builds its request."""

from ._tasks import DRAFT, MAX_NOTE_CHARS, MAX_NOTES, DraftCheck, DraftRequest, draft_contract, notes_violations
from .schema import DraftAnchor, DraftBeat, DraftEvent, DraftForeshadow, DraftSetting, OutlineDraft

__all__ = [
    "DRAFT",
    "MAX_NOTES",
    "MAX_NOTE_CHARS",
    "DraftAnchor",
    "DraftBeat",
    "DraftCheck",
    "DraftEvent",
    "DraftForeshadow",
    "DraftRequest",
    "DraftSetting",
    "OutlineDraft",
    "draft_contract",
    "notes_violations",
]
