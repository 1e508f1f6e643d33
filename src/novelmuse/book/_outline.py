"""The fine outline (细纲) of one chapter: ``outlines/NNNN.yaml``, confirmed by the author.

Seed 003 step 1 (已确认细纲硬事件、可调节拍、伏笔、钩子和新设定声明) and its 创作自由边界: hard events (硬事件)
each with the result the writer may not change, adjustable beats (可调节拍: the writer may split, merge and
reorder them — their order is never enforced), foreshadow operations (伏笔: plant / advance / resolve), the
chapter-end hook (钩子), new-setting declarations (新设定声明: the canonical facts the chapter introduces, each
with a kind), the pre-registered scene type of the writer_replay rubric and time anchors. Writing, the
detector, the judges and the foreshadow ledger all read it, and all name its items with the ids of
`outline_items` — one constraint-id space. Errors name the file and the line.

Version 2 (``version: 2``)::

    version: 2
    chapter: 11
    scene_type: battle                  # battle / character_dialogue / turning_point / information_reveal /
                                        # returning_character
    goal: 刘备救北海，曹操濮阳遇伏
    hard_events:                        # E<n>; the result is required (R<n> in the id space)
      - {id: E1, text: 关羽与管亥交锋, result: 关羽斩管亥，北海之围解}
    beats:                              # B<n>; adjustable, order never enforced
      - {id: B1, text: 太史慈单骑突围求救}
    foreshadows:
      - {op: plant, id: F-xuzhou, description: 陶谦欲让徐州, payoff_chapter: 12}
      - {op: advance, id: F-weapons, note: 青龙刀劈管亥}
    hook: 吕布提戟追来
    new_settings:                       # S<n>; kind: entity / state / relation / ability
      - {id: S1, kind: entity, text: 太史慈登场, entities: [太史慈]}
    time_anchors:                       # T<n>; `marker` (optional) is a phrase the text must contain
      - {id: T1, text: 次日孔融登城, marker: 次日}
    entities: [刘备, 关羽, 张飞]

Version 1 outlines (no ``version``; beats as plain strings, settings without ids or kinds, events without
results) still load: their beats and settings get positional ids (B1…, S1…) and `outline_problems` reports
what they lack as warnings.

The constraint-id space (`outline_items`): ``goal``; each hard event ``E1``…; its result ``R1``…; beats
``B1``…; foreshadow operations ``F-plant:<id>``, ``F-advance:<id>``, ``F-resolve:<id>``; ``hook``; settings
``S1``…; time anchors ``T1``…; ``entities``. Hard constraints (the detector's and judges' verdict targets) are
the events, results, foreshadow operations, hook, settings and anchors; goal, beats and entities are
citable but never block.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from ..errors import InputError
from ..text import MAX_CHAPTER_NUMBER, sha256_hex
from ._project import Book, numbered_files
from ._userfile import read_user_file
from ._yamlfile import line_of, load_yaml_lines, validate_located

_OUTLINE_NAME = re.compile(r"^(\d{1,6})\.ya?ml$")

#: The five scene types of the writer_replay rubric (seed 000 正文回放); the rubric is checked against this
#: list when it loads, so the outline and the judges always share one vocabulary.
SCENE_TYPES = ("battle", "character_dialogue", "turning_point", "information_reveal", "returning_character")
SceneType = Literal["battle", "character_dialogue", "turning_point", "information_reveal", "returning_character"]
SETTING_KINDS = ("entity", "state", "relation", "ability")
SettingKind = Literal["entity", "state", "relation", "ability"]

MAX_TEXT_CHARS = 2_000  # one outline text (event, result, beat, hook, setting, anchor)
MAX_NAME_CHARS = 64  # an entity name or an id
MAX_ITEMS = 200  # entries of one list (hard events, beats, foreshadows, settings, anchors, entities)

_ID_SHAPE = re.compile(r"^[^\W_][\w\-.]*$")
_V2_ID = {"event": re.compile(r"^E[1-9][0-9]{0,2}$"), "beat": re.compile(r"^B[1-9][0-9]{0,2}$")}
_V2_ID |= {"setting": re.compile(r"^S[1-9][0-9]{0,2}$"), "anchor": re.compile(r"^T[1-9][0-9]{0,2}$")}


def _control(text: str, allowed: str) -> str | None:
    for ch in text:
        if ch not in allowed and unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co"):
            return f"U+{ord(ch):04X}"
    return None


def _text(value: str) -> str:
    bad = _control(value, "\n\t")
    if bad:
        raise ValueError(f"control character {bad} in a text")
    if len(value) > MAX_TEXT_CHARS:
        raise ValueError(f"a text of {len(value)} characters (at most {MAX_TEXT_CHARS})")
    return value


def _required_text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return _text(value)


def _name(value: str) -> str:
    if not value.strip():
        raise ValueError("a name must not be blank")
    bad = _control(value, "")
    if bad or "\n" in value:
        raise ValueError(f"control character {bad or 'U+000A'} in a name")
    if len(value) > MAX_NAME_CHARS:
        raise ValueError(f"a name of {len(value)} characters (at most {MAX_NAME_CHARS})")
    return value


def _ident(value: str) -> str:
    if not _ID_SHAPE.match(value) or ".." in value or len(value) > MAX_NAME_CHARS:
        raise ValueError(
            f"id {value[:80]!r} must be letters, digits, '-', '_' or '.' (no '..'), start with a letter or digit "
            f"and have at most {MAX_NAME_CHARS} characters"
        )
    return value


Text = Annotated[str, AfterValidator(_text)]
RequiredText = Annotated[str, AfterValidator(_required_text)]
Name = Annotated[str, AfterValidator(_name)]
Ident = Annotated[str, AfterValidator(_ident)]
Chapter = Annotated[int, Field(ge=0, le=MAX_CHAPTER_NUMBER)]


class _Strict(BaseModel):
    # strict: YAML `true` is not a chapter, "3" is not 3, 2.5 is not a chapter; NaN is never a text
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class HardEvent(_Strict):
    """A 硬事件: must happen in the chapter, with this result (the writer may not change it)."""

    id: Ident
    text: RequiredText
    result: Text = ""  # required in version 2; version-1 outlines have none (a lint warning)


class Beat(_Strict):
    """A 可调节拍: an adjustable beat (the writer may split, merge and reorder beats)."""

    id: Ident | None = None  # required in version 2; version 1 beats are plain strings (ids B1… by position)
    text: RequiredText

    @model_validator(mode="before")
    @classmethod
    def _from_string(cls, data: Any) -> Any:
        return {"text": data} if isinstance(data, str) else data


class ForeshadowDecl(_Strict):
    """An author-declared foreshadow operation: plant 埋设 (建账), advance 强化, resolve 回收 (销账)."""

    op: Literal["plant", "advance", "resolve"]
    id: Ident
    description: Text = ""
    payoff_chapter: Chapter | None = None  # plant only: the chapter it is expected to pay off by
    note: Text = ""

    @model_validator(mode="after")
    def _shape(self) -> ForeshadowDecl:
        if self.op == "plant" and not self.description.strip():
            raise ValueError(f"plant {self.id!r} needs a description (what was planted)")
        if self.op != "plant" and self.payoff_chapter is not None:
            raise ValueError(f"payoff_chapter belongs on the plant of {self.id!r}, not on {self.op}")
        return self

    @property
    def constraint_id(self) -> str:
        """``F-plant:<id>`` / ``F-advance:<id>`` / ``F-resolve:<id>``."""
        return f"F-{self.op}:{self.id}"


class NewSetting(_Strict):
    """A 新设定声明: a canonical fact this chapter introduces, its kind and the cards it concerns (names or ids).

    A declaration of kind ``entity`` may name entities that have no card yet (it introduces them)."""

    id: Ident | None = None  # required in version 2 (S1…); positional in version 1
    kind: SettingKind | None = None  # required in version 2
    text: RequiredText
    entities: list[Name] = Field(default=[], max_length=MAX_ITEMS)


class TimeAnchor(_Strict):
    """A time anchor (时间锚点): when the chapter's events happen. `marker`, when given, is a phrase the chapter
    text must contain (the only part a deterministic check can verify; the rest is checked semantically)."""

    id: Ident
    text: RequiredText
    marker: Text = ""


class FineOutline(_Strict):
    """One chapter's fine outline (version 1 or 2)."""

    version: Literal[1, 2] = 1
    chapter: Chapter  # 0 is the prologue (序, chapters/0000.md)
    title: Text = ""
    goal: Text = ""
    scene_type: SceneType | None = None
    hard_events: list[HardEvent] = Field(default=[], max_length=MAX_ITEMS)
    beats: list[Beat] = Field(default=[], max_length=MAX_ITEMS)
    foreshadows: list[ForeshadowDecl] = Field(default=[], max_length=MAX_ITEMS)
    hook: Text = ""
    new_settings: list[NewSetting] = Field(default=[], max_length=MAX_ITEMS)
    time_anchors: list[TimeAnchor] = Field(default=[], max_length=MAX_ITEMS)
    entities: list[Name] = Field(default=[], max_length=MAX_ITEMS)

    _path: str = PrivateAttr(default="")
    _sha256: str = PrivateAttr(default="")
    _data: Any = PrivateAttr(default=None)

    @property
    def path(self) -> str:
        """The file this outline was read from ("" when built in code)."""
        return self._path

    @property
    def sha256(self) -> str:
        """sha256 of the file's bytes (what `muse outline confirm` records); of the canonical model when built
        in code."""
        return self._sha256 or sha256_hex(self.model_dump_json())

    def line(self, loc: tuple[int | str, ...]) -> int:
        """The line where the field at `loc` (e.g. ``("hard_events", 2)``) is written (1 when unknown)."""
        return line_of(self._data, loc) if self._data is not None else 1

    def foreshadow_line(self, index: int) -> int:
        """The line where `foreshadows[index]` is written (0 when unknown)."""
        return self.line(("foreshadows", index)) if self._data is not None else 0

    @property
    def plants(self) -> list[ForeshadowDecl]:
        """The foreshadows this chapter plants."""
        return [f for f in self.foreshadows if f.op == "plant"]

    def declares(self, names: set[str]) -> bool:
        """True if a new-setting declaration names any of `names` (a card's id, name or aliases)."""
        return any(e in names for s in self.new_settings for e in s.entities)

    def declared_entities(self) -> set[str]:
        """Names introduced by declarations of kind ``entity`` (they may have no card yet)."""
        return {e for s in self.new_settings if s.kind == "entity" for e in s.entities}

    def items(self) -> list[OutlineItem]:
        """Every citable item with its id in the one constraint-id space (see the module doc), in file order."""
        return outline_items(self)

    def constraint_ids(self) -> list[str]:
        """The hard constraints' ids: what the detector and the judges give a verdict on."""
        return [i.id for i in outline_items(self) if i.hard]


