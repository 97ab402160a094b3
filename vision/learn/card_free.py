"""Photos without SET cards: what the reader answers where the right answer is "no cards".

The labelled photos all show cards, so they cannot tell whether beds, chairs, paving, boxes and
prints read as cards where no card lies. The new source's publisher also photographed the
surfaces alone; those photos, checked by eye for any SET card (``labels/card_free.jsonl``),
measure it: every card read on them is a false card, and the answer should be ``no_cards``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from setvision.vision.layout import Layout
from setvision.vision.learn.dataset import LABELS_DIR

#: The photos checked by eye to show no SET card (paths in the data folder).
CARD_FREE_LABELS = LABELS_DIR / "card_free.jsonl"


@dataclass(frozen=True)
class CardFreeResult:
    """What the reader answered on one photo without cards."""

    file: str
    cards: int  # cards read (all of them false)
    unsure: int  # of those, read below confidence
    verdict: str
    error: str = ""

    @property
    def right(self) -> bool:
        return not self.error and self.verdict == "no_cards"


def card_free_files(labels: Path = CARD_FREE_LABELS) -> list[str]:
    """The photos (paths in the data folder) checked to show no card."""
    return [json.loads(line)["file"] for line in labels.read_text().splitlines() if line.strip()]


def card_free_result(file: str, layout: Layout) -> CardFreeResult:
    """The reader's answer on ``file`` (its ``layout``), every card read counted false."""
    unsure = sum(not card.confident for card in layout.cards)
    return CardFreeResult(file, len(layout.cards), unsure, layout.verdict)


def format_card_free(results: list[CardFreeResult]) -> str:
    """A table of the answers: photos, answered "no cards", false cards read (sure and
    unsure), photos by verdict."""
    right = sum(r.right for r in results)
    cards = sum(r.cards for r in results)
    unsure = sum(r.unsure for r in results)
    verdicts = Counter("error" if r.error else r.verdict for r in results)
    share = right / len(results) if results else 0.0
    by_verdict = ", ".join(f"{verdict} {n}" for verdict, n in sorted(verdicts.items()))
    return "\n".join(
        [
            "| photos without cards | answered no cards | false cards read | of them sure |",
            "|---:|---:|---:|---:|",
            f"| {len(results)} | {right} ({share:.1%}) | {cards} | {cards - unsure} |",
            f"verdicts: {by_verdict}",
        ]
    )
