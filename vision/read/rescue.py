"""Cards that the card net sees and no candidate outlines: counted when they read surely.

Now and then every candidate maker misses a card (white on white, a pile, a shadow's edge)
where the finder's card net still sees one (``Found.net_places``). The net's outline is coarse
(its maps step 4 work pixels; the sides are snapped to the nearest edges), but a card's print
reads through it, while a print on a bag or a tile seldom reads as a SET card surely. So such
a place is counted as a card when the reader gives its four attributes together at least
``RESCUE_CONFIDENCE``; otherwise it stays a place where a card may be missed. The level was
chosen on held-out photos (``setvision eval --find --loso --read`` prints every level tried).
A place read below it is read again on other outlines of it (``outline_variants``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from setvision.vision.find.local_outline import local_outline
from setvision.vision.find.turned_place import turned_place
from setvision.vision.geometry import convex_overlap, scaled_about_centre, touches_border
from setvision.vision.read.centred_place import centred_on_symbols

#: A place the net sees is counted as a card when read with at least this confidence (the
#: probability that all four attributes are right together, ``CardReading.confidence``).
RESCUE_CONFIDENCE = 0.7
#: The levels ``eval --find --loso --read`` measures (1.01: none rescued).
RESCUE_LEVELS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
#: A place read at least this surely, yet below the level, is read again on its outline shrunk
#: by ``OUTLINE_SLACK`` too (the net's outline may reach that far past the card); one read less
#: surely is seldom a card, and not worth the time.
RETRY_ABOVE = 0.3
#: How far a place's outline is shrunk about its centre (a share of its size).
OUTLINE_SLACK = 0.1
#: Cards are grown by this share of their size about their centre before asking whether a place
#: where a card may be missed touches one: a card lying partly under another, or beside one.
TOUCH_GROWTH = 0.05
#: A place where a card may be missed within this many image pixels of the image's edge may be
#: a card cut by it.
PLACE_BORDER_PX = 2.0


def rescued(confidence: float, level: float = RESCUE_CONFIDENCE) -> bool:
    """Whether a place the net sees, read alone with ``confidence``, is counted as a card."""
    return confidence >= level


def outline_variants(
    image: np.ndarray,
    corners: np.ndarray,
    confidence: float | None,
    level: float = RESCUE_CONFIDENCE,
) -> list[np.ndarray]:
    """Other outlines of a place (``corners``) whose own outline read with ``confidence``
    (None: it could not be measured), below ``level``: the card outlined again from the paper
    around it (``local_outline``: the net's rectangle misses a card seen at a slant), the place
    turned to the straight edges in it (``turned_place``: where no region parts the card from
    its table), and, read nearly surely (``worth_retrying``), its outline shrunk by
    ``OUTLINE_SLACK`` (grown, the outline takes in a neighbour's print or table, and the card's
    margins misread its number) and the place moved onto the middle of its symbols
    (``centred_on_symbols``: the net's rectangle may lie off a card whose edges are faint)."""
    if confidence is not None and rescued(confidence, level):
        return []
    variants = []
    local = local_outline(image, corners)
    if local is not None:
        variants.append(local)
    turned = turned_place(image, corners)
    if turned is not None:
        variants.append(turned)
    if confidence is not None and worth_retrying(confidence, level):
        variants.append(scaled_about_centre(corners, 1 - OUTLINE_SLACK))
        centred = centred_on_symbols(image, corners)
        if centred is not None:
            variants.append(centred)
    return variants


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
    """Whether a place whose outline read with ``confidence`` is read on it shrunk too."""
    return RETRY_ABOVE <= confidence < level


def still_possible(
    image: np.ndarray, places: Sequence[np.ndarray], cards: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Of the ``places`` where a card may be missed (image pixels), those that may still hold
    one: within ``PLACE_BORDER_PX`` of the image's edge (a cut card's paper is no quad), touching
    one of the ``cards`` (read, set aside or left out; grown by ``TOUCH_GROWTH``: a card partly
    under another shows no card-shaped paper of its own), or where the paper around them holds
    a region of a card's shape (``local_outline``). A place in the open without one is a print,
    a sheet or a shadow that the net or the finder's doubts took for a card."""
    grown = [scaled_about_centre(np.asarray(c, np.float32), 1 + TOUCH_GROWTH) for c in cards]
    size = (image.shape[1], image.shape[0])

    def may_hold_a_card(place: np.ndarray) -> bool:
        if touches_border(place, size, PLACE_BORDER_PX):
            return True
        if any(convex_overlap(place, card) > 0 for card in grown):
            return True
        return local_outline(image, place) is not None

    return [place for place in places if may_hold_a_card(np.asarray(place, np.float32))]
