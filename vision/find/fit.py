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

#: Two lines give no corner when the sine of the angle between them is below this (about 6
#: degrees): nearer parallel, their intersection is too far off or too unsteady to use.
PARALLEL_SINE = 0.1
#: A polygon vertex within this many pixels of the image's edge lies on the border (finding sides:
#: pieces along the border are not card sides).
BORDER_TOLERANCE = 1.5
#: An outline point within this many pixels of the image's edge touches the border (whether the
#: border cuts a region).
OUTLINE_BORDER_TOLERANCE = 1.0
#: A region is cut by the border when more than this many of its outline points touch it (a count).
CUT_BORDER_POINTS = 2

#: The polygon approximating a region's hull strays from it by up to this share of the hull's
#: perimeter, and, when finding sides, by at least ``APPROX_MIN`` pixels.
APPROX_SHARE = 0.02
APPROX_MIN = 1.5
#: A polygon piece shorter than this share of the outline's longest piece is a rounded corner.
SHORT_PIECE_SHARE = 0.12
#: Two pieces make one side when at most this many short pieces lie between them (a count) and
#: their directions differ by less than ``MERGE_ANGLE`` degrees.
MAX_PIECES_BETWEEN = 1
MERGE_ANGLE = 12
#: The part of a side away from the rounded card corners, from and to these shares of its length:
#: outline points there fit the side's line, and edges are looked for there when snapping.
SIDE_SPAN_START = 0.1
SIDE_SPAN_END = 0.9
#: Outline points this close to a side (a share of its length, but at least ``SUPPORT_MIN``
#: pixels) fit its line.
SUPPORT_SHARE = 0.04
SUPPORT_MIN = 1.5
#: A side's line is fitted through at least this many outline points, else it is the polygon piece.
MIN_SUPPORT_POINTS = 4

#: Of an outline with five up to this many sides, the four longest are the card's (a count)...
MAX_SIDES = 6
#: ...when each is at least this many times as long as any of the others...
CLEAR_SIDES_RATIO = 2
#: ...and opposite ones of them differ in direction by at most this many degrees.
OPPOSITE_ANGLE = 20
#: Of three visible sides, the first and last (opposite) differ in direction by at most
#: ``THREE_OPPOSITE_ANGLE`` degrees, and the middle one meets the first at ``THREE_CORNER_ANGLE``
#: degrees or more.
THREE_OPPOSITE_ANGLE = 30
THREE_CORNER_ANGLE = 45
#: A card length from its proportions fits three sides if it is at least this share of the
#: length visible.
VISIBLE_SHARE = 0.98

#: Snapping sides: lightness profiles taken across each side (a count)...
SNAP_SAMPLES = 24
#: ...each sampled at steps of this many pixels.
PROFILE_STEP = 0.5
#: An edge steps by more than this many lightness units (0-255) per profile step.
MIN_EDGE_SLOPE = 2.0
#: Edge points further than this share of the reach (but at least ``EDGE_SPREAD_MIN`` pixels)
#: from the side's median offset are not on its straight edge.
EDGE_SPREAD_SHARE = 0.4
EDGE_SPREAD_MIN = 1.0
#: A side snaps only when at least this share of its profiles find the edge.
EDGE_SUPPORT_SHARE = 0.5
#: A quad snaps only when no corner moves by more than this many times the reach.
MAX_CORNER_MOVE = 2

Line = tuple[np.ndarray, np.ndarray]  # unit direction, a point on the line


