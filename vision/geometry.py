"""Small geometric helpers on quadrilaterals: (4, 2) float32 arrays of x, y corners."""

from __future__ import annotations

import math

import numpy as np


def order_corners(corners: np.ndarray) -> np.ndarray:
    """Clockwise (on screen, y down) starting from the corner nearest the top-left."""
    corners = np.asarray(corners, dtype=np.float32).reshape(4, 2)
    points = corners.tolist()  # four points: plain Python is faster than numpy here
    cx = sum(p[0] for p in points) / 4
    cy = sum(p[1] for p in points) / 4
    order = sorted(range(4), key=lambda i: math.atan2(points[i][1] - cy, points[i][0] - cx))
    first = min(range(4), key=lambda k: points[order[k]][0] + points[order[k]][1])
    return corners[[order[(first + k) % 4] for k in range(4)]]


_NEXT = np.array([1, 2, 3, 0])
_PREV = np.array([3, 0, 1, 2])


def side_lengths(corners: np.ndarray) -> np.ndarray:
    """Lengths of the sides 0-1, 1-2, 2-3, 3-0."""
    d = corners[_NEXT] - corners
    return np.sqrt((d * d).sum(axis=1))


def aspect_ratio(corners: np.ndarray) -> float:
    """Long over short side, each averaged over its opposite pair (1 for a square)."""
    sides = side_lengths(corners)
    a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    return float(max(a, b) / max(1e-6, min(a, b)))


def interior_angles(corners: np.ndarray) -> np.ndarray:
    """The four interior angles in degrees."""
    before = corners[_PREV] - corners
    after = corners[_NEXT] - corners
    cosines = (before * after).sum(axis=1) / (
        np.linalg.norm(before, axis=1) * np.linalg.norm(after, axis=1) + 1e-9
    )
    return np.degrees(np.arccos(np.clip(cosines, -1.0, 1.0)))


def long_side_index(corners: np.ndarray) -> int:
    """0 when the sides 0-1 and 2-3 are the longer pair (as the quad is drawn), else 1."""
    sides = side_lengths(corners)
    return 0 if sides[0] + sides[2] >= sides[1] + sides[3] else 1


def long_side_first(corners: np.ndarray) -> np.ndarray:
    """Roll the corners so the side 0-1 is a long side (for a landscape rectification)."""
    return corners if long_side_index(corners) == 0 else corners[_NEXT]


def touches_border(corners: np.ndarray, size: tuple[int, int], margin: float) -> bool:
    """Whether a corner lies within ``margin`` pixels of the border of an image of ``size``."""
    width, height = size
    x, y = corners[:, 0], corners[:, 1]
    return bool(
        (x <= margin).any()
        or (y <= margin).any()
        or (x >= width - 1 - margin).any()
        or (y >= height - 1 - margin).any()
    )


def contains_point(corners: np.ndarray, point: tuple[float, float]) -> bool:
    """Whether a convex quadrilateral contains a point (edges included)."""
    x, y = point
    signs = []
    for (x0, y0), (x1, y1) in zip(corners, corners[_NEXT]):
        signs.append((x1 - x0) * (y - y0) - (y1 - y0) * (x - x0))
    signs = np.array(signs)
    return bool((signs >= 0).all() or (signs <= 0).all())
