"""MkDocs hook: the reference pages that are generated from the code, so they cannot drift from it.

A page asks for a generated block with a marker line of its own, e.g. ``<!-- generated: configuration -->``;
`on_page_markdown` replaces the marker with the block, built at build time from:

- ``configuration``: the pydantic models of book.toml (`novelmuse.book.BookConfig` and its tables) — every key,
  its type, default, allowed values, the seeds' caps, and its description;
- ``errors``: the error registry (`novelmuse.errors.registry()`) — every code, its exit code, cause and fix;
- ``json``: the pydantic models of every command's ``--json`` document.

The same functions are called by the tests (tests/docs/), which import this file by its path.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo

MARKER = re.compile(r"^<!-- generated: ([a-z_]+) -->$", re.MULTILINE)


# ---------------------------------------------------------------------------------------------------- configuration


def _unwrap(annotation: Any) -> tuple[Any, list[Any]]:
    """The annotation without `Annotated[...]`, and the metadata it carried."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *meta = typing.get_args(annotation)
        inner, more = _unwrap(base)
        return inner, [*meta, *more]
    return annotation, []


def _type_text(annotation: Any) -> str:
    """A TOML-minded name of a field's type: integer, decimal, true/false, text, one of "a" / "b", a list of …"""
    annotation, _ = _unwrap(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " or ".join(_type_text(a) for a in parts)
    if origin is typing.Literal:
        return " / ".join(f'`"{v}"`' for v in typing.get_args(annotation))
    if origin is list:
        return f"list of {_type_text(typing.get_args(annotation)[0])}"
    if origin is dict:
        return f"table of {_type_text(typing.get_args(annotation)[1])}"
    names = {int: "integer", float: "number", bool: "true / false", str: "text"}
    if annotation in names:
        return names[annotation]
    return getattr(annotation, "__name__", str(annotation))


def _constraints(field: FieldInfo) -> list[Any]:
    meta = list(field.metadata)
    _, inner = _unwrap(field.annotation)
    meta += inner
    for arg in typing.get_args(field.annotation):  # `Seconds | None`: the alias's metadata sits in the union
        meta += _unwrap(arg)[1]
    out: list[Any] = []
    for m in meta:
        if isinstance(m, FieldInfo):
            out += m.metadata
        else:
            out.append(m)
    return out


def _allowed_text(field: FieldInfo) -> str:
    """The bounds of a value: `1–256`, `> 0, ≤ 604800`, `≤ 64 characters`, a pattern."""
    bound: dict[str, Any] = {}
    for m in _constraints(field):
        for attr in ("ge", "gt", "le", "lt", "min_length", "max_length", "pattern"):
            value = getattr(m, attr, None)
            if value is not None:
                bound[attr] = value
    parts = []
    if "ge" in bound and "le" in bound:
        parts.append(f"{_number(bound['ge'])}–{_number(bound['le'])}")
    else:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            if attr in bound:
                parts.append(f"{sign} {_number(bound[attr])}")
    if "gt" in bound and "le" in bound and "ge" not in bound:
        parts = [f"> {_number(bound['gt'])}, ≤ {_number(bound['le'])}"]
    if "max_length" in bound:
        low = bound.get("min_length", 0)
        parts.append(f"{low}–{bound['max_length']:,} characters" if low else f"≤ {bound['max_length']:,} characters")
    if "pattern" in bound:
        parts.append(f"matches `{bound['pattern']}`")
    return "; ".join(parts)


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1000:
        return f"{int(value):,}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    value = field.get_default(call_default_factory=True)
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, int | float):
        return f"`{_number(value)}`"
    if isinstance(value, dict | list) and not value:
        return "empty"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _key_table(model: type[BaseModel], caps: dict[str, int | float], skip: Iterable[str] = ()) -> list[str]:
    rows = ["| key | type | default | allowed | what it does |", "|---|---|---|---|---|"]
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        allowed = _allowed_text(field)
        if name in caps:
            cap = f"**at most {_number(caps[name])}** (the product's cap: a book may lower it, never raise it)"
            allowed = f"{allowed}; {cap}" if allowed else cap
        if not field.description:
            raise ValueError(f"{model.__name__}.{name} has no description: add Field(description=...)")
        cells = [f"`{name}`", _type_text(field.annotation), _default_text(field), allowed, field.description]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return rows


