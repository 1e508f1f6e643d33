"""Fixtures for judging: a throw-away book whose judge role is a scripted provider, and script builders."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from novelmuse.book import Book, find_book
from novelmuse.judging import BlindInput, BlindItem, Candidate, build_blind_item, load_rubric, panel_orders
from novelmuse.llm import Vault, list_receipts

#: A judge entry: a function of what that judge sees (its blind input) → a scripted entry, or a fixed entry.
Entry = Callable[[BlindInput], dict[str, Any]] | dict[str, Any]


def output(fn: Callable[[BlindInput], dict[str, Any]]) -> Entry:
    """A scripted entry whose `output` is computed from the judge's blind input."""
    return lambda blind: {"output": fn(blind)}


@dataclass
class Panel:
    """A book set up to judge one item with a script of judge entries, one list per slot."""

    book: Book
    item: BlindItem
    candidates: list[Candidate]
    item_id: str
    seed: str
    profile: str

    def requests(self) -> list[dict[str, Any]]:
        """Every request sent, in order, as recorded in the raw vault (exact messages)."""
        vault = Vault(self.book.vault_dir)
        receipts = list_receipts(self.book.db)
        return [json.loads(vault.read(r.request_sha256)) for r in receipts if r.outcome != "refused"]

    def seen_inputs(self) -> list[BlindInput]:
        """The blind input of each request (parsed back from the user message)."""
        out = []
        for req in self.requests():
            user = next(m for m in req["messages"] if m["role"] == "user")["content"]
            out.append(BlindInput.model_validate_json(user.split("\n", 1)[1]))
        return out


def write_script(root: Path, entries: Sequence[dict[str, Any]] | None) -> Book:
    root.mkdir(parents=True, exist_ok=True)
    toml = '[book]\ntitle = "测试"\n'
    if entries is not None:
        (root / "script.yaml").write_text(yaml.safe_dump({"judge": list(entries)}, allow_unicode=True), "utf-8")
        toml += '\n[providers.s]\nkind = "scripted"\nscript = "script.yaml"\n\n[roles]\njudge = "s:scripted-model-1"\n'
    (root / "book.toml").write_text(toml, encoding="utf-8")
    return find_book(root)


@pytest.fixture
def make_panel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Panel]:
    """`make_panel(candidates, slots=[[entries of judge 1], [judge 2], [judge 3]], profile=…)`.

    Entries for slot k are computed from the input judge k will see (panel_orders), so scripts can say
    "score whatever you see first with 5". Entries are consumed in order (judges run sequentially).
    """
    monkeypatch.setenv("MUSE_CONFIG", str(tmp_path / "no-user-config.toml"))
    counter = iter(range(1000))

    def make(
        candidates: list[Candidate],
        slots: Sequence[Sequence[Entry]] | None,
        *,
        profile: str = "quality_gate",
        item_id: str = "item-1",
        seed: str = "s",
        **build: Any,
    ) -> Panel:
        item = build_blind_item(item_id=item_id, seed=seed, rubric=load_rubric(profile), candidates=candidates, **build)
        orders = panel_orders(item.blind.candidate_ids)
        entries: list[dict[str, Any]] | None = None
        if slots is not None:
            entries = []
            for slot, slot_entries in enumerate(slots, 1):
                seen = item.blind.in_order(orders[(slot - 1) % 3 + 1])  # slots 4+ serve later runs
                entries += [e(seen) if callable(e) else e for e in slot_entries]
        book = write_script(tmp_path / f"book{next(counter)}", entries)
        return Panel(book, item, candidates, item_id, seed, profile)

    return make
