"""The editor role: the 7-dimension editor review (seed 004 七维评审)."""

from .schema import DIMENSIONS, FORESHADOW_DIM, DimScore, EditorDims, EditorReport

__all__ = ["DIMENSIONS", "FORESHADOW_DIM", "DimScore", "EditorDims", "EditorReport"]
