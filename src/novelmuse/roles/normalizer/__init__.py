"""The normalizer role: rules.txt lines the parser could not read → structured rules (seed 004, second layer) —
task `NORMALIZE`, and the `muse rules normalize` step that uses it."""

from typing import TYPE_CHECKING

from ..._lazy import lazy_getattr

if TYPE_CHECKING:  # each name is imported from its module on first use (see novelmuse._lazy): the task
    # (`roles.all_tasks`) without the normalize step and the model layer it runs on
    from ._contract import MAX_LIMIT, normalizer_contract, render_rule, round_trips
    from ._normalize import (
        NOT_A_RULE_MARK,
        LineOut,
        NormalizeReport,
        RuleOut,
        apply_proposals,
        normalize_rules,
        run_normalize,
    )
    from ._tasks import NORMALIZE, NormalizeRequest
    from .schema import RULE_KINDS, LineProposal, NormalizerOutput, ProposedRule

__getattr__ = lazy_getattr(__name__, __file__)

__all__ = [
    "MAX_LIMIT",
    "NORMALIZE",
    "NOT_A_RULE_MARK",
    "RULE_KINDS",
    "LineOut",
    "LineProposal",
    "NormalizeReport",
    "NormalizeRequest",
    "NormalizerOutput",
    "ProposedRule",
    "RuleOut",
    "apply_proposals",
    "normalize_rules",
    "normalizer_contract",
    "render_rule",
    "round_trips",
    "run_normalize",
]
