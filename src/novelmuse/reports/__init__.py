"""Terminal, JSON and HTML renderings of what the services return, and how each command ended.

Per command: the JSON document shape (pydantic, where the service's own result is not already one), the
terminal rendering, the notes and the one error line for stderr, and the command's `errors.Outcome` (which the
CLI maps to its exit code through `errors.exit_code`).
"""

from ._book import render_import, render_init
from ._calls import CallsReport, CostReport, VaultRecoverReport, render_calls, render_cost, render_vault_recover
from ._check import check_notes, lint_notes, render_check, render_lint, render_show, show_notes
from ._export import ExportResult, export_book
from ._files import render_export, render_report_written
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
    render_card,
    render_card_lint,
    render_facts,
    render_ledger,
    render_mentions,
    render_search,
    render_sync,
    search_doc,
    sync_doc,
    sync_error,
    sync_outcome,
)
from ._models_check import render_models_check
from ._review import (
    outcome_text,
    render_chapter,
    render_review_run,
    render_revision_diffs,
    review_error,
    review_outcome,
)
from ._rules_normalize import render_normalize
from ._status import StatusDoc, book_status, render_status
from ._writing import render_confirm, render_context, render_outline_lint, render_outline_show, render_verify
from .html import ReportResult, build_report

__all__ = [
    "CallsReport",
    "CardLintDoc",
    "CardShowDoc",
    "CostReport",
    "ExportResult",
    "FactsDoc",
    "LedgerDoc",
    "MentionsDoc",
    "ReportResult",
    "RubricRow",
    "RubricsDoc",
    "SearchDoc",
    "StatusDoc",
    "SyncDoc",
    "VaultRecoverReport",
    "book_status",
    "build_report",
    "card_lint_doc",
    "card_show_doc",
    "check_notes",
    "export_book",
    "facts_doc",
    "facts_show_doc",
    "findings_outcome",
    "judge_error",
    "judge_outcome",
    "ledger_doc",
    "lint_notes",
    "mentions_doc",
    "outcome_text",
    "render_calls",
    "render_card",
    "render_card_lint",
    "render_chapter",
    "render_check",
    "render_confirm",
    "render_context",
    "render_cost",
    "render_export",
    "render_facts",
    "render_import",
    "render_init",
    "render_judge",
    "render_judge_summary",
    "render_ledger",
    "render_lint",
    "render_mentions",
    "render_models_check",
    "render_normalize",
    "render_outline_lint",
    "render_outline_show",
    "render_report_written",
    "render_review_run",
    "render_revision_diffs",
    "render_rubrics",
    "render_search",
    "render_show",
    "render_status",
    "render_sync",
    "render_vault_recover",
    "render_verify",
    "review_error",
    "review_outcome",
    "rubrics_doc",
    "search_doc",
    "show_notes",
    "sync_doc",
    "sync_error",
    "sync_outcome",
]
