"""A place where the card net sees a card, turned to the straight edges inside it.

The net's outline of a card is the rectangle around the map pixels its blob wins: centred on
the card and about its size, but often turned 5 to 40 degrees off a card lying at a slant (on
piles, on white tables), so the reader's laid-out card shows a neighbour's corner and misses
its own. A card's four sides are the longest straight edges in and around its place, and they
run at one angle (modulo a right angle): the place turned about its centre to that angle
follows the card, where the paper around it parts no region of the card's shape
(``local_outline``: white on white, cards overlapping).
"""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.find.local_outline import place_crop
from setvision.vision.geometry import order_corners, turned_about_centre

#: The strongest gradients inside the place (this share of its pixels) tell the edges' angle.
STRONG_SHARE = 0.15
#: The place is grown by this many pixels (at ``PLACE_PX`` to the place) before its gradients
#: are taken: its rectangle may cut a card's side.
BAND_PX = 4
#: The edges' angle is read from a histogram of bins this wide (degrees), smoothed over this
#: many bins.
BIN_DEGREES, SMOOTH_BINS = 2.0, 5
#: A place within this many degrees of the edges' angle is left as it is.
MIN_TURN = 2.0


def edge_angle(image: np.ndarray, place: np.ndarray) -> float | None:
    """The angle (degrees, 0 to 90) at which the strongest straight edges in and around
    ``place`` (a quad in ``image``'s pixels) run, modulo a right angle; None for a place too
    small to look at or without edges."""
    place = np.asarray(place, np.float32).reshape(4, 2)
    around = place_crop(image, place, band_px=BAND_PX)
    if around is None:
        return None
    crop, low, scale = around.pixels, around.low, around.scale
    grey = around.scaled(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY) if crop.ndim == 3 else crop)
    # integer derivatives and numpy's root, as ``candidates.make_maps`` takes them: OpenCV's
    # float magnitude differs in the last bits with how the work is split between threads
    gx = cv2.Sobel(grey, cv2.CV_16S, 1, 0, ksize=3).astype(np.float32)
    gy = cv2.Sobel(grey, cv2.CV_16S, 0, 1, ksize=3).astype(np.float32)
    magnitude = np.sqrt(gx * gx + gy * gy)
    inside = np.zeros(grey.shape, np.uint8)
    cv2.fillPoly(inside, [np.round((place - low) * scale).astype(np.int32)], 1)
    band = np.ones((2 * BAND_PX + 1,) * 2, np.uint8)
    inside = cv2.dilate(inside, band).astype(bool)
    if not inside.any():
        return None
    strong = inside & (magnitude > np.quantile(magnitude[inside], 1 - STRONG_SHARE))
    if not strong.any():  # a blank place: no edge to turn to
        return None
    angles = np.degrees(np.arctan2(gy[strong], gx[strong])) % 90.0
    bins = round(90 / BIN_DEGREES)
    counts, _ = np.histogram(angles, bins=bins, range=(0.0, 90.0), weights=magnitude[strong])
    half = SMOOTH_BINS // 2
    wrapped = np.concatenate([counts[-half:], counts, counts[:half]])  # 0 and 90 degrees meet
    smooth = np.convolve(wrapped, np.ones(SMOOTH_BINS), "valid")
    peak = (int(np.argmax(smooth)) + 0.5) * BIN_DEGREES
    # the peak to a fraction of a bin: the mean of the angles within its window
    offsets = (angles - peak + 45.0) % 90.0 - 45.0
    near = np.abs(offsets) <= BIN_DEGREES * SMOOTH_BINS / 2
    weights = magnitude[strong][near]
    return float((peak + np.average(offsets[near], weights=weights)) % 90.0)


def turned_place(image: np.ndarray, place: np.ndarray) -> np.ndarray | None:
    """``place`` (a quad in ``image``'s pixels) turned about its centre so that its sides run
    with the strongest edges in and around it (``edge_angle``); None where it already does
    (within ``MIN_TURN``) or is too small to look at."""
    corners = order_corners(np.asarray(place, np.float32).reshape(4, 2))
    angle = edge_angle(image, corners)
    if angle is None:
        return None
    side = corners[1] - corners[0]
    own = float(np.degrees(np.arctan2(side[1], side[0]))) % 90.0
    turn = (angle - own + 45.0) % 90.0 - 45.0
    if abs(turn) < MIN_TURN:
        return None
    return turned_about_centre(corners, turn)
