"""Find card outlines (quadrilaterals) in a photo, on any table.

Cards are bright, nearly colourless paper holding a few coloured symbols. Candidate regions
come from several binarisations of a "paper" score (lightness minus chroma), some of them cut
along image edges so that touching cards and cards on a pale table come apart. Each region is
fitted with a quadrilateral and kept when it is card-shaped and holds ink on clean paper;
duplicates across binarisations, groups of cards and regions inside a card are then resolved.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.geometry import aspect_ratio, interior_angles, order_corners
from vision.image import resize_long_side

#: Detection runs on a copy of the photo with this long side.
WORK_LONG_SIDE = 800


@dataclass(frozen=True)
class Outline:
    """A card's corners in the input image's pixels, and whether it touches the image border."""

    corners_xy: np.ndarray
    touches_border: bool


@dataclass
class _Candidate:
    corners: np.ndarray
    area: float
    fill: float


def paper_score(image: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-pixel paper likeness, and the Lab lightness and chroma it is made of (float32)."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB).astype(np.float32)
    lightness = lab[..., 0]
    chroma = np.hypot(lab[..., 1] - 128.0, lab[..., 2] - 128.0)
    return lightness - 1.5 * chroma, lightness, chroma


def _binarisations(image: np.ndarray):
    score, lightness, _ = paper_score(image)
    score = cv2.GaussianBlur(score, (3, 3), 0)
    low, high = np.percentile(score, [30, 99.5])
    opening = np.ones((3, 3), np.uint8)
    for threshold in np.linspace(low, high, 10):
        mask = (score > threshold).astype(np.uint8)
        yield cv2.morphologyEx(mask, cv2.MORPH_OPEN, opening)
    grey = cv2.GaussianBlur(lightness.astype(np.uint8), (5, 5), 0)
    cut_levels = np.percentile(score, [20, 50])
    for canny_low, canny_high in ((10, 30), (20, 60)):
        edges = cv2.Canny(grey, canny_low, canny_high)
        for radius in (1, 2):
            kernel = np.ones((2 * radius + 1, 2 * radius + 1), np.uint8)
            free = cv2.dilate(edges, kernel) == 0
            for threshold in cut_levels:
                yield ((score > threshold) & free).astype(np.uint8)


def _fit_quad(contour: np.ndarray) -> tuple[np.ndarray, float]:
    hull = cv2.convexHull(contour)
    perimeter = cv2.arcLength(hull, True)
    for epsilon in (0.02, 0.03, 0.04, 0.06, 0.08):
        approx = cv2.approxPolyDP(hull, epsilon * perimeter, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float32), cv2.contourArea(hull)
        if len(approx) < 4:
            break
    box = cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float32)
    return box, cv2.contourArea(hull)


def _card_shaped(contour: np.ndarray, min_area: float, max_area: float) -> _Candidate | None:
    area = cv2.contourArea(contour)
    if not min_area <= area <= max_area:
        return None
    quad, hull_area = _fit_quad(contour)
    quad_area = cv2.contourArea(quad)
    if quad_area <= 0 or hull_area <= 0:
        return None
    fill = area / quad_area
    if area / hull_area < 0.88 or not 0.83 < fill < 1.1:
        return None
    quad = order_corners(quad)
    angles = interior_angles(quad)
    if not 1.15 < aspect_ratio(quad) < 3.2 or angles.min() < 55 or angles.max() > 125:
        return None
    return _Candidate(quad, quad_area, fill)


def holds_ink_on_paper(image: np.ndarray, corners: np.ndarray) -> bool:
    """A card shows coloured or dark marks inside and clean paper along its edges."""
    width, height = 60, 40
    from vision.geometry import long_side_first

    target = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    matrix = cv2.getPerspectiveTransform(long_side_first(corners).astype(np.float32), target)
    patch = cv2.warpPerspective(image, matrix, (width, height))
    lab = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).astype(np.float32)
    lightness = lab[..., 0].ravel()
    chroma = np.hypot(lab[..., 1] - 128, lab[..., 2] - 128).ravel()
    ys, xs = np.mgrid[0:height, 0:width]
    design = np.stack([np.ones(height * width), xs.ravel(), ys.ravel()], axis=1)
    paper = lightness >= np.percentile(lightness, 40)
    for _ in range(2):  # a tilted plane of paper lightness absorbs shading across the card
        coef, *_ = np.linalg.lstsq(design[paper], lightness[paper], rcond=None)
        paper = np.abs(lightness - design @ coef) < 12
    if paper.sum() < 50:
        return False
    ink = ((lightness - design @ coef) < -25) | ((chroma - np.median(chroma[paper])) > 18)
    ink = ink.reshape(height, width)
    inner = np.zeros((height, width), bool)
    inner[5:-5, 5:-5] = True
    ring = ~inner
    ring[:2, :] = ring[-2:, :] = ring[:, :2] = ring[:, -2:] = False
    return 0.02 < ink[inner].mean() < 0.75 and ink[ring].mean() < 0.2


def _overlap(a: _Candidate, b: _Candidate) -> float:
    """Intersection area of two convex quadrilaterals."""
    area, _ = cv2.intersectConvexConvex(a.corners, b.corners)
    return float(area)


def _select(candidates: list[_Candidate]) -> list[_Candidate]:
    """One outline per card: merge duplicates, drop groups of cards and regions inside cards."""
    kept: list[_Candidate] = []
    for candidate in sorted(candidates, key=lambda c: -c.area):  # outermost boundary first
        if not any(
            _overlap(candidate, other)
            > 0.75 * (candidate.area + other.area - _overlap(candidate, other))
            for other in kept
        ):
            kept.append(candidate)

    def inside(inner: _Candidate, outer: _Candidate) -> bool:
        return inner.area < 0.7 * outer.area and _overlap(inner, outer) > 0.85 * inner.area

    children = {id(c): [d for d in kept if d is not c and inside(d, c)] for c in kept}
    groups = {id(c) for c in kept if len(children[id(c)]) >= 2}
    result = []
    for candidate in kept:
        if id(candidate) in groups:
            continue
        if any(inside(candidate, other) and id(other) not in groups for other in kept):
            continue
        result.append(candidate)
    final: list[_Candidate] = []
    for candidate in sorted(result, key=lambda c: -c.fill):
        if all(
            _overlap(candidate, other) <= 0.3 * min(candidate.area, other.area) for other in final
        ):
            final.append(candidate)
    return final


def find_outlines(image: np.ndarray) -> list[Outline]:
    """Card outlines in ``image`` ((H, W, 3) uint8 BGR), corners in its pixels."""
    small, factor = resize_long_side(image, WORK_LONG_SIDE)
    height, width = small.shape[:2]
    min_area, max_area = height * width * 0.002, height * width * 0.35
    candidates = []
    for mask in _binarisations(small):
        contours, _ = cv2.findContours(mask, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            candidate = _card_shaped(contour, min_area, max_area)
            if candidate is not None:
                candidates.append(candidate)
    candidates = [c for c in candidates if holds_ink_on_paper(small, c.corners)]
    outlines = []
    for candidate in _select(candidates):
        corners = candidate.corners
        margin = 2.0
        touches = bool(
            (corners[:, 0] <= margin).any()
            or (corners[:, 1] <= margin).any()
            or (corners[:, 0] >= width - 1 - margin).any()
            or (corners[:, 1] >= height - 1 - margin).any()
        )
        outlines.append(Outline((corners / factor).astype(np.float32), touches))
    return outlines
