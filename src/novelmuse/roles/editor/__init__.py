"""The editor role: the 7-dimension editor review (seed 004 七维评审) — task `REVIEW`."""

from ._tasks import REVIEW, EditorRequest, evidence_contract
from .schema import DIMENSIONS, FORESHADOW_DIM, DimScore, EditorDims, EditorReport

__all__ = [
    "DIMENSIONS",
    "FORESHADOW_DIM",
    "REVIEW",
    "DimScore",
    "EditorDims",
    "EditorReport",
    "EditorRequest",
    "evidence_contract",
]
