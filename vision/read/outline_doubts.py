"""A card's number in doubt where its outline may stop short of the card.

A symbol-sized piece of ink cut by the card's end means the outline may end inside the card,
with a symbol lying beyond it: the number read stays, but is no longer read surely. So with a
card cut by the photo's edge and completed from the margin on its whole side: where that
margin is misread (an outline drawn past the card's end onto a white table), a symbol lies
beyond the edge (``setvision eval --cut``); and with a card read from its whole end while its
other end lies under another card: a symbol may lie under the card on top.
"""

from __future__ import annotations

import numpy as np
from setvision.vision.read.cut_cards import (
    COMPLETED_PAST_EDGE,
    COVERED_AT_END,
    KNOWN_NUMBER,
    TURNED_HALF,
)
from setvision.vision.read.features import CardFeatures, may_lack_a_symbol

#: Share of a number's probability given to one symbol more when a symbol is cut by the card's
#: end: the outline may stop short of the card, so a symbol may lie beyond it (about half of
#: such views of labelled cards have one more; the number model has weighed the margins).
BEYOND_OUTLINE = 0.3
#: Share of a shape's probability spread evenly over the three shapes when a card's symbols
#: were completed from halves (``TURNED_HALF``): the turn is right only where the card's width
#: (cut along its length) or length (cut across) was judged right, so its shape is never read
#: surely.
TURNED_SHAPE_DOUBT = 0.3
#: The marks of a card that may hold one symbol more than it shows.
BEYOND_MARKS = ("cut_at_end", COMPLETED_PAST_EDGE, COVERED_AT_END)


def doubt_symbols_beyond(
    features: list[CardFeatures], probabilities: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Probabilities where each card with a symbol cut by its end (``cut_at_end``), completed
    past the photo's edge (``COMPLETED_PAST_EDGE``) or read with one end under another card
    (``COVERED_AT_END``), is unsure of its number: one symbol more than it shows (or than its
    ``KNOWN_NUMBER``) becomes likely."""
    if not features:
        return probabilities
    number = np.array(probabilities["number"], dtype=np.float64)
    for i, card in enumerate(features):
        count = int(card.values.get(KNOWN_NUMBER, len(card.symbols)))
        beyond = any(card.values.get(key) for key in BEYOND_MARKS)
        if beyond and may_lack_a_symbol(count):
            number[i] = (1 - BEYOND_OUTLINE) * number[i]
            number[i, count] += BEYOND_OUTLINE  # the value for count + 1 symbols
    return {**probabilities, "number": number}


def doubt_turned_shapes(
    features: list[CardFeatures], probabilities: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Probabilities where each card completed from halves of its symbols (``TURNED_HALF``)
    is unsure of its shape: ``TURNED_SHAPE_DOUBT`` of it spread over the three."""
    shape = np.array(probabilities["shape"], dtype=np.float64)
    for i, card in enumerate(features):
        if card.values.get(TURNED_HALF):
            shape[i] = (1 - TURNED_SHAPE_DOUBT) * shape[i] + TURNED_SHAPE_DOUBT / shape.shape[1]
    return {**probabilities, "shape": shape}
