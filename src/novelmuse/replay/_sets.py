"""Pre-registered evaluation sets (issue 12 item 1): `muse replay register SET.yaml`.

A set file names the items of an experiment; registering it checks every item against the book *now* and
freezes it as one canonical document pinned by its sha256 (in the store and in
``.muse/replay/sets/<sha256>.json``). A run refers to a registered set only; editing the file and registering
it again makes a new set (the old one stays, with the runs that used it).

A **writer** item is a frozen replay of chapter N: the confirmed outline of N (by the sha256 the set names), the
scene type it was registered with (the outline's own), the oracle assertions the blind panel must give a
verdict on, and the snapshot of the book as of N−1 (the sha256 of every chapter file before N) — a run refuses
a book whose chapters before N changed since (REPLAY_SET_STALE), so every run of a set writes from the same
text. A **fine_outline** item (seed 000 fine_outline_replay) names chapter N, the reference scaffold the judges
compare against (a fine outline file, by sha256) and the outline drafts to judge per arm (files, by sha256);
the judges never see the target chapter's text. An **outliner** item (the fine-outline agent's own gates) names
chapter N and its reference scaffold only: a run drafts the outline with the outliner, arm A without the story
memory and arm C with it, from the snapshot as of N−1; the reference's hard items are the targets the reference
lint and the panel give verdicts on, and its scene type is the item's.

Set file::

    name: sanguo-early            # a label (letters, digits, - _ .)
    kind: writer                  # writer (default) | outliner | fine_outline
    book: 三国演义（前十回）        # optional: the book's title; registering into another book is refused
    items:
      - id: ch11
        chapter: 11
        outline_sha256: 9f0c…     # the confirmed outline of chapter 11 (`muse outline confirm 11` prints it)
        scene_type: battle
        assertions:
          - {id: a1, text: 关羽斩管亥，北海之围解}
      - id: fo12                  # kind: fine_outline
        chapter: 12
        reference: {path: refs/0012.yaml, sha256: …}
        drafts: {A: {path: .muse/drafts/outlines/0012-1a2b3c4d5e6f.yaml, sha256: …}, C: {…}}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..book import (
    SCENE_TYPES,
    Book,
    FineOutline,
    SceneType,
    atomic_write_bytes,
    load_yaml_lines,
    parse_outline,
    read_chapter_file,
    read_user_file,
    validate_located,
)
from ..errors import FailedClosed, InputError
from ..store import transaction, utc_now
from ..text import canonical_json, edit_distance, sha256_hex, sha256_json
from ..writing import confirmation, read_outline
from ._input import ITEM_ID, SHA256
from ._spec import Arm, GateSpec, load_gate_spec

SET_SCHEMA: Final = "replay-set-v1"
SetKind = Literal["writer", "fine_outline", "outliner"]
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"
_ASSERTION_ID = r"^[A-Za-z0-9][A-Za-z0-9_\-.]{0,63}$"
MAX_ITEMS: Final = 1_000
MAX_ASSERTIONS: Final = 50


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Assertion(_Strict):
    """An oracle assertion: a statement the blind panel says pass / fail / unknown on, per candidate."""

    id: str = Field(pattern=_ASSERTION_ID)
    text: str = Field(min_length=1, max_length=2_000)


class PinnedFile(_Strict):
    """A file inside the book, by its path (relative to the book) and the sha256 of its bytes."""

    path: str = Field(min_length=1, max_length=500)
    sha256: str = Field(pattern=SHA256)

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or "\\" in value or "\x00" in value or ".." in value.split("/"):
            raise ValueError("a path inside the book, relative to it (no .., no leading /)")
        return value


class ItemIn(_Strict):
    """One item as the set file writes it."""

    id: str = Field(pattern=ITEM_ID)
    chapter: int = Field(ge=0, le=99_999, strict=True)
    scene_type: SceneType | None = None
    outline_sha256: str | None = Field(default=None, pattern=SHA256)
    assertions: list[Assertion] = Field(default=[], max_length=MAX_ASSERTIONS)
    reference: PinnedFile | None = None
    drafts: dict[Arm, PinnedFile] = {}


class SetIn(_Strict):
    """A set file (see the module doc)."""

    name: str = Field(pattern=_NAME)
    kind: SetKind = "writer"
    book: str | None = Field(default=None, min_length=1, max_length=200)
    items: list[ItemIn] = Field(min_length=1, max_length=MAX_ITEMS)

    @model_validator(mode="after")
    def _shape(self) -> SetIn:
        ids = [i.id for i in self.items]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"item id(s) {', '.join(dup)} used twice")
        chapters = [i.chapter for i in self.items]
        dup_ch = sorted({c for c in chapters if chapters.count(c) > 1})
        if dup_ch:
            raise ValueError(f"chapter(s) {', '.join(map(str, dup_ch))} named by two items (one item per chapter)")
        for item in self.items:
            aids = [a.id for a in item.assertions]
            if len(set(aids)) != len(aids):
                raise ValueError(f"item {item.id}: an assertion id is used twice")
            if self.kind == "writer":
                if item.outline_sha256 is None or item.scene_type is None:
                    raise ValueError(f"item {item.id}: a writer item needs outline_sha256 and scene_type")
                if item.reference is not None or item.drafts:
                    raise ValueError(f"item {item.id}: reference and drafts belong to fine_outline items")
            else:
                if item.reference is None:
                    raise ValueError(f"item {item.id}: a {self.kind} item needs its reference scaffold (reference)")
                if self.kind == "fine_outline" and not item.drafts:
                    raise ValueError(f"item {item.id}: a fine_outline item needs the drafts to judge (drafts)")
                if self.kind == "outliner" and item.drafts:
                    raise ValueError(f"item {item.id}: an outliner item's drafts are written by the run (no drafts)")
                if item.outline_sha256 is not None:
                    raise ValueError(f"item {item.id}: outline_sha256 belongs to writer items (use reference)")
        return self


class HardTarget(_Strict):
    """A hard constraint of a writer item's confirmed outline: its id and outline kind (event, result, …)."""

    kind: str = Field(pattern=r"^[a-z][a-z_]{0,31}$")
    id: str = Field(min_length=1, max_length=200)


