"""Find card outlines (quadrilaterals) in a photo, on any table.

Cards are bright, nearly colourless paper holding one to three coloured symbols. The detector
works on a copy of the photo about 640 pixels long and spends more only where the cheap steps
leave something unexplained (an easy photo takes the first step only):

1. Regions: one binarisation of a "paper" score (lightness minus chroma); each region's outline
   is fitted with a quadrilateral and kept when card-shaped.
2. Where paper is left unexplained by the cards found (touching cards, a pale table, shadows),
   more binarisations, cut along thin dark lines and image edges, are tried in that area only.
3. Where paper is still unexplained, or a card is far larger than the others (two touching cards
   taken for one), cards are looked for from their symbols: groups of 1-3 alike ink blobs
   predict a card whose sides are then searched for as straight edges (``segment_symbols``).
   This finds cards on white tables, cards crossed by shadows and cards partly covered by
   others, with their whole outline.

Every candidate's content is checked (``segment_check``); duplicates, groups of cards and pieces
of cards are resolved; a card partly covered by another is marked ``occluded``, and odd ones
out among the cards of the photo (size, paper) are dropped. Finally each side is snapped to the
image edge at full resolution (``segment_fit``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import cv2
import numpy as np
from setvision.vision.find.check import edge_support, inspect
from setvision.vision.find.fit import fit_quad, snap_sides
from setvision.vision.find.symbols import (
    SYMBOL_TO_WIDTH,
    Blob,
    Hypothesis,
    card_hypotheses,
    find_blobs,
    group_blobs,
    ink_strength,
)
from setvision.vision.geometry import (
    aspect_ratio,
    convex_overlap,
    interior_angles,
    long_side_first,
    order_corners,
    pixel_corners,
    side_lengths,
    touches_border,
)
from setvision.vision.image import resize_long_side

#: A quad holding less than this share of its card's length (judged from the symbols' spacing,
#: against the photo's other cards) stops where something covers the card.
SHORT = 0.8
#: Detection runs on a copy of the photo with this long side.
WORK_LONG_SIDE = 640
#: Points (N, 2) -> whether each may lie on a card (bool (N,)).
OnCard = Callable[[np.ndarray], np.ndarray]
#: Cards narrower than this (work pixels) are looked for again on a larger copy, up to this size.
MIN_WIDTH, MAX_LONG_SIDE = 40, 1400
#: How far (work pixels) a card's side may move onto the strongest edge near it in the photo
#: at full size; both finders snap their outlines so.
SNAP_PX = 3.0
#: A card within this many work pixels of the photo's border is taken to touch it.
BORDER_PX = 2.0
#: The most the white point moves from neutral (Lab a, b units): a lamp's tint, not a table's.
WHITE_SHIFT = 20
#: A card's side around symbols that show no likely card at the usual step (4 lightness units
#: per pixel) is looked for again at this fainter one: white cards on a white table or sheet,
#: whose sides step by 1 to 3 units (the learned model judges what it adds).
FAINT_EDGE = 1.0

# ---- the paper score and the photo's white (``_View``, ``_white_point``)
#: The paper score: lightness and chroma weighted so, plus an offset (levels of 255), blurred
#: over this window (pixels): white paper scores high, any coloured or dark table low.
SCORE_LIGHT, SCORE_CHROMA, SCORE_OFFSET = 0.8, -1.2, 50
SCORE_BLUR = (3, 3)
#: Where nothing is darker than paper, the table is taken this far below Otsu's level (score
#: units).
TABLE_BELOW_PAPER = 30
#: The table's colour is sampled every this many pixels, and only told when at least this share
#: of the samples is table.
TABLE_SAMPLE_STEP, MIN_TABLE_SHARE = 4, 0.1
#: The photo's white: its pixels above this share of them by lightness (the cards' paper).
WHITE_QUANTILE = 0.9
#: That white is trusted fully while its Lab a and b spread at most the first less the second
#: (units of Lab), not at all from the first: one even colour, as paper is.
WHITE_UNTRUSTED_SPREAD, WHITE_TRUST_RAMP = 12.0, 6.0

# ---- card-shaped regions (``_card_shaped``, ``_cut_masks``, ``_split``, ``_dedupe``)
#: A region fills at least this share of its convex hull, and this range of its fitted quad
#: (the part within the image).
MIN_REGION_SOLIDITY = 0.88
REGION_FILL = (0.85, 1.08)
#: A card's quad is shorter than this many times its width, its corners within these angles
#: (degrees), from any angle of view.
MAX_CARD_ASPECT = 2.6
CORNER_ANGLES = (50, 130)
#: A card takes this share of the work image's area at least and at most.
CARD_AREA_SHARES = (0.002, 0.35)
#: The levels tried where paper is left unexplained: evenly spaced between these percentiles
#: of the paper score there, this many steps apart (both ends left out).
CUT_PERCENTILES = (20, 99.5)
CUT_LEVEL_STEPS = 6
#: The lightness is blurred over this window (pixels) before its thin dark lines and edges are
#: looked for; a line or edge cuts the regions this wide (pixels, a square).
CUT_BLUR = (5, 5)
CUT_GROW = (3, 3)
#: A thin dark line (a gap between cards, a shadow's edge) is narrower than this (pixels) and
#: darker than its surroundings by more than the first (lightness levels) to cut regions; the
#: low paper mask keeps to pixels darker by less than the second.
VALLEY_WIDTH = 7
VALLEY_CUT, VALLEY_CLEAR = 8, 10
#: Canny's (low, high) gradient levels for the edges that cut regions.
CUT_CANNY_LEVELS = ((10, 30), (20, 60))
#: Touching cards are parted from the cores of their paper: what lies deeper inside it than
#: this share of the deepest paper, and at least this many pixels.
CORE_DEPTH, MIN_CORE_PX = 0.35, 2.0
#: Quads whose corners all lie within this many pixels of another's are one.
SAME_CORNERS_PX = 2.5
#: The area left around paper left unexplained (pixels each way) when it is binarised again.
ROI_PAD_PX = 6

# ---- the photo's typical card (``_select``, ``_consistent``, ``_symbol_cards``, ``_find``)
#: The photo's cards tell their typical size, length or paper when at least this many show it
#: (candidates: this many more than one, when few have clear sides).
MIN_CARDS_TO_COMPARE = 3
MIN_CANDIDATES_TO_COMPARE = 4
#: A quad whose sides show as edges on at least this share of their length is cleanly outlined.
CLEAR_SUPPORT = 0.8
#: Quads more than this many times the typical card's area are not one card; uncut cards are at
#: least this share of it, cards cut by the border this share of its region.
MAX_CARD_FACTOR = 3
MIN_CARD_SHARE = 0.33
MIN_CUT_CARD_SHARE = 0.12
#: A card's paper is at least this share of the typical paper's lightness (even in deep shade);
#: paper more coloured than the typical by more than this (chroma, levels of 255) is trusted
#: only on a clean, uncut outline at least this share of the typical lightness (not glare).
MIN_PAPER_LIGHT = 0.45
PAPER_CHROMA_EXCESS = 10
GLARE_LIGHT = 0.8
#: Paper left unexplained is looked into when at least this share of a typical card.
UNEXPLAINED_SHARE = 0.3
#: A card more than this many times the typical card's area may be two cards taken for one.
MERGED_FACTOR = 1.6
#: The kernel (pixels) that grows the cards found and cleans the paper left unexplained.
UNEXPLAINED_KERNEL = (5, 5)

# ---- one outline per card (``_select``, ``_on_top``, ``_over``)
#: Two quads overlapping by more than this share of their union are one card; the one whose
#: sides show clearer by this edge support replaces the other.
SAME_CARD_OVERLAP = 0.75
CLEARER_SUPPORT = 0.1
#: A quad lies inside another when this share of it does; a group of cards holds others of at
#: least this share of its area.
INSIDE_SHARE = 0.85
MIN_HELD_SHARE = 0.2
#: A region overlapping a card found from its symbols by this share of the smaller, holding
#: some of its symbols, is a piece of it.
PIECE_OVERLAP = 0.3
#: Cards overlapping by this share of the smaller or less do not touch; by more than the second,
#: one cannot lie on the other (they are one, or a group).
NEGLIGIBLE_OVERLAP, MAX_COVER_OVERLAP = 0.05, 0.7
#: A card lies on top when at least this share of its sides over the other show as edges, this
#: share more than the other's; overlapping by at most the third, either may lie on top.
CLEAR_OVER, OVER_MARGIN, EITHER_ON_TOP = 0.5, 0.2, 0.5
#: Where a card's sides cross another, they are looked at inside it shrunk by this factor, at
#: this many points between these shares of each side, at these offsets across it (pixels).
OVER_SHRINK = 0.92
OVER_POINTS, OVER_SPAN = 24, (0.1, 0.9)
OVER_OFFSETS = (-1.5, -0.5, 0.5, 1.5)
#: An edge steps by more than this in lightness (levels of 255 per pixel); a side is judged
#: from at least this many points.
EDGE_STEP = 4
MIN_OVER_POINTS = 6

# ---- covered cards (``_covering``, ``_lengthen_short``, ``_covered_end``)
#: A card may be covered by another when it overlaps it by at least this share of its area,
#: and by all of them together by at most the second; the covering quads are grown by this
#: factor about their centres, to take in their edges and shadows.
MIN_COVER_SHARE, MAX_COVERED_SHARE = 0.02, 0.5
COVER_GROWTH = 1.04
#: Second chances are given only to candidates further than this from the border (pixels).
SECOND_CHANCE_BORDER_PX = 1.0
#: The margin of a covered card (outside this share of its quad about its centre), where still
#: seen, is paper on at least this share of its pixels, and at least this many are seen; its
#: box at least this many pixels each way.
MARGIN_INNER, MIN_MARGIN_PAPER, MIN_MARGIN_PIXELS, MIN_BOX_PX = 0.75, 0.7, 20, 4
#: A quad holding at least this share of its card's length (and less than ``SHORT``) stops
#: where something covers the card.
MIN_LENGTH_SHARE = 0.5
#: Beyond each end of such a quad, the table is looked for at this many points between these
#: shares of the end, at these depths (shares of the card's length); it is the table where this
#: share of them lie within this colour distance of it (Lab units).
END_POINTS, END_SPAN = 7, (0.2, 0.8)
BEYOND_DEPTHS = (0.04, 0.07, 0.1)
TABLE_SHARE_BEYOND, TABLE_DISTANCE = 0.6, 20

# ---- cards found from their symbols (``_symbol_cards``, ``_hypothesis``, ``_trusted``)
#: Without cards found, a card is taken as wide as this fraction of the work image's long side.
DEFAULT_WIDTH_DIVISOR = 10
#: Ink is told from the paper within a window of this share of a card's width, at least this
#: many pixels.
INK_WINDOW_SHARE, MIN_INK_WINDOW = 0.2, 9
#: Non-paper regions of at least this share of a card's width squared are table, not ink.
TABLE_REGION_SHARE = 0.5
#: An ink blob has at least this many pixels and is at most this share of the work image's long
#: side long.
MIN_BLOB_PX, MAX_BLOB_SHARE = 12, 0.3
#: A group's symbols are within this range of the expected length (that of the photo's cards'
#: symbols), and a card found again from another hypothesis within this range of the typical
#: card's area.
SYMBOL_LENGTH_RANGE = (0.5, 1.8)
RETRY_AREA_RANGE = (0.5, 2)
#: One grey blob (chroma above the paper's less than this) with at most this many sides of a card
#: seen around it is likely a shadow; a lone symbol is trusted when at least this coloured and
#: at least this thick over its length.
MIN_SYMBOL_EXCESS = 4
SHADOW_SIDES = 2
MIN_SYMBOL_THICKNESS = 0.36
#: Small cards are looked for again only on a copy at least this many times larger.
RELOOK_GAIN = 1.25


@dataclass(frozen=True)
class Outline:
    """A card's corners in the input image's pixels, clockwise from the one nearest the top-left.

    ``touches_border``: part of the card may lie outside the image. ``occluded``: another card
    lies over part of it (the corners still describe the whole card, covered part included).
    ``long_side``: 0 when the sides 0-1 and 2-3 are the card's long sides, 1 when 1-2 and 3-0
    are; judged from the symbols, so it holds even when a slanted view makes a card look wider
    than long.
    """

    corners_xy: np.ndarray
    touches_border: bool
    occluded: bool = False
    long_side: int = 0


@dataclass
class _Candidate:
    corners: np.ndarray  # (4, 2) float32 clockwise, work pixels
    area: float  # area of the region seen (the quad's for symbol-found cards)
    quad_area: float  # area of the quad within the image
    from_region: bool
    cut: bool = False
    support: float = 0.0
    paper_chroma: float = 0.0
    paper_light: float = 0.0
    turned: bool = False  # the card's length runs along the quad's shorter sides
    occluded: bool = False
    source: str = ""
    symbols: np.ndarray | None = None  # centres of the symbols a card was found from
    cost: float = 0.0  # how well it fits the symbols it was found from (lower: better)
    #: its symbols are more than one, or one clearly coloured and shaped like a symbol (not a
    #: shadow): the card may be given second chances
    trusted: bool = True
    length: float = 0.0  # its card's length in the quad's, from the symbols (0: not known)
    narrower: int = 0  # the end where the symbols keep the narrower margin (Inspection)
    box: tuple[float, float, float, float] = field(init=False)  # x0, y0, x1, y1

    def __post_init__(self) -> None:
        (x0, y0), (x1, y1) = self.corners.min(axis=0).tolist(), self.corners.max(axis=0).tolist()
        self.box = (x0, y0, x1, y1)


@dataclass
class _View:
    """The work-resolution photo and the per-pixel maps the steps share."""

    image: np.ndarray
    light: np.ndarray = field(init=False)
    score: np.ndarray = field(init=False)
    bright: np.ndarray = field(init=False)
    low: np.ndarray = field(init=False)
    lab: np.ndarray = field(init=False)
    _chroma8: np.ndarray = field(init=False)
    _grads: tuple[np.ndarray, np.ndarray] | None = None
    _table: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.lab = cv2.cvtColor(self.image, cv2.COLOR_BGR2LAB)
        self.light, a, b = cv2.split(self.lab)
        white_a, white_b = _white_point(self.light, a, b)
        a, b = cv2.absdiff(a, white_a), cv2.absdiff(b, white_b)
        # chroma ~ hypot(a, b) (within 4 %), in 8-bit arithmetic for speed
        self._chroma8 = cv2.addWeighted(cv2.max(a, b), 1.0, cv2.min(a, b), 0.4, 0)
        # the paper score: lightness minus chroma, scaled into 0-255
        self.score = cv2.GaussianBlur(
            cv2.addWeighted(self.light, SCORE_LIGHT, self._chroma8, SCORE_CHROMA, SCORE_OFFSET),
            SCORE_BLUR,
            0,
        )
        level, self.bright = cv2.threshold(self.score, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        hist = cv2.calcHist([self.score], [0], None, [256], [0, 256]).ravel()
        hist = hist[: int(level) + 1].cumsum()
        # the table: the median of what is darker than paper
        table = (
            float(np.searchsorted(hist, hist[-1] / 2)) if hist[-1] else level - TABLE_BELOW_PAPER
        )
        self.low = (self.score > (table + level) / 2).astype(np.uint8)

    @property
    def chroma(self) -> np.ndarray:
        return self._chroma8.astype(np.float32)

    @property
    def size(self) -> tuple[int, int]:
        return self.image.shape[1], self.image.shape[0]

    def table_colour(self) -> np.ndarray | None:
        """The table's median Lab colour (what is not paper), None when it is too little seen."""
        if self._table is None:
            step = TABLE_SAMPLE_STEP
            rest = self.lab[::step, ::step][self.low[::step, ::step] == 0]
            self._table = (
                np.median(rest, axis=0).astype(np.float32)
                if len(rest) > MIN_TABLE_SHARE * self.low[::step, ::step].size
                else np.zeros(0, np.float32)
            )
        return self._table if self._table.size else None

    def grads(self) -> tuple[np.ndarray, np.ndarray]:
        """Lightness gradients (per pixel, after a light blur)."""
        if self._grads is None:
            blurred = cv2.GaussianBlur(self.light, (3, 3), 0)
            self._grads = (
                cv2.Sobel(blurred, cv2.CV_32F, 1, 0, ksize=3, scale=0.125),
                cv2.Sobel(blurred, cv2.CV_32F, 0, 1, ksize=3, scale=0.125),
            )
        return self._grads


