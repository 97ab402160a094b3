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
three's margin tell the count (``row_past_edge``): no card has more than three. One whole
symbol tells a three by a three's margin, or a two by a two's where the second is seen cut.
Such a card is read from its whole symbols, its number told (``KNOWN_NUMBER``,
``known_numbers``); a two told from one symbol is never read surely: a three cut after its
first symbol may measure a two's margin.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from setvision.solver import VALUES
from setvision.vision.geometry import convex_overlap
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
#: With one whole symbol in view, a margin on the whole side of at least this many symbol
#: widths is a two's (whole twos measure 0.88 to 1.56 for 98% of cards, threes up to 0.87).
TWO_BY_MARGIN = 0.88
#: The gap between two symbols of a card, in symbol widths: what the margins leave of a card's
#: length (``MARGIN_TO_SYMBOL``: one symbol and two one's margins make three symbols, two
#: three's margins and two gaps).
GAP_TO_SYMBOL = MARGIN_TO_SYMBOL[1] - 1 - MARGIN_TO_SYMBOL[3]
#: Two symbols of one card: the taller at most this many times the other's height, the wider
#: at most this many times the other's width.
SAME_HEIGHT, SAME_WIDTH = 1.25, 1.4


#: A symbol an outline left out stands at most this many symbol widths from the row's end
#: symbol: a card's own gap is a median 0.29 of a symbol (``GAP_TO_SYMBOL``), a neighbour's
#: nearest symbol at least 0.72 away (both cards' margins, 0.36 at the least for threes).
NEXT_IN_ROW = 0.5


def symbol_beyond_row(
    seen: list[np.ndarray], span: tuple[float, float], view_width: int, margin: float
) -> bool:
    """Whether a card's row of symbols runs on past its outline's ends: ``seen`` are the
    symbols (contours) of a view laid out along the card reaching past both ends, ``span``
    where the outline runs in it (pixels along it), ``view_width`` its length and ``margin``
    what reading leaves out at its ends. The row is the symbols centred within the span; one
    more, not cut by the view's end, as wide as theirs and at most ``NEXT_IN_ROW`` symbol widths
    from the row's end, is left out by the outline. A neighbour's symbols stand further off."""
    boxes = [cv2.boundingRect(c) for c in seen]
    row = [b for b in boxes if span[0] <= b[0] + b[2] / 2 <= span[1]]
    if not row:
        return False
    width = float(np.median([b[2] for b in row]))
    start, end = min(b[0] for b in row), max(b[0] + b[2] for b in row)
    for x, _, w, _ in boxes:
        if span[0] <= x + w / 2 <= span[1] or x <= margin or x + w >= view_width - margin:
            continue  # the row's own, or cut by the view's end
        if max(w, width) > SAME_WIDTH * min(w, width):
            continue  # its height may be cut by the photo's edge
        if min(abs(start - (x + w)), abs(x - end)) <= NEXT_IN_ROW * width:
            return True
    return False


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


#: A card whose one corner lies beyond the photo's edge is completed there only when at most this
#: share of it lies beyond: a larger cut may hide a whole symbol near that corner (the row's
#: margins and centring are checked all the same, ``pipeline``).
MAX_CORNER_CUT = 0.25


def corner_completed(corners: np.ndarray, size: tuple[int, int]) -> np.ndarray | None:
    """The whole card of an outline with exactly one corner on the photo's edge (``size``: width,
    height) where the card runs on past it: that corner moved to complete the parallelogram of
    the other three (within a card the view is taken as even). None when no corner or more than
    one lies on the edge, when the completed corner lies inside the photo (the card ends there),
    or when more than ``MAX_CORNER_CUT`` of the card would lie beyond the photo."""
    corners = np.asarray(corners, np.float64)
    margin = max(2.0, ON_EDGE * max(size))
    on_edge = _on_edges(corners, size, margin).any(axis=1)
    if on_edge.sum() != 1:
        return None
    k = int(np.argmax(on_edge))
    whole = corners.copy()
    whole[k] = corners[(k - 1) % 4] + corners[(k + 1) % 4] - corners[(k + 2) % 4]
    if not _on_edges(whole[k : k + 1], size, margin).any():
        return None  # the card ends inside the photo: its outline only touches the edge
    card = whole.astype(np.float32)
    area = float(cv2.contourArea(card))
    if area <= 0 or not cv2.isContourConvex(card.reshape(-1, 1, 2)):
        return None
    width, height = size
    photo = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    if 1 - convex_overlap(card, photo) / area > MAX_CORNER_CUT:
        return None
    return card


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


