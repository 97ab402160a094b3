"""Cards cut by the photo's edge, made from whole ones: read right, left out, or read wrong?

Few labelled photos show a card cut by their edge, and a card read with a symbol too few is
silently wrong. So labelled photos are cut: for up to ``CARDS_PER_BOARD`` cards of each board
lying along one of the photo's axes (within ``MAX_TURN``), the photo is cropped across the
card's length so that a ``SHOWN`` share of the card remains, its whole end kept, and the crop
is read as any photo; then cropped along its length the same way (a share of its width
shown, its whole long side kept). Cards at a slant are also cut at one corner: the photo
cropped across its outermost corner, ``CORNER_DEPTHS`` of the way to the next. The card is
then read right, read wrong, left out (and why), or not found at all.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from setvision.vision.geometry import contains_point
from setvision.vision.learn.dataset import Board
from setvision.vision.learn.find_eval import _map_photos
from setvision.vision.learn.matching import match_by_position

#: The shares of a card's length left in the photo.
SHOWN = (0.55, 0.65, 0.75, 0.85, 0.95)
#: Cards cut on each board (spread over its labelled cards).
CARDS_PER_BOARD = 4
#: A card is cut only when its length lies within this many degrees of a photo axis.
MAX_TURN = 25.0
#: A crop narrower than this (pixels) is no photo.
MIN_CROP = 50
#: The outcomes, in the order reported.
OUTCOMES = ("right", "left out", "not found", "wrong")
#: How a card is cut: across its length, along it, or at one corner.
ACROSS, ALONG, AT_CORNER = "across", "along", "corner"
#: How far a corner's cut runs from the card's outermost corner (along the photo's axis)
#: towards the next corner: beyond that, two corners would lie outside.
CORNER_DEPTHS = (0.25, 0.5, 0.75, 0.95)
#: A card is cut at a corner only when its next corner lies at least this share of the card's
#: short side further in than its outermost one (turned about 12 degrees or more off the
#: axis): less, and the cut takes a sliver of its edge.
MIN_CORNER_REACH = 0.2


@dataclass(frozen=True)
class CutResult:
    """One labelled card cut by the edge of a cropped photo, and what the reader made of it:
    ``outcome`` one of ``OUTCOMES``, ``read`` the card read or why it was left out, ``sure``
    whether it was read confidently (a "no set" may rest on it), ``how`` the cut ran:
    ``ACROSS`` the card's length (``shown`` a share of its length), ``ALONG`` it (a share of
    its width) or ``AT_CORNER`` (``shown``: one of ``CORNER_DEPTHS``)."""

    file: str
    source: str
    shown: float
    truth: str
    outcome: str
    read: str = ""
    sure: bool = False
    how: str = ACROSS


@dataclass(frozen=True)
class Crop:
    """A photo cropped across a card: the share of the card shown, the crop, and where the
    card's shown part lies in it."""

    shown: float
    image: np.ndarray
    card: np.ndarray  # the card's corners in the crop, cut to it


def _cropped(
    image: np.ndarray, corners: np.ndarray, axis: int, at: int, keep_start: bool, shown: float
) -> Crop | None:
    """``image`` cut by the column (``axis`` 0) or row (1) ``at``, the part before it kept
    (``keep_start``) or after it, with the card's ``corners`` in the crop; None when too little
    is left (``MIN_CROP``)."""
    kept = slice(0, at) if keep_start else slice(at, None)
    crop = image[:, kept] if axis == 0 else image[kept]
    if min(crop.shape[:2]) < MIN_CROP:
        return None
    card = corners.copy()
    card[:, axis] -= 0 if keep_start else at
    card[:, axis] = np.clip(card[:, axis], 0, crop.shape[1 - axis] - 1)
    return Crop(shown, np.ascontiguousarray(crop), card.astype(np.float32))


def crops_across(
    image: np.ndarray, corners: np.ndarray, keep_start: bool, along: bool = False
) -> list[Crop]:
    """``image`` cropped across the card at ``corners`` at each ``SHOWN`` share of its length
    (``along``: cropped along its length, at each share of its width; ``keep_start``: the
    part before the cut, towards the image's top or left, is kept); none when the card does
    not lie along an axis."""
    corners = np.asarray(corners, np.float64)
    sides = np.roll(corners, -1, axis=0) - corners
    lengths = np.linalg.norm(sides, axis=1)
    first = 0 if lengths[0] + lengths[2] >= lengths[1] + lengths[3] else 1
    direction = np.abs(sides[first] / max(lengths[first], 1e-9))
    if direction.max() < np.cos(np.radians(MAX_TURN)):
        return []
    axis = int(np.argmax(direction))  # 0: the card lies along x, cut by a column
    if along:
        axis = 1 - axis  # the card's width runs along this axis
    low, high = corners[:, axis].min(), corners[:, axis].max()
    crops = []
    for share in SHOWN:
        at = int(round(low + share * (high - low) if keep_start else high - share * (high - low)))
        crops.append(_cropped(image, corners, axis, at, keep_start, share))
    return [c for c in crops if c is not None]