def configuration_reference() -> str:
    """Every table and key of book.toml, from its pydantic models."""
    from novelmuse.book import ROLE_NAMES, SEED_CAPS, USER_TABLES, BookConfig, Price, ProviderConfig

    out: list[str] = []
    for table, field in BookConfig.model_fields.items():
        if not field.description:
            raise ValueError(f"BookConfig.{table} has no description: add Field(description=...)")
        out += [f"## `[{table}]` {{#{table}}}", "", field.description, ""]
        if table in USER_TABLES:
            out += ["May also be set in the [user config](#the-user-config); the book's values win per key.", ""]
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += [*_key_table(annotation, SEED_CAPS.get(table, {})), ""]
        elif table == "providers":
            union = typing.get_args(_unwrap(ProviderConfig)[0])
            for kind_model in union:
                kind = typing.get_args(kind_model.model_fields["kind"].annotation)[0]
                doc = (kind_model.__doc__ or "").strip().split("\n\n")[0]
                out += [f'### `kind = "{kind}"` {{#provider-{kind}}}', "", _strip_history(doc), ""]
                out += [*_key_table(kind_model, {}, skip=("kind",)), ""]
        elif table == "roles":
            names = ", ".join(f"`{r}`" for r in ("default", *ROLE_NAMES))
            out += [
                f'Keys: {names}. Each value is `"provider:full-model-id"`, the provider a name in `[providers]`.',
                "",
            ]
        elif table == "prices":
            out += ['One table per model id, `[prices."deepseek-chat"]`:', "", *_key_table(Price, {}), ""]
        elif table == "context_windows":
            out += ['Keys are `"provider:full-model-id"` as in `[roles]`; values are integers, 1–100,000,000.', ""]
        else:
            raise ValueError(f"book.toml table [{table}] has no renderer in docs/_hooks/generated.py")
    return "\n".join(out)


def _strip_history(text: str) -> str:
    """Drop parenthesised references to the design documents from a docstring shown to users."""
    return re.sub(r"\s*\((?:seed|issue) [^)]*\)", "", " ".join(text.split()))


# ---------------------------------------------------------------------------------------------------- errors