def _white_point(light: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[int, int]:
    """The Lab (a, b) of white under this photo's light: the mean of its brightest tenth (the
    cards' paper), so that paper under a warm lamp or a cool screen still scores as paper.

    Trusted only as far as that tenth is one even colour, as paper is (not a mix of a window,
    a wall and a shirt), and limited to what a lamp does to white.
    """
    hist = cv2.calcHist([light], [0], None, [256], [0, 256]).ravel().cumsum()
    level = int(np.searchsorted(hist, WHITE_QUANTILE * hist[-1]))
    bright = (light >= level).astype(np.uint8)
    (mean_a,), (spread_a,) = cv2.meanStdDev(a, mask=bright)
    (mean_b,), (spread_b,) = cv2.meanStdDev(b, mask=bright)
    spread = max(spread_a[0], spread_b[0])
    trust = float(np.clip((WHITE_UNTRUSTED_SPREAD - spread) / WHITE_TRUST_RAMP, 0.0, 1.0))
    return (
        int(round(128 + trust * np.clip(mean_a[0] - 128, -WHITE_SHIFT, WHITE_SHIFT))),
        int(round(128 + trust * np.clip(mean_b[0] - 128, -WHITE_SHIFT, WHITE_SHIFT))),
    )


def _outer_contours(mask: np.ndarray, offset: tuple[int, int] = (0, 0)) -> list[np.ndarray]:
    """Outer outlines of every region, including regions inside holes of others."""
    contours, hierarchy = cv2.findContours(
        mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE, offset=offset
    )
    if hierarchy is None:
        return []
    return [contours[k] for k in np.flatnonzero(hierarchy[0][:, 3] < 0)]


def _card_shaped(contour: np.ndarray, area: float, view: _View, source: str) -> _Candidate | None:
    """A candidate when the region (of this ``area``) is a (possibly border-cut) convex
    quadrilateral."""
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    if hull_area <= 0 or area / hull_area < MIN_REGION_SOLIDITY:
        return None
    fitted = fit_quad(contour, view.size, precise=False)
    if fitted is None:
        return None
    quad, cut, cornered = fitted
    width, height = view.size
    frame = pixel_corners(width, height)
    visible = convex_overlap(quad, frame) if cut else cv2.contourArea(quad)
    if visible <= 0 or not REGION_FILL[0] < area / visible < REGION_FILL[1]:
        return None
    angles = interior_angles(quad)
    if (
        not aspect_ratio(quad) < MAX_CARD_ASPECT
        or angles.min() < CORNER_ANGLES[0]
        or angles.max() > CORNER_ANGLES[1]
    ):
        return None
    # a corner cut off: another card or an object lies over it
    return _Candidate(quad, area, float(visible), True, cut, occluded=cornered, source=source)


def _regions(
    view: _View,
    masks: Iterable[tuple[str, np.ndarray]],
    areas: tuple[float, float],
    offset: tuple[int, int] = (0, 0),
    seen: set[bytes] | None = None,
) -> list[_Candidate]:
    """Card-shaped regions of binary masks (placed at ``offset`` in the work image).

    A region whose outline is in ``seen`` (outlines met already, which the call adds to) is
    not fitted again: several masks often cut a card out exactly alike, and the duplicate
    candidate would be dropped as one anyway.
    """
    seen = set() if seen is None else seen
    found = []
    for name, mask in masks:
        for contour in _outer_contours(mask, offset):
            area = cv2.contourArea(contour)
            if not areas[0] <= area <= areas[1]:  # most regions are specks: tested first
                continue
            key = contour.tobytes()
            if key in seen:
                continue
            seen.add(key)
            candidate = _card_shaped(contour, area, view, name)
            if candidate is not None:
                found.append(candidate)
    return found


def _cut_masks(view: _View, roi: tuple[int, int, int, int]) -> Iterator[tuple[str, np.ndarray]]:
    """Binarisations of an area at several levels, cut along thin dark lines or image edges,
    and the paper split where cards touch."""
    x, y, w, h = roi
    score = view.score[y : y + h, x : x + w]
    grey = cv2.GaussianBlur(view.light[y : y + h, x : x + w], CUT_BLUR, 0)
    low, high = np.percentile(score, CUT_PERCENTILES)
    levels = np.linspace(low, high, CUT_LEVEL_STEPS)[1:-1]
    grow = np.ones(CUT_GROW, np.uint8)
    valley = cv2.morphologyEx(
        grey, cv2.MORPH_BLACKHAT, np.ones((VALLEY_WIDTH, VALLEY_WIDTH), np.uint8)
    )
    paper = view.low[y : y + h, x : x + w]
    yield "low-valley", paper & (valley < VALLEY_CLEAR).astype(np.uint8)
    split = _split(view.image[y : y + h, x : x + w], paper)
    if split is not None:
        yield "split", split
    cuts = [("valley", cv2.dilate((valley > VALLEY_CUT).astype(np.uint8), grow))]
    for lo, hi in CUT_CANNY_LEVELS:
        cuts.append((f"canny{lo}", cv2.dilate(cv2.Canny(grey, lo, hi), grow)))
    for name, cut in cuts:
        free = cut == 0
        for level in levels:
            yield name, ((score > level) & free).astype(np.uint8)


def _split(image: np.ndarray, paper: np.ndarray) -> np.ndarray | None:
    """Paper regions split where cards touch at a corner or along a short stretch.

    Cores of the paper (what survives an erosion by a sixth of a card's width, which parts
    touching cards; the widest paper is about half a card's width from its edge) grow back
    over the paper by a watershed on the photo, so each card's region ends at the edge between
    the cards; the watershed lines part the regions. None when there is nothing to part.
    """
    if paper.all() or not paper.any():
        return None  # no edge to grow back to
    inside = cv2.distanceTransform(paper, cv2.DIST_L2, 3)
    radius = max(MIN_CORE_PX, CORE_DEPTH * float(inside.max()))
    count, markers = cv2.connectedComponents((inside > radius).astype(np.uint8))
    if count <= 2:
        return None  # one core: nothing to part
    table = cv2.erode(1 - paper, np.ones((3, 3), np.uint8)) > 0
    markers[table] = count  # the table is a basin of its own
    cv2.watershed(image, markers)
    lines = cv2.dilate((markers < 0).astype(np.uint8), np.ones((3, 3), np.uint8))
    return ((markers > 0) & (markers < count) & (lines == 0)).astype(np.uint8)


def _dedupe(candidates: list[_Candidate]) -> list[_Candidate]:
    """Drop near-identical quads before the content check."""
    out: list[_Candidate] = []
    for c in sorted(candidates, key=lambda c: -c.area / max(c.quad_area, 1)):
        if not any(np.abs(c.corners - o.corners).max() < SAME_CORNERS_PX for o in out):
            out.append(c)
    return out


def _verified(
    view: _View,
    candidates: list[_Candidate],
    covers: list[_Candidate] | None = None,
    second: bool = False,
) -> list[_Candidate]:
    """Candidates whose content is a card's, with their edge support measured.

    With ``covers`` (cards found already), a candidate that fails may lie under some of them or
    of the candidates that pass: it is checked again with the parts those cover left out, and
    kept as occluded if it then passes (the ink at its edge was the covering card's). Such
    second chances, and all candidates when ``second``, must show evenly lit paper (no patch
    of table taken for paper).
    """
    candidates = _dedupe(candidates)
    checks = inspect(view.image, [c.corners for c in candidates], even=second)
    if covers is not None:
        covers = covers + [c for c, check in zip(candidates, checks) if check.ok]
        again = {
            k: _covering(view, c, covers) for k, c in enumerate(candidates) if not checks[k].ok
        }
        again = {k: polygons for k, polygons in again.items() if polygons is not None}
        retried = inspect(
            view.image, [candidates[k].corners for k in again], list(again.values()), even=True
        )
        for k, check in zip(again, retried):
            if check.ok:
                checks[k] = check
                candidates[k].occluded = True
    kept = [c for c, check in zip(candidates, checks) if check.ok]
    for c, check in zip(candidates, checks):
        c.paper_chroma, c.paper_light = check.paper_chroma, check.paper_light
        c.turned = check.turned
        c.length, c.narrower = check.length, check.short_end
    if kept:
        support = edge_support(*view.grads(), np.array([c.corners for c in kept]))
        for c, s in zip(kept, support):
            c.support = float(s)
    return kept


def _lengthen_short(view: _View, cards: list[_Candidate]) -> None:
    """Lengthen, over what covers them, the quads that hold less than their card's length.

    A card's length is judged from its symbols' spacing against their height, which varies a
    little from deck to deck: against the photo's other cards when enough show it.
    """
    known = [c.length for c in cards if c.length > 0]
    norm = float(np.median(known)) if len(known) >= MIN_CARDS_TO_COMPARE else 1.0
    for c in cards:
        if MIN_LENGTH_SHARE * norm < c.length < SHORT * norm:  # less would not pass as a card
            end = _covered_end(view, c, c.narrower)
            if end:
                _lengthen(c, end, norm / c.length - 1)


def _ends(card: _Candidate) -> np.ndarray:
    """The quad as checked (side 0-1 along the card's length): corners (4, 2)."""
    first = long_side_first(card.corners)
    return first[[1, 2, 3, 0]] if card.turned else first


def _covered_end(view: _View, card: _Candidate, narrower: int) -> int:
    """Which end of a quad holding less than its card's length lies where something covers the
    card: -1 (side 3-0 of ``_ends``), 1 (side 1-2), or 0 when it cannot be told.

    Beyond the card's own end lies the table; beyond the covered one another card, a hand or
    an object. On a pale table, where the table cannot be told from paper, the end where the
    symbols keep the ``narrower`` margin is taken.
    """
    q = _ends(card)
    length = float(np.linalg.norm((q[1] + q[2]) / 2 - (q[0] + q[3]) / 2))
    table = view.table_colour()
    beyond = []
    for (a, b), outward in (((q[3], q[0]), q[0] - q[1]), ((q[1], q[2]), q[1] - q[0])):
        outward = outward / max(float(np.linalg.norm(outward)), 1e-6)
        t = np.linspace(*END_SPAN, END_POINTS)[:, None, None]
        depth = np.array(BEYOND_DEPTHS)[None, :, None] * length
        points = (a + t * (b - a) + depth * outward).reshape(-1, 2)
        x = np.clip(np.rint(points[:, 0]).astype(int), 0, view.size[0] - 1)
        y = np.clip(np.rint(points[:, 1]).astype(int), 0, view.size[1] - 1)
        if table is None:
            beyond.append(False)
            continue
        distance = np.linalg.norm(view.lab[y, x].astype(np.float32) - table, axis=1)
        beyond.append(bool((distance < TABLE_DISTANCE).mean() > TABLE_SHARE_BEYOND))
    if beyond[0] != beyond[1]:
        return 1 if beyond[0] else -1
    return narrower if not any(beyond) else 0


def _lengthen(card: _Candidate, end: int, share: float) -> None:
    """Extend a quad that misses part of its card's length (``share`` of its own length) over
    the covered ``end`` (see ``_covered_end``); the card is then occluded, and its symbols no
    longer stand centred, as they do on the whole card."""
    q = _ends(card).copy()
    along = np.stack([q[1] - q[0], q[2] - q[3]]) * share
    if end > 0:
        q[1], q[2] = q[1] + along[0], q[2] + along[1]
    else:
        q[0], q[3] = q[0] - along[0], q[3] - along[1]
    card.corners = order_corners(q)
    card.quad_area = float(cv2.contourArea(card.corners))
    card.__post_init__()
    card.occluded = True


def _covering(view: _View, candidate: _Candidate, covers: list[_Candidate]) -> np.ndarray | None:
    """Quads of the cards that may lie over part of a candidate (a little enlarged, to take in
    their edges and shadows), or None when none does.

    Also None when they would hide its symbols or most of it, when its one symbol may be a
    shadow (grey, or thin), when the image border cuts it too (too little would be
    left to judge), or when the margin left uncovered is not paper (a patch of table between
    cards).
    """
    cut = touches_border(candidate.corners, view.size, SECOND_CHANCE_BORDER_PX)
    if not candidate.trusted or cut:
        return None
    polygons = []
    for o in covers:
        inter = _overlap(candidate, o)
        if inter < MIN_COVER_SHARE * candidate.quad_area:
            continue
        if candidate.symbols is not None and _inside(candidate.symbols, o.corners).any():
            return None
        centre = o.corners.mean(axis=0)
        polygons.append(centre + COVER_GROWTH * (o.corners - centre))
    if not polygons:
        return None
    if sum(_overlap(candidate, o) for o in covers) > MAX_COVERED_SHARE * candidate.quad_area:
        return None
    x, y, w, h = cv2.boundingRect(np.rint(candidate.corners).astype(np.int32))
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, view.size[0]), min(y + h, view.size[1])
    if x1 - x0 < MIN_BOX_PX or y1 - y0 < MIN_BOX_PX:
        return None
    offset = np.float32([x0, y0])
    margin = np.zeros((y1 - y0, x1 - x0), np.uint8)
    centre = candidate.corners.mean(axis=0)
    cv2.fillConvexPoly(margin, np.rint(candidate.corners - offset).astype(np.int32), 1)
    inner = centre + MARGIN_INNER * (candidate.corners - centre)
    cv2.fillConvexPoly(margin, np.rint(inner - offset).astype(np.int32), 0)
    for polygon in polygons:
        cv2.fillConvexPoly(margin, np.rint(polygon - offset).astype(np.int32), 0)
    seen = margin.astype(bool)
    if seen.sum() < MIN_MARGIN_PIXELS or view.low[y0:y1, x0:x1][seen].mean() < MIN_MARGIN_PAPER:
        return None
    return np.array(polygons, np.float32)


