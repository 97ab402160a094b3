"""A card cut by the photo's edge: how many symbols it has, and its whole outline.

The finder outlines only the part of such a card that the photo shows. Laid out by that part
alone, its symbols stand off-centre and stretched, and a row of two ovals left of three can
look like a whole card by chance. Laid out from its whole side along the card's length
(``shown_lengthwise``, ``card_frame``), lengths along the card keep their proportions, and two
of them tell what the cut hides:

- the margin on the whole side against a symbol's width is the card's own: wide beside one
  symbol, narrow beside three (``count_by_margin``); more symbols than show means one lies
  beyond the edge;
- symbols are centred on their card, so their middle tells how far the card reaches
  (``card_frame``), and the whole card can be laid out and read.

When the third symbol of a row lies beyond the edge (or is cut by it), two whole symbols at a
three's margin tell the count (``count_past_edge``): no card has more than three. Such a card
is read from its two whole symbols, its number known (``KNOWN_NUMBER``, ``known_numbers``).
"""

from __future__ import annotations

import cv2
import numpy as np
from setvision.solver import VALUES
from setvision.vision.read.features import MARGIN, CardFeatures

#: A card's margin beside its row of symbols (from its short edge to the nearest symbol) over
#: one symbol's width, for 1, 2 and 3 symbols: the medians over 4,011 whole cards of every
#: source (1 symbol: 1.51 to 2.20 for 98% of cards; 2: 0.88 to 1.56; 3: 0.36 to 0.87).
MARGIN_TO_SYMBOL = {1: 1.84, 2: 1.19, 3: 0.55}
#: A margin further than this factor from every count's median is no card's margin (98% of
#: whole cards lie within 1.2 of theirs for one symbol, 1.6 for three).
MARGIN_SPREAD = 1.8
#: A corner this close to the photo's edge (share of the photo's long side) lies on it.
ON_EDGE = 0.006
#: With no symbol cut by the edge in view, a margin on the whole side of at most this many
#: symbol widths is a three's: cut short, twos measure up to 0.81 (they are told apart from
#: threes on whole cards, ``MARGIN_TO_SYMBOL``, but not when the far end is missing).
THREE_BY_MARGIN = 0.7
#: Two symbols of one card: the taller at most this many times the other's height, the wider
#: at most this many times the other's width.
SAME_HEIGHT, SAME_WIDTH = 1.25, 1.4


def _on_edges(points: np.ndarray, size: tuple[int, int], margin: float) -> np.ndarray:
    """(N, 4) booleans: each point near the left, top, right and bottom edge."""
    width, height = size
    x, y = points[:, 0], points[:, 1]
    return np.stack(
        [x <= margin, y <= margin, x >= width - 1 - margin, y >= height - 1 - margin], axis=1
    )


def cut_side(corners: np.ndarray, size: tuple[int, int]) -> int | None:
    """The one side of ``corners`` (k: from corner k to k + 1) lying along the photo's edge
    (``size``: width, height), or None when no side or more than one does."""
    margin = max(2.0, ON_EDGE * max(size))
    edges = _on_edges(np.asarray(corners, np.float64), size, margin)
    sides = [k for k in range(4) if (edges[k] & edges[(k + 1) % 4]).any()]
    return sides[0] if len(sides) == 1 else None


def shown_lengthwise(corners: np.ndarray, side: int) -> np.ndarray:
    """The corners of the part shown, clockwise from a corner of its whole side (the one
    opposite the cut ``side``): the first side runs along the card to the cut, the last is
    the whole side."""
    corners = np.asarray(corners, np.float32)
    return corners[[(side + 3) % 4, side, (side + 1) % 4, (side + 2) % 4]]


def _along(lengthwise: np.ndarray) -> tuple[np.ndarray, list[float]]:
    """The direction along the card (unit, photo pixels) and how far each of the two sides
    along it reaches before the cut."""
    start_1, end_1, end_2, start_2 = np.asarray(lengthwise, np.float64)
    sides = [end_1 - start_1, end_2 - start_2]
    direction = sum(v / max(np.linalg.norm(v), 1e-9) for v in sides)
    direction = direction / max(np.linalg.norm(direction), 1e-9)
    return direction, [float(v @ direction) for v in sides]


