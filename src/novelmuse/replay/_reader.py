"""The artefact reader of everything that checks receipts: book files, pinned specs and rubrics as usual, a gate input
only as rebuilt from the store (see `replay._guard`, point 4). Its own module so that verifying the journal for a
listing (`muse gate show`) does not load the guard and the outliner's replay code with it."""

from __future__ import annotations

from collections.abc import Callable

from ..book import Book
from ..errors import FailedClosed
from ._input import GateInput, gate_input_bytes
from ._receipt import ArtefactReader, ArtefactRef, book_artefacts

#: Rebuild the gate input a receipt binds (by its ref) from the replay run in the store; None when the store
#: holds no run that rebuilds it.
GateInputRebuilder = Callable[[ArtefactRef], GateInput | None]


def store_reader(book: Book, rebuild: GateInputRebuilder | None) -> ArtefactReader:
    """The guard's artefact reader: book files, pinned specs and rubrics as usual, but a gate input only as
    `rebuild` rebuilds it from the store (never a file; GATE_INPUT_BUILDER_MISSING without a rebuilder)."""
    files = book_artefacts(book)

    def read(ref: ArtefactRef) -> bytes | None:
        if ref.kind != "gate_input":
            return files(ref)
        if rebuild is None:
            raise FailedClosed(
                "GATE_INPUT_BUILDER_MISSING",
                "gate inputs are only accepted as rebuilt from the store by the replay orchestrator's "
                "GateInputBuilder, and none was given",
                ref.locator,
                "pass the store's GateInputBuilder (replay.gate_input_rebuilder)",
            )
        rebuilt = rebuild(ref)
        if rebuilt is None:
            raise FailedClosed(
                "GATE_INPUT_NOT_IN_STORE",
                "no replay run in the store rebuilds this gate input (hand-written or self-computed?)",
                ref.locator,
                "only gate inputs built from a recorded replay run count",
            )
        return gate_input_bytes(rebuilt)

    return read