def _overlap(a: _Candidate, b: _Candidate) -> float:
    """Area common to two candidates' (convex) quads."""
    (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = a.box, b.box
    if ax0 >= bx1 or bx0 >= ax1 or ay0 >= by1 or by0 >= ay1:
        return 0.0
    return convex_overlap(a.corners, b.corners)


def _inside(points: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Which points lie inside a clockwise (on screen) convex quad."""
    return _inside_each(points, quad[None])[:, 0]


def _inside_each(points: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """(points, quads): which points (N, 2) lie strictly inside each clockwise (on screen)
    convex quad (M, 4, 2)."""
    edges = quads[:, [1, 2, 3, 0]] - quads
    rel = points[:, None, None, :] - quads[None]
    cross = edges[None, ..., 0] * rel[..., 1] - edges[None, ..., 1] * rel[..., 0]
    return (cross > 0).all(axis=2)


def _over(view: _View, top: _Candidate, below: _Candidate) -> float:
    """How clearly ``top``'s sides show as edges where they cross ``below``: it lies on top."""
    grad_x, grad_y = view.grads()
    h, w = grad_x.shape
    shrunk = below.corners.mean(axis=0) + OVER_SHRINK * (below.corners - below.corners.mean(axis=0))
    good = total = 0
    for i in range(4):
        a, b = top.corners[i], top.corners[(i + 1) % 4]
        t = np.linspace(*OVER_SPAN, OVER_POINTS)[:, None]
        points = a + t * (b - a)
        points = points[_inside(points, shrunk)]
        if len(points) == 0:
            continue
        d = (b - a) / max(float(np.linalg.norm(b - a)), 1e-6)
        normal = np.array([-d[1], d[0]])
        best = np.zeros(len(points))
        for off in OVER_OFFSETS:
            q = points + off * normal
            xi = np.clip(np.rint(q[:, 0]).astype(int), 0, w - 1)
            yi = np.clip(np.rint(q[:, 1]).astype(int), 0, h - 1)
            best = np.maximum(best, np.abs(grad_x[yi, xi] * normal[0] + grad_y[yi, xi] * normal[1]))
        good += int((best > EDGE_STEP).sum())
        total += len(points)
    return good / total if total >= MIN_OVER_POINTS else 0.0


def _select(view: _View, candidates: list[_Candidate]) -> list[_Candidate]:
    """One outline per card: merge duplicates, drop groups of cards and pieces of cards.

    Quads may overlap only where one card visibly lies on another (its sides show as edges
    across the other); the covered card is then marked occluded.
    """
    refs = [
        c.quad_area
        for c in candidates
        if c.from_region and not c.cut and c.support >= CLEAR_SUPPORT
    ]
    if len(refs) < MIN_CARDS_TO_COMPARE:
        many = len(candidates) >= MIN_CANDIDATES_TO_COMPARE
        refs = [c.quad_area for c in candidates if not c.cut] if many else []
    if refs:  # far larger than the typical card: not one card
        largest = MAX_CARD_FACTOR * float(np.median(refs))
        candidates = [c for c in candidates if c.quad_area <= largest]
    kept: list[_Candidate] = []
    for c in sorted(candidates, key=lambda c: -c.quad_area):  # outermost first
        for k, o in enumerate(kept):
            inter = _overlap(c, o)
            if inter > SAME_CARD_OVERLAP * (c.quad_area + o.quad_area - inter):
                if c.support > o.support + CLEARER_SUPPORT:  # the same card: the clearer outline
                    kept[k] = c
                break
        else:
            kept.append(c)

    def inside(i: _Candidate, o: _Candidate) -> bool:
        return i.quad_area < o.quad_area and _overlap(i, o) > INSIDE_SHARE * i.quad_area

    def holds(o: _Candidate, i: _Candidate) -> bool:  # a card inside a group of cards
        return inside(i, o) and i.quad_area > MIN_HELD_SHARE * o.quad_area

    groups = {id(c) for c in kept if sum(holds(c, d) for d in kept if d is not c) >= 2}
    pieces = [
        c
        for c in kept
        if id(c) not in groups
        and not any(inside(c, o) and id(o) not in groups for o in kept if o is not c)
    ]
    # a region that holds some but not all symbols of a card found from its symbols is a piece
    # of that card (cut by a shadow or a glare line)
    groups_found = [c for c in pieces if c.symbols is not None and len(c.symbols) > 1]
    pieces = [
        c
        for c in pieces
        if not c.from_region
        or not any(
            0 < _inside(g.symbols, c.corners).sum() < len(g.symbols)
            and _overlap(c, g) > PIECE_OVERLAP * min(c.quad_area, g.quad_area)
            for g in groups_found
        )
    ]
    final: list[_Candidate] = []
    for c in sorted(pieces, key=lambda c: (-c.from_region, -c.support)):
        covered = []
        for o in final:
            share = _overlap(c, o) / min(c.quad_area, o.quad_area)
            if share <= NEGLIGIBLE_OVERLAP:
                continue
            top = _on_top(view, c, o, share) if share <= MAX_COVER_OVERLAP else None
            if top is None:
                break
            covered += [o] if top > 0 else [c] if top < 0 else [c, o]
        else:
            final.append(c)
            for card in covered:
                card.occluded = True
    return final


def _on_top(view: _View, a: _Candidate, b: _Candidate, share: float) -> int | None:
    """1 when ``a`` lies over ``b``, -1 when under it, 0 when either may be (both are then
    marked occluded), None when the two cannot both be cards.

    A card's symbols seen where the two overlap put it on top; else its sides showing as edges
    across the other card do. Two cards found from their own symbols may overlap a little
    without telling which lies on top.
    """
    a_shows = a.symbols is not None and bool(_inside(a.symbols, b.corners).any())
    b_shows = b.symbols is not None and bool(_inside(b.symbols, a.corners).any())
    if a_shows and b_shows:
        return None
    if a_shows != b_shows:
        return 1 if a_shows else -1
    a_over, b_over = _over(view, a, b), _over(view, b, a)
    if max(a_over, b_over) >= CLEAR_OVER and abs(a_over - b_over) >= OVER_MARGIN:
        return 1 if a_over > b_over else -1
    if share <= EITHER_ON_TOP and (a.symbols is not None or b.symbols is not None):
        return 0
    return None


def _consistent(cards: list[_Candidate]) -> list[_Candidate]:
    """Drop outliers among the cards of one photo: size, and the paper's lightness and colour.

    The size is judged against the cards found with four clear sides, when there are enough;
    paper against all the cards. A card's paper is seldom under 0.45 of the typical lightness
    (even in deep shade under a dim lamp), and a more coloured paper than the others (a card
    under a lamp's glare) is only trusted on a clean, uncut outline.
    """
    if len(cards) < MIN_CARDS_TO_COMPARE:
        return cards
    light = float(np.median([c.paper_light for c in cards]))
    chroma = float(np.median([c.paper_chroma for c in cards]))
    refs = [c for c in cards if c.from_region and not c.cut and c.support >= CLEAR_SUPPORT]
    if len(refs) < MIN_CARDS_TO_COMPARE:
        refs = [c for c in cards if not c.cut]
    areas = [c.quad_area for c in refs]
    area = float(np.median(areas)) if len(refs) >= MIN_CARDS_TO_COMPARE else 0.0
    out = []
    for c in cards:
        if c.paper_light < MIN_PAPER_LIGHT * light:
            continue
        if c.paper_chroma > chroma + PAPER_CHROMA_EXCESS and (
            c.cut or c.support < CLEAR_SUPPORT or c.paper_light < GLARE_LIGHT * light
        ):
            continue
        too_large = c.quad_area > MAX_CARD_FACTOR * area
        if area and c.cut and (c.area < MIN_CUT_CARD_SHARE * area or too_large):
            continue
        if area and not c.cut and not MIN_CARD_SHARE * area < c.quad_area < MAX_CARD_FACTOR * area:
            continue
        out.append(c)
    return out


def _width(corners: np.ndarray) -> float:
    """A quad's short side (the mean of the shorter pair)."""
    sides = side_lengths(corners)
    return float(min(sides[0] + sides[2], sides[1] + sides[3]) / 2)


def _unexplained(
    view: _View, cards: list[_Candidate], min_area: float
) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """Paper not covered by the cards found, in pieces big enough to hold a card.

    Returns the mask (uint8) and the pieces' bounding boxes (x, y, w, h).
    """
    covered = np.zeros(view.light.shape, np.uint8)
    for c in cards:
        cv2.fillConvexPoly(covered, np.rint(c.corners).astype(np.int32), 1)
    covered = cv2.dilate(covered, np.ones(UNEXPLAINED_KERNEL, np.uint8))
    rest = (view.low | view.bright) & (1 - covered)
    rest = cv2.morphologyEx(rest, cv2.MORPH_OPEN, np.ones(UNEXPLAINED_KERNEL, np.uint8))
    contours, _ = cv2.findContours(rest, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    big = [c for c in contours if cv2.contourArea(c) >= min_area]
    mask = np.zeros_like(rest)
    cv2.drawContours(mask, big, -1, 1, cv2.FILLED)
    return mask & rest, [cv2.boundingRect(c) for c in big]


def _symbol_cards(
    view: _View, cards: list[_Candidate], on_card: OnCard | None = None
) -> list[_Candidate]:
    """Cards found from symbol groups not already inside a card (see ``segment_symbols``);
    with ``on_card``, only from groups centred where it may be a card."""
    if cards:
        width = float(np.median([_width(c.corners) for c in cards]))
    else:
        width = max(view.size) / DEFAULT_WIDTH_DIVISOR
    window = max(MIN_INK_WINDOW, int(INK_WINDOW_SHARE * width))
    strength, excess = ink_strength(view.light, view.chroma, view.low, window)
    # ink is printed on paper: the table around and between the cards is none, though thin
    # dark gaps between touching cards look like ink and would join the symbols near them
    count, labels, stats, _ = cv2.connectedComponentsWithStats(1 - view.low)
    wide = stats[:, cv2.CC_STAT_AREA] >= TABLE_REGION_SHARE * width * width
    wide[0] = False  # the paper
    if wide.any():
        table = cv2.dilate(wide[labels].astype(np.uint8), np.ones(UNEXPLAINED_KERNEL, np.uint8))
        strength[table > 0] = 0
    longest = MAX_BLOB_SHARE * max(view.size)
    blobs = find_blobs(
        strength, excess, view.lab[..., 1], view.lab[..., 2], MIN_BLOB_PX, longest, view.low
    )
    grad_x, grad_y = view.grads()
    groups = group_blobs(blobs)
    # a group inside a card is explained by it, unless the card holds other groups too (then
    # it is likely two touching cards taken for one)
    homes: list[list[int]] = [[] for _ in groups]
    if groups and cards:
        centres = [np.array([b.centre for b in group]) for group in groups]
        inside = _inside_each(np.concatenate(centres), np.array([c.corners for c in cards]))
        ends = np.cumsum([len(c) for c in centres])
        homes = [np.flatnonzero(inside[b - len(c) : b].all(axis=0)).tolist()
                 for c, b in zip(centres, ends)]  # fmt: skip
    crowded = {k for k in range(len(cards)) if sum(k in h for h in homes) >= 2}
    # symbols the size of those on the cards already found (within what perspective allows)
    expected = SYMBOL_TO_WIDTH * width if len(cards) >= MIN_CARDS_TO_COMPARE else 0.0
    least, most = (share * expected for share in SYMBOL_LENGTH_RANGE)
    found = []  # per group: its likeliest card (or None), and a function giving others
    searched = np.ones(len(groups), bool)
    if groups and on_card is not None:
        searched = on_card(np.array([np.mean([b.centre for b in g], axis=0) for g in groups]))
    for group, home, wanted in zip(groups, homes, searched):
        if not wanted or (home and not crowded.intersection(home)):
            continue
        if expected and not least < group[0].length < most:
            continue
        # faint edges (white on white): looked for again, weaker
        primary, others = card_hypotheses(group, grad_x, grad_y, fainter=FAINT_EDGE)
        found.append((_hypothesis(group, primary), group, others))
    kept = _verified(view, [first for first, _, _ in found if first is not None], cards)
    # where the likeliest quad is no card and the photo's cards tell their size, the other
    # hypotheses (a neighbour's edge was taken for the card's) are checked, the likeliest
    # passing one kept
    sizes = [c.quad_area for c in cards + kept]
    typical = float(np.median(sizes)) if len(sizes) >= MIN_CARDS_TO_COMPARE else 0.0
    held = {id(c) for c in kept}
    again = []
    for first, group, others in found:
        if not typical or id(first) in held or not _trusted(group):
            continue
        centre = np.mean([b.centre for b in group], axis=0)[None]
        if any(_inside(centre, c.corners)[0] for c in cards + kept):
            continue  # a card found holds it
        options = [_hypothesis(group, hypothesis) for hypothesis in others()]
        again.append(
            [
                c
                for c in options
                if c is not None
                and RETRY_AREA_RANGE[0] * typical < c.quad_area < RETRY_AREA_RANGE[1] * typical
                and not touches_border(c.corners, view.size, SECOND_CHANCE_BORDER_PX)
            ]
        )
    tried = [c for options in again for c in options]
    passed = {id(c) for c in _verified(view, tried, cards + kept, second=True)}
    for options in again:
        kept += [c for c in options if id(c) in passed][:1]
    return kept


def _hypothesis(group: list[Blob], hypothesis: Hypothesis | None) -> _Candidate | None:
    """A candidate card for a symbol group's hypothesis, None when there is none or it is
    likely a shadow (one grey blob and little of a card around it)."""
    if hypothesis is None:
        return None
    quad, seen, cost = hypothesis
    if len(group) == 1 and seen <= SHADOW_SIDES and group[0].excess < MIN_SYMBOL_EXCESS:
        return None
    quad = order_corners(quad)
    area = float(cv2.contourArea(quad))
    return _Candidate(
        quad,
        area,
        area,
        False,
        source=f"symbols{seen}",
        symbols=np.array([b.centre for b in group]),
        cost=cost,
        trusted=_trusted(group),
    )


def _trusted(group: list[Blob]) -> bool:
    """More than one symbol, or one clearly coloured and shaped like a symbol (not a shadow)."""
    blob = group[0]
    return len(group) > 1 or (
        blob.excess >= MIN_SYMBOL_EXCESS and blob.thickness >= MIN_SYMBOL_THICKNESS * blob.length
    )


def _long_side(quad: np.ndarray, card: _Candidate) -> int:
    """0 when the sides 0-1 and 2-3 of ``quad`` are the card's long sides, else 1.

    The card was checked laid out along its longer sides in the work image, or along its
    shorter ones when ``turned``: that direction, not the final quad's side lengths, decides.
    """
    first = long_side_first(card.corners)
    length = first[1] - first[0]
    if card.turned:
        length = first[2] - first[1]
    along_01 = abs(float(np.dot(quad[1] - quad[0], length))) / max(
        float(np.linalg.norm(quad[1] - quad[0])), 1e-6
    )
    along_12 = abs(float(np.dot(quad[2] - quad[1], length))) / max(
        float(np.linalg.norm(quad[2] - quad[1])), 1e-6
    )
    return 0 if along_01 >= along_12 else 1


def find_outlines(image: np.ndarray, on_card: OnCard | None = None) -> list[Outline]:
    """Card outlines in ``image`` ((H, W, 3) uint8 BGR), corners in its pixels.

    Cards that come out small at the work size (many cards in one photo) are looked for again
    on a larger copy, as far as the photo's own resolution allows. ``on_card`` (points in
    ``image``'s pixels -> whether each may lie on a card): symbol groups are searched for
    cards only there (None: everywhere).
    """
    cards, factor = _find(image, WORK_LONG_SIDE, on_card)
    if cards:
        width = float(np.median([_width(c.corners) for c in cards]))
        long_side = min(
            max(image.shape[:2]), MAX_LONG_SIDE, int(WORK_LONG_SIDE * MIN_WIDTH / width)
        )
        if width < MIN_WIDTH and long_side > RELOOK_GAIN * WORK_LONG_SIDE:
            cards, factor = _find(image, long_side, on_card)
    if not cards:
        return []
    quads = np.array([c.corners for c in cards]) / factor
    quads = snap_sides(image, quads, SNAP_PX / factor)
    full = (image.shape[1], image.shape[0])
    outlines = []
    for quad, card in zip(quads, cards):
        quad = order_corners(quad)
        long_side = _long_side(quad, card)
        outlines.append(
            Outline(quad, touches_border(quad, full, BORDER_PX / factor), card.occluded, long_side)
        )
    return outlines


def _two_taken_for_one(cards: list[_Candidate]) -> bool:
    """Whether one of the photo's cards is much larger than the others (``MERGED_FACTOR``):
    two touching cards taken for one."""
    if len(cards) < MIN_CARDS_TO_COMPARE:
        return False
    areas = [c.quad_area for c in cards]
    return max(areas) > MERGED_FACTOR * float(np.median(areas))


def _find(
    image: np.ndarray, long_side: int, on_card: OnCard | None = None
) -> tuple[list[_Candidate], float]:
    """The cards found on a copy of ``image`` with this long side, and the copy's scale."""
    small, factor = resize_long_side(image, long_side)
    on_copy = None if on_card is None else (lambda points: on_card(points / factor))
    view = _View(small)
    width, height = view.size
    areas = (width * height * CARD_AREA_SHARES[0], width * height * CARD_AREA_SHARES[1])
    cards = _select(view, _verified(view, _regions(view, [("otsu", view.bright)], areas)))
    typical = (
        float(np.median([c.quad_area for c in cards])) if cards else areas[0] / UNEXPLAINED_SHARE
    )
    _, boxes = _unexplained(view, cards, max(areas[0], UNEXPLAINED_SHARE * typical))
    if boxes:
        extra: list[_Candidate] = []
        seen: set[bytes] = set()
        for x, y, w, h in boxes:
            x0, y0 = max(0, x - ROI_PAD_PX), max(0, y - ROI_PAD_PX)
            x1, y1 = min(width, x + w + ROI_PAD_PX), min(height, y + h + ROI_PAD_PX)
            roi = (int(x0), int(y0), int(x1 - x0), int(y1 - y0))
            sizes = (max(areas[0], UNEXPLAINED_SHARE * typical) if cards else areas[0], areas[1])
            extra += _regions(view, _cut_masks(view, roi), sizes, roi[:2], seen)
        cards = _select(view, cards + _verified(view, extra))
        _, boxes = _unexplained(view, cards, max(areas[0], UNEXPLAINED_SHARE * typical))
    # paper left unexplained, or a card much larger than the others (two cards taken for one)
    if boxes or _two_taken_for_one(cards):
        cards = _select(view, cards + _symbol_cards(view, cards, on_copy))
    cards = _consistent(cards)
    _lengthen_short(view, cards)
    return cards, factor
