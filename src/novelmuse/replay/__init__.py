"""Replay experiments and gates (seed 003): gate specs, the GateInput, Gate A / Gate B, order plans, and the one
issuer of gate reports and signed receipts in the CAS journal ``.muse/gates/journal.jsonl``.

The top service layer: it may use every layer below; nothing below imports it.
"""

from ._gates import (
    BUCKETS,
    Check,
    GateName,
    GateReport,
    Outcome,
    ReportAnomaly,
    SetSize,
    Stratum,
    evaluate_gate,
    evaluate_gate_a,
    evaluate_gate_b,
    find_anomalies,
    new_character_bucket,
    report_sha256,
    set_size,
)
from ._input import (
    Anomaly,
    DetectorItem,
    GateInput,
    Item,
    PanelVerdict,
    RubricBinding,
    Sample,
    Target,
    gate_input_bytes,
    gate_input_sha256,
    parse_gate_input,
)
from ._order import ItemOrder, OrderPlan, make_order_plan, position_counts, verify_order_plan
from ._spec import GateSpec, gate_spec_bytes, load_gate_spec

__all__ = [
    "BUCKETS",
    "Anomaly",
    "Check",
    "DetectorItem",
    "GateInput",
    "GateName",
    "GateReport",
    "GateSpec",
    "Item",
    "ItemOrder",
    "OrderPlan",
    "Outcome",
    "PanelVerdict",
    "ReportAnomaly",
    "RubricBinding",
    "Sample",
    "SetSize",
    "Stratum",
    "Target",
    "evaluate_gate",
    "evaluate_gate_a",
    "evaluate_gate_b",
    "find_anomalies",
    "gate_input_bytes",
    "gate_input_sha256",
    "gate_spec_bytes",
    "load_gate_spec",
    "make_order_plan",
    "new_character_bucket",
    "parse_gate_input",
    "position_counts",
    "report_sha256",
    "set_size",
    "verify_order_plan",
]