class SetItem(_Strict):
    """One registered item (frozen: everything a run needs to check it is still the same experiment)."""

    item_id: str = Field(pattern=ITEM_ID)
    chapter: int = Field(ge=0)
    scene_type: SceneType | None
    outline_sha256: str | None = Field(default=None, pattern=SHA256)  # writer: the confirmed outline of N
    snapshot_sha256: str = Field(pattern=SHA256)  # the chapter files before N, as registered
    chapters_before: int = Field(ge=0)
    assertions: list[Assertion]
    targets: list[HardTarget] = []  # writer: the outline's hard constraints, the panel's and detector's targets
    outline_entities: int = Field(default=0, ge=0)  # writer: the outline's entities (the context plan's)
    new_characters: int = Field(default=0, ge=0)  # writer: of them, those never mentioned before N
    reference: PinnedFile | None = None  # fine_outline: the reference scaffold
    drafts: dict[Arm, PinnedFile] = {}  # fine_outline: the drafts to judge, per arm


class RegisteredSet(_Strict):
    """A registered set: the canonical document whose sha256 names it."""

    schema_version: Literal["replay-set-v1"] = SET_SCHEMA
    name: str
    kind: SetKind
    book: str
    items: list[SetItem] = Field(min_length=1)

    def canonical(self) -> str:
        """The stored, hashed body."""
        return canonical_json(self.model_dump(mode="json"))

    @property
    def sha256(self) -> str:
        """The set's identity."""
        return sha256_hex(self.canonical())

    def item(self, item_id: str) -> SetItem:
        """The item `item_id` (KeyError when the set has none)."""
        for i in self.items:
            if i.item_id == item_id:
                return i
        raise KeyError(item_id)

    @property
    def arms_available(self) -> list[Arm]:
        """The arms a run may use: A, B, C for writer sets; A and C for outliner sets (the fine-outline gates'
        baseline and candidate); the arms every item has a draft of for fine_outline."""
        if self.kind == "writer":
            return ["A", "B", "C"]
        if self.kind == "outliner":
            return ["A", "C"]
        common = set.intersection(*(set(i.drafts) for i in self.items))
        return sorted(common)