ItemKind = Literal["goal", "event", "result", "beat", "plant", "advance", "resolve", "hook", "setting", "anchor"]
HARD_KINDS: frozenset[str] = frozenset({"event", "result", "plant", "advance", "resolve", "hook", "setting", "anchor"})
_OP_ZH = {"plant": "埋设", "advance": "强化", "resolve": "回收"}


@dataclass(frozen=True)
class OutlineItem:
    """One citable item of a fine outline: its id in the constraint-id space, kind, text and where it is written.

    `ref` is the hard event a result belongs to, or the foreshadow id of an ``F-…`` operation."""

    id: str
    kind: ItemKind | Literal["entities"]
    text: str
    loc: tuple[int | str, ...]
    ref: str = ""

    @property
    def hard(self) -> bool:
        """True for a hard constraint (events, results, foreshadow operations, hook, settings, anchors)."""
        return self.kind in HARD_KINDS


def result_id(event_id: str) -> str:
    """The id of a hard event's result: ``R<n>`` for ``E<n>``, otherwise ``<event id>.R``."""
    m = re.fullmatch(r"E(\d+)", event_id)
    return f"R{m.group(1)}" if m else f"{event_id}.R"


def outline_items(outline: FineOutline) -> list[OutlineItem]:
    """The outline as citable items (goal, events and results, beats, foreshadow operations, hook, settings,
    time anchors, entities), each with its id in the one constraint-id space."""
    items: list[OutlineItem] = []
    if outline.goal.strip():
        items.append(OutlineItem("goal", "goal", outline.goal, ("goal",)))
    for i, ev in enumerate(outline.hard_events):
        items.append(OutlineItem(ev.id, "event", ev.text, ("hard_events", i)))
        if ev.result.strip():
            items.append(OutlineItem(result_id(ev.id), "result", ev.result, ("hard_events", i, "result"), ev.id))
    for i, beat in enumerate(outline.beats):
        items.append(OutlineItem(beat.id or f"B{i + 1}", "beat", beat.text, ("beats", i)))
    for i, f in enumerate(outline.foreshadows):
        text = f.description if f.op == "plant" else f"{_OP_ZH[f.op]}伏笔「{f.id}」" + (f"：{f.note}" if f.note else "")
        items.append(OutlineItem(f.constraint_id, f.op, text, ("foreshadows", i), f.id))
    if outline.hook.strip():
        items.append(OutlineItem("hook", "hook", outline.hook, ("hook",)))
    for i, s in enumerate(outline.new_settings):
        items.append(OutlineItem(s.id or f"S{i + 1}", "setting", s.text, ("new_settings", i)))
    for i, t in enumerate(outline.time_anchors):
        items.append(OutlineItem(t.id, "anchor", t.text, ("time_anchors", i)))
    if outline.entities:
        items.append(OutlineItem("entities", "entities", "、".join(outline.entities), ("entities",)))
    return items


