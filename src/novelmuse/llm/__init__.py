"""The model layer: structured calls to roles under a fail-closed policy, with receipts, vault and budgets.

Services reach models only through `ModelSession.call(task_call)`, where the `TaskCall` was rendered by a role
task in `roles/`; they never import a provider and never build a message. See `_policy` for the call policy,
`_receipts` for what is recorded, `_vault` for the raw vault, `_budget` for limits and the token estimator,
`_provider_scripted` for the scripted format.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_getattr

if TYPE_CHECKING:  # the public API; each name is imported from its module on first use (see novelmuse._lazy)
    from ._bill import BYTES_PER_OUTPUT_TOKEN, Bill, RoleBill, cost_to_confirm, role_bill, total_bill
    from ._budget import CallEstimate, RunBudget, estimate_input_tokens
    from ._call_detail import AttemptDetail, CallDetail, call_detail
    from ._contexts import ContextWindows
    from ._models_check import (
        NO_MODEL,
        ConfigIssue,
        ModelsCheckReport,
        RoleCheck,
        failure_hint,
        role_config_issue,
        sandbox_issues,
        validate_model_config,
    )
    from ._policy import ModelCallFailed, NotConfigured, StructuredResult
    from ._prices import PriceTable
    from ._providers import create_provider
    from ._receipts import (
        CallRecord,
        CostLine,
        CostSummary,
        Receipt,
        cost_summary,
        list_calls,
        list_receipts,
        require_run,
        run_spend,
        runs_spend,
        tasks_used,
    )
    from ._schema import model_schema_sha256, schema_sha256, strict_json_schema
    from ._session import ModelSession, recover_vault, run_is_running
    from ._task import Correction, TaskCall, TaskRef
    from ._types import (
        Contract,
        Finish,
        Message,
        Provider,
        ProviderError,
        ProviderRequest,
        ProviderResponse,
        Usage,
        Violation,
    )
    from ._vault import RecoveryReport, Vault, VaultError, check_object_name

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "BYTES_PER_OUTPUT_TOKEN",
    "NO_MODEL",
    "AttemptDetail",
    "Bill",
    "CallDetail",
    "CallEstimate",
    "CallRecord",
    "ConfigIssue",
    "ContextWindows",
    "Contract",
    "Correction",
    "CostLine",
    "CostSummary",
    "Finish",
    "Message",
    "ModelCallFailed",
    "ModelSession",
    "ModelsCheckReport",
    "NotConfigured",
    "PriceTable",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "ProviderResponse",
    "Receipt",
    "RecoveryReport",
    "RoleBill",
    "RoleCheck",
    "RunBudget",
    "StructuredResult",
    "TaskCall",
    "TaskRef",
    "Usage",
    "Vault",
    "VaultError",
    "Violation",
    "call_detail",
    "check_object_name",
    "cost_summary",
    "cost_to_confirm",
    "create_provider",
    "estimate_input_tokens",
    "failure_hint",
    "list_calls",
    "list_receipts",
    "model_schema_sha256",
    "recover_vault",
    "require_run",
    "role_bill",
    "role_config_issue",
    "run_is_running",
    "run_spend",
    "runs_spend",
    "sandbox_issues",
    "schema_sha256",
    "strict_json_schema",
    "tasks_used",
    "total_bill",
    "validate_model_config",
]
