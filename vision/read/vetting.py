"""Outlines the finder was unsure of and the reader cannot read are set aside, not counted.

On tables it never saw the finder takes a few prints on cloths and bags, railings or tiles for
cards. Read as a card, such a shape reads with little confidence: its "symbols" are none of a
SET card's. Counted as a card it would be numbered, join sets and spoil the verdict; set aside,
it is named as a card-like shape, and "no set" is still never said over it. Either doubt alone
keeps the card: cards the finder is unsure of (half covered, in shade) mostly read well, and
cards read with little confidence (worn, under glare) are mostly found surely.

Both levels were chosen on held-out photos (every photo judged by a finder fitted without its
source or capture session), as the share of photos read with every card and nothing extra:
``setvision eval --find --loso --read`` prints the table they were chosen from.
"""

from __future__ import annotations

#: The finder is unsure of an outline below this probability that it is a card.
FINDER_UNSURE = 0.9
#: The reader cannot read an outline when its four attributes are right together with less
#: than this probability (``CardReading.confidence``).
READER_UNSURE = 0.4


def set_aside(
    found_probability: float,
    confidence: float,
    finder_unsure: float = FINDER_UNSURE,
    reader_unsure: float = READER_UNSURE,
) -> bool:
    """Whether an outline found with ``found_probability`` and read with ``confidence`` is
    set aside as a card-like shape rather than counted as a card (other levels: to measure)."""
    return found_probability < finder_unsure and confidence < reader_unsure