@dataclass(frozen=True)
class OutlineProblem:
    """Something an outline gets wrong (error) or lacks (warning), with the field it concerns."""

    severity: Literal["error", "warning"]
    code: str
    message: str
    loc: tuple[int | str, ...]


def outline_problems(outline: FineOutline) -> list[OutlineProblem]:
    """What the outline's own text gets wrong or lacks (no cards or ledger needed; see writing's lint for those).

    Errors: an id used twice in the constraint-id space, a payoff due before the plant; in version 2 a hard
    event without a result, a beat / setting without an id, a setting without a kind, an id not shaped like its
    kind (E1, B1, S1, T1). Warnings: what a version-1 outline lacks, no scene type, no hard event, anchors
    without a marker."""
    out: list[OutlineProblem] = []
    v2 = outline.version == 2
    seen: dict[str, OutlineItem] = {}
    for item in outline_items(outline):
        first = seen.setdefault(item.id, item)
        if first is not item:
            message = f"id {item.id!r} is used twice (also by the {first.kind} at line {outline.line(first.loc)})"
            out.append(OutlineProblem("error", "OUTLINE_DUPLICATE_ID", message, item.loc))
    for i, f in enumerate(outline.foreshadows):
        if f.payoff_chapter is not None and f.payoff_chapter < outline.chapter:
            out.append(
                OutlineProblem(
                    "error",
                    "OUTLINE_PAYOFF_PAST",
                    f"plant {f.id!r} is due by chapter {f.payoff_chapter}, before chapter {outline.chapter} plants it",
                    ("foreshadows", i),
                )
            )
    no_result = [("hard_events", i) for i, ev in enumerate(outline.hard_events) if not ev.result.strip()]
    no_id = [("beats", i) for i, b in enumerate(outline.beats) if b.id is None]
    no_id += [("new_settings", i) for i, s in enumerate(outline.new_settings) if s.id is None]
    no_kind = [("new_settings", i) for i, s in enumerate(outline.new_settings) if s.kind is None]
    if v2:
        for loc in no_result:
            event = outline.hard_events[int(loc[1])].id
            out.append(OutlineProblem("error", "OUTLINE_EVENT_NO_RESULT", f"hard event {event} has no result", loc))
        for loc in no_id:
            what = "beat" if loc[0] == "beats" else "new setting"
            hint = ("B" if loc[0] == "beats" else "S") + str(int(loc[1]) + 1)
            out.append(
                OutlineProblem("error", "OUTLINE_ID_MISSING", f"{what} {int(loc[1]) + 1} has no id ({hint})", loc)
            )
        for loc in no_kind:
            out.append(
                OutlineProblem("error", "OUTLINE_SETTING_KIND", f"new setting {int(loc[1]) + 1} has no kind", loc)
            )
        shaped = [("event", e.id, ("hard_events", i)) for i, e in enumerate(outline.hard_events)]
        shaped += [("beat", b.id, ("beats", i)) for i, b in enumerate(outline.beats) if b.id]
        shaped += [("setting", s.id, ("new_settings", i)) for i, s in enumerate(outline.new_settings) if s.id]
        shaped += [("anchor", t.id, ("time_anchors", i)) for i, t in enumerate(outline.time_anchors)]
        prefix = {"event": "E", "beat": "B", "setting": "S", "anchor": "T"}
        for kind, ident, where in shaped:
            if not _V2_ID[kind].match(ident):
                message = f"{kind} id {ident!r} must be {prefix[kind]}1, {prefix[kind]}2, …"
                out.append(OutlineProblem("error", "OUTLINE_ID_SHAPE", message, where))
    else:
        lacks = [
            f"{len(no_result)} hard event(s) without a result" if no_result else "",
            f"{len(no_id)} beat(s)/setting(s) without an id" if no_id else "",
            f"{len(no_kind)} setting(s) without a kind" if no_kind else "",
            "no time anchors" if not outline.time_anchors else "",
        ]
        lacking = "; ".join(x for x in lacks if x) or "nothing else"
        out.append(
            OutlineProblem(
                "warning", "OUTLINE_VERSION_1", f"version-1 outline (add `version: 2`): {lacking}", ("chapter",)
            )
        )
    if outline.scene_type is None:
        out.append(OutlineProblem("warning", "OUTLINE_NO_SCENE_TYPE", "no scene_type (replay needs one)", ("chapter",)))
    if not outline.hard_events:
        out.append(OutlineProblem("warning", "OUTLINE_NO_HARD_EVENT", "no hard event", ("chapter",)))
    for i, t in enumerate(outline.time_anchors):
        if not t.marker.strip():
            out.append(
                OutlineProblem(
                    "warning",
                    "OUTLINE_ANCHOR_NO_MARKER",
                    f"time anchor {t.id} has no marker: only a semantic check can verify it",
                    ("time_anchors", i),
                )
            )
    return out


