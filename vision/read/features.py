"""From an upright card image to the numbers that describe its symbols.

Everything is measured against the card's own paper: a smooth model of the paper colour is
fitted across the card (absorbing shadows, glare gradients and the colour of the light) and
the image is divided by it. On that normalised card, ink is what absorbs light; symbols are
the filled outer contours of the ink; colour is the ink's absorption in each channel; fill is
how strongly the inside of a symbol absorbs compared with its outline; shape comes from the
contour (solidity, extent, corners, the width and centre line along the symbol).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import cv2
import numpy as np

#: Fraction of the card's height and width left out at the edges (background, rounded corners).
MARGIN = 0.06
#: A piece of ink cut by the card's end spanning at least this share of the card's height is
#: what is left of a symbol there (the outline may stop short of the card).
CUT_SYMBOL = 0.3
_PROFILE_BINS = 9
#: A piece of ink at the card's end narrower than this share of its length is the card's own
#: edge (or the table beside it) seen in the outermost columns, not a cut symbol.
RIM_PIECE = 0.03

NUMBER_FEATURES = (
    "count_1", "count_2", "count_3", "count_many", "total_width", "largest_width",
    "size_spread", "ink_columns", "narrow_margin", "wide_margin",
)  # fmt: skip
SHAPE_FEATURES = (
    "solidity", "extent", "aspect", "defect_depth", "vertices", "compactness",
    "hu1", "hu2", "hu3", "centre_wander", "centre_swing", "end_taper",
    *(f"width_{i}" for i in range(_PROFILE_BINS)),
)  # fmt: skip
COLOR_FEATURES = (
    "absorb_b", "absorb_g", "absorb_r", "share_b", "share_g", "share_r",
    "ink_l", "ink_a", "ink_b", "hue_cos", "hue_sin", "ink_chroma",
    "halo_cos", "halo_sin", "halo_chroma",
)  # fmt: skip
SHADING_FEATURES = (
    "inside_ratio", "inside_spread", "inside_cover", "inside_texture", "inside_chroma",
    "outline_strength", "inside_lightness", "inside_ink", "inside_contrast", "stripe_anisotropy",
)  # fmt: skip
FEATURE_NAMES = NUMBER_FEATURES + SHAPE_FEATURES + COLOR_FEATURES + SHADING_FEATURES
FEATURE_GROUPS = {
    "number": NUMBER_FEATURES,
    "shape": SHAPE_FEATURES,
    "color": COLOR_FEATURES,
    "shading": SHADING_FEATURES,
}


@dataclass
class CardFeatures:
    """Named measurements of one card and the symbol contours they come from."""

    values: dict[str, float]
    symbols: list[np.ndarray] = field(default_factory=list)

    def vector(self, names: tuple[str, ...] = FEATURE_NAMES) -> np.ndarray:
        return np.array([self.values[name] for name in names], dtype=np.float64)

    @property
    def symbol_count(self) -> int:
        return len(self.symbols)


_GRID = (32, 20)  # paper model fitting grid (width, height)


def _design() -> np.ndarray:
    ys, xs = np.mgrid[0 : _GRID[1], 0 : _GRID[0]].astype(np.float32)
    xs, ys = xs / (_GRID[0] - 1) - 0.5, ys / (_GRID[1] - 1) - 0.5
    return np.stack([np.ones_like(xs), xs, ys, xs * xs, ys * ys, xs * ys], -1).reshape(-1, 6)


_DESIGN = _design()
_GRID_INNER = np.zeros((_GRID[1], _GRID[0]), bool)
_GRID_INNER[2:-2, 2:-2] = True
_GRID_INNER = _GRID_INNER.ravel()


def paper_model(card: np.ndarray) -> np.ndarray:
    """A smooth (quadratic) estimate of the bare paper's colour at every pixel, float32.

    Fitted on a coarse grid to the brightest, least coloured cells, then refitted to the cells
    it explains; what remains unexplained is ink.
    """
    height, width = card.shape[:2]
    pixels = cv2.resize(card, _GRID, interpolation=cv2.INTER_AREA).astype(np.float32).reshape(-1, 3)
    inner = _GRID_INNER
    brightness = pixels.sum(axis=1)
    spread = pixels.max(axis=1) - pixels.min(axis=1)
    paper = inner & (brightness >= _quantile(brightness[inner], 0.55))
    paper &= spread <= _quantile(spread[paper], 0.9) + 1e-3
    coef = np.zeros((6, 3), np.float32)
    coef[0] = pixels[paper].mean(axis=0) if paper.any() else 200.0
    for _ in range(2):
        if paper.sum() < 12:
            break
        design = _DESIGN[paper]
        normal = design.T @ design + np.eye(6, dtype=np.float32) * 1e-3  # ridge: never singular
        coef = np.linalg.solve(normal, design.T @ pixels[paper])
        fitted = _DESIGN @ coef
        residual = np.abs(pixels - fitted).max(axis=1) / np.maximum(fitted.mean(axis=1), 1.0)
        paper = inner & (residual < 0.08)
    coarse = (_DESIGN @ coef).reshape(_GRID[1], _GRID[0], 3).astype(np.float32)
    full = cv2.resize(coarse, (width, height), interpolation=cv2.INTER_LINEAR)
    return np.maximum(full, 8.0)


def _hysteresis(strength: np.ndarray, high: float, low: float) -> np.ndarray:
    """Pixels above ``low`` that are connected to a pixel above ``high`` (uint8 0/1).

    Motion blur and glare leave parts of an outline faint; they still belong to the symbol
    when they join a strong part.
    """
    weak = (strength > low).astype(np.uint8)
    count, labels = cv2.connectedComponents(weak, connectivity=8)
    if count <= 1:
        return weak
    strong_labels = np.unique(labels[strength > high])
    keep = np.zeros(count, np.uint8)
    keep[strong_labels] = 1
    keep[0] = 0
    return keep[labels]


def _fragments_by_column(contours: list[np.ndarray], widest: float) -> list[list[np.ndarray]]:
    """Group neighbouring contours that together are no wider than one symbol can be.

    Symbols stand side by side with gaps between them, so pieces that fit within one
    symbol's width (an outline broken by blur or glare) belong to the same symbol.
    """
    groups: list[tuple[int, int, list[np.ndarray]]] = []
    for contour in sorted(contours, key=lambda c: cv2.boundingRect(c)[0]):
        x, _, w, _ = cv2.boundingRect(contour)
        if groups:
            left, right, members = groups[-1]
            if max(right, x + w) - left <= widest:
                groups[-1] = (left, max(right, x + w), [*members, contour])
                continue
        groups.append((x, x + w, [contour]))
    return [members for _, _, members in groups]


def _outer_pieces(ink: np.ndarray) -> list[np.ndarray]:
    """The outer contours of the ink, gaps of a pixel closed."""
    closed = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    pieces, _ = cv2.findContours(closed, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    return list(pieces)


def _run_at_ends(points: np.ndarray, length: int) -> float:
    """How far ``points`` ((N, 2)) lying on the first or last column of ``length`` columns run
    along it (0 when fewer than two lie there)."""
    at_end = (points[:, 0] <= 0) | (points[:, 0] >= length - 1)
    return float(np.ptp(points[at_end, 1])) if at_end.sum() > 1 else 0.0


def _symbol_cut_by_end(piece: np.ndarray, columns: int, card_height: int) -> bool:
    """Whether one piece of ink of a card ``columns`` long is symbol-sized and runs along the
    first or last column: a symbol cut there."""
    height = cv2.boundingRect(piece)[3]
    return height >= CUT_SYMBOL * card_height and (
        _run_at_ends(piece.reshape(-1, 2), columns) > 0.4 * height
    )


def may_lack_a_symbol(count: int) -> bool:
    """Whether a row of ``count`` symbols could hold one more (a card has one to three)."""
    return 1 <= count < 3


def _cut_at_end(pieces: list[np.ndarray], columns: int, card_height: int) -> bool:
    """A symbol-sized one of the ink's ``pieces`` is cut by the card's end (left or right,
    margins left out): the outline may be misplaced along the card, and a symbol may lie
    beyond it."""
    return any(_symbol_cut_by_end(piece, columns, card_height) for piece in pieces)


def _cut_in_rim(ink_across: np.ndarray, card_height: int) -> bool:
    """A symbol-sized piece of ink reaches the card's very end (left or right) inside the
    ``MARGIN`` that reading leaves out, yet spans neither the card's top nor its bottom: a
    symbol cut there by an outline that stops short of the card (cut on a slant, only a sliver
    of it may be left). Table seen past an outline that is too long runs along the whole end.
    ``ink_across``: the card's ink over its whole length, top and bottom margins left out."""
    rows, columns = ink_across.shape
    for piece in _outer_pieces(ink_across):
        _, y, w, h = cv2.boundingRect(piece)
        if y <= 0 or y + h >= rows or w < RIM_PIECE * columns:
            continue
        if _symbol_cut_by_end(piece, columns, card_height):
            return True
    return False


