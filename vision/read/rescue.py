"""Cards that the card net sees and no candidate outlines: counted when they read surely.

Now and then every candidate maker misses a card (white on white, a pile, a shadow's edge)
where the finder's card net still sees one (``Found.net_places``). The net's outline is coarse
(its maps step 4 work pixels; the sides are snapped to the nearest edges), but a card's print
reads through it, while a print on a bag or a tile seldom reads as a SET card surely. So such
a place is counted as a card when the reader gives its four attributes together at least
``RESCUE_CONFIDENCE``; otherwise it stays a place where a card may be missed. The level was
chosen on held-out photos (``setvision eval --find --loso --read`` prints every level tried).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from setvision.vision.geometry import scaled_about_centre

#: A place the net sees is counted as a card when read with at least this confidence (the
#: probability that all four attributes are right together, ``CardReading.confidence``).
RESCUE_CONFIDENCE = 0.7
#: The levels ``eval --find --loso --read`` measures (1.01: none rescued).
RESCUE_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
#: A place read at least this surely, yet below the level, is read again on its outline shrunk
#: by ``OUTLINE_SLACK`` (the net's outline may reach that far past the card); one read less
#: surely is seldom a card, and not worth the time.
RETRY_ABOVE = 0.3
#: How far a place's outline is shrunk about its centre (a share of its size).
OUTLINE_SLACK = 0.1


def rescued(confidence: float, level: float = RESCUE_CONFIDENCE) -> bool:
    """Whether a place the net sees, read alone with ``confidence``, is counted as a card."""
    return confidence >= level


def outline_variants(corners: np.ndarray) -> list[np.ndarray]:
    """A place's corners shrunk by ``OUTLINE_SLACK`` about their centre (grown, the outline
    takes in a neighbour's print or table, and the card's margins misread its number)."""
    return [scaled_about_centre(corners, 1 - OUTLINE_SLACK)]


def best_reading(confidences: Sequence[float], level: float = RESCUE_CONFIDENCE) -> int | None:
    """Which reading of a place counts it as a card (``confidences``: its outline's first, then
    its variants'), or None: the outline's own when sure enough, else the surest variant's."""
    if not confidences:
        return None
    if rescued(confidences[0], level):
        return 0
    best = int(np.argmax(confidences))
    return best if rescued(confidences[best], level) else None


def worth_retrying(confidence: float, level: float = RESCUE_CONFIDENCE) -> bool:
    """Whether a place whose outline read with ``confidence`` is read on its variants too."""
    return RETRY_ABOVE <= confidence < level