def parse_outline(path: Path, text: str | None = None, *, expect_chapter: int | None = None) -> FineOutline:
    """Parse and validate one outline file; errors (OUTLINE_SYNTAX / OUTLINE_INVALID / the first error of
    `outline_problems`) name file:line."""
    raw_bytes: bytes | None = None
    if text is None:
        raw_bytes = read_user_file(path, what="outline file", kind="OUTLINE")  # regular, capped, no link out
        try:
            text = raw_bytes.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(
                "OUTLINE_SYNTAX", f"not UTF-8 (byte {exc.start})", f"{path}:1", "save the file as UTF-8"
            ) from exc
    data = load_yaml_lines(path, code_prefix="OUTLINE", text=text)
    if data is None:
        raise InputError("OUTLINE_INVALID", "the file is empty", f"{path}:1", "write the chapter's fine outline")
    if not isinstance(data, dict):
        raise InputError("OUTLINE_INVALID", "an outline must be one mapping (chapter, hard_events, …)", f"{path}:1", "")
    outline = validate_located(
        FineOutline,
        data,
        path,
        code="OUTLINE_INVALID",
        fix="fix the fine outline (see docs/guide/outlines.md#fine-outlines)",
    )
    outline._data = data
    if expect_chapter is not None and outline.chapter != expect_chapter:
        raise InputError(
            "OUTLINE_CHAPTER_MISMATCH",
            f"the file is named for chapter {expect_chapter} but says chapter: {outline.chapter}",
            f"{path}:{line_of(data, ('chapter',))}",
            "rename the file or fix the chapter number",
        )
    for p in outline_problems(outline):
        if p.severity == "error":
            raise InputError(p.code, p.message, f"{path}:{outline.line(p.loc)}", "fix the fine outline")
    outline._path = str(path)
    outline._sha256 = sha256_hex(raw_bytes if raw_bytes is not None else text.encode("utf-8"))
    return outline


def outline_paths(book: Book) -> dict[int, Path]:
    """Chapter number → ``outlines/NNNN.yaml`` for every outline file (other files are ignored)."""
    return numbered_files(book.outlines_dir, _OUTLINE_NAME, code="OUTLINE_DUPLICATE", what="outline files")


def load_outline(book: Book, chapter: int) -> FineOutline | None:
    """The fine outline of `chapter`, or None when the author has not written one."""
    path = outline_paths(book).get(chapter)
    return None if path is None else parse_outline(path, expect_chapter=chapter)


def load_outlines(book: Book, *, before: int | None = None) -> dict[int, FineOutline]:
    """Every fine outline of the book by chapter number (only those of chapters < `before` when given: a
    frozen replay of chapter N never reads, or fails on, an outline of a later chapter)."""
    return {
        n: parse_outline(p, expect_chapter=n) for n, p in outline_paths(book).items() if before is None or n < before
    }
