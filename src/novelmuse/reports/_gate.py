"""Terminal rendering of `muse gate keygen`, `muse gate verify`, `muse gate show` and `muse gate reindex`.

Never prints key material: keygen shows the key file's path and the PUBLIC key only.
"""

from __future__ import annotations

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..replay import VerifyReport

_STYLE = {"passed": "green", "failed": "red", "insufficient": "yellow", "empty": "yellow"}


class KeygenResult(BaseModel):
    """`muse gate keygen --json`: where the private key was written and the public key for book.toml."""

    ok: bool = True
    key_path: str
    signer: str
    key_id: str
    book: str | None


class ReindexResult(BaseModel):
    """`muse gate reindex --json`."""

    ok: bool = True
    journal: str
    indexed: int


def render_keygen(console: Console, doc: KeygenResult) -> None:
    """The key's path (never its content) and the line to put into book.toml."""
    console.print(f"wrote a new Ed25519 signing key (key id {doc.key_id}) to {doc.key_path}", markup=False)
    console.print("keep it there and to yourself: it never goes into a book; only this key can sign its gate receipts")
    target = f" ({doc.book}/book.toml)" if doc.book else ""
    console.print(f"add this to book.toml{target}:", markup=False)
    console.print(f'[gate]\nsigner = "{doc.signer}"', markup=False)


def _head(doc: VerifyReport) -> Text:
    text = Text(f"gate journal {doc.journal}  ")
    text.append(doc.outcome, style=_STYLE[doc.outcome])
    if doc.outcome == "empty":
        text.append("  (no gate report has been issued yet)")
        return text
    text.append(
        f"  {doc.entries} entries ({doc.reports} report(s), {doc.receipts} receipt(s)), signer {doc.signer}, "
        f"{doc.signatures_checked} signature(s) and {doc.artefacts_checked} bound artefact(s) checked"
    )
    return text


def render_gate_verify(console: Console, doc: VerifyReport) -> None:
    """The outcome line, then every problem by seq, then notes."""
    console.print(_head(doc))
    if doc.head is not None:
        console.print(f"head: seq {doc.head['seq']}, sha256 {str(doc.head['sha256'])[:16]}…", markup=False)
    if doc.problems:
        table = Table("seq", "problem", "what", title="problems", title_justify="left")
        for p in doc.problems:
            table.add_row(str(p.seq) if p.seq is not None else "—", Text(p.code, style="red"), p.what)
        console.print(table)
    for note in doc.notes:
        console.print(f"note: seq {note.seq}: {note.code}: {note.what}", markup=False)


def render_gate_show(console: Console, doc: VerifyReport) -> None:
    """The evaluations per agent configuration (the writer's, the outliner's), then every report and receipt, one
    line each in chain order, under the verification outcome."""
    render_gate_verify(console, doc)
    agents = {}
    for c in doc.configurations or []:
        if c.run_config_sha256:
            agents[c.run_config_sha256] = c.agent
        name = (
            f"{c.agent} configuration {c.run_config_sha256[:16]}…" if c.run_config_sha256 else "no writer configuration"
        )
        head = Text(f"{name}{' (the book’s now)' if c.current else ''}: ", style="bold")
        head.append(f"{c.evaluations} evaluation(s) over {c.runs} replay run(s)", style="")
        console.print(head)
        for gate, latest in c.latest.items():
            line = Text(f"  Gate {gate}, latest (the one that counts): ")
            line.append(latest.outcome, style=_STYLE.get(latest.outcome, ""))
            models = f", {latest.models} models" if latest.models else ""
            receipt = f", receipt seq {latest.receipt_seq}" if latest.receipt_seq else ", no receipt"
            line.append(f" — seq {latest.seq}, run {latest.run_id}{models}{receipt}")
            console.print(line)
    if doc.listing:
        console.print("every entry, in chain order:")
    for e in doc.listing or []:
        line = Text(f"{e.seq:>5}  {e.kind:<7}  gate {e.gate}  ")
        line.append(f"{e.outcome:<12}", style=_STYLE.get(e.outcome, ""))
        line.append(f"  run {e.run_id} ({e.mode})  {e.issued_at}\n       {e.summary}")
        if e.receipt_seq:
            line.append(f" → receipt {e.receipt_seq}")
        if e.run_config_sha256:
            agent = agents.get(e.run_config_sha256, "writer")
            line.append(f"\n       earned by {agent} configuration {e.run_config_sha256[:16]}…")
        console.print(line)


def render_reindex(console: Console, doc: ReindexResult) -> None:
    """How many entries the rebuilt index holds."""
    console.print(f"rebuilt the gate index from {doc.journal}: {doc.indexed} entries", markup=False)
