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

#: A place the net sees is counted as a card when read with at least this confidence (the
#: probability that all four attributes are right together, ``CardReading.confidence``).
RESCUE_CONFIDENCE = 0.7
#: The levels ``eval --find --loso --read`` measures (1.01: none rescued).
RESCUE_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)


def rescued(confidence: float, level: float = RESCUE_CONFIDENCE) -> bool:
    """Whether a place the net sees, read alone with ``confidence``, is counted as a card."""
    return confidence >= level
