"""Checking that quadrilaterals hold SET cards, many at once.

Each candidate quad is warped to a small landscape patch (all of them side by side in one strip,
so the per-pixel work is a handful of whole-strip OpenCV calls). A card shows coloured or dark
symbols that span about two thirds of its width, centred, with clean paper along its edges. The
checks reject regions that are not cards (table, a symbol's inside, a sheet of paper) and quads
that hold several cards or half of one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np
from setvision.vision.geometry import aspect_ratio, long_side_first

#: Patch size (landscape: the card's length runs along x), and the table kept around it.
PATCH_W, PATCH_H, PAD = 72, 48, 6
_SLOT_W, _SLOT_H = PATCH_W + 2 * PAD, PATCH_H + 2 * PAD
_TOP = PAD
#: Rows repeated above and below each patch for the widest filter (a closing that reaches 14
#: rows), so that it carries no patch's content into the next one's.
_GAP = 8
#: On a whole card's patch, the symbols' spacing (along the length) over their height.
PITCH = 0.58
#: With ``even``, a card's paper may hold at most this share far darker than the rest.
UNEVEN = 0.1
#: Margins (in patch pixels): symbols keep clear of the outer band; the ring is the margin. The
#: outermost ``_EDGE`` pixels of the patch are left out of the checks.
_MARGIN, _EDGE = 6, 2

# Hand-set tuning of the checks below. Lightness and a/b are OpenCV's 8-bit Lab levels (0-255,
# a and b centred on 0); shares of the patch are of its width or height as said.

#: Paper tint: every this many ring pixels fit the paper's plane, and every this many of those
#: seed the fit (their median); counts.
_TINT_STEP, _TINT_SEED_STEP = 2, 2
#: Paper tint: reweighting passes (a count), and how far (a/b levels) a ring pixel's colour may
#: lie from the fitted paper's and still weigh in the fit.
_TINT_PASSES, _TINT_STRAY = 2, 6
#: Filter sizes (square kernels, patch pixels): the black-hat that finds ink darker than its
#: surroundings (see ``_GAP``); the blur and the black-hat that find thin dark lines (dividers);
#: the dilation that joins a symbol's ink into one blob.
_DARK_KERNEL = 15
_VALLEY_BLUR, _VALLEY_KERNEL = 3, 5
_BLOB_JOIN = 3
#: Dividers: a valley deeper than this (lightness levels) is part of a thin dark line.
_LINE_DEPTH = 8
#: Dividers: a line must reach into the bands at both its ends, each at least this many patch
#: pixels and this share of the line's length (the patch's side along it), and cover more than
#: this share of each end band's rows, and of all rows.
_LINE_END_MIN, _LINE_END, _LINE_END_COVER, _LINE_COVER = 3, 0.14, 0.6, 0.85
#: Dividers: lines are sought only between these shares of the patch's side across them.
_LINE_FROM, _LINE_TO = 0.2, 0.8
#: A quad nearer square than this (long side over short) is also tried turned by a quarter,
#: unless it passed with its tallest symbol standing: height over width at least this.
_SQUARE, _STANDING = 1.4, 1.5
#: Ink: its strength (darkness plus colour beyond the paper's) must pass the patch's Otsu
#: threshold, held between these levels.
_INK_MIN, _INK_MAX = 12, 25
#: Symbol ink (not shading): colour beyond the paper's by more than this (a/b levels), or darker
#: than its surroundings by more than this (lightness levels).
_MARK_COLOUR, _MARK_DARK = 6, 40
#: Width (patch pixels) of the outer band, just inside the left-out edge, that symbols keep off.
_BAND = 3
#: Ring pixels darker than this share of the paper's lightness are table.
_RING_DARK = 0.5
#: With ``even``: the paper's brightest part is its brightest this share of pixels; paper darker
#: than this share of that part's lightness is far darker.
_BRIGHTEST, _FAR_DARKER = 0.1, 0.6
#: An ink blob is a symbol when its bounding box and its area reach these (patch pixels, square);
#: a card's inner patch is more than this share ink and less than this share.
_BLOB_BOX, _BLOB_AREA, _INK_SHARE_MIN, _INK_SHARE_MAX = 20, 12, 0.02, 0.8
#: Faint ink (table texture): mean colour beyond the paper's under this (a/b levels) and mean
#: darkness under this (lightness levels).
_FAINT_COLOUR, _FAINT_DARK = 2, 25
#: Most of the outer band symbol ink may cover, and most of the ring table may (shares).
_BAND_INK, _RING_TABLE = 0.1, 0.1
#: The tallest symbol's height, as a share of the patch's height: at least (whole card; card
#: cut by the image's border) and at most.
_SYMBOL_MIN, _CUT_SYMBOL_MIN, _SYMBOL_MAX = 0.35, 0.25, 0.88
#: How far the tallest symbol's centre may lie from the patch's middle (share of its height).
_OFF_CENTRE = 0.2
#: A symbol lying (half a card, or two cards): height under this times its width, and under
#: this share of the patch's height.
_LYING, _LYING_HEIGHT = 1.15, 0.55
#: Card length: a column holds a symbol when at least this share of the tallest column's height.
_COLUMN = 0.3
#: Card length: a run of columns is a symbol (not a line) when at least this many patch pixels
#: wide and this share of the widest run.
_RUN_MIN, _RUN_SHARE = 2, 0.5
#: Card length: the symbols are alike when the widest is at most this times the narrowest.
_RUN_SPREAD = 1.4
#: Card length: every symbol seen whole, its peak at least this share of the patch's height.
_PEAK_MIN = 0.6
#: Card length: one end's margin is clearly narrower when under this share of the other's.
_SHORT_END = 0.6
#: Edge support: the stretch of each side sampled (shares of its length, ends left out), the
#: offsets across it where the step is sought (image pixels), and the least step (lightness
#: levels per pixel).
_SIDE_FROM, _SIDE_TO = 0.12, 0.88
_SIDE_OFFSETS = (-1.5, -0.5, 0.5, 1.5)
_SIDE_STEP = 6


@dataclass(frozen=True)
class Inspection:
    """What the patch shows: whether it passes as a card, and the colour of its paper."""

    ok: bool
    paper_light: float = 0.0
    paper_chroma: float = 0.0
    reason: str = ""
    turned: bool = False  # the card's length runs along the quad's shorter sides
    upright: float = 0.0  # height over width of the tallest symbol: above 1 when standing
    length: float = 0.0  # the card's length in the quad's, judged from its symbols (1: whole)
    #: the end of the checked quad with the narrower margin beyond the symbols, clearly: -1 at
    #: its side 3-0, 1 at its side 1-2, 0 when alike or not known (where the quad stops short
    #: of the card's end, when it does)
    short_end: int = 0


def _strip(
    image: np.ndarray, quads: list[np.ndarray], hidden: list[np.ndarray | None]
) -> tuple[np.ndarray, np.ndarray]:
    """All quads warped into patches with a border of surroundings, stacked in y (side 0-1 of
    each quad along the patch's length).

    Returns the strip and, per quad, whether part of it lies outside the image. That part, and
    the part under the quad's ``hidden`` convex polygons (other cards lying over it), is painted
    with the card's paper colour, so that a card cut by the border or covered looks like a card
    with a blank part rather than one with smeared edges or another card's symbols.
    """
    strip = np.empty((len(quads), _SLOT_H, _SLOT_W, 3), np.uint8)
    target = np.float32(
        [[PAD, _TOP], [PAD + PATCH_W, _TOP], [PAD + PATCH_W, _TOP + PATCH_H], [PAD, _TOP + PATCH_H]]
    )
    height, width = image.shape[:2]
    cut = np.zeros(len(quads), bool)
    grid = None
    for k, quad in enumerate(quads):
        matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
        cv2.warpPerspective(
            image,
            matrix,
            (_SLOT_W, _SLOT_H),
            dst=strip[k],
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        )
        beyond = (
            (quad < 0).any() or (quad[:, 0] > width - 1).any() or (quad[:, 1] > height - 1).any()
        )
        if not beyond and hidden[k] is None:
            continue
        if grid is None:
            ys, xs = np.mgrid[0:_SLOT_H, 0:_SLOT_W]
            grid = np.stack([xs, ys], axis=-1).reshape(-1, 1, 2).astype(np.float32)
        back = cv2.perspectiveTransform(grid, np.linalg.inv(matrix)).reshape(_SLOT_H, _SLOT_W, 2)
        outside = (
            (back[..., 0] < 0)
            | (back[..., 1] < 0)
            | (back[..., 0] > width - 1)
            | (back[..., 1] > height - 1)
        )
        cut[k] = bool(outside.any())
        if hidden[k] is not None:
            for polygon in hidden[k]:
                outside |= inside_convex(back.reshape(-1, 2), polygon).reshape(_SLOT_H, _SLOT_W)
        if outside.any():
            seen = strip[k][~outside]
            bright = seen[seen.sum(axis=1) >= np.median(seen.sum(axis=1))]
            strip[k][outside] = np.median(bright, axis=0).astype(np.uint8)
    return strip.reshape(len(quads) * _SLOT_H, _SLOT_W, 3), cut


def inside_convex(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Which points (N, 2) lie inside a convex polygon (M, 2), either winding."""
    edges = np.roll(polygon, -1, axis=0) - polygon
    rel = points[:, None, :] - polygon[None, :, :]
    cross = edges[None, :, 0] * rel[..., 1] - edges[None, :, 1] * rel[..., 0]
    return (cross >= 0).all(axis=1) | (cross <= 0).all(axis=1)


def _otsu(values: np.ndarray) -> np.ndarray:
    """Otsu thresholds of each row of a (N, M) uint8 array."""
    n = values.shape[0]
    hist = np.bincount(
        (values.astype(np.int64) + 256 * np.arange(n)[:, None]).ravel(), minlength=256 * n
    )
    hist = hist.reshape(n, 256).astype(np.float64)
    levels = np.arange(256, dtype=np.float64)
    weight = np.cumsum(hist, axis=1)
    total = weight[:, -1:]
    mass = np.cumsum(hist * levels, axis=1)
    mean_low = mass / np.maximum(weight, 1)
    mean_high = (mass[:, -1:] - mass) / np.maximum(total - weight, 1)
    between = weight * (total - weight) * (mean_low - mean_high) ** 2
    return np.argmax(between, axis=1).astype(np.float64)


def _plane_terms() -> np.ndarray:
    """The terms (1, x, y) of a plane at every patch pixel, (3, H * W) float32."""
    grid_y, grid_x = np.mgrid[0:PATCH_H, 0:PATCH_W]
    return np.stack(
        [np.ones(PATCH_H * PATCH_W), grid_x.ravel() / PATCH_W - 0.5, grid_y.ravel() / PATCH_H - 0.5]
    ).astype(np.float32)


_PLANE_TERMS = _plane_terms()


def _paper_tint(a_chan: np.ndarray, b_chan: np.ndarray, ring: np.ndarray) -> np.ndarray:
    """Per patch (n, H, W): the paper's (a, b) colour as a plane fitted over the ring, so that a
    tint that drifts across the card (light from a screen or a lamp on one side) is paper, not
    ink. Ink in the ring is left out (twice reweighted from the median), like the median did.

    Returns (n, 2, H, W).
    """
    n, height, width = a_chan.shape
    ys, xs = np.nonzero(ring)
    ys, xs = ys[::_TINT_STEP], xs[::_TINT_STEP]  # half the ring fits the plane as well
    design = _PLANE_TERMS[:, ys * width + xs].T
    values = np.stack([a_chan[:, ys, xs], b_chan[:, ys, xs]], axis=1)  # (n, 2, N)
    fitted = np.median(values[:, :, ::_TINT_SEED_STEP], axis=2, keepdims=True)
    for _ in range(_TINT_PASSES):
        weight = (np.abs(values - fitted).max(axis=1) < _TINT_STRAY).astype(np.float32)  # (n, N)
        weighted = weight[:, :, None] * design[None]  # (n, N, 3)
        normal = weighted.transpose(0, 2, 1) @ design + 1e-3 * np.eye(3, dtype=np.float32)
        target = values @ weighted  # (n, 2, 3)
        coef = np.linalg.solve(normal[:, None], target[..., None])[..., 0]  # (n, 2, 3)
        fitted = coef @ design.T
    return (coef.astype(np.float32) @ _PLANE_TERMS).reshape(n, 2, height, width)


def _dividers(valley: np.ndarray) -> np.ndarray:
    """Per patch: a thin dark line right across it, parallel to a side (a gap between cards).

    Symbols never reach a card's edges, so a line running from edge to edge through the margins
    as well as the middle means the quad holds more than one card. Only thin dark lines count: a
    shadow's edge across a card is a step, not a line.
    """
    line = valley > _LINE_DEPTH
    found = np.zeros(valley.shape[0], bool)
    for axis in (1, 2):  # lines along y (columns), then along x (rows)
        cover = line if axis == 1 else line.transpose(0, 2, 1)
        n, h, w = cover.shape
        spread = cover.copy()  # a line may wander by a pixel
        spread[:, :, 1:] |= cover[:, :, :-1]
        spread[:, :, :-1] |= cover[:, :, 1:]
        edge = max(_LINE_END_MIN, int(_LINE_END * h))
        ends = np.minimum(
            spread[:, _EDGE:edge].sum(axis=1, dtype=np.int16),
            spread[:, h - edge : h - _EDGE].sum(axis=1, dtype=np.int16),
        )
        whole = spread[:, _EDGE : h - _EDGE].sum(axis=1, dtype=np.int16)
        lo, hi = int(_LINE_FROM * w), int(_LINE_TO * w)
        found |= (
            (ends[:, lo:hi] > _LINE_END_COVER * (edge - _EDGE))
            & (whole[:, lo:hi] > _LINE_COVER * (h - 2 * _EDGE))
        ).any(axis=1)
    return found


def inspect(
    image: np.ndarray,
    quads: list[np.ndarray],
    hidden: list[np.ndarray | None] | None = None,
    even: bool = False,
) -> list[Inspection]:
    """Check each quad (corners in ``image`` pixels) for a card; one Inspection per quad.

    A card is normally laid out along its longer side in the image; a nearly square quad (a
    card seen at a slant along its length) is also tried turned by a quarter. ``hidden``: per
    quad, None or convex polygons (M, 4, 2) lying over it (other cards), left out of the check.
    ``even``: the paper must also be evenly lit (a stricter check, for unlikelier quads).
    """
    firsts = [long_side_first(np.asarray(quad, np.float32)) for quad in quads]
    hidden = hidden if hidden is not None else [None] * len(quads)
    out = _inspect(image, firsts, hidden, even)
    # a nearly square quad whose symbols do not clearly stand may be a card turned a quarter
    again = [
        k
        for k, first in enumerate(firsts)
        if aspect_ratio(first) < _SQUARE and (not out[k].ok or out[k].upright < _STANDING)
    ]
    turned = _inspect(
        image, [firsts[k][[1, 2, 3, 0]] for k in again], [hidden[k] for k in again], even
    )
    for k, result in zip(again, turned):
        if result.ok and (not out[k].ok or result.upright > out[k].upright):
            out[k] = replace(result, turned=True)
    return out


def _inspect(
    image: np.ndarray, quads: list[np.ndarray], hidden: list[np.ndarray | None], even: bool
) -> list[Inspection]:
    """Check quads whose side 0-1 is the card's length (see ``inspect``)."""
    if not quads:
        return []
    n = len(quads)
    strip, cut = _strip(image, quads, hidden)
    lab = cv2.cvtColor(strip, cv2.COLOR_BGR2LAB)
    light_strip = lab[..., 0]
    a_strip = lab[..., 1].astype(np.float32) - 128
    b_strip = lab[..., 2].astype(np.float32) - 128
    chroma_strip = cv2.magnitude(a_strip, b_strip)
    apart = np.pad(light_strip.reshape(n, _SLOT_H, _SLOT_W), ((0, 0), (_GAP, _GAP), (0, 0)), "edge")
    dark_apart = cv2.morphologyEx(
        apart.reshape(-1, _SLOT_W),
        cv2.MORPH_BLACKHAT,
        np.ones((_DARK_KERNEL, _DARK_KERNEL), np.uint8),
    ).reshape(n, _SLOT_H + 2 * _GAP, _SLOT_W)
    grey = cv2.GaussianBlur(light_strip, (_VALLEY_BLUR, _VALLEY_BLUR), 0)
    valley_strip = cv2.morphologyEx(
        grey, cv2.MORPH_BLACKHAT, np.ones((_VALLEY_KERNEL, _VALLEY_KERNEL), np.uint8)
    )

    def core(a: np.ndarray) -> np.ndarray:
        return a.reshape(n, _SLOT_H, _SLOT_W)[:, _TOP : _TOP + PATCH_H, PAD : PAD + PATCH_W]

    light = core(light_strip).astype(np.float32)
    chroma = core(chroma_strip)
    a_chan, b_chan = core(a_strip), core(b_strip)
    dark = dark_apart[:, _GAP + _TOP : _GAP + _TOP + PATCH_H, PAD : PAD + PATCH_W].astype(
        np.float32
    )
    m, e = _MARGIN, _EDGE
    inner = np.zeros((PATCH_H, PATCH_W), bool)
    inner[m:-m, m:-m] = True
    ring = ~inner
    ring[:e, :] = ring[-e:, :] = ring[:, :e] = ring[:, -e:] = False

    # ink differs from the paper in colour (any hue: grey ink on tinted paper too) or is darker
    tint = _paper_tint(a_chan, b_chan, ring)
    excess = cv2.magnitude(
        (a_chan - tint[:, 0]).reshape(n * PATCH_H, PATCH_W),
        (b_chan - tint[:, 1]).reshape(n * PATCH_H, PATCH_W),
    ).reshape(n, PATCH_H, PATCH_W)
    strength = dark + excess
    otsu = _otsu(np.clip(strength[:, inner], 0, 255).astype(np.uint8))
    ink = strength > np.clip(otsu, _INK_MIN, _INK_MAX)[:, None, None]
    ink_share = ink[:, inner].mean(axis=1)
    ink_count = np.maximum(ink.sum(axis=(1, 2)), 1)
    ink_colour = (excess * ink).sum(axis=(1, 2)) / ink_count
    ink_dark = (dark * ink).sum(axis=(1, 2)) / ink_count
    # symbol ink (colour, or black) reaching the outer band: a quad inside a symbol, or a
    # quad cutting through a card; shading and table slivers are neither
    marks = ink & ((excess > _MARK_COLOUR) | (dark > _MARK_DARK))
    b0, b1 = e, e + _BAND
    bands = np.stack(
        [
            marks[:, b0:b1, m:-m].mean(axis=(1, 2)),
            marks[:, -b1:-b0, m:-m].mean(axis=(1, 2)),
            marks[:, m:-m, b0:b1].mean(axis=(1, 2)),
            marks[:, m:-m, -b1:-b0].mean(axis=(1, 2)),
        ],
        axis=1,
    ).max(axis=1)
    paper = ~ink & inner
    paper_count = np.maximum(paper.sum(axis=(1, 2)), 1)
    paper_light = (light * paper).sum(axis=(1, 2)) / paper_count
    paper_chroma_in = (chroma * paper).sum(axis=(1, 2)) / paper_count
    dark_ring = (light[:, ring] < _RING_DARK * paper_light[:, None]).mean(axis=1)
    dark_paper = np.zeros(n)
    if even:  # much of the paper far darker than its brightest part: table taken for paper
        values = np.where(paper, light, -1.0).reshape(n, -1)
        rank = values.shape[1] - 1 - (paper_count * _BRIGHTEST).astype(int)
        brightest = np.array([np.partition(v, r)[r] for v, r in zip(values, rank)])
        dark = (light < _FAR_DARKER * brightest[:, None, None]) & paper
        dark_paper = dark.sum(axis=(1, 2)) / paper_count

    # the tallest ink blob of each patch: a symbol, standing across the card
    blobs = np.zeros((n, _SLOT_H, _SLOT_W), np.uint8)
    blobs[:, _TOP : _TOP + PATCH_H, PAD : PAD + PATCH_W] = ink & inner
    blobs = cv2.dilate(
        blobs.reshape(n * _SLOT_H, _SLOT_W), np.ones((_BLOB_JOIN, _BLOB_JOIN), np.uint8)
    )
    contours, _ = cv2.findContours(blobs, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    tall = np.full(n, -1)
    top = np.zeros(n)
    wide = np.zeros(n)
    symbols = []
    for contour in contours:
        x, y, w, h = cv2.boundingRect(contour)
        if w * h < _BLOB_BOX or cv2.contourArea(contour) < _BLOB_AREA:
            continue
        symbols.append(contour)
        slot = y // _SLOT_H
        if h > tall[slot]:
            tall[slot], top[slot], wide[slot] = h, y - slot * _SLOT_H - _TOP, w
    # the symbols' extent across the card, per column: how long a card the quad holds
    filled = np.zeros_like(blobs)  # the symbols, filled (open ones too)
    cv2.drawContours(filled, symbols, -1, 1, cv2.FILLED)
    e = _EDGE
    heights = filled.reshape(n, _SLOT_H, _SLOT_W)[
        :, _TOP + m : _TOP + PATCH_H - m, PAD + e : PAD + PATCH_W - e
    ].sum(axis=1)  # (n, PATCH_W - 2e)
    length, short_end = _lengths(heights)
    divider = _dividers(core(valley_strip))

    out = []
    for k in range(n):
        h = tall[k]
        centre = (top[k] + h / 2) / PATCH_H
        if not _INK_SHARE_MIN < ink_share[k] < _INK_SHARE_MAX:
            reason = "ink share"
        elif ink_colour[k] < _FAINT_COLOUR and ink_dark[k] < _FAINT_DARK:
            reason = "faint ink"  # table texture: SET inks are coloured, or clearly dark
        elif bands[k] > _BAND_INK:
            reason = "ink at the edge"
        elif dark_ring[k] > _RING_TABLE:
            reason = "table inside"
        elif h < 0:
            reason = "no symbol"
        elif cut[k] and not _CUT_SYMBOL_MIN * PATCH_H <= h <= _SYMBOL_MAX * PATCH_H:
            reason = "symbol size"  # a symbol may be cut by the border: less is known
        elif not cut[k] and (
            not _SYMBOL_MIN * PATCH_H <= h <= _SYMBOL_MAX * PATCH_H
            or abs(centre - 0.5) > _OFF_CENTRE
        ):
            reason = "symbol size"
        elif not cut[k] and h < _LYING * wide[k] and h < _LYING_HEIGHT * PATCH_H:
            reason = "symbol lying"  # half a card, or two cards side by side
        elif divider[k]:
            reason = "divider"
        elif dark_paper[k] > UNEVEN:
            reason = "uneven paper"
        else:
            upright = float(h / max(wide[k], 1))
            out.append(
                Inspection(
                    True,
                    float(paper_light[k]),
                    float(paper_chroma_in[k]),
                    upright=upright,
                    length=float(length[k]),
                    short_end=int(short_end[k]),
                )
            )
            continue
        out.append(Inspection(False, reason=reason))
    return out


def _lengths(heights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per patch: the card's length in the patch's, and the end where it stops short (see
    ``Inspection``), from the symbols' extent across the card per column (n, columns; margins
    left out at either end).

    Symbols stand apart, alike, evenly spaced, a fixed share of their height apart; a quad
    that ends where another card or a hand covers the card shows them stretched along it, and
    a narrower margin to the covered end than to the card's own end.
    """
    n, width = heights.shape
    length, short_end = np.zeros(n), np.zeros(n, int)
    column = heights >= _COLUMN * heights.max(axis=1, keepdims=True)
    inner = _MARGIN - _EDGE
    column[:, :inner] = column[:, -inner:] = False  # symbols lie inside the margins
    change = column[:, 1:] != column[:, :-1]
    for k in np.flatnonzero(change.sum(axis=1) >= 4).tolist():  # two symbols or more
        bounds = (np.flatnonzero(change[k]) + 1).tolist()
        found = list(zip(bounds[::2], bounds[1::2]))
        widest = max(b - a for a, b in found)
        # runs wide enough to be symbols, not lines
        runs = [(a, b) for a, b in found if b - a >= max(_RUN_MIN, _RUN_SHARE * widest)]
        if len(runs) < 2 or widest > _RUN_SPREAD * min(b - a for a, b in runs):
            continue  # touching symbols show as one: their spacing is not known
        narrowest = min(b - a for a, b in runs)
        if any(c - b > narrowest for (_, b), (c, _) in zip(runs, runs[1:])):
            continue  # symbols stand close together: one was not seen
        profile = heights[k].tolist()
        peaks = sorted(max(profile[a:b]) for a, b in runs)
        if peaks[0] < _PEAK_MIN * PATCH_H:
            continue  # a symbol seen in part only (faint, or broken up)
        pitch = (runs[-1][0] + runs[-1][1] - runs[0][0] - runs[0][1]) / 2 / (len(runs) - 1)
        length[k] = PITCH * peaks[len(peaks) // 2] / pitch
        # the margins to the quad's ends, or to a line across it (what covers the card)
        lines = [(a, b) for a, b in found if (a, b) not in runs]
        start = max([b for a, b in lines if b <= runs[0][0]], default=0)
        stop = min([a for a, b in lines if a >= runs[-1][1]], default=width)
        before, after = runs[0][0] - start, stop - runs[-1][1]
        if min(before, after) < _SHORT_END * max(before, after):
            short_end[k] = -1 if before < after else 1
    return length, short_end


def edge_support(
    grad_x: np.ndarray, grad_y: np.ndarray, quads: np.ndarray, samples: int = 12
) -> np.ndarray:
    """Per quad (N, 4, 2): the share of points along its sides where the lightness steps."""
    n = len(quads)
    if n == 0:
        return np.zeros(0)
    h, w = grad_x.shape
    a = quads
    b = quads[:, [1, 2, 3, 0]]
    d = b - a
    length = np.maximum(np.linalg.norm(d, axis=2, keepdims=True), 1e-6)
    normal = np.stack([-d[..., 1], d[..., 0]], axis=2) / length  # (N, 4, 2)
    t = np.linspace(_SIDE_FROM, _SIDE_TO, samples)
    offsets = np.array(_SIDE_OFFSETS)
    points = (
        a[:, :, None, None, :]
        + t[None, None, :, None, None] * d[:, :, None, None, :]
        + offsets[None, None, None, :, None] * normal[:, :, None, None, :]
    )
    x = points[..., 0]
    y = points[..., 1]
    inside = (x >= 1) & (x < w - 1) & (y >= 1) & (y < h - 1)
    xi = np.clip(np.rint(x).astype(np.int32), 0, w - 1)
    yi = np.clip(np.rint(y).astype(np.int32), 0, h - 1)
    g = np.abs(
        grad_x[yi, xi] * normal[:, :, None, None, 0] + grad_y[yi, xi] * normal[:, :, None, None, 1]
    )
    best = g.max(axis=3)
    valid = inside.all(axis=3)
    good = ((best > _SIDE_STEP) & valid).sum(axis=(1, 2))
    return good / np.maximum(valid.sum(axis=(1, 2)), 1)
