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
"""

from __future__ import annotations

import numpy as np

#: A card's margin beside its row of symbols (from its short edge to the nearest symbol) over
#: one symbol's width, for 1, 2 and 3 symbols: the medians over 4,011 whole cards of every
#: source (1 symbol: 1.51 to 2.20 for 98% of cards; 2: 0.88 to 1.56; 3: 0.36 to 0.87).
MARGIN_TO_SYMBOL = {1: 1.84, 2: 1.19, 3: 0.55}
#: A margin further than this factor from every count's median is no card's margin (98% of
#: whole cards lie within 1.2 of theirs for one symbol, 1.6 for three).
MARGIN_SPREAD = 1.8
#: A corner this close to the photo's edge (share of the photo's long side) lies on it.
ON_EDGE = 0.006


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