def _along_edge(contour: np.ndarray, shape: tuple[int, int]) -> bool:
    """Lies along the card's edge: table or a neighbouring card seen past an inexact outline."""
    rows, columns = shape
    points = contour.reshape(-1, 2)
    _, _, w, h = cv2.boundingRect(contour)
    side_run = _run_at_ends(points, columns)
    top_run = _run_at_ends(points[:, ::-1], rows)
    return side_run > 0.4 * max(h, 1) or top_run > 0.4 * max(w, 1)


def _symbol_contours(
    ink: np.ndarray,
    card_shape: tuple[int, int],
    faint: Callable[[], np.ndarray] | None = None,
    pieces: list[np.ndarray] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Outer contours of symbol-sized ink regions, left to right (sizes relative to the card),
    and the same symbols' outlines for their shape (see ``_closed_outline``).

    Pieces of one outline are joined; an outline left open by blur is closed with a wider
    kernel, and failing that replaced by its convex hull, so its inside counts as the symbol's.
    ``pieces``: the ink's ``_outer_pieces`` when the caller has them.
    """
    height, width = card_shape
    pieces = [
        p
        for p in (_outer_pieces(ink) if pieces is None else pieces)
        if cv2.boundingRect(p)[3] >= 0.1 * height and not _along_edge(p, ink.shape)
    ]
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for members in _fragments_by_column(pieces, 0.45 * height):
        contour = members[0] if len(members) == 1 else np.concatenate(members)
        x, y, w, h = cv2.boundingRect(contour)
        if h < 0.3 * height or h > 0.95 * height or w > 0.9 * width:
            continue
        hull_area = cv2.contourArea(cv2.convexHull(contour))
        if hull_area < 0.008 * height * width:
            continue
        if len(members) > 1 or cv2.contourArea(contour) < 0.6 * hull_area:
            found.append(_closed_outline(ink, contour, hull_area, faint))
        else:
            found.append((contour, contour))
    if not found:
        return [], []
    areas = np.array([cv2.contourArea(c) for c, _ in found])
    kept = [pair for pair, area in zip(found, areas) if area >= 0.35 * areas.max()]
    kept.sort(key=lambda pair: cv2.boundingRect(pair[0])[0])
    return [c for c, _ in kept], [o for _, o in kept]


def _closed_outline(
    ink: np.ndarray,
    contour: np.ndarray,
    hull_area: float,
    faint: Callable[[], np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The filled outline of one blurred symbol (wider closings, else its convex hull), and
    the same for its shape: where only the hull closes it, its ``faint`` ink joined first (an
    end washed out by glare, closed across by the hull, would cut the symbol short)."""
    x, y, w, h = cv2.boundingRect(contour)
    pad = 8
    origin = np.array([x - pad, y - pad])
    patch = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
    patch |= cv2.copyMakeBorder(
        ink[y : y + h, x : x + w], pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0
    )
    closed = _closed(patch, hull_area)
    if closed is not None:
        return closed + origin, closed + origin
    hull = cv2.convexHull(contour)
    if faint is None:
        return hull, hull
    joined = _closed(_with_faint_ends(patch, faint(), (x - pad, y - pad)), hull_area)
    return hull, (hull if joined is None else joined + origin)


def _closed(patch: np.ndarray, hull_area: float) -> np.ndarray | None:
    """The largest outline of ``patch`` closed by a wider kernel that fills at least 3/4 of
    the symbol's hull, or None."""
    for size in (5, 9):
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
        filled = cv2.morphologyEx(patch, cv2.MORPH_CLOSE, kernel)
        outer, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        if outer:
            best = max(outer, key=cv2.contourArea)
            if cv2.contourArea(best) >= 0.75 * hull_area:
                return best
    return None


def _with_faint_ends(patch: np.ndarray, faint: np.ndarray, origin: tuple[int, int]) -> np.ndarray:
    """``patch`` (ink around one symbol, its top-left at ``origin`` in the card) with the faint
    ink joined to it: an outline's end washed out by glare or blur still belongs to it."""
    x0, y0 = origin
    rows, columns = patch.shape
    box = np.zeros_like(patch)
    top, left = max(y0, 0), max(x0, 0)
    bottom, right = min(y0 + rows, faint.shape[0]), min(x0 + columns, faint.shape[1])
    box[top - y0 : bottom - y0, left - x0 : right - x0] = faint[top:bottom, left:right]
    count, labels = cv2.connectedComponents(box | patch, connectivity=8)
    joined = np.unique(labels[patch > 0])
    keep = np.zeros(count, np.uint8)
    keep[joined] = 1
    keep[0] = 0
    return keep[labels]


def complete_row(contours: list[np.ndarray], width: int) -> bool:
    """Symbols were found, alike, centred on the card and evenly spaced: none seems missing."""
    if not contours or len(contours) > 3 or not _alike(contours, contours):
        return False
    boxes = sorted(cv2.boundingRect(c) for c in contours)
    left, right = boxes[0][0], boxes[-1][0] + boxes[-1][2]
    if abs((left + right) / 2 - width / 2) > 0.06 * width:
        return False
    symbol_width = max(b[2] for b in boxes)
    gaps = [b[0] - (a[0] + a[2]) for a, b in zip(boxes, boxes[1:])]
    return all(gap < symbol_width for gap in gaps)


def _alike(candidates: list[np.ndarray], reference: list[np.ndarray]) -> bool:
    """Every candidate has about the height and width of the reference symbols."""
    heights = sorted(cv2.boundingRect(c)[3] for c in reference)
    widths = sorted(cv2.boundingRect(c)[2] for c in reference)
    height, width = heights[len(heights) // 2], widths[len(widths) // 2]
    for contour in candidates:
        _, _, w, h = cv2.boundingRect(contour)
        if not (0.8 * height <= h <= 1.25 * height and 0.7 * width <= w <= 1.4 * width):
            return False
    return True


def _width_profile(mask: np.ndarray) -> tuple[np.ndarray, float, float, float]:
    """Widths along the symbol's long (vertical) axis, and how its centre line wanders."""
    rows = mask.shape[0]
    if rows < 4:
        return np.zeros(_PROFILE_BINS), 0.0, 0.0, 0.0
    weights = mask.astype(np.float32)
    widths = weights.sum(axis=1)
    centres = (weights @ np.arange(mask.shape[1], dtype=np.float32)) / np.maximum(widths, 1)
    max_width = max(float(widths.max()), 1.0)
    samples = (np.arange(_PROFILE_BINS) * ((rows - 1) / (_PROFILE_BINS - 1)) + 0.5).astype(int)
    profile = widths[samples] / max_width
    profile = (profile + profile[::-1]) / 2  # a symbol turned upside down reads the same
    middle = centres[rows // 8 : rows - rows // 8]
    third = max(1, len(middle) // 3)
    wander = float(middle.std() / max_width) if len(middle) else 0.0
    swing = float(abs(middle[:third].mean() - middle[-third:].mean()) / max_width)
    end = max(1, rows // 6)
    taper = float((widths[:end].sum() + widths[-end:].sum()) / (2 * end) / max_width)
    return profile, wander, swing, taper


def _shape_values(contours: list[np.ndarray]) -> dict[str, float]:
    rows = []
    for contour in contours:
        area = max(cv2.contourArea(contour), 1.0)
        hull = cv2.convexHull(contour)
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        perimeter = cv2.arcLength(contour, True)
        depth = 0.0
        hull_idx = cv2.convexHull(contour, returnPoints=False)
        if hull_idx is not None and len(hull_idx) > 3:
            try:
                defects = cv2.convexityDefects(contour, hull_idx)
            except cv2.error:
                defects = None
            if defects is not None:
                depth = float(defects.reshape(-1, 4)[:, 3].max()) / 256.0
        short = max(min(rw, rh), 1.0)
        hu = cv2.HuMoments(cv2.moments(contour)).ravel()
        hu = -np.sign(hu) * np.log10(np.abs(hu) + 1e-30)
        approx = cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True)
        rows.append(
            {
                "solidity": area / max(cv2.contourArea(hull), 1.0),
                "extent": area / max(rw * rh, 1.0),
                "aspect": max(rw, rh) / short,
                "defect_depth": depth / short,
                "vertices": float(len(approx)),
                "compactness": perimeter * perimeter / area / (4 * np.pi),
                "hu1": hu[0], "hu2": hu[1], "hu3": hu[2],
            }
        )  # fmt: skip
    if not rows:
        return {name: 0.0 for name in SHAPE_FEATURES}
    middle = len(rows) // 2  # the median symbol, feature by feature
    values = {name: float(sorted(row[name] for row in rows)[middle]) for name in rows[0]}
    # The outline along the symbol's length, from the symbol of median size.
    contour = sorted(contours, key=cv2.contourArea)[middle]
    x, y, w, h = cv2.boundingRect(contour)
    mask = np.zeros((h, w), np.uint8)
    cv2.drawContours(mask, [contour - np.array([x, y])], -1, 1, thickness=-1)
    profile, wander, swing, taper = _width_profile(mask)
    values.update(centre_wander=wander, centre_swing=swing, end_taper=taper)
    values.update({f"width_{i}": float(v) for i, v in enumerate(profile)})
    return values


def _quantile(values: np.ndarray, q: float) -> float:
    """A quantile by partial sort (much faster than np.percentile on one small array)."""
    flat = values.ravel()
    if flat.size == 0:
        return 0.0
    k = min(flat.size - 1, max(0, int(round(q * (flat.size - 1)))))
    return float(np.partition(flat, k)[k])


def shadow_paper_model(card: np.ndarray) -> np.ndarray:
    """The paper's colour as the brightest near each pixel, float32: a closing wider than any
    symbol takes the ink away but keeps the sharp edge of a shadow cast across the card, which
    the smooth model cannot follow."""
    size = int(0.4 * card.shape[0]) | 1
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))
    closed = cv2.morphologyEx(card, cv2.MORPH_CLOSE, kernel)
    return np.maximum(cv2.blur(closed.astype(np.float32), (5, 5)), 8.0)


@dataclass
class _Ink:
    """A card divided by a paper model (margins left out), and the symbols found on it."""

    normalised: np.ndarray
    channels: tuple[np.ndarray, np.ndarray, np.ndarray]  # its b, g, r planes
    strength: np.ndarray
    ink: np.ndarray
    contours: list[np.ndarray]
    #: the same symbols, an outline's faint end joined where it was left open (their shape)
    outlines: list[np.ndarray]
    #: a symbol-sized piece of ink is cut by the card's end (``_cut_at_end``, ``_cut_in_rim``)
    cut_at_end: bool


def _read_ink(card: np.ndarray, paper: np.ndarray) -> _Ink:
    height, width = card.shape[:2]
    my, mx = round(MARGIN * height), round(MARGIN * width)
    across = cv2.divide(card.astype(np.float32), paper)[my : height - my]
    np.clip(across, 0.0, 1.5, out=across)
    planes = cv2.split(across)  # b, g, r over the card's whole length
    strength_across = 1.0 - cv2.min(cv2.min(planes[0], planes[1]), planes[2])
    normalised = across[:, mx : width - mx]
    b, g, r = (np.ascontiguousarray(plane[:, mx : width - mx]) for plane in planes)
    strength = np.ascontiguousarray(strength_across[:, mx : width - mx])
    w = strength.shape[1]
    sample = strength[::2, ::2]  # quantiles from a quarter of the pixels are as good
    peak = _quantile(sample, 0.995)
    middle = _quantile(sample, 0.5)
    noise = _quantile(np.abs(sample - middle), 0.5)
    threshold = float(np.clip(0.45 * peak, max(0.06, 5 * noise + 0.02), 0.35))
    floor = max(0.05, 3 * noise + 0.02)
    faint_level = max(floor, 0.45 * threshold)  # faint ink joined to strong
    ink = (strength > threshold).astype(np.uint8)
    faint = cache(lambda: _hysteresis(strength, threshold, faint_level))
    pieces = _outer_pieces(ink)
    contours, outlines = _symbol_contours(ink, (height, width), faint, pieces)
    # Blur and glare leave outlines broken or faint: when the row of symbols looks incomplete,
    # read again more leniently and keep that reading if it finds more symbols that look alike.
    for high, low in ((threshold, faint_level), (0.55 * threshold, floor)):
        if complete_row(contours, w):
            break
        lenient, _ = _symbol_contours(_hysteresis(strength, high, low), (height, width))
        if len(contours) < len(lenient) <= 3 and _alike(lenient, lenient):
            contours = outlines = lenient
    cut = _cut_at_end(pieces, ink.shape[1], height)
    if not cut and may_lack_a_symbol(len(contours)):
        cut = _cut_in_rim(_hysteresis(strength_across, threshold, faint_level), height)
    return _Ink(normalised, (b, g, r), strength, ink, contours, outlines, cut)


def extract(card: np.ndarray) -> CardFeatures:
    """Measure a canonical card image ((H, W, 3) uint8 BGR, landscape).

    The symbols' contours come back in the coordinates of the card image.
    """
    height, width = card.shape[:2]
    my, mx = round(MARGIN * height), round(MARGIN * width)
    read = _read_ink(card, paper_model(card))
    if not complete_row(read.contours, read.ink.shape[1]):
        # a shadow's hard edge across the card reads as ink against a smooth paper model
        shaded = _read_ink(card, shadow_paper_model(card))
        if len(shaded.contours) > len(read.contours) and complete_row(
            shaded.contours, shaded.ink.shape[1]
        ):
            read = shaded
    normalised, strength, ink, contours = read.normalised, read.strength, read.ink, read.contours
    b, g, r = read.channels
    h, w = strength.shape
    symbols = np.zeros((h, w), np.uint8)
    cv2.drawContours(symbols, contours, -1, 1, thickness=-1)
    values: dict[str, float] = {}

    count = len(contours)
    boxes = [cv2.boundingRect(c) for c in contours]
    widths = [box[2] for box in boxes] or [0]
    areas = [cv2.contourArea(c) for c in contours] or [0.0]
    values.update(
        count_1=float(count == 1), count_2=float(count == 2), count_3=float(count == 3),
        count_many=float(count > 3), total_width=sum(widths) / width,
        largest_width=max(widths) / width,
        size_spread=float(np.std(areas) / max(np.mean(areas), 1.0)),
        ink_columns=float(ink.max(axis=0).mean()),
    )  # fmt: skip
    values.update(_margins(boxes, width, mx))
    values["cut_at_end"] = float(read.cut_at_end)  # not a model feature: a doubt
    values.update(_shape_values(read.outlines))

    region = symbols if count else ink
    outline_strength = _quantile(strength[region > 0], 0.95) if region.any() else 0.0
    strong = (region > 0) & (strength >= 0.6 * max(outline_strength, 1e-3))
    ink_colour = np.array(cv2.mean(normalised, strong.astype(np.uint8))[:3] if strong.any()
                          else cv2.mean(normalised)[:3])  # fmt: skip
    absorb = np.clip(1.0 - ink_colour, 0.0, 1.0)
    share = absorb / max(absorb.sum(), 1e-3)
    balanced = np.clip(ink_colour * 255.0, 0, 255).astype(np.uint8).reshape(1, 1, 3)
    lab = cv2.cvtColor(balanced, cv2.COLOR_BGR2LAB).astype(np.float32).ravel()
    a_star, b_star = lab[1] - 128.0, lab[2] - 128.0
    chroma = float(np.hypot(a_star, b_star))
    values.update(
        absorb_b=absorb[0], absorb_g=absorb[1], absorb_r=absorb[2],
        share_b=share[0], share_g=share[1], share_r=share[2],
        ink_l=lab[0] / 255.0, ink_a=a_star / 128.0, ink_b=b_star / 128.0,
        hue_cos=a_star / max(chroma, 1e-3), hue_sin=b_star / max(chroma, 1e-3),
        ink_chroma=chroma / 128.0,
    )  # fmt: skip
    values.update(_halo_colour(normalised, region))
    spread = cv2.max(cv2.max(b, g), r) - cv2.min(cv2.min(b, g), r)
    values.update(
        _shading_values(normalised, strength, spread, symbols, contours, outline_strength)
    )
    shift = np.array([mx, my], dtype=np.int32)
    return CardFeatures({k: float(v) for k, v in values.items()}, [c + shift for c in contours])


def _margins(boxes: list[tuple[int, int, int, int]], width: int, left_out: int) -> dict[str, float]:
    """The card's margins beside its row of symbols over one symbol's width, the narrower and
    the wider: a card's own for its number of symbols (wide beside one, narrow beside three),
    so a symbol missed at one end of the row shows as one margin too wide for the count.
    ``boxes`` lie in the card without its ``left_out`` pixels at each side."""
    if not boxes:
        return {"narrow_margin": 0.0, "wide_margin": 0.0}
    symbol = max(float(np.median([box[2] for box in boxes])), 1.0)
    left = left_out + min(box[0] for box in boxes)
    right = width - left_out - max(box[0] + box[2] for box in boxes)
    return {
        "narrow_margin": min(left, right) / symbol,
        "wide_margin": max(left, right) / symbol,
    }


def _halo_colour(normalised: np.ndarray, region: np.ndarray) -> dict[str, float]:
    """The hue of the symbols and a rim around them, against the paper (which is white once
    normalised). Cameras and JPEG keep colour at a coarser resolution than light, so the
    colour of a thin outline spreads beyond its dark pixels; this measure gathers it there."""
    if not region.any():
        return {"halo_cos": 0.0, "halo_sin": 0.0, "halo_chroma": 0.0}
    halo = cv2.dilate(region.astype(np.uint8), np.ones((5, 5), np.uint8))
    mean = np.clip(np.array(cv2.mean(normalised, halo)[:3]) * 255.0, 0, 255).astype(np.uint8)
    lab = cv2.cvtColor(mean.reshape(1, 1, 3), cv2.COLOR_BGR2LAB).astype(np.float32).ravel()
    a_star, b_star = float(lab[1]) - 128.0, float(lab[2]) - 128.0
    chroma = float(np.hypot(a_star, b_star))
    return {
        "halo_cos": a_star / max(chroma, 1e-3),
        "halo_sin": b_star / max(chroma, 1e-3),
        "halo_chroma": chroma / 128.0,
    }


def _shading_values(
    normalised, strength, spread, symbols, contours, outline_strength
) -> dict[str, float]:
    """How the inside of the symbols compares with their outline and with the bare paper."""
    if not contours or outline_strength <= 1e-3:
        return {**{name: 0.0 for name in SHADING_FEATURES}, "outline_strength": outline_strength}
    short_side = sorted(max(1.0, min(cv2.minAreaRect(c)[1])) for c in contours)[len(contours) // 2]
    erosion = max(2, int(round(0.18 * short_side)))
    kernel = np.ones((2 * erosion + 1, 2 * erosion + 1), np.uint8)
    inside = cv2.erode(symbols, kernel)
    if cv2.countNonZero(inside) < 10:
        return {**{name: 0.0 for name in SHADING_FEATURES}, "outline_strength": outline_strength}
    inner_strength = strength[inside > 0]
    blurred = cv2.blur(strength, (5, 5))
    texture = float(cv2.mean(cv2.absdiff(strength, blurred), inside)[0])
    grown = cv2.dilate(symbols, kernel)
    paper = 1 - grown
    paper_spread = cv2.mean(spread, paper)[0] if cv2.countNonZero(paper) else 0.0
    # Ink along the outline's own colour direction: shadows and noise are not in that direction.
    absorption = 1.0 - normalised
    strong = ((symbols > 0) & (strength >= 0.6 * outline_strength)).astype(np.uint8)
    direction = np.array(cv2.mean(absorption, strong)[:3])
    direction /= max(float(np.linalg.norm(direction)), 1e-6)
    along = absorption @ direction.astype(np.float32)
    ring = cv2.dilate(grown, kernel) - grown
    ring_mean, ring_std = (
        cv2.meanStdDev(along, mask=ring) if cv2.countNonZero(ring) else ((0,), (0,))
    )
    inside_along = cv2.mean(along, inside)[0]
    outline_along = cv2.mean(along, strong)[0] if cv2.countNonZero(strong) else 1.0
    ring_mean, ring_std = float(np.ravel(ring_mean)[0]), float(np.ravel(ring_std)[0])
    dy = cv2.Sobel(strength, cv2.CV_32F, 0, 1, ksize=3)
    dx = cv2.Sobel(strength, cv2.CV_32F, 1, 0, ksize=3)
    core = cv2.erode(inside, np.ones((3, 3), np.uint8))
    if cv2.countNonZero(core) < 10:
        core = inside
    anisotropy = np.log((cv2.mean(dy * dy, core)[0] + 1e-4) / (cv2.mean(dx * dx, core)[0] + 1e-4))
    return {
        "inside_ink": (inside_along - ring_mean) / max(outline_along - ring_mean, 1e-3),
        "inside_contrast": float(np.clip((inside_along - ring_mean) / (ring_std + 0.01), -20, 50)),
        "stripe_anisotropy": float(anisotropy),
        "inside_ratio": float(inner_strength.mean() / outline_strength),
        "inside_spread": float(inner_strength.std() / outline_strength),
        "inside_cover": float((inner_strength > 0.5 * outline_strength).mean()),
        "inside_texture": texture / outline_strength,
        "inside_chroma": float(cv2.mean(spread, inside)[0] - paper_spread),
        "outline_strength": outline_strength,
        "inside_lightness": float(np.mean(cv2.mean(normalised, inside)[:3])),
    }
