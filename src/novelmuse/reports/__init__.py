"""Terminal, JSON and HTML renderings of what the services return, and how each command ended.

Per command: the JSON document shape (pydantic, where the service's own result is not already one), the
terminal rendering, the notes and the one error line for stderr, and the command's `errors.Outcome` (which the
CLI maps to its exit code through `errors.exit_code`).
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._accept import accept_note, accept_outcome, bill_lines, render_accept
    from ._book import render_import, render_init
    from ._calls import (
        CallsReport,
        CostReport,
        VaultRecoverReport,
        render_call_detail,
        render_calls,
        render_cost,
        render_vault_recover,
    )
    from ._check import (
        check_notes,
        check_outcome,
        lint_notes,
        render_check,
        render_lint,
        render_show,
        review_notes,
        show_notes,
        write_check_json,
    )
    from ._desk import (
        render_draft_diff,
        render_draft_show,
        render_drafts,
        render_reject,
        render_restore,
        render_revise,
        render_revisions,
        render_stats,
    )
    from ._export import ExportResult, export_book
    from ._files import render_export, render_report_written
    from ._gate import (
        KeygenResult,
        ReindexResult,
        render_gate_show,
        render_gate_verify,
        render_keygen,
        render_reindex,
    )
    from ._judge import (
        RubricRow,
        RubricsDoc,
        judge_error,
        judge_outcome,
        render_judge,
        render_judge_summary,
        render_rubrics,
        rubrics_doc,
    )
    from ._locations import ChapterLines
    from ._memory import (
        CardLintDoc,
        CardShowDoc,
        FactsDoc,
        LedgerDoc,
        MentionsDoc,
        SearchDoc,
        SyncDoc,
        card_lint_doc,
        card_show_doc,
        facts_doc,
        facts_show_doc,
        findings_outcome,
        ledger_doc,
        mentions_doc,
        plan_doc,
        plan_line,
        render_card,
        render_card_lint,
        render_facts,
        render_ledger,
        render_mentions,
        render_sync,
        search_doc,
        sync_doc,
        sync_error,
        sync_outcome,
    )
    from ._models_check import render_models_check
    from ._outline_draft import outline_draft_error, outline_draft_outcome, render_outline_draft, render_outline_range
    from ._plan import plan_draft_outcome, render_plan_draft, render_plan_lint
    from ._replay import (
        gate_outcome,
        render_dry_run,
        render_gate,
        render_gate_input,
        render_register,
        render_replay_report,
        render_run,
        run_outcome,
    )
    from ._review import (
        outcome_text,
        preflight_notes,
        render_chapter,
        render_review_run,
        render_revision_diffs,
        review_error,
        review_outcome,
    )
    from ._rules_normalize import normalize_outcome, render_normalize
    from ._search import render_search
    from ._status import StatusDoc, book_status, render_status
    from ._stretch import render_stretch, stretch_plan_lines
    from ._write import render_write_run, render_write_show, write_note, write_outcome
    from ._writing import render_confirm, render_context, render_outline_lint, render_outline_show, render_verify
    from .html import ReportResult, build_report

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "CallsReport",
    "CardLintDoc",
    "CardShowDoc",
    "ChapterLines",
    "CostReport",
    "ExportResult",
    "FactsDoc",
    "KeygenResult",
    "LedgerDoc",
    "MentionsDoc",
    "ReindexResult",
    "ReportResult",
    "RubricRow",
    "RubricsDoc",
    "SearchDoc",
    "StatusDoc",
    "SyncDoc",
    "VaultRecoverReport",
    "accept_note",
    "accept_outcome",
    "bill_lines",
    "book_status",
    "build_report",
    "card_lint_doc",
    "card_show_doc",
    "check_notes",
    "check_outcome",
    "export_book",
    "facts_doc",
    "facts_show_doc",
    "findings_outcome",
    "gate_outcome",
    "judge_error",
    "judge_outcome",
    "ledger_doc",
    "lint_notes",
    "mentions_doc",
    "normalize_outcome",
    "outcome_text",
    "outline_draft_error",
    "outline_draft_outcome",
    "plan_doc",
    "plan_draft_outcome",
    "plan_line",
    "preflight_notes",
    "render_accept",
    "render_call_detail",
    "render_calls",
    "render_card",
    "render_card_lint",
    "render_chapter",
    "render_check",
    "render_confirm",
    "render_context",
    "render_cost",
    "render_draft_diff",
    "render_draft_show",
    "render_drafts",
    "render_dry_run",
    "render_export",
    "render_facts",
    "render_gate",
    "render_gate_input",
    "render_gate_show",
    "render_gate_verify",
    "render_import",
    "render_init",
    "render_judge",
    "render_judge_summary",
    "render_keygen",
    "render_ledger",
    "render_lint",
    "render_mentions",
    "render_models_check",
    "render_normalize",
    "render_outline_draft",
    "render_outline_lint",
    "render_outline_range",
    "render_outline_show",
    "render_plan_draft",
    "render_plan_lint",
    "render_register",
    "render_reindex",
    "render_reject",
    "render_replay_report",
    "render_report_written",
    "render_restore",
    "render_review_run",
    "render_revise",
    "render_revision_diffs",
    "render_revisions",
    "render_rubrics",
    "render_run",
    "render_search",
    "render_show",
    "render_stats",
    "render_status",
    "render_stretch",
    "render_sync",
    "render_vault_recover",
    "render_verify",
    "render_write_run",
    "render_write_show",
    "review_error",
    "review_notes",
    "review_outcome",
    "rubrics_doc",
    "run_outcome",
    "search_doc",
    "show_notes",
    "stretch_plan_lines",
    "sync_doc",
    "sync_error",
    "sync_outcome",
    "write_check_json",
    "write_note",
    "write_outcome",
]
