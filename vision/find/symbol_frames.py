"""Candidate cards framed from their print: the holes a card's symbols leave in a paper mask.

Touching cards merge into one region of paper, and a card on a white sheet into the sheet, so
neither comes out as a region of its own; their symbols still come out as holes in the paper.
A group of 1-3 alike holes predicts its card's centre, orientation and size (``card_frame``),
and that prediction is a candidate like any other: the learned model judges it.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np
from setvision.vision.find.fit import CARD_RATIO
from setvision.vision.find.symbols import (
    SYMBOL_TO_WIDTH,
    Blob,
    CardFrame,
    card_frame,
    group_blobs,
    predicted_quad,
)

#: Cards are framed from symbols only where they would cover at least this share of the work
#: image: smaller symbols are mostly print texture (stripes, specks), and cards that small are
#: left to the region makers.
MIN_FRAME_SHARE = 0.0015
#: Cards are framed from groups of at least this many symbols: a lone symbol-like hole is as
#: often a print on a cloth or a bag (a banana, a leaf) as a card's single symbol, and most
#: one-symbol cards come out as regions anyway.
MIN_GROUP = 2
#: A hole thinner than this (work pixels) is no symbol.
MIN_SYMBOL_THICKNESS = 3.0
#: A hole longer than this share of the work image's long side is no symbol.
MAX_SYMBOL_SHARE = 0.3
#: How much shorter than a square-on card's a symbol may look (a card seen at a slant).
SLANT = 0.8


def hole_blob(outline: np.ndarray, shortest: float, longest: float) -> Blob | None:
    """The symbol a hole's outline ((N, 1, 2) points) could be: its principal axis and extents,
    or None when its length is not within [``shortest``, ``longest``]. Holes carry no colour:
    they are grouped by shape."""
    moments = cv2.moments(outline)
    if moments["m00"] <= 0:
        return None
    theta = 0.5 * np.arctan2(2 * moments["mu11"], moments["mu20"] - moments["mu02"])
    axis = np.array([np.cos(theta), np.sin(theta)])
    across = np.array([-axis[1], axis[0]])
    points = outline.reshape(-1, 2).astype(np.float64)
    along, side = points @ axis, points @ across
    length = float(along.max() - along.min() + 1)
    thickness = float(side.max() - side.min() + 1)
    if not shortest <= length <= longest or thickness < MIN_SYMBOL_THICKNESS:
        return None
    middle = axis * (along.max() + along.min()) / 2 + across * (side.max() + side.min()) / 2
    return Blob(middle, axis, length, thickness, np.zeros(2), 1.0)


def frame_area(frame: CardFrame) -> float:
    """The area of the card ``frame`` predicts (a parallelogram: the product of the distances
    between its opposite sides over the sine between them)."""
    n_long, n_short = frame.normals[0], frame.normals[1]
    sine = abs(float(n_long[0] * n_short[1] - n_long[1] * n_short[0]))
    return 4 * frame.expect[0] * frame.expect[1] / max(sine, 1e-6)


def symbol_frames(holes: Sequence[np.ndarray], size: tuple[int, int]) -> list[np.ndarray]:
    """Card quads (4, 2) predicted by the groups of symbol-like ``holes`` (outlines of holes in
    the paper masks of a work image of this (width, height), every point listed)."""
    smallest = MIN_FRAME_SHARE * size[0] * size[1]
    shortest = SLANT * SYMBOL_TO_WIDTH * np.sqrt(smallest / CARD_RATIO)
    longest = MAX_SYMBOL_SHARE * max(size)
    blobs = [
        blob
        for outline in holes  # a hole's outline runs at least twice its length
        if len(outline) >= 2 * shortest
        and (blob := hole_blob(outline, shortest, longest)) is not None
    ]
    frames = [card_frame(group) for group in group_blobs(blobs) if len(group) >= MIN_GROUP]
    quads = [predicted_quad(f) for f in frames if frame_area(f) >= smallest]
    return [q for q in quads if q is not None]