def card_frame(lengthwise: np.ndarray, reach: float | None = None) -> np.ndarray:
    """The card from its whole side along its length for ``reach`` pixels (default: as far as
    the part shown reaches), in the order of ``lengthwise`` (``shown_lengthwise``).

    The edge cuts a card at any angle, so the sides along it are extended as the card runs,
    not as the cut runs; within a card, the view is taken as even (no perspective)."""
    direction, reaches = _along(lengthwise)
    far = (max(reaches) if reach is None else reach) * direction
    start_1, start_2 = np.asarray(lengthwise, np.float64)[[0, 3]]
    return np.array([start_1, start_1 + far, start_2 + far, start_2], np.float32)


def count_by_margin(margin: float, symbol_width: float) -> int | None:
    """How many symbols a card with this margin on its whole side has (any unit along the
    card's length, both in the same); None when the margin is no card's (the side taken for
    the card's edge is likely not its edge)."""
    ratio = margin / max(symbol_width, 1e-6)
    if ratio <= 0:
        return None
    distance = {n: abs(np.log(ratio / typical)) for n, typical in MARGIN_TO_SYMBOL.items()}
    count = min(distance, key=distance.__getitem__)
    return count if distance[count] <= np.log(MARGIN_SPREAD) else None


#: The feature value (not a model feature) holding a card's number when it is known without
#: the number model: read from the margin of a card whose third symbol lies beyond the edge.
KNOWN_NUMBER = "known_number"
#: The feature value (not a model feature) marking a card completed past the photo's edge from
#: the margin on its whole side: one or two symbols may lie beyond it all the same, where that
#: margin was misread (``outline_doubts``).
COMPLETED_PAST_EDGE = "completed_past_edge"


def count_past_edge(
    whole: list[np.ndarray], cut: list[np.ndarray], shown_length: float, ink_at_end: bool = False
) -> int | None:
    """Three when a card's row runs on past the photo's edge: two ``whole`` symbols (contours
    in the card laid out along its length from its whole side, ``shown_length`` pixels long),
    alike and spaced as a row, stand at a three's margin from the whole side (within
    ``THREE_BY_MARGIN`` unless a symbol is seen ``cut``, or ``ink_at_end`` runs into the laid-out
    card's end: an open symbol cut there leaves arcs, no closed contour), every cut symbol lies
    after them, and a third symbol is seen cut where it would stand, or at their spacing would
    not show whole before the edge (the end's ``MARGIN`` left out, as ``extract`` does). None
    otherwise: the number is then not known."""
    if len(whole) != 2:
        return None
    (x1, _, w1, h1), (x2, _, w2, h2) = sorted(cv2.boundingRect(c) for c in whole)
    if max(h1, h2) > SAME_HEIGHT * min(h1, h2) or max(w1, w2) > SAME_WIDTH * min(w1, w2):
        return None
    symbol_width, gap = (w1 + w2) / 2, x2 - (x1 + w1)
    if not 0 <= gap < symbol_width:
        return None
    if count_by_margin(x1 / shown_length, symbol_width / shown_length) != 3:
        return None
    if not cut and not ink_at_end and x1 > THREE_BY_MARGIN * symbol_width:
        return None
    cut_starts = [cv2.boundingRect(c)[0] for c in cut]
    if any(start < x2 + w2 for start in cut_starts):
        return None
    third_end = x2 + w2 + gap + symbol_width
    # a third symbol seen where it would stand, touching the edge, is a third all the same
    seen = any(start < third_end for start in cut_starts)
    return 3 if seen or third_end > (1 - MARGIN) * shown_length else None


def known_numbers(
    features: list[CardFeatures], probabilities: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """``probabilities`` with each card's number certain where it is known (``KNOWN_NUMBER``)."""
    number = np.array(probabilities["number"], dtype=np.float64)
    for i, card in enumerate(features):
        known = card.values.get(KNOWN_NUMBER)
        if known is not None:
            number[i] = 0.0
            number[i, VALUES["number"].index(str(int(known)))] = 1.0
    return {**probabilities, "number": number}