def errors_reference() -> str:
    """Every registered error code: exit code, cause, fix — grouped by area."""
    from novelmuse.errors import AREAS, exit_code, registry

    out: list[str] = []
    codes = registry()
    for area, title in AREAS.items():
        entries = sorted((c for c in codes.values() if c.area == area), key=lambda c: c.code)
        if not entries:
            continue
        out += [f"## {title} {{#area-{area}}}", ""]
        for c in entries:
            out += [f"### `{c.code}` {{#{c.code.lower()}}}", ""]
            out += [f"**exit {exit_code(c.outcome)}** ({c.outcome.replace('_', ' ')}) — {c.cause}", ""]
            out += [f"*Fix:* {c.fix}", ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------------- JSON shapes

#: Each command's --json document, by the public name of its pydantic model.
JSON_DOCUMENTS: tuple[tuple[str, str], ...] = (
    ("muse init", "book.InitResult"),
    ("muse import", "book.ImportReport"),
    ("muse check", "rules.CheckReport"),
    ("muse rules lint", "rules.LintReport"),
    ("muse rules show", "rules.ShowReport"),
    ("muse models check", "llm.ModelsCheckReport"),
    ("muse calls", "reports.CallsReport"),
    ("muse cost", "reports.CostReport"),
    ("muse vault recover", "reports.VaultRecoverReport"),
    ("muse cards show", "reports.CardShowDoc"),
    ("muse cards lint", "reports.CardLintDoc"),
    ("muse ledger", "reports.LedgerDoc"),
    ("muse search", "reports.SearchDoc"),
    ("muse mentions", "reports.MentionsDoc"),
    ("muse sync", "reports.SyncDoc"),
    ("muse facts", "reports.FactsDoc"),
    ("muse outline show", "writing.OutlineShowDoc"),
    ("muse outline lint", "writing.OutlineLintDoc"),
    ("muse outline draft N", "replay.OutlineStageDoc"),
    ("muse outline draft A-B", "replay.OutlineRangeDoc"),
    ("muse plan lint", "writing.PlanLintDoc"),
    ("muse plan draft / extend", "replay.PlanStageDoc"),
    ("muse context", "writing.ContextDoc"),
    ("muse context verify", "writing.VerifyDoc"),
    ("muse write", "writing.WriteDoc"),
    ("muse write show", "writing.WriteShowDoc"),
    ("muse review", "writing.ReviewGateRun"),
    ("muse judge", "judging.JudgeOutcome"),
    ("muse judge-summary", "judging.JudgeSummary"),
    ("muse rubrics", "reports.RubricsDoc"),
    ("muse report", "reports.ReportResult"),
    ("muse status", "reports.StatusDoc"),
    ("muse export", "reports.ExportResult"),
    ("muse replay register", "replay.RegisterDoc"),
    ("muse replay run --dry-run", "replay.DryRunDoc"),
    ("muse replay run / status", "replay.RunDoc"),
    ("muse replay report", "replay.ReplayReport"),
    ("muse gate input", "replay.GateInputDoc"),
    ("muse gate evaluate", "replay.GateDoc"),
    ("muse gate verify / show", "replay.VerifyReport"),
    ("muse gate keygen", "reports.KeygenResult"),
    ("muse gate reindex", "reports.ReindexResult"),
)


def _model(ref: str) -> type[BaseModel]:
    import importlib

    package, name = ref.split(".")
    model = getattr(importlib.import_module(f"novelmuse.{package}"), name)
    assert isinstance(model, type) and issubclass(model, BaseModel), ref
    return model


def _schema_type(schema: dict[str, Any], link: Callable[[str], str]) -> str:
    if "$ref" in schema:
        return link(schema["$ref"].rsplit("/", 1)[-1])
    if "enum" in schema:
        return " | ".join(f"`{v}`" for v in schema["enum"])
    if "const" in schema:
        return f"`{schema['const']}`"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            parts = [s for s in schema[key] if s.get("type") != "null"]
            text = " or ".join(_schema_type(s, link) for s in parts)
            return f"{text} or null" if len(parts) < len(schema[key]) else text
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items:
            return f"[{_schema_type(items, link)}]"
        prefix = schema.get("prefixItems")
        if prefix:
            return "[" + ", ".join(_schema_type(s, link) for s in prefix) + "]"
        return "array"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"{{name: {_schema_type(extra, link)}}}"
        return "object"
    return str(kind or "any")


def json_reference() -> str:
    """Each command's --json document: a table of its fields, and one of every model it nests (once per page)."""
    out: list[str] = []
    index = ["| command | document |", "|---|---|"]
    anchors: dict[str, str] = {}  # canonical JSON of a shape → its anchor: one section per distinct shape

    for command, ref in JSON_DOCUMENTS:
        model = _model(ref)
        schema = model.model_json_schema(mode="serialization")
        defs: dict[str, Any] = schema.pop("$defs", {})
        queue = [(model.__name__, schema), *defs.items()]
        local: dict[str, str] = {}  # this document's shape names → anchors (two models may share a name)
        fresh: list[tuple[str, str, dict[str, Any]]] = []
        for name, body in queue:
            key = json.dumps(body, sort_keys=True)
            if key not in anchors:
                anchor = name.lower()
                taken = set(anchors.values())
                n = 2
                while anchor in taken:
                    anchor, n = f"{name.lower()}-{n}", n + 1
                anchors[key] = anchor
                fresh.append((name, anchor, body))
            local[name] = anchors[key]

        def link(name: str, local: dict[str, str] = local) -> str:
            return f"[{name}](#{local[name]})"

        index.append(f"| `{command} --json` | {link(model.__name__)} |")
        for name, anchor, body in fresh:
            out += [f"### {name} {{#{anchor}}}", ""]
            props: dict[str, Any] = body.get("properties", {})
            if not props:
                out += [f"{_schema_type(body, link)}", ""]
                continue
            out += ["| field | type |", "|---|---|"]
            for field, spec in props.items():
                out.append(f"| `{field}` | {_cell(_schema_type(spec, link))} |")
            out.append("")
    return "\n".join([*index, "", *out])


GENERATORS: dict[str, Callable[[], str]] = {
    "configuration": configuration_reference,
    "errors": errors_reference,
    "json": json_reference,
}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace each ``<!-- generated: NAME -->`` line with its generated block (a problem fails the build)."""
    from mkdocs.exceptions import PluginError

    try:
        return MARKER.sub(lambda m: GENERATORS[m.group(1)](), markdown)
    except (KeyError, ValueError) as exc:
        raise PluginError(f"docs/_hooks/generated.py: {exc}") from exc
