"""Small geometric helpers on quadrilaterals: (4, 2) float32 arrays of x, y corners."""

from __future__ import annotations

import math

import cv2
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


def pixel_corners(width: int, height: int) -> np.ndarray:
    """The corners of a ``width`` x ``height`` pixel grid's first and last pixels, (4, 2)
    float32, clockwise from the top-left: where a card's corners go when it is laid out.
    (``vision.read.rectify`` spells the same corners out: its source is part of the attribute
    models' fingerprint, and a change there would refuse the shipped models until retrained.)"""
    return np.float32([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]])


def scaled_about_centre(corners: np.ndarray, factor: float) -> np.ndarray:
    """The corners moved ``factor`` times as far from their centre (below 1: shrunk)."""
    centre = corners.mean(axis=0)
    return ((corners - centre) * np.float32(factor) + centre).astype(np.float32)


def turned_about_centre(corners: np.ndarray, degrees: float) -> np.ndarray:
    """The corners turned by ``degrees`` about their centre (clockwise on an image, y down)."""
    turn = np.radians(degrees)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]], np.float32)
    centre = corners.mean(axis=0)
    return ((corners - centre) @ rotation.T + centre).astype(np.float32)


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


def _signed_area(points: list[tuple[float, float]]) -> float:
    total = 0.0
    for (x0, y0), (x1, y1) in zip(points, points[1:] + points[:1]):
        total += x0 * y1 - x1 * y0
    return 0.5 * total


def _hull(polygon: np.ndarray) -> list[tuple[float, float]]:
    """The convex hull of a polygon's points, corners in the order of positive signed area."""
    hull = cv2.convexHull(np.asarray(polygon, np.float64).reshape(-1, 1, 2).astype(np.float32))
    points = [(float(x), float(y)) for x, y in hull.reshape(-1, 2)]
    return points if _signed_area(points) >= 0 else points[::-1]


def _boxes_meet(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether the bounding boxes of two point sets ((N, 2)) overlap."""
    low_a, high_a, low_b, high_b = a.min(axis=0), a.max(axis=0), b.min(axis=0), b.max(axis=0)
    return not ((low_a >= high_b).any() or (low_b >= high_a).any())


def _clipped_area(subject: list[tuple[float, float]], clip: list[tuple[float, float]]) -> float:
    """The area two convex hulls (as ``_hull`` gives them) share: ``subject`` clipped by each
    side of ``clip`` (Sutherland-Hodgman)."""
    if len(subject) < 3 or len(clip) < 3:
        return 0.0
    for (x0, y0), (x1, y1) in zip(clip, clip[1:] + clip[:1]):
        dx, dy = x1 - x0, y1 - y0
        sides = [dx * (y - y0) - dy * (x - x0) for x, y in subject]  # >= 0: inside
        kept: list[tuple[float, float]] = []
        for k, point in enumerate(subject):
            before, s0, s1 = subject[k - 1], sides[k - 1], sides[k]
            if (s1 >= 0) != (s0 >= 0):
                t = s0 / (s0 - s1)
                kept.append((before[0] + t * (point[0] - before[0]),
                             before[1] + t * (point[1] - before[1])))  # fmt: skip
            if s1 >= 0:
                kept.append(point)
        subject = kept
        if len(subject) < 3:
            return 0.0
    return max(0.0, _signed_area(subject))


def convex_overlap(a: np.ndarray, b: np.ndarray) -> float:
    """The area two polygons' convex hulls share.

    Exact, and right where OpenCV's ``intersectConvexConvex`` returns 0: for two
    near-identical quads sharing a corner to within float precision.
    """
    a, b = np.asarray(a).reshape(-1, 2), np.asarray(b).reshape(-1, 2)
    return _clipped_area(_hull(a), _hull(b)) if _boxes_meet(a, b) else 0.0


def convex_iou(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over union of two polygons' convex hulls (0 when both are empty)."""
    a, b = np.asarray(a).reshape(-1, 2), np.asarray(b).reshape(-1, 2)
    hull_a, hull_b = _hull(a), _hull(b)
    inter = _clipped_area(hull_a, hull_b) if _boxes_meet(a, b) else 0.0
    union = _signed_area(hull_a) + _signed_area(hull_b) - inter
    return inter / union if union > 0 else 0.0
