"""The model layer: structured calls to roles under a fail-closed policy, with receipts, vault and budgets.

Services reach models only through `ModelSession` (by role and output schema); they never import a
provider. See `_policy` for the call policy, `_receipts` for what is recorded, `_vault` for the raw
vault, `_budget` for limits and the token estimator, `_provider_scripted` for the scripted format.
"""

from ._budget import RunBudget, estimate_input_tokens
from ._policy import Contract, ModelCallFailed, NotConfigured, StructuredResult, Violation
from ._prices import PriceTable
from ._providers import create_provider
from ._receipts import CallRecord, CostLine, CostSummary, Receipt, cost_summary, list_calls, list_receipts, require_run
from ._schema import schema_sha256, strict_json_schema
from ._session import ModelSession, recover_vault, run_is_running
from ._types import Finish, Message, Provider, ProviderError, ProviderRequest, ProviderResponse, Usage
from ._vault import RecoveryReport, Vault, VaultError, check_object_name

__all__ = [
    "CallRecord",
    "Contract",
    "CostLine",
    "CostSummary",
    "Finish",
    "Message",
    "ModelCallFailed",
    "ModelSession",
    "NotConfigured",
    "PriceTable",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "ProviderResponse",
    "Receipt",
    "RecoveryReport",
    "RunBudget",
    "StructuredResult",
    "Usage",
    "Vault",
    "VaultError",
    "Violation",
    "check_object_name",
    "cost_summary",
    "create_provider",
    "estimate_input_tokens",
    "list_calls",
    "list_receipts",
    "recover_vault",
    "require_run",
    "run_is_running",
    "schema_sha256",
    "strict_json_schema",
]