class RegisterDoc(BaseModel):
    """`muse replay register --json`."""

    schema_version: int = 1
    ok: bool = True
    sha256: str
    name: str
    kind: SetKind
    items: int
    newly_registered: bool
    path: str  # the canonical document, relative to the book
    scene_types: dict[str, int]
    notes: list[str]


def sets_dir(book: Book) -> Path:
    """``.muse/replay/sets`` of the book."""
    return book.state_dir / "replay" / "sets"


def set_location(book: Book, sha256: str) -> str:
    """The registered set's document, relative to the book (what a gate receipt binds)."""
    return str((sets_dir(book) / f"{sha256}.json").relative_to(book.root))


def private_dirs(book: Book, folder: Path) -> None:
    """Create `folder` and its parents below ``.muse`` as private folders (0700)."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    for path in (folder, *folder.parents):
        if path == book.state_dir:
            break
        os.chmod(path, 0o700)


def snapshot_of(book: Book, chapter: int) -> tuple[str, int]:
    """(sha256 of the chapter files before `chapter`, how many there are): the frozen text an item writes from."""
    shas = [[n, read_chapter_file(n, p).sha256] for n, p in sorted(book.chapter_paths().items()) if n < chapter]
    return sha256_json(shas), len(shas)


def _refuse(code: str, what: str, where: str, fix: str) -> InputError:
    return InputError(code, what, where, fix)


def _pinned(book: Book, pinned: PinnedFile, what: str, where: str) -> bytes:
    """The bytes of a pinned file inside the book, refused unless they still hash to its pin."""
    data = read_user_file(book.root / pinned.path, what=what, kind="REPLAY_SET_FILE", book_root=book.root)
    digest = sha256_hex(data)
    if digest != pinned.sha256:
        raise _refuse(
            "REPLAY_SET_PIN",
            f"the {what} {pinned.path} has sha256 {digest}, the set pins {pinned.sha256}",
            where,
            "pin the file as it is (its sha256), or restore it",
        )
    return data


def _distinct_ids(item: ItemIn, outline: FineOutline, what: str, where: str) -> None:
    """REPLAY_SET_ASSERTION_ID when an oracle assertion shares an id with an item of `outline` (verdicts are keyed
    by id: the two would be one target)."""
    ids = {i.id for i in outline.items()}
    clash = sorted(a.id for a in item.assertions if a.id in ids)
    if clash:
        raise _refuse(
            "REPLAY_SET_ASSERTION_ID",
            f"item {item.id}: assertion id(s) {', '.join(clash)} are also ids of {what}",
            where,
            "give the oracle assertions their own ids (e.g. a1, a2)",
        )


def _writer_item(book: Book, item: ItemIn, where: str) -> SetItem:
    outline = read_outline(book, item.chapter)
    state = confirmation(book, outline)
    if state.state != "confirmed" or outline.sha256 != item.outline_sha256:
        now = f"sha256 {outline.sha256} ({state.state})"
        raise _refuse(
            "REPLAY_SET_OUTLINE",
            f"item {item.id}: the set names outline sha256 {item.outline_sha256} for chapter {item.chapter}, the "
            f"book's outline is {now}",
            where,
            f"confirm the outline (`muse outline confirm {item.chapter}`) and name its sha256 in the set",
        )
    if outline.scene_type != item.scene_type:
        raise _refuse(
            "REPLAY_SET_SCENE_TYPE",
            f"item {item.id}: scene type {item.scene_type} in the set, {outline.scene_type} in the confirmed outline",
            where,
            "pre-register the outline's own scene type (the panel scores narrative_tension by it)",
        )
    _distinct_ids(item, outline, "the outline", where)
    if not outline.constraint_ids() and not item.assertions:
        raise _refuse(
            "REPLAY_SET_NO_TARGETS",
            f"item {item.id}: the outline of chapter {item.chapter} has no hard constraint and the item no assertion",
            where,
            "a panel needs something to give verdicts on: add hard events or oracle assertions",
        )
    snapshot, before = snapshot_of(book, item.chapter)
    from ..writing import build_context  # the context builder: only to register a set (not for `muse gate show`)

    entities = build_context(book, item.chapter, arm="A").manifest.entities
    return SetItem(
        item_id=item.id,
        chapter=item.chapter,
        scene_type=item.scene_type,
        outline_sha256=item.outline_sha256,
        snapshot_sha256=snapshot,
        chapters_before=before,
        assertions=list(item.assertions),
        targets=[HardTarget(kind=i.kind, id=i.id) for i in outline.items() if i.hard],
        outline_entities=len(entities),
        new_characters=sum(1 for e in entities if e.last_seen is None),
    )


def _fine_outline_item(book: Book, item: ItemIn, where: str, kind: SetKind = "fine_outline") -> SetItem:
    assert item.reference is not None
    data = _pinned(book, item.reference, "reference scaffold", where)
    reference = parse_outline(book.root / item.reference.path, data.decode("utf-8-sig"))
    if reference.chapter != item.chapter:
        raise _refuse(
            "REPLAY_SET_REFERENCE",
            f"item {item.id}: the reference scaffold is the outline of chapter {reference.chapter}, not {item.chapter}",
            where,
            "pin the reference outline of the item's own chapter",
        )
    for arm, draft in item.drafts.items():
        _pinned(book, draft, f"arm {arm} draft", where)
    _distinct_ids(item, reference, "the reference scaffold", where)
    snapshot, before = snapshot_of(book, item.chapter)
    scene_type: SceneType | None = item.scene_type
    targets: list[HardTarget] = []
    if kind == "outliner":  # the fine-outline gates: the reference's hard items are the lint's and panel's targets
        scene_type, targets = _outliner_targets(item, reference, where)
    return SetItem(
        item_id=item.id,
        chapter=item.chapter,
        scene_type=scene_type,
        snapshot_sha256=snapshot,
        chapters_before=before,
        assertions=list(item.assertions),
        targets=targets,
        reference=item.reference,
        drafts=dict(sorted(item.drafts.items())),
    )


def _outliner_targets(item: ItemIn, reference: FineOutline, where: str) -> tuple[SceneType, list[HardTarget]]:
    """An outliner item's scene type (its reference scaffold's own) and targets (the scaffold's hard items)."""
    if reference.scene_type is None or (item.scene_type is not None and item.scene_type != reference.scene_type):
        said = f"{item.scene_type} in the set, " if item.scene_type is not None else ""
        raise _refuse(
            "REPLAY_SET_SCENE_TYPE",
            f"item {item.id}: {said}{reference.scene_type or 'none'} in the reference scaffold",
            where,
            "give the reference scaffold its scene_type (the gates count items per scene type)",
        )
    targets = [HardTarget(kind=i.kind, id=i.id) for i in reference.items() if i.hard]
    if not targets:
        raise _refuse(
            "REPLAY_SET_NO_TARGETS",
            f"item {item.id}: the reference scaffold of chapter {item.chapter} has no hard item",
            where,
            "a reference scaffold names the hard events, foreshadows and hook a draft must cover",
        )
    return reference.scene_type, targets


def read_set_file(book: Book, path: Path) -> tuple[RegisteredSet, bytes]:
    """Parse and check a set file against the book now: the registered document it gives, and the file's bytes."""
    data = read_user_file(path, what="set file", kind="REPLAY_SET")
    raw = load_yaml_lines(path, code_prefix="REPLAY_SET", text=data.decode("utf-8-sig", errors="strict"))
    parsed = validate_located(
        SetIn, raw, path, code="REPLAY_SET_INVALID", fix="fix the set file (see docs/guide/replay.md#set-files)"
    )
    title = book.config.book.title
    if parsed.book is not None and parsed.book != title:
        raise _refuse(
            "REPLAY_SET_BOOK",
            f"the set is for the book {parsed.book!r}, this book is {title!r}",
            str(path),
            "register it in its own book (--book DIR)",
        )
    items = [
        _writer_item(book, item, f"{path} item {item.id}")
        if parsed.kind == "writer"
        else _fine_outline_item(book, item, f"{path} item {item.id}", parsed.kind)
        for item in parsed.items
    ]
    _refuse_duplicates(book, parsed, path)
    doc = RegisteredSet(name=parsed.name, kind=parsed.kind, book=title, items=sorted(items, key=lambda i: i.item_id))
    return doc, data


def outline_similarity(a: FineOutline, b: FineOutline) -> float:
    """How alike two outlines are: 1 − character edit distance / the longer length, over the texts of their items
    (goal, hard events and results, foreshadows, hook, …) in order, their ids left out — an outline copied to another
    chapter with its ids renumbered is 1.0."""
    x, y = ("\n".join(f"{i.kind}:{i.text}" for i in o.items()) for o in (a, b))
    longest = max(len(x), len(y))
    return 1.0 if longest == 0 else 1 - edit_distance(x, y) / longest


def _refuse_duplicates(book: Book, parsed: SetIn, path: Path) -> None:
    """REPLAY_SET_DUPLICATE when two items are one experiment: the same outline bytes, or outlines alike beyond the
    gate spec's `max_outline_similarity` (a set filled with copies of one outline would meet the set-size minimums
    while measuring one item)."""
    bound = spec_of(parsed.kind).set.max_outline_similarity
    outlines: list[tuple[str, FineOutline]] = []
    for item in parsed.items:
        if parsed.kind == "writer":
            outlines.append((item.id, read_outline(book, item.chapter)))
        elif item.reference is not None:
            data = _pinned(book, item.reference, "reference scaffold", str(path))
            outlines.append((item.id, parse_outline(book.root / item.reference.path, data.decode("utf-8-sig"))))
    for k, (id_a, a) in enumerate(outlines):
        for id_b, b in outlines[k + 1 :]:
            same = a.sha256 == b.sha256
            alike = 1.0 if same else outline_similarity(a, b) if bound is not None else 0.0
            if same or (bound is not None and alike >= bound):
                how = "the same outline" if same else f"outlines {alike:.0%} alike (the bound is {bound:.0%})"
                raise _refuse(
                    "REPLAY_SET_DUPLICATE",
                    f"items {id_a} and {id_b} are one experiment: {how}",
                    f"{path} items {id_a}, {id_b}",
                    "register distinct chapters with their own outlines: a copied item adds nothing a gate can count",
                )


def spec_of(kind: SetKind) -> GateSpec:
    """The gate spec a set of `kind` is measured by: the writer's, or the fine-outline stage's for outliner sets."""
    return load_gate_spec(stage="fine_outline" if kind == "outliner" else "writer")


def _notes(doc: RegisteredSet) -> list[str]:
    if doc.kind == "fine_outline":
        return []
    rule = spec_of(doc.kind).set
    counts = _scene_types(doc)
    notes = []
    if len(doc.items) < rule.min_items:
        notes.append(f"{len(doc.items)} items < {rule.min_items}: a gate on this set will be insufficient")
    for scene, n in counts.items():
        if n < rule.min_items_per_scene_type:
            notes.append(f"{n} item(s) of scene type {scene} < {rule.min_items_per_scene_type}: insufficient")
    return notes


def _scene_types(doc: RegisteredSet) -> dict[str, int]:
    counts = {s: sum(1 for i in doc.items if i.scene_type == s) for s in SCENE_TYPES}
    return {s: n for s, n in counts.items() if n}


def register_set(book: Book, path: Path) -> RegisterDoc:
    """Register the set file at `path` (idempotent: the same content registers once)."""
    doc, data = read_set_file(book, path)
    body = doc.canonical()
    sha = sha256_hex(body)
    folder = sets_dir(book)
    private_dirs(book, folder)
    target = folder / f"{sha}.json"
    if not (target.is_file() and not target.is_symlink() and sha256_hex(target.read_bytes()) == sha):
        atomic_write_bytes(target, body.encode("utf-8"), mode=0o600)
    with transaction(book.db) as conn:
        new = conn.execute("SELECT 1 FROM replay_sets WHERE sha256 = ?", (sha,)).fetchone() is None
        conn.execute(
            "INSERT OR IGNORE INTO replay_sets (sha256, name, kind, items, body, source, file_sha256, registered_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (sha, doc.name, doc.kind, len(doc.items), body, str(path), sha256_hex(data), utc_now()),
        )
    return RegisterDoc(
        sha256=sha,
        name=doc.name,
        kind=doc.kind,
        items=len(doc.items),
        newly_registered=new,
        path=set_location(book, sha),
        scene_types=_scene_types(doc),
        notes=_notes(doc),
    )


def load_set(book: Book, sha256: str) -> RegisteredSet:
    """The registered set `sha256`, checked: its stored body must still hash to its key (else fail closed)."""
    row = book.db.execute("SELECT body FROM replay_sets WHERE sha256 = ?", (sha256,)).fetchone()
    if row is None:
        raise _refuse("REPLAY_SET_NOT_REGISTERED", f"no registered set {sha256}", "replay_sets", "register it first")
    body = str(row[0])
    if sha256_hex(body) != sha256:
        raise FailedClosed(
            "REPLAY_SET_TAMPERED",
            f"the stored set {sha256[:12]}… no longer hashes to its name",
            "replay_sets",
            "the store was edited: register the set file again (a new set) and rerun",
        )
    return RegisteredSet.model_validate_json(body)


def resolve_set(book: Book, ref: str) -> RegisteredSet:
    """The registered set named by `ref`: its sha256 (or a unique prefix of at least 8 hex digits), its name (the
    newest registration of that name), or the path of the set file it was registered from (unchanged since)."""
    conn = book.db
    text = ref.strip()
    rows: list[tuple[str]] = []
    if len(text) >= 8 and all(c in "0123456789abcdef" for c in text):
        rows = conn.execute("SELECT sha256 FROM replay_sets WHERE sha256 LIKE ?", (text + "%",)).fetchall()
    if not rows:
        rows = conn.execute(
            "SELECT sha256 FROM replay_sets WHERE name = ? ORDER BY registered_at DESC, rowid DESC LIMIT 1", (text,)
        ).fetchall()
    if not rows and Path(text).is_file():
        digest = sha256_hex(read_user_file(Path(text), what="set file", kind="REPLAY_SET"))
        rows = conn.execute(
            "SELECT sha256 FROM replay_sets WHERE file_sha256 = ? ORDER BY registered_at DESC LIMIT 1", (digest,)
        ).fetchall()
        if not rows:
            raise _refuse(
                "REPLAY_SET_NOT_REGISTERED",
                "this set file is not registered as it is now (new, or edited since it was registered)",
                text,
                f"`muse replay register {text}` first (an edited set is a new set)",
            )
    if len(rows) > 1:
        raise _refuse("USAGE", f"{ref!r} names {len(rows)} sets", "SET", "give more digits of the sha256")
    if not rows:
        raise _refuse(
            "REPLAY_SET_NOT_REGISTERED",
            f"no registered set named {ref!r}",
            "SET",
            "use a registered set's name or sha256 (`muse replay register SET.yaml` prints both)",
        )
    return load_set(book, str(rows[0][0]))


def check_frozen(book: Book, doc: RegisteredSet) -> None:
    """REPLAY_SET_STALE (exit 2) unless every item is still the experiment it was registered as: a writer item's
    outline still confirmed with the same sha256, and the chapter files before N unchanged."""
    for item in doc.items:
        where = f"set {doc.name} item {item.item_id}"
        snapshot, _ = snapshot_of(book, item.chapter)
        if snapshot != item.snapshot_sha256:
            raise _refuse(
                "REPLAY_SET_STALE",
                f"the chapters before {item.chapter} changed since the set was registered (a frozen replay writes "
                "from the book exactly as it was)",
                where,
                "restore them, or register the set again (a new set) for the book as it is now",
            )
        if doc.kind == "writer":
            outline = read_outline(book, item.chapter)
            if outline.sha256 != item.outline_sha256 or confirmation(book, outline).state != "confirmed":
                raise _refuse(
                    "REPLAY_SET_STALE",
                    f"the outline of chapter {item.chapter} is no longer the confirmed sha256 {item.outline_sha256}",
                    where,
                    "restore and confirm it, or register the set again (a new set)",
                )
