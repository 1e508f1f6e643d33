"""Replay experiments and gates (seed 003): gate specs, the GateInput, Gate A / Gate B, order plans, the one
issuer of gate reports and signed receipts in the CAS journal ``.muse/gates/journal.jsonl``, the writer
configuration receipts bind, the fine-outline stage behind its entry guard, the fine-outline agent's own gates
(outliner sets, the outliner configuration) and the plan stage behind them.

The top service layer: it may use every layer below; nothing below imports it.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._builder import build_gate_input, gate_input_locator, gate_input_rebuilder
    from ._evaluate import GateDoc, GateInputDoc, evaluate_run, gate_input_doc
    from ._gates import (
        BUCKETS,
        Check,
        GateName,
        GateReport,
        Outcome,
        ReportAnomaly,
        SetSize,
        Stratum,
        cohen_kappa,
        evaluate_gate,
        evaluate_gate_a,
        evaluate_gate_b,
        find_anomalies,
        new_character_bucket,
        report_sha256,
        set_size,
        sign_test_p,
    )
    from ._guard import (
        EntryGuard,
        GuardFinding,
        check_fine_outline_entry,
        check_plan_entry,
        guard_refusal,
        receipt_verdict,
        require_fine_outline_entry,
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
    from ._journal import EntryRef, GateIssuer, Issued, configured_signer, journal_location, sync_index
    from ._keys import PublicKey, SigningKey, default_key_path, generate_key, key_path, load_signing_key
    from ._orchestrator import DryRunDoc, Event, Progress, RunDoc, replay_dry_run, run_doc, run_replay
    from ._order import ItemOrder, OrderPlan, make_order_plan, position_counts, verify_order_plan
    from ._outline_stage import (
        OutlineRangeDoc,
        OutlineStageDoc,
        draft_fine_outline,
        draft_fine_outlines,
        outline_admission_problems,
        outline_draft_dry_run,
    )
    from ._outliner_config import OutlinerConfig, outliner_config, outliner_config_sha256
    from ._plan_stage import PlanStageDoc, draft_plan, plan_draft_dry_run
    from ._promotion import ArmChoice, promoted_arm
    from ._reader import GateInputRebuilder, store_reader
    from ._receipt import (
        ArtefactKind,
        ArtefactReader,
        ArtefactRef,
        ReceiptBindings,
        ReceiptBody,
        Rehasher,
        ReportBody,
        binding_problems,
        book_artefacts,
        file_ref,
        rubric_ref,
        spec_ref,
    )
    from ._report import ReplayReport, replay_report
    from ._runs import PanelOut, RunListing, RunsDoc, SampleOut, list_runs, load_run, runs_of
    from ._sets import RegisterDoc, RegisteredSet, register_set, resolve_set
    from ._spec import GateSpec, gate_spec_bytes, load_gate_spec
    from ._verify import (
        ConfigurationSummary,
        EntrySummary,
        Problem,
        VerifyReport,
        by_configuration,
        rebuild_index,
        verify_journal,
    )
    from ._writer_config import ModelPin, TaskPin, WriterConfig, writer_config, writer_config_sha256

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "BUCKETS",
    "Anomaly",
    "ArmChoice",
    "ArtefactKind",
    "ArtefactReader",
    "ArtefactRef",
    "Check",
    "ConfigurationSummary",
    "DetectorItem",
    "DryRunDoc",
    "EntryGuard",
    "EntryRef",
    "EntrySummary",
    "Event",
    "GateDoc",
    "GateInput",
    "GateInputDoc",
    "GateInputRebuilder",
    "GateIssuer",
    "GateName",
    "GateReport",
    "GateSpec",
    "GuardFinding",
    "Issued",
    "Item",
    "ItemOrder",
    "ModelPin",
    "OrderPlan",
    "Outcome",
    "OutlineRangeDoc",
    "OutlineStageDoc",
    "OutlinerConfig",
    "PanelOut",
    "PanelVerdict",
    "PlanStageDoc",
    "Problem",
    "Progress",
    "PublicKey",
    "ReceiptBindings",
    "ReceiptBody",
    "RegisterDoc",
    "RegisteredSet",
    "Rehasher",
    "ReplayReport",
    "ReportAnomaly",
    "ReportBody",
    "RubricBinding",
    "RunDoc",
    "RunListing",
    "RunsDoc",
    "Sample",
    "SampleOut",
    "SetSize",
    "SigningKey",
    "Stratum",
    "Target",
    "TaskPin",
    "VerifyReport",
    "WriterConfig",
    "binding_problems",
    "book_artefacts",
    "build_gate_input",
    "by_configuration",
    "check_fine_outline_entry",
    "check_plan_entry",
    "cohen_kappa",
    "configured_signer",
    "default_key_path",
    "draft_fine_outline",
    "draft_fine_outlines",
    "draft_plan",
    "evaluate_gate",
    "evaluate_gate_a",
    "evaluate_gate_b",
    "evaluate_run",
    "file_ref",
    "find_anomalies",
    "gate_input_bytes",
    "gate_input_doc",
    "gate_input_locator",
    "gate_input_rebuilder",
    "gate_input_sha256",
    "gate_spec_bytes",
    "generate_key",
    "guard_refusal",
    "journal_location",
    "key_path",
    "list_runs",
    "load_gate_spec",
    "load_run",
    "load_signing_key",
    "make_order_plan",
    "new_character_bucket",
    "outline_admission_problems",
    "outline_draft_dry_run",
    "outliner_config",
    "outliner_config_sha256",
    "parse_gate_input",
    "plan_draft_dry_run",
    "position_counts",
    "promoted_arm",
    "rebuild_index",
    "receipt_verdict",
    "register_set",
    "replay_dry_run",
    "replay_report",
    "report_sha256",
    "require_fine_outline_entry",
    "resolve_set",
    "rubric_ref",
    "run_doc",
    "run_replay",
    "runs_of",
    "set_size",
    "sign_test_p",
    "spec_ref",
    "store_reader",
    "sync_index",
    "verify_journal",
    "verify_order_plan",
    "writer_config",
    "writer_config_sha256",
]
