"""The one JSON style of judging's own documents (panel reports, `muse judge`, `muse judge-summary`): snake_case.

Schema v2 renamed every key from the camelCase of v1 (`candidateId` → `candidate_id`). Panel reports of v1
stay readable from the store — each field also accepts its camelCase name — and verifiable: a v1 report's
sha256 is recomputed over its camelCase form (`PanelReport.verify`). What a judge model reads and answers in
(the blind input, the judge report contract) keeps the seed's field names; it is not this style.
"""

from __future__ import annotations

from pydantic import AliasChoices, AliasGenerator, BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


def _either(field: str) -> AliasChoices:
    return AliasChoices(field, to_camel(field))


class JudgeDoc(BaseModel):
    """Base of judging's output documents: snake_case fields; their v1 camelCase names accepted when reading and
    produced by `model_dump(by_alias=True)` (only to check a v1 report's sha256)."""

    model_config = ConfigDict(alias_generator=AliasGenerator(validation_alias=_either, serialization_alias=to_camel))
