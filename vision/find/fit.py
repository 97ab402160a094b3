"""Fitting card quadrilaterals to region outlines, and snapping their sides to image edges.

A card region's outline is a rounded rectangle seen in perspective, possibly cut by the image
border. Its straight sides are found on a polygon approximation, the parts along the image
border are dropped (they are not card sides), and a line is fitted to the outline points of
each side away from the rounded corners; the corners are the intersections of adjacent sides.
When only three sides are visible, the fourth (beyond the border) is placed from the card's
proportions.
"""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.geometry import order_corners

#: A SET card's length over its width (57 x 89 mm).
CARD_RATIO = 1.56

Line = tuple[np.ndarray, np.ndarray]  # unit direction, a point on the line


def fit_line(points: np.ndarray) -> Line:
    """Robust (Huber) least-squares line through points."""
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    return np.array([vx, vy], np.float64), np.array([x0, y0], np.float64)


def intersect(l1: Line, l2: Line) -> np.ndarray | None:
    """Intersection point of two lines, None when they are within about 6 degrees of parallel."""
    (d1, p1), (d2, p2) = l1, l2
    det = -d1[0] * d2[1] + d1[1] * d2[0]
    if abs(det) < 0.1:
        return None
    rhs = p2 - p1
    t = (-rhs[0] * d2[1] + rhs[1] * d2[0]) / det
    return p1 + t * d1


def _angle(d1: np.ndarray, d2: np.ndarray) -> float:
    """Angle between two undirected lines, in degrees (0-90)."""
    return float(np.degrees(np.arccos(min(1.0, abs(float(d1 @ d2))))))


def on_border(points: np.ndarray, size: tuple[int, int], tol: float = 1.5) -> np.ndarray:
    """Which points lie on (within ``tol`` of) the border of an image of ``size`` (w, h)."""
    width, height = size
    x, y = points[..., 0], points[..., 1]
    return (x <= tol) | (y <= tol) | (x >= width - 1 - tol) | (y >= height - 1 - tol)


def sides_of(
    contour: np.ndarray, size: tuple[int, int]
) -> list[tuple[Line, np.ndarray, np.ndarray]]:
    """Straight sides of a convex region outline in order, as (line, start, end).

    Pieces along the image border are dropped, short pieces (rounded corners) are skipped, and
    consecutive pieces in the same direction are merged into one side.
    """
    points = contour.reshape(-1, 2).astype(np.float32)
    hull = cv2.convexHull(contour)
    poly = cv2.approxPolyDP(hull, max(1.5, 0.02 * cv2.arcLength(hull, True)), True)
    poly = poly.reshape(-1, 2).astype(np.float32)
    n = len(poly)
    if n < 3:
        return []
    ends = np.concatenate([poly[1:], poly[:1]])
    along_border = (
        on_border(poly, size) & on_border(ends, size) & on_border((poly + ends) / 2, size)
    )
    lengths = np.linalg.norm(ends - poly, axis=1)
    lengths[along_border] = 0
    longest = lengths.max()
    if longest <= 0:
        return []
    long = lengths >= 0.12 * longest
    # start the walk just after a gap (a border piece) or a short piece, so no side is split
    start = int(np.argmax(~long)) if (~long).any() else 0
    groups: list[list[int]] = []
    skipped = 0
    for step in range(n):
        i = (start + step) % n
        if along_border[i]:
            groups.append([])  # a gap: the sides on either side are not adjacent pieces
            skipped = 0
            continue
        if not long[i]:
            skipped += 1
            continue
        if groups and groups[-1] and skipped <= 1:
            j = groups[-1][-1]
            d_prev = (ends[j] - poly[j]) / lengths[j]
            d_cur = (ends[i] - poly[i]) / lengths[i]
            if d_prev @ d_cur > 0 and _angle(d_prev, d_cur) < 12:
                groups[-1].append(i)
                skipped = 0
                continue
        groups.append([i])
        skipped = 0
    if len(groups) > 1 and groups[0] and groups[-1]:  # the walk may have split a side
        j, i = groups[-1][-1], groups[0][0]
        between = [(j + k) % n for k in range(1, (i - j) % n)]
        d_prev = (ends[j] - poly[j]) / lengths[j]
        d_cur = (ends[i] - poly[i]) / lengths[i]
        if (
            len(between) <= 1
            and not any(along_border[b] for b in between)
            and d_prev @ d_cur > 0
            and _angle(d_prev, d_cur) < 12
        ):
            groups[0] = groups.pop() + groups[0]
    groups = [g for g in groups if g]
    if not groups:
        return []
    starts = np.array([poly[g[0]] for g in groups])
    stops = np.array([ends[g[-1]] for g in groups])
    d = stops - starts
    length = np.maximum(np.sqrt((d * d).sum(axis=1)), 1e-9)
    d /= length[:, None]
    rel = points[None, :, :] - starts[:, None, :]
    t = (rel * d[:, None, :]).sum(axis=2)
    s = rel[..., 1] * d[:, None, 0] - rel[..., 0] * d[:, None, 1]
    # outline points along each side, away from its ends (the rounded card corners)
    near = (
        (t > 0.1 * length[:, None])
        & (t < 0.9 * length[:, None])
        & (np.abs(s) < np.maximum(1.5, 0.04 * length)[:, None])
    )
    sides = []
    for k in range(len(groups)):
        support = points[near[k]]
        if len(support) >= 4:
            line = fit_line(support)
        else:
            line = (d[k].astype(np.float64), ((starts[k] + stops[k]) / 2).astype(np.float64))
        sides.append((line, starts[k], stops[k]))
    return sides