def crops_at_corner(
    image: np.ndarray, corners: np.ndarray, keep_start: bool, axis: int
) -> list[Crop]:
    """``image`` cropped across the card at ``corners`` by a column (``axis`` 0) or a row (1)
    through its outermost corner that way (``keep_start``: the part towards the image's top or
    left is kept, so the corner furthest from it is cut), at each of ``CORNER_DEPTHS`` of the
    way to its next corner; none when the card lies too close to that axis
    (``MIN_CORNER_REACH``)."""
    corners = np.asarray(corners, np.float64)
    sides = np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)
    ends = np.sort(corners[:, axis])
    outer, nearest = (ends[-1], ends[-2]) if keep_start else (ends[0], ends[1])
    if abs(outer - nearest) < MIN_CORNER_REACH * sides.min():
        return []
    crops = []
    for depth in CORNER_DEPTHS:
        at = int(round(outer + depth * (nearest - outer)))
        crops.append(_cropped(image, corners, axis, at, keep_start, depth))
    return [c for c in crops if c is not None]


def _spread(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Up to ``CARDS_PER_BOARD`` of a board's (label, outline) pairs, spread over them."""
    pairs = sorted(pairs)
    return pairs[:: max(1, len(pairs) // CARDS_PER_BOARD)][:CARDS_PER_BOARD]


def outcome(layout, card: np.ndarray, truth: str) -> tuple[str, str, bool]:
    """What ``layout`` (a cropped photo's reading) made of the card whose shown part is
    ``card``: (one of ``OUTCOMES``, the card read or why it was left out, read confidently)."""
    centre = tuple(np.asarray(card, np.float64).mean(axis=0))
    for reading in layout.cards:
        if contains_point(reading.corners_xy, centre):
            read = str(reading.card)
            return ("right" if read == truth else "wrong"), read, reading.confident
    for ignored in layout.ignored:
        if contains_point(ignored.corners_xy, centre):
            return "left out", ignored.reason, False
    return "not found", "", False


#: The reader of ``run_cut_reading``'s photos and the ways it cuts (set before its worker
#: processes are forked).
_READER = None
_HOWS: tuple[str, ...] = (ACROSS, ALONG)


def _crops(image: np.ndarray, corners: np.ndarray, how: str, file: str) -> list[Crop]:
    """The crops of ``image`` cutting the card at ``corners`` ``how`` (``ACROSS``, ``ALONG``,
    ``AT_CORNER``); which end (and, at a corner, which axis) is kept follows from the photo's
    name, so that both come up over the boards."""
    bits = int(hashlib.sha1(file.encode()).hexdigest()[:8], 16)
    keep_start = bits % 2 == 0
    if how == AT_CORNER:
        return crops_at_corner(image, corners, keep_start, axis=(bits >> 1) % 2)
    return crops_across(image, corners, keep_start, along=how == ALONG)


def _job(board: Board) -> list[CutResult]:
    from setvision.vision.find.finder import find_cards
    from setvision.vision.image import load

    photo = load(board.path)
    outlines = find_cards(photo.image).outlines
    quads = [o.corners_xy * photo.scale for o in outlines]
    pairs = match_by_position(quads, [c.centre for c in board.cards])
    results = []
    for label, found in _spread(pairs):
        truth = str(board.cards[label].card)
        for how in _HOWS:
            for crop in _crops(photo.image, outlines[found].corners_xy, how, board.file):
                what, read, sure = outcome(_READER.read(crop.image), crop.card, truth)
                results.append(
                    CutResult(board.file, board.source, crop.shown, truth, what, read, sure, how)
                )
    return results


def run_cut_reading(
    boards: list[Board],
    reader,
    hows: tuple[str, ...] = (ACROSS, ALONG),
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> list[CutResult]:
    """Every board's cards cut and read by ``reader`` (a ``CardReader``) in each of the ways
    ``hows`` (``ACROSS``, ``ALONG``, ``AT_CORNER``)."""
    global _READER, _HOWS
    _READER, _HOWS = reader, hows
    usable = [b for b in boards if b.has_positions and b.kind != "noisy"]
    per_board = _map_photos(_job, usable, jobs, progress, lambda rows: "")
    return [r for rows in per_board for r in rows]


#: The counts of cards read right, and read wrong, while read confidently, in
#: ``summarise_cuts``' tables (a doubt costs the first, and saves the second).
RIGHT_WHILE_SURE, WRONG_WHILE_SURE = "right while sure", "wrong while sure"


def summarise_cuts(
    results: list[CutResult], shares: tuple[float, ...] = SHOWN
) -> dict[float, Counter]:
    """The outcomes' counts (and ``RIGHT_WHILE_SURE``, ``WRONG_WHILE_SURE``) per share shown
    (``shares``: ``SHOWN``, or ``CORNER_DEPTHS`` for cuts at a corner), and over all of them
    (key -1)."""
    table: dict[float, Counter] = {share: Counter() for share in shares}
    table[-1.0] = Counter()
    for r in results:
        for key in (r.shown, -1.0):
            table[key][r.outcome] += 1
            table[key][RIGHT_WHILE_SURE] += r.outcome == "right" and r.sure
            table[key][WRONG_WHILE_SURE] += r.outcome == "wrong" and r.sure
    return table
