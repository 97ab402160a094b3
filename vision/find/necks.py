"""Cards that touch: one region of a mask holding two or three cards, cut at the necks between.

Two cards touching at a corner, or side by side with no gap the work copy can show, make one
region that is no card's shape; its outline dents in deeply on both sides where they meet.
Cutting straight across between two such dents, where the region is narrowest, gives the
cards back as regions of their own (judged like any other candidate).
"""

from __future__ import annotations

import cv2
import numpy as np

#: A dent counts when it reaches this far in, as a share of the region's size (the square root
#: of its area): the meeting of two cards, not a chipped corner or a wobble of the outline.
DENT_DEPTH = 0.05
#: A neck is cut when it is at most this wide, as a share of the region's size.
NECK_WIDTH = 0.35
#: Regions filling at least this share of their convex hull are one shape: nothing to cut.
CONVEX_ENOUGH = 0.97
#: Regions filling less than this share of their hull are too ragged to be cards that touch.
MIN_FILL_TO_CUT = 0.5
#: Pieces under this share of the region's area are slivers, not cards.
MIN_PIECE = 0.15
#: How many times a piece may be cut again (three cards in a row need two cuts).
CUT_ROUNDS = 2


def worth_cutting(area: float, hull_area: float) -> bool:
    """Whether a region of ``area`` (its hull ``hull_area``) dents in enough to hold cards
    that touch, and not so much that it is a ragged texture."""
    return MIN_FILL_TO_CUT * hull_area <= area < CONVEX_ENOUGH * hull_area


def _neck(contour: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The two deep dents of ``contour`` closest together (at most ``NECK_WIDTH`` of ``size``
    apart), or None."""
    try:
        defects = cv2.convexityDefects(contour, cv2.convexHull(contour, returnPoints=False))
    except cv2.error:  # a self-touching outline has no well-defined dents
        return None
    if defects is None:
        return None
    defects = defects.reshape(-1, 4)
    deep = defects[defects[:, 3] / 256.0 >= DENT_DEPTH * size]
    if len(deep) < 2:
        return None
    points = contour[deep[:, 2], 0].astype(np.float32)
    gaps = np.linalg.norm(points[:, None] - points[None], axis=2)
    order = np.arange(len(points))
    gaps[order[:, None] >= order[None, :]] = np.inf  # each pair once, never a dent with itself
    first, second = np.unravel_index(np.argmin(gaps), gaps.shape)
    if gaps[first, second] > NECK_WIDTH * size:
        return None
    return points[first], points[second]


def cut_at_necks(
    contour: np.ndarray, area: float, rounds: int = CUT_ROUNDS
) -> list[tuple[np.ndarray, float, float]]:
    """The pieces (outline, area, hull area) of a region cut across its narrowest neck, and
    their own pieces up to ``rounds`` cuts deep; none without a neck."""
    neck = _neck(contour, float(np.sqrt(area)))
    if neck is None:
        return []
    x, y, width, height = cv2.boundingRect(contour)
    origin = np.array([x - 1, y - 1], np.int32)
    mask = np.zeros((height + 2, width + 2), np.uint8)
    cv2.drawContours(mask, [contour - origin], -1, 255, cv2.FILLED)
    ends = [tuple(np.round(p - origin).astype(int).tolist()) for p in neck]
    cv2.line(mask, ends[0], ends[1], 0, 2)
    outlines, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    pieces = []
    for outline in outlines:
        outline = outline + origin
        piece_area = cv2.contourArea(outline)
        if piece_area < MIN_PIECE * area:
            continue
        pieces.append((outline, piece_area, cv2.contourArea(cv2.convexHull(outline))))
        if rounds > 1:
            pieces += cut_at_necks(outline, piece_area, rounds - 1)
    return pieces
