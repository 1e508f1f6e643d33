"""The detector role: the semantic half of the writer's hard gate (seed 003 隔离 Semantic Detector 进程).

It sees only the candidate chapter and the hard constraints (ids and texts) — never the writer's context,
the cards or the retrieval — and returns a verdict for every constraint id, bound to the candidate's sha256
(task `DETECT`).
"""

from ._tasks import DETECT, DetectRequest, report_contract
from .schema import VERDICTS, ConstraintVerdict, DetectorOutput, Verdict

__all__ = ["DETECT", "VERDICTS", "ConstraintVerdict", "DetectRequest", "DetectorOutput", "Verdict", "report_contract"]