def fit_line(points: np.ndarray) -> Line:
    """Robust (Huber) least-squares line through points."""
    vx, vy, x0, y0 = cv2.fitLine(points.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
    return np.array([vx, vy], np.float64), np.array([x0, y0], np.float64)


def intersect(l1: Line, l2: Line) -> np.ndarray | None:
    """Intersection point of two lines, None when they are within about 6 degrees of parallel."""
    (d1, p1), (d2, p2) = l1, l2
    det = -d1[0] * d2[1] + d1[1] * d2[0]
    if abs(det) < PARALLEL_SINE:
        return None
    rhs = p2 - p1
    t = (-rhs[0] * d2[1] + rhs[1] * d2[0]) / det
    return p1 + t * d1


def _angle(d1: np.ndarray, d2: np.ndarray) -> float:
    """Angle between two undirected lines, in degrees (0-90)."""
    return float(np.degrees(np.arccos(min(1.0, abs(float(d1 @ d2))))))


def on_border(
    points: np.ndarray, size: tuple[int, int], tol: float = BORDER_TOLERANCE
) -> np.ndarray:
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
    poly = cv2.approxPolyDP(hull, max(APPROX_MIN, APPROX_SHARE * cv2.arcLength(hull, True)), True)
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
    long = lengths >= SHORT_PIECE_SHARE * longest
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
        if groups and groups[-1] and skipped <= MAX_PIECES_BETWEEN:
            j = groups[-1][-1]
            d_prev = (ends[j] - poly[j]) / lengths[j]
            d_cur = (ends[i] - poly[i]) / lengths[i]
            if d_prev @ d_cur > 0 and _angle(d_prev, d_cur) < MERGE_ANGLE:
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
            len(between) <= MAX_PIECES_BETWEEN
            and not any(along_border[b] for b in between)
            and d_prev @ d_cur > 0
            and _angle(d_prev, d_cur) < MERGE_ANGLE
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
        (t > SIDE_SPAN_START * length[:, None])
        & (t < SIDE_SPAN_END * length[:, None])
        & (np.abs(s) < np.maximum(SUPPORT_MIN, SUPPORT_SHARE * length)[:, None])
    )
    sides = []
    for k in range(len(groups)):
        support = points[near[k]]
        if len(support) >= MIN_SUPPORT_POINTS:
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
    if 5 <= len(sides) <= MAX_SIDES:
        lengths = [float(np.linalg.norm(stop - start)) for _, start, stop in sides]
        keep = sorted(np.argsort(lengths)[-4:])
        if min(lengths[k] for k in keep) < CLEAR_SIDES_RATIO * max(
            lengths[k] for k in range(len(sides)) if k not in keep
        ):
            return None  # no clear four sides
        sides = [sides[k] for k in keep]
        if any(_angle(sides[k][0][0], sides[k + 2][0][0]) > OPPOSITE_ANGLE for k in (0, 1)):
            return None  # opposite sides of a card are near parallel, even in perspective
    if len(sides) == 4:
        corners = [intersect(sides[i - 1][0], sides[i][0]) for i in range(4)]
        if any(c is None for c in corners):
            return None
        return np.array(corners, np.float32)
    if len(sides) != 3:
        return None
    (la, a0, _), (lb, _, _), (lc, _, c1) = sides
    if _angle(la[0], lc[0]) > THREE_OPPOSITE_ANGLE or _angle(la[0], lb[0]) < THREE_CORNER_ANGLE:
        return None
    p_ab, p_bc = intersect(la, lb), intersect(lb, lc)
    if p_ab is None or p_bc is None:
        return None
    across = float(np.linalg.norm(p_bc - p_ab))
    dir_a = la[0] if (a0 - p_ab) @ la[0] > 0 else -la[0]
    dir_c = lc[0] if (c1 - p_bc) @ lc[0] > 0 else -lc[0]
    visible = max(float((a0 - p_ab) @ dir_a), float((c1 - p_bc) @ dir_c))
    # the card is as long as its proportions say, and at least as long as what is visible
    options = [
        o for o in (across * CARD_RATIO, across / CARD_RATIO) if o >= VISIBLE_SHARE * visible
    ]
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
    if not precise and not on_border(contour.reshape(-1, 2), size, OUTLINE_BORDER_TOLERANCE).any():
        hull = cv2.convexHull(contour)
        approx = cv2.approxPolyDP(hull, APPROX_SHARE * cv2.arcLength(hull, True), True)
        if len(approx) == 4:
            return order_corners(approx.reshape(4, 2).astype(np.float32)), False, False
    sides = sides_of(contour, size)
    quad = quad_from_sides(sides)
    if quad is None:
        return None
    cut = (
        len(sides) == 3
        or int(on_border(contour.reshape(-1, 2), size, OUTLINE_BORDER_TOLERANCE).sum())
        > CUT_BORDER_POINTS
    )
    return order_corners(quad), cut, len(sides) > 4


def snap_sides(
    image: np.ndarray, quads: np.ndarray, reach: float, samples: int = SNAP_SAMPLES
) -> np.ndarray:
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
    step = PROFILE_STEP
    offsets = np.arange(-reach, reach + step / 2, step)
    k = len(offsets)
    t = np.linspace(SIDE_SPAN_START, SIDE_SPAN_END, samples)
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
    ok = inside & (peak > MIN_EDGE_SLOPE) & (idx > 0) & (idx < k - 1)
    denom = left - 2 * peak + right
    frac = np.where(np.abs(denom) > 1e-6, 0.5 * (left - right) / np.where(denom == 0, 1, denom), 0)
    off = offsets[idx] + np.clip(frac, -0.5, 0.5) * step
    # one straight edge: drop points away from the side's median offset
    ranked = np.sort(np.where(ok, off, np.inf), axis=2)
    count = ok.sum(axis=2)
    median = take(ranked, np.maximum(count - 1, 0)[..., None] // 2, axis=2)[..., 0]
    ok &= np.abs(off - median[..., None]) < max(EDGE_SPREAD_MIN, EDGE_SPREAD_SHARE * reach)
    good = ok.sum(axis=2) >= EDGE_SUPPORT_SHARE * samples  # (N, 4)
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
        np.abs(det) < PARALLEL_SINE, 1, det
    )
    corners = p1 + s1[..., None] * d1
    corners = np.where((np.abs(det) < PARALLEL_SINE)[..., None], quads, corners)
    moved = np.abs(corners - quads).max(axis=(1, 2)) <= MAX_CORNER_MOVE * reach
    return np.where(moved[:, None, None], corners, quads).astype(np.float32)