def shown_reach(lengthwise: np.ndarray) -> float:
    """How far the part shown (``shown_lengthwise``) reaches from its whole side, photo pixels."""
    return max(_along(lengthwise)[1])


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
#: the number model: read from the margin of a card whose row runs on beyond the edge.
KNOWN_NUMBER = "known_number"
#: The feature value (not a model feature) marking a card cut by the photo's edge and completed
#: by turning it half round (cut along its length through every symbol, or across it with no
#: margin telling its number): its shapes are read from halves.
TURNED_HALF = "turned_half"
#: The feature value (not a model feature) marking a card partly under another whose outline
#: runs on under it, read from its margin at its whole end (``pipeline.covered_at_one_end``): a
#: symbol may lie under the card on top all the same.
COVERED_AT_END = "covered_at_end"
#: The feature value (not a model feature) marking a card completed past the photo's edge from
#: the margin on its whole side: one or two symbols may lie beyond it all the same, where that
#: margin was misread (``outline_doubts``).
COMPLETED_PAST_EDGE = "completed_past_edge"
#: The feature value (not a model feature) marking a card with one corner beyond the photo's
#: edge, read completed (``corner_completed``): its row shows whole, centred, and its margins at
#: both ends tell its number, so nothing of it is in doubt.
CORNER_COMPLETED = "corner_completed"


@dataclass(frozen=True)
class RowPastEdge:
    """A card's row of symbols running on past the photo's edge: how many symbols it holds,
    and where its whole ones stand in the laid-out part shown (pixels along its length)."""

    count: int
    whole: int  # how many symbols show whole
    margin: float  # from the whole side to the first symbol
    symbol_width: float
    gap: float  # between two symbols
    whole_end: float  # where the last whole symbol ends

    def length(self) -> float:
        """The whole card's length: both margins, every symbol and the gaps between them."""
        return 2 * self.margin + self.count * self.symbol_width + (self.count - 1) * self.gap

    def sure(self) -> bool:
        """Whether the count may be read surely: a three cut after its first symbol may show
        a two's margin, so a two told from one whole symbol may not."""
        return not (self.whole == 1 and self.count == 2)


def count_past_edge(
    whole: list[np.ndarray], cut: list[np.ndarray], shown_length: float, ink_at_end: bool = False
) -> int | None:
    """The number of symbols of a card whose row runs on past the photo's edge (see
    ``row_past_edge``), or None when it is not known that way."""
    row = row_past_edge(whole, cut, shown_length, ink_at_end)
    return None if row is None else row.count


def row_past_edge(
    whole: list[np.ndarray], cut: list[np.ndarray], shown_length: float, ink_at_end: bool = False
) -> RowPastEdge | None:
    """A card's row of symbols running on past the photo's edge, told from its ``whole``
    symbols (contours in the card laid out along its length from its whole side,
    ``shown_length`` pixels long), the symbols seen ``cut`` by the edge, and whether ink runs
    into the laid-out card's end (``ink_at_end``: an open symbol cut there leaves no closed
    contour). None when the number is not known: every cut symbol must lie after the whole ones.

    - Two whole symbols, alike and spaced as a row, at a three's margin from the whole side
      (within ``THREE_BY_MARGIN`` unless a symbol or ink is seen cut at the end): a three.
    - One whole symbol at a three's margin (within ``THREE_BY_MARGIN``), or at a two's (from
      ``TWO_BY_MARGIN``) with the second seen cut where it would stand or ink cut at the end:
      that number. Between the two levels, the margin tells neither.

    In both, the next symbol must be seen cut where it would stand, or at the row's spacing
    not show whole before the edge (the end's ``MARGIN`` left out, as ``extract`` does)."""
    boxes = sorted(cv2.boundingRect(c) for c in whole)
    cut_starts = [cv2.boundingRect(c)[0] for c in cut]
    if len(boxes) == 2:
        (x1, _, w1, h1), (x2, _, w2, h2) = boxes
        if max(h1, h2) > SAME_HEIGHT * min(h1, h2) or max(w1, w2) > SAME_WIDTH * min(w1, w2):
            return None
        symbol_width, gap = (w1 + w2) / 2, x2 - (x1 + w1)
        if not 0 <= gap < symbol_width:
            return None
        if count_by_margin(x1 / shown_length, symbol_width / shown_length) != 3:
            return None
        if not cut and not ink_at_end and x1 > THREE_BY_MARGIN * symbol_width:
            return None
        count, whole_end = 3, x2 + w2
    elif len(boxes) == 1:
        x1, _, symbol_width, _ = boxes[0]
        gap, whole_end = GAP_TO_SYMBOL * symbol_width, x1 + symbol_width
        count = count_by_margin(x1 / shown_length, symbol_width / shown_length)
        if count == 3 and x1 > THREE_BY_MARGIN * symbol_width:
            return None
        if count == 2 and (x1 < TWO_BY_MARGIN * symbol_width or not (cut or ink_at_end)):
            return None
        if count not in (2, 3):
            return None
    else:
        return None
    if any(start < whole_end for start in cut_starts):
        return None
    next_end = whole_end + gap + symbol_width
    # the next symbol seen where it would stand, touching the edge, is one all the same
    seen = any(start < next_end for start in cut_starts)
    if not seen and next_end <= (1 - MARGIN) * shown_length:
        return None
    return RowPastEdge(
        count, len(boxes), float(x1), float(symbol_width), float(gap), float(whole_end)
    )


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
