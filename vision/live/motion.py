"""Move card outlines from one video frame to the next, and tell when a card's look changed.

Sparse optical flow (pyramidal Lucas-Kanade) follows a few corner points on each card. The
cards lie on one table, so one homography fitted to all points (RANSAC) is the camera's
motion; a card whose points mostly disagree with it was covered by a hand or moved, and is
left where the table motion puts it (its look then decides). A tiny normalised colour thumbnail
of each card, compared with the one taken when it was read, says whether it is still the same
card or was taken, covered or swapped. Everything here works on a reduced copy of the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from scipy.ndimage import maximum_filter
from setvision.vision.geometry import long_side_first, pixel_corners, scaled_about_centre
from setvision.vision.image import resize_long_side

#: Thumbnail (width, height) compared between frames: coarse enough to ignore blur and noise.
THUMB_SIZE = (32, 20)
#: Weight of the Lab colour channels against lightness: a red card swapped for a green one
#: with the same symbols looks alike in grey.
COLOUR_WEIGHT = 4.0
#: A thumbnail whose pixels vary less than this (Lab units, weighted) has no detail at all.
FLAT = 2.0
#: Points followed per card.
MAX_POINTS = 24
#: Least points a card keeps before it is given new ones.
MIN_POINTS = 6
_LK = {
    "winSize": (15, 15),
    "maxLevel": 3,
    "criteria": (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 20, 0.03),
}


def work_copy(image: np.ndarray, long_side: int) -> tuple[np.ndarray, np.ndarray, float]:
    """A BGR copy with its long side near ``long_side``, its grey version, and the factor.

    Frames at most a quarter larger are used as they are: shrinking them costs more than
    the smaller copy saves.
    """
    if max(image.shape[:2]) <= 1.25 * long_side:
        small, factor = image, 1.0
    else:
        small, factor = resize_long_side(image, long_side)
    return small, cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), factor


def thumbnail(small: np.ndarray, corners_xy: np.ndarray) -> np.ndarray:
    """The card inside ``corners_xy`` of a BGR image as a (20, 32, 3) float32 Lab patch.

    Each channel has zero mean, colour is weighted by ``COLOUR_WEIGHT``, and the whole patch
    has unit norm, so that ``likeness`` is a normalised correlation. A patch without detail
    (bare table where a card was taken) is all zeros.
    """
    width, height = THUMB_SIZE
    corners = long_side_first(np.asarray(corners_xy, dtype=np.float32).reshape(4, 2))
    target = pixel_corners(width, height)
    matrix = cv2.getPerspectiveTransform(corners, target)
    patch = cv2.warpPerspective(small, matrix, THUMB_SIZE, flags=cv2.INTER_AREA)
    patch = cv2.GaussianBlur(cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).astype(np.float32), (0, 0), 1.0)
    patch -= patch.reshape(-1, 3).mean(axis=0)
    patch *= np.float32([1.0, COLOUR_WEIGHT, COLOUR_WEIGHT])
    norm = float(np.linalg.norm(patch))
    if norm < FLAT * np.sqrt(patch.size):
        return np.zeros_like(patch)
    return patch / norm


def loose_paper(small: np.ndarray, quads: list[np.ndarray]) -> float:
    """The share of a frame that looks like card paper (bright, colourless) outside ``quads``.

    When it grows, cards were probably dealt where none is followed yet. ``quads`` are in
    ``small``'s pixels; they are grown a little so that their edges do not count.
    """
    tiny = cv2.resize(small, (max(1, small.shape[1] // 4), max(1, small.shape[0] // 4)),
                      interpolation=cv2.INTER_AREA)  # fmt: skip
    hsv = cv2.cvtColor(tiny, cv2.COLOR_BGR2HSV)
    value = hsv[..., 2]
    paper = (value > max(60.0, 0.7 * float(np.percentile(value, 98)))) & (hsv[..., 1] < 70)
    for quad in quads:
        grown = scaled_about_centre(np.asarray(quad, np.float32) / 4, 1.15)
        cv2.fillConvexPoly(paper.view(np.uint8), np.round(grown).astype(np.int32), 0)
    return float(paper.mean())


#: Lab bins (lightness, a, b) of the table's colours: coarse in lightness, so shade and grain
#: fall in few bins, finer in colour.
TABLE_BINS = (8, 16, 16)
#: The table's colours are the most common bins holding this share of its pixels (so a stray
#: object outside the cards does not count as table), widened by one bin each way.
TABLE_SHARE = 0.97


def table_colours(small: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
    """Which Lab bins (``TABLE_BINS``) the table shows outside ``quads`` (``small``'s pixels,
    grown a little): a boolean array; all False when no table is seen."""
    mask = np.full(small.shape[:2], 255, np.uint8)
    for quad in quads:
        grown = scaled_about_centre(np.asarray(quad, np.float32), 1.15)
        cv2.fillConvexPoly(mask, np.round(grown).astype(np.int32), 0)
    counts = _lab_histogram(small, mask)
    total = float(counts.sum())
    if total == 0:
        return np.zeros(TABLE_BINS, bool)
    order = np.argsort(counts, axis=None)[::-1]
    kept = int(np.searchsorted(np.cumsum(counts.flat[order]), TABLE_SHARE * total)) + 1
    colours = np.zeros(counts.size, bool)
    colours[order[:kept]] = True
    return maximum_filter(colours.reshape(TABLE_BINS), size=3)


def table_share(small: np.ndarray, quad: np.ndarray, colours: np.ndarray) -> float:
    """The share of the inner part of ``quad`` (``small``'s pixels) whose colour is the
    table's (``table_colours``): near 1 where a card was taken and the table shows."""
    inner = scaled_about_centre(np.asarray(quad, np.float32), 0.8)  # edges blur into the table
    mask = np.zeros(small.shape[:2], np.uint8)
    cv2.fillConvexPoly(mask, np.round(inner).astype(np.int32), 255)
    counts = _lab_histogram(small, mask)
    total = float(counts.sum())
    return float(counts[colours].sum()) / total if total else 0.0


def _lab_histogram(small: np.ndarray, mask: np.ndarray) -> np.ndarray:
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    return cv2.calcHist([lab], [0, 1, 2], mask, list(TABLE_BINS), [0, 256] * 3)


def likeness(a: np.ndarray, b: np.ndarray) -> float:
    """Normalised correlation of two thumbnails, -1..1; a card turned half round still matches.

    Two patches without detail are alike (1); one without detail is like nothing (0).
    """
    flat_a, flat_b = not a.any(), not b.any()
    if flat_a or flat_b:
        return 1.0 if flat_a and flat_b else 0.0
    return float(max((a * b).sum(), (a * b[::-1, ::-1]).sum()))


def apply_homography(matrix: np.ndarray, corners_xy: np.ndarray) -> np.ndarray:
    points = np.asarray(corners_xy, dtype=np.float32).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(points, matrix).reshape(-1, 2)


@dataclass(frozen=True)
class Motion:
    """How one card moved between two frames: a 3x3 homography (grey-copy pixels).

    ``agrees`` is False when the card's points disagreed with the table's motion (a hand
    over it, or the card moved by hand) and the table's motion was used instead.
    """

    matrix: np.ndarray
    agrees: bool


class QuadFlow:
    """Points on each card (by key), followed from one grey frame to the next."""

    def __init__(self, max_points: int = MAX_POINTS):
        self.max_points = max_points
        self.points: dict[int, np.ndarray] = {}
        self._previous: np.ndarray | None = None

    def seed(self, key: int, grey: np.ndarray, corners_xy: np.ndarray) -> None:
        """Pick points to follow on (and just around) the card at ``corners_xy``."""
        corners = np.asarray(corners_xy, np.float32).reshape(4, 2)
        height, width = grey.shape[:2]
        x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 3, 0)
        x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 4
        x1, y1 = min(x1, width), min(y1, height)
        points = corners
        if x1 - x0 >= 8 and y1 - y0 >= 8:  # search only around the card: far cheaper
            mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
            cv2.fillConvexPoly(mask, np.round(corners - (x0, y0)).astype(np.int32), 255)
            mask = cv2.dilate(mask, np.ones((5, 5), np.uint8))
            found = cv2.goodFeaturesToTrack(
                grey[y0:y1, x0:x1], self.max_points, 0.01, 4, mask=mask, blockSize=5
            )
            if found is not None:
                found = found.reshape(-1, 2).astype(np.float32) + np.float32([x0, y0])
                points = np.concatenate([corners, found])
        self.points[key] = points

    def forget(self, key: int) -> None:
        self.points.pop(key, None)

    def count(self, key: int) -> int:
        return len(self.points.get(key, ()))

    def step(self, grey: np.ndarray) -> dict[int, Motion | None]:
        """Follow every card's points into ``grey``: each key's motion, or None when lost.

        The first call only remembers the frame and returns ``{}``.
        """
        previous, self._previous = self._previous, grey
        keys = [k for k, p in self.points.items() if len(p)]
        if previous is None or not keys:
            return {}
        old = np.concatenate([self.points[k] for k in keys]).reshape(-1, 1, 2)
        new, status, _ = cv2.calcOpticalFlowPyrLK(previous, grey, old, None, **_LK)
        good = status.ravel() == 1
        old, new = old.reshape(-1, 2), new.reshape(-1, 2)
        table, inliers = _fit_table(old[good], new[good])
        table_inlier = np.zeros(len(old), bool)
        if table is not None:
            table_inlier[np.flatnonzero(good)] = inliers
        motions: dict[int, Motion | None] = {}
        start = 0
        for key in keys:
            stop = start + len(self.points[key])
            mine = slice(start, stop)
            start = stop
            ok = good[mine]
            if table is not None and table_inlier[mine].sum() >= max(3, 0.5 * ok.sum()):
                motions[key] = Motion(table, agrees=True)
                self.points[key] = new[mine][table_inlier[mine]]
            elif table is not None:
                motions[key] = Motion(table, agrees=False)
                self.points[key] = apply_homography(table, old[mine]).astype(np.float32)
            elif ok.sum() >= 4:
                matrix, _ = cv2.estimateAffinePartial2D(old[mine][ok], new[mine][ok])
                motions[key] = (
                    None if matrix is None else Motion(np.vstack([matrix, [0, 0, 1]]), True)
                )
                self.points[key] = new[mine][ok]
            else:
                motions[key] = None
                self.points[key] = new[mine][ok]
        return motions


def _fit_table(old: np.ndarray, new: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """The homography most points agree with (the table's motion), and which points agree."""
    if len(old) < 8:
        return None, np.zeros(len(old), bool)
    matrix, inliers = cv2.findHomography(old, new, cv2.RANSAC, 2.0)
    if matrix is None:
        return None, np.zeros(len(old), bool)
    inliers = inliers.ravel().astype(bool)
    if inliers.sum() < max(8, 0.3 * len(old)):
        return None, np.zeros(len(old), bool)
    return matrix, inliers
