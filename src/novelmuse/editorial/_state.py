"""The loop's working state for one chapter: current text, outcomes and everything recorded so far."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..book import Book, Chapter, ReviewConfig
from ..memory import MemoryContext
from ..text import sha256_hex
from ._models import ArbiterOut, ConsistencyRound, EditorRound, FatigueHit, RepairOut
from ._outcomes import StepOutcome
from ._rules_step import RuleView


@dataclass
class LoopState:
    """Mutable state of one review; only `_loop` and the step modules touch it."""

    chapter: int
    title: str
    original: str
    text: str
    rules: RuleView
    memory: MemoryContext
    config: ReviewConfig
    unit: str | None = None  # the book's heading unit (回, 章, …): how prompts name the chapter
    fatigue: list[FatigueHit] = field(default_factory=list)
    steps: list[StepOutcome] = field(default_factory=list)
    consistency: list[ConsistencyRound] = field(default_factory=list)
    editor: list[EditorRound] = field(default_factory=list)
    editor_call_ids: list[str | None] = field(default_factory=list)
    arbiter: list[ArbiterOut] = field(default_factory=list)
    arbiter_call_ids: list[str | None] = field(default_factory=list)
    repairs: list[RepairOut] = field(default_factory=list)
    editor_enabled: bool = True  # False: `muse review --no-editor` (the 7-dim editor is optional, seed 004)
    #: what the editor left open, in words (None: nothing): a rewrite verdict left standing (a bound, the arbiter's
    #: accept_and_continue) or a polish/rewrite the loop asked for that was skipped
    editor_open: str | None = None
    error_code: str | None = None
    texts: list[str] = field(default_factory=list)  # every text the loop produced, in order (stored for the report)

    @classmethod
    def begin(cls, book: Book, chapter: Chapter, rules: RuleView, memory: MemoryContext, *, editor: bool) -> LoopState:
        """The state a review of `chapter` starts from (a file without a heading line is titled by its label)."""
        return cls(
            chapter=chapter.number,
            title=chapter.heading or book.chapter_label(chapter.number),
            original=chapter.body,
            text=chapter.body,
            rules=rules,
            memory=memory,
            config=book.config.review,
            editor_enabled=editor,
            unit=book.heading_unit,
        )

    def add(self, outcome: StepOutcome) -> StepOutcome:
        """Record one step's outcome (in order)."""
        self.steps.append(outcome)
        return outcome

    def change_text(self, new: str, step: str, kind: str, paragraphs: list[int] | None) -> None:
        """Replace the working text and record the change."""
        self.repairs.append(
            RepairOut(
                step=step,
                kind=kind,  # type: ignore[arg-type]
                paragraphs=paragraphs,
                before_sha256=sha256_hex(self.text),
                after_sha256=sha256_hex(new),
            )
        )
        self.text = new
        self.texts.append(new)

    @property
    def neutral_foreshadow(self) -> bool:
        """伏笔健康 is neutral in the first `review.neutral_foreshadow_chapters` chapters (seed 004)."""
        return self.chapter <= self.config.neutral_foreshadow_chapters
