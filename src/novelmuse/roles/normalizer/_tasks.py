"""The normalizer's task: `NORMALIZE` the rules.txt lines the deterministic parser could not read."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ...rules import UnparsedLine
from .._task import RoleTask
from ._contract import normalizer_contract
from .schema import NormalizerOutput


@dataclass(frozen=True)
class NormalizeRequest:
    """The unparsed lines (line number and original text) to turn into structured rules."""

    lines: Sequence[UnparsedLine]


NORMALIZE: RoleTask[NormalizeRequest, NormalizerOutput] = RoleTask(
    role="normalizer",
    name="normalize",
    schema=NormalizerOutput,
    system=("normalizer/system.txt",),
    user=("normalizer/input.txt",),
    fields=lambda r: {
        "lines_json": json.dumps([{"line": u.line, "text": u.text} for u in r.lines], ensure_ascii=False, indent=1)
    },
    contracts=lambda r: [normalizer_contract({u.line: u.text for u in r.lines})],
)