def quad_from_sides(sides: list[tuple[Line, np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """Corners from four sides, or from three when the fourth lies beyond the image border.

    Of five or six sides, the four longest are taken: the others cut off corners (another card
    lying over one, or a cut between touching cards).
    """
    if 5 <= len(sides) <= 6:
        lengths = [float(np.linalg.norm(stop - start)) for _, start, stop in sides]
        keep = sorted(np.argsort(lengths)[-4:])
        if min(lengths[k] for k in keep) < 2 * max(
            lengths[k] for k in range(len(sides)) if k not in keep
        ):
            return None  # no clear four sides
        sides = [sides[k] for k in keep]
        if any(_angle(sides[k][0][0], sides[k + 2][0][0]) > 20 for k in (0, 1)):
            return None  # opposite sides of a card are near parallel, even in perspective
    if len(sides) == 4:
        corners = [intersect(sides[i - 1][0], sides[i][0]) for i in range(4)]
        if any(c is None for c in corners):
            return None
        return np.array(corners, np.float32)
    if len(sides) != 3:
        return None
    (la, a0, _), (lb, _, _), (lc, _, c1) = sides
    if _angle(la[0], lc[0]) > 30 or _angle(la[0], lb[0]) < 45:
        return None
    p_ab, p_bc = intersect(la, lb), intersect(lb, lc)
    if p_ab is None or p_bc is None:
        return None
    across = float(np.linalg.norm(p_bc - p_ab))
    dir_a = la[0] if (a0 - p_ab) @ la[0] > 0 else -la[0]
    dir_c = lc[0] if (c1 - p_bc) @ lc[0] > 0 else -lc[0]
    visible = max(float((a0 - p_ab) @ dir_a), float((c1 - p_bc) @ dir_c))
    # the card is as long as its proportions say, and at least as long as what is visible
    options = [o for o in (across * CARD_RATIO, across / CARD_RATIO) if o >= 0.98 * visible]
    extent = min(options) if options else visible
    return np.array([p_ab + dir_a * extent, p_ab, p_bc, p_bc + dir_c * extent], np.float32)


def fit_quad(
    contour: np.ndarray, size: tuple[int, int], precise: bool = True
) -> tuple[np.ndarray, bool, bool] | None:
    """A card quadrilateral (clockwise) for a region outline, whether the border cuts it, and
    whether a corner of it is missing from the region (something covers it).

    ``precise=False`` accepts a clean four-corner approximation of the hull as it is, without
    fitting lines to the sides (when the sides are snapped to the image edges later anyway).
    """
    if not precise and not on_border(contour.reshape(-1, 2), size, 1.0).any():
        hull = cv2.convexHull(contour)
        approx = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True)
        if len(approx) == 4:
            return order_corners(approx.reshape(4, 2).astype(np.float32)), False, False
    sides = sides_of(contour, size)
    quad = quad_from_sides(sides)
    if quad is None:
        return None
    cut = len(sides) == 3 or int(on_border(contour.reshape(-1, 2), size, 1.0).sum()) > 2
    return order_corners(quad), cut, len(sides) > 4


def snap_sides(image: np.ndarray, quads: np.ndarray, reach: float, samples: int = 24) -> np.ndarray:
    """Move each side of each quad (N, 4, 2) onto the strongest nearby edge in ``image``.

    Along each side, lightness profiles across it (within ``reach`` pixels) locate the edge to
    sub-pixel precision, all stepping the same way; a line fitted through them replaces the
    side, and the corners are the new sides' intersections. A side without a clear, straight
    edge along most of its length is kept as it is.
    """
    n = len(quads)
    if n == 0:
        return quads
    quads = quads.astype(np.float64)
    d = quads[:, [1, 2, 3, 0]] - quads
    unit = d / np.maximum(np.linalg.norm(d, axis=2, keepdims=True), 1e-6)
    normal = np.stack([-unit[..., 1], unit[..., 0]], axis=2)
    step = 0.5
    offsets = np.arange(-reach, reach + step / 2, step)
    k = len(offsets)
    t = np.linspace(0.1, 0.9, samples)
    base = quads[:, :, None, :] + t[None, None, :, None] * d[:, :, None, :]  # (N, 4, S, 2)
    pts = base[:, :, :, None, :] + offsets[:, None] * normal[:, :, None, None, :]
    maps = pts.reshape(-1, k, 2).astype(np.float32)
    profile = cv2.remap(
        image, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    if profile.ndim == 3:  # colour: the lightness of the profiles only
        profile = profile.astype(np.float32) @ np.float32([0.114, 0.587, 0.299])
    slope = np.gradient(profile.reshape(n, 4, samples, k).astype(np.float32), axis=3)
    height, width = image.shape[:2]
    inside = (
        (pts[..., 0] >= 0)
        & (pts[..., 0] <= width - 1)
        & (pts[..., 1] >= 0)
        & (pts[..., 1] <= height - 1)
    ).all(axis=3)
    # the edge steps the same way all along a side: take the sign with more evidence
    rising = (np.clip(slope, 0, None).max(axis=3) * inside).sum(axis=2)
    falling = (np.clip(-slope, 0, None).max(axis=3) * inside).sum(axis=2)
    slope = slope * np.where(rising >= falling, 1.0, -1.0)[:, :, None, None]
    idx = np.argmax(slope, axis=3)
    take = np.take_along_axis
    peak = take(slope, idx[..., None], axis=3)[..., 0]
    left = take(slope, np.maximum(idx - 1, 0)[..., None], axis=3)[..., 0]
    right = take(slope, np.minimum(idx + 1, k - 1)[..., None], axis=3)[..., 0]
    ok = inside & (peak > 2.0) & (idx > 0) & (idx < k - 1)
    denom = left - 2 * peak + right
    frac = np.where(np.abs(denom) > 1e-6, 0.5 * (left - right) / np.where(denom == 0, 1, denom), 0)
    off = offsets[idx] + np.clip(frac, -0.5, 0.5) * step
    # one straight edge: drop points away from the side's median offset
    ranked = np.sort(np.where(ok, off, np.inf), axis=2)
    count = ok.sum(axis=2)
    median = take(ranked, np.maximum(count - 1, 0)[..., None] // 2, axis=2)[..., 0]
    ok &= np.abs(off - median[..., None]) < max(1.0, 0.4 * reach)
    good = ok.sum(axis=2) >= 0.5 * samples  # (N, 4)
    p = base + off[..., None] * normal[:, :, None, :]
    w = ok.astype(np.float64)
    total = np.maximum(w.sum(axis=2), 1)
    centre = (p * w[..., None]).sum(axis=2) / total[..., None]
    q = p - centre[:, :, None, :]
    cxx = (w * q[..., 0] ** 2).sum(axis=2)
    cyy = (w * q[..., 1] ** 2).sum(axis=2)
    cxy = (w * q[..., 0] * q[..., 1]).sum(axis=2)
    angle = 0.5 * np.arctan2(2 * cxy, cxx - cyy)
    direction = np.stack([np.cos(angle), np.sin(angle)], axis=2)
    direction = np.where(good[..., None], direction, unit)
    point = np.where(good[..., None], centre, quads)
    # corners: intersections of consecutive sides (side i-1 and side i meet at corner i)
    d1, p1 = direction[:, [3, 0, 1, 2]], point[:, [3, 0, 1, 2]]
    d2, p2 = direction, point
    det = -d1[..., 0] * d2[..., 1] + d1[..., 1] * d2[..., 0]
    rhs = p2 - p1
    s1 = (-rhs[..., 0] * d2[..., 1] + rhs[..., 1] * d2[..., 0]) / np.where(
        np.abs(det) < 0.1, 1, det
    )
    corners = p1 + s1[..., None] * d1
    corners = np.where((np.abs(det) < 0.1)[..., None], quads, corners)
    moved = np.abs(corners - quads).max(axis=(1, 2)) <= 2 * reach
    return np.where(moved[:, None, None], corners, quads).astype(np.float32)
