"""Candidate card outlines, made generously: many binarisations of a photo, each region a quad.

Nothing here decides what is a card: every region of plausible size and shape becomes a
candidate, and a model learned from labelled outlines (``cardness``) judges them. The makers:

- the paper score (lightness minus chroma from the photo's white point) at Otsu's level and
  at levels above and below it, so pale tables and dim cards each have a level that parts them;
- the same score against its local mean (cards in shade beside cards in light);
- regions left between edges (cards on white tables, touching cards);
- any of those regions cut at a narrow neck into the cards that touch there (``necks``);
- cards framed from the holes their symbols leave in the paper masks (``symbol_frames``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import cv2
import numpy as np
from setvision.vision.find.necks import cut_at_necks, worth_cutting
from setvision.vision.find.symbol_frames import symbol_frames

if TYPE_CHECKING:
    from setvision.vision.find.outlines import OnCard

#: Regions smaller than this share of the work image are not cards (about 20x13 px at 800).
MIN_AREA_SHARE = 0.0004
#: Regions larger than this share of the work image are not one card.
MAX_AREA_SHARE = 0.5
#: Regions filling less than this share of their convex hull are not one card.
MIN_SOLIDITY = 0.75
#: The most a lamp's tint scales one colour channel against the others.
MAX_TINT = 1.6
#: The photo's white is its brightest pixels above this share of them (grey-level quantile).
WHITE_QUANTILE = 0.9
#: That white is trusted fully when its channels spread at most the first (levels of 255),
#: not at all from the second: a bright patch of several colours is no white paper.
WHITE_SPREAD = (10.0, 20.0)
#: The paper score: lightness less chroma, each weighted by the first, plus the second (levels
#: of 255), so white paper scores high and any coloured or dark table low.
SCORE_WEIGHT, SCORE_OFFSET = 0.8, 50
#: Quads longer than this many times their width, filling less than this share of their region,
#: or with a corner further than this from square (degrees) are no card at any angle of view.
MAX_ASPECT, MIN_FILL, MAX_ANGLE_ERROR = 3.0, 0.7, 45.0
#: Paper-score levels tried above Otsu's (score units, 0-255): its own, and one that parts cards
#: from a pale table.
LEVEL_STEPS = (0, 30)
#: Canny's (low, high) gradient levels for the regions left between edges: strong and faint.
EDGE_LEVELS = ((30, 90), (10, 30))
#: The regions between edges are taken only where the paper score is above Otsu's level less
#: this (score units): paper in shade is kept, a dark table left out.
PALE_DROP = 40
#: A region's hull is simplified to corners within this share of its perimeter.
CORNER_TOLERANCE = 0.03
#: Side of the window of the local mean, as a share of the work image's long side.
LOCAL_WINDOW = 0.08
#: How far above its local mean the paper score must rise (score units).
LOCAL_RISE = 12

#: The paper masks whose holes (a card's print) frame cards from their symbols.
HOLE_MAKERS = ("otsu", "local")
#: A symbol covers about a sixth of its card: a hole of more than this share of the region
#: around it is no symbol.
MAX_HOLE_SHARE = 0.3

#: A card framed from its symbols adds nothing where another candidate is centred within this
#: share of its size (square root of its area) and is within this factor of its size.
SAME_PLACE, SAME_SIZE = 0.25, 1.3

#: Candidates whose corners all lie within this many work pixels of another's are one.
DUPLICATE_PX = 2.5

MAKERS = ("otsu", "level", "local", "edges", "symbols", "previous")
SYMBOLS = MAKERS.index("symbols")
PREVIOUS = MAKERS.index("previous")
#: The paper mask kept to judge what the cards found leave unexplained is this much smaller.
PAPER_SHRINK = 4
#: Printed ink (a symbol's colour) stands this far above the paper's typical chroma (levels of
#: 255): a blank sheet, a bed or a wall shows none, a missed card does.
INK_RISE = 25


@dataclass(frozen=True)
class Maps:
    """The per-pixel maps of a work image that makers and features share."""

    image: np.ndarray  # BGR, uint8
    light: np.ndarray  # grey level, uint8
    chroma: np.ndarray  # spread of the white-balanced channels, uint8
    score: np.ndarray  # paper score, uint8
    otsu: float  # Otsu's level of the score
    gradient: np.ndarray  # lightness gradient magnitude, float32
    #: score, light, chroma and the darkest light within a pixel (print is darker than its
    #: paper under any lamp; a thin outline is kept however sparsely a patch is sampled) as
    #: one 4-channel image
    stack: np.ndarray

    def _shrunk(self, mask: np.ndarray) -> np.ndarray:
        """``mask`` (work pixels) ``PAPER_SHRINK`` times smaller, each block averaged."""
        height, width = mask.shape
        size = (max(1, width // PAPER_SHRINK), max(1, height // PAPER_SHRINK))
        return cv2.resize(mask, size, interpolation=cv2.INTER_AREA)

    def paper(self) -> np.ndarray:
        """Where the score is paper's (above Otsu's level), ``PAPER_SHRINK`` times smaller."""
        small = self._shrunk(self.score)
        return (small > self.otsu).astype(np.uint8)

    def ink(self) -> np.ndarray:
        """Where coloured ink is printed (chroma ``INK_RISE`` above the paper's median), as the
        paper mask's blocks holding any: thin outlines of open symbols count too."""
        sampled = self.chroma[::PAPER_SHRINK, ::PAPER_SHRINK][
            self.score[::PAPER_SHRINK, ::PAPER_SHRINK] > self.otsu
        ]
        level = (float(np.median(sampled)) if sampled.size else 0.0) + INK_RISE
        _, ink = cv2.threshold(self.chroma, min(level, 254.0), 255, cv2.THRESH_BINARY)
        return (self._shrunk(ink) > 0).astype(np.uint8)


@dataclass
class Candidate:
    """A region taken for a possible card: its quad (work pixels) and how it was made."""

    quad: np.ndarray  # (4, 2) float32, clockwise from the top-left
    region_area: float
    hull_area: float
    maker: int  # index into MAKERS
    #: what the previous finder knew of its outlines: another card covers part of it, and
    #: which sides are the card's long ones (judged from its symbols)
    occluded: bool = False
    long_side: int | None = None


def _white_gains(image: np.ndarray, grey: np.ndarray) -> np.ndarray:
    """Per-channel gains that make this photo's white neutral: its brightest tenth (the cards'
    paper) averaged, trusted only as far as that tenth is one even colour and within what a
    lamp does to white."""
    hist = cv2.calcHist([grey], [0], None, [256], [0, 256]).ravel().cumsum()
    level = int(np.searchsorted(hist, WHITE_QUANTILE * hist[-1]))
    bright = (grey >= level).astype(np.uint8)
    mean, spread = cv2.meanStdDev(image, mask=bright)
    mean, spread = mean.ravel(), spread.ravel()
    full, none = WHITE_SPREAD
    trust = float(np.clip((none - spread.max()) / (none - full), 0.0, 1.0))
    gains = np.clip(mean.mean() / np.maximum(mean, 1.0), 1 / MAX_TINT, MAX_TINT)
    return 1 + trust * (gains - 1)


def make_maps(image: np.ndarray) -> Maps:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    gains = _white_gains(image, grey)
    balanced = cv2.transform(image, np.diag(gains).astype(np.float32))
    channels = cv2.split(balanced)
    chroma = cv2.subtract(cv2.max(cv2.max(*channels[:2]), channels[2]),
                          cv2.min(cv2.min(*channels[:2]), channels[2]))  # fmt: skip
    score = cv2.addWeighted(grey, SCORE_WEIGHT, chroma, -SCORE_WEIGHT, SCORE_OFFSET)
    score = cv2.GaussianBlur(score, (3, 3), 0)
    otsu, _ = cv2.threshold(score, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    # integer derivatives and numpy's root: OpenCV's float Sobel and magnitude differ in the
    # last bits with how the work is split between threads, and features must be repeatable
    gx = cv2.Sobel(grey, cv2.CV_16S, 1, 0, ksize=3).astype(np.float32)
    gy = cv2.Sobel(grey, cv2.CV_16S, 0, 1, ksize=3).astype(np.float32)
    gradient = np.sqrt(gx * gx + gy * gy) * np.float32(0.125)
    darkest = cv2.erode(grey, np.ones((3, 3), np.uint8))
    stack = cv2.merge([score, grey, chroma, darkest])
    return Maps(image, grey, chroma, score, float(otsu), gradient, stack)


def _masks(maps: Maps) -> list[tuple[int, np.ndarray, int]]:
    """(maker, binary mask, pixels the mask's regions were shrunk by)."""
    masks = []
    for step in LEVEL_STEPS:
        level = float(np.clip(maps.otsu + step, 1, 254))
        _, mask = cv2.threshold(maps.score, level, 255, cv2.THRESH_BINARY)
        masks.append((MAKERS.index("otsu" if step == 0 else "level"), mask, 0))
    window = max(3, int(LOCAL_WINDOW * max(maps.score.shape)) | 1)  # OpenCV needs 3 or more
    local = cv2.adaptiveThreshold(
        maps.score, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, window, -LOCAL_RISE
    )
    masks.append((MAKERS.index("local"), local, 0))
    _, pale = cv2.threshold(maps.score, max(1.0, maps.otsu - PALE_DROP), 255, cv2.THRESH_BINARY)
    for (low, high), grow in zip(EDGE_LEVELS, (1, 2)):
        edges = cv2.dilate(cv2.Canny(maps.light, low, high), np.ones((2 * grow + 1,) * 2, np.uint8))
        masks.append((MAKERS.index("edges"), cv2.bitwise_and(pale, cv2.bitwise_not(edges)), grow))
    return masks


def _grown(quad: np.ndarray, pixels: float) -> np.ndarray:
    """The quad with every side moved out by about ``pixels``."""
    if pixels <= 0:
        return quad
    centre = quad.mean(axis=0)
    radius = np.linalg.norm(quad - centre, axis=1).mean()
    return (centre + (quad - centre) * (1 + 1.4 * pixels / max(radius, 1.0))).astype(np.float32)


def _quad(contour: np.ndarray) -> np.ndarray:
    """The region's quadrilateral (corners in any rotation): a four-corner approximation of
    its hull, else its smallest enclosing rectangle."""
    hull = cv2.convexHull(contour)
    approx = cv2.approxPolyDP(hull, CORNER_TOLERANCE * cv2.arcLength(hull, True), True)
    if len(approx) == 4:
        return approx.reshape(4, 2).astype(np.float32)
    return cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float32)


def _clockwise(quads: np.ndarray) -> np.ndarray:
    """Quads (N, 4, 2) with corners clockwise (y down) from the one nearest the top-left."""
    centre = quads.mean(axis=1, keepdims=True)
    angle = np.arctan2(quads[..., 1] - centre[..., 1], quads[..., 0] - centre[..., 0])
    order = np.argsort(angle, axis=1)
    quads = np.take_along_axis(quads, order[..., None], axis=1)
    first = np.argmin(quads.sum(axis=2), axis=1)
    roll = (np.arange(4)[None, :] + first[:, None]) % 4
    return np.take_along_axis(quads, roll[..., None], axis=1)


def _areas(quads: np.ndarray) -> np.ndarray:
    """Each quad's (N, 4, 2) area."""
    x, y = quads[..., 0], quads[..., 1]
    return 0.5 * np.abs((x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y).sum(axis=1))


def _plausible(quads: np.ndarray, region_areas: np.ndarray) -> np.ndarray:
    """Which quads (N, 4, 2, clockwise) could be a card seen from any angle."""
    d = np.roll(quads, -1, axis=1) - quads
    sides = np.sqrt((d * d).sum(axis=2))
    areas = _areas(quads)
    pair_a, pair_b = sides[:, 0] + sides[:, 2], sides[:, 1] + sides[:, 3]
    before, after = -np.roll(d, 1, axis=1), d
    cosines = (before * after).sum(axis=2) / (
        np.linalg.norm(before, axis=2) * np.linalg.norm(after, axis=2) + 1e-9
    )
    angle_error = np.abs(np.degrees(np.arccos(np.clip(cosines, -1, 1))) - 90).max(axis=1)
    return (
        (areas > 0)
        & (region_areas >= MIN_FILL * areas)
        & (np.maximum(pair_a, pair_b) <= MAX_ASPECT * np.maximum(np.minimum(pair_a, pair_b), 1))
        & (angle_error <= MAX_ANGLE_ERROR)
    )


def _symbol_holes(contours: Sequence[np.ndarray], hierarchy: np.ndarray) -> list[np.ndarray]:
    """The holes (``RETR_CCOMP``) small enough against the region around them to be printed
    symbols: a card's whole blank middle, left out of a local mask, is not."""
    holes: list[np.ndarray] = []
    parent_areas: dict[int, float] = {}
    for index in np.flatnonzero(hierarchy[:, 3] >= 0):
        parent = int(hierarchy[index, 3])
        if parent not in parent_areas:
            parent_areas[parent] = cv2.contourArea(contours[parent])
        if cv2.contourArea(contours[index]) <= MAX_HOLE_SHARE * parent_areas[parent]:
            holes.append(contours[index])
    return holes


def _centres_and_sizes(quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each quad's (N, 4, 2) centre and square root of its area."""
    return quads.mean(axis=1), np.sqrt(_areas(quads))


def _new_places(frames: list[np.ndarray], quads: list[np.ndarray]) -> list[np.ndarray]:
    """The ``frames`` that no quad of ``quads`` nor an earlier frame already proposes: a frame
    centred within ``SAME_PLACE`` of one's size from another, of about its size, adds nothing."""
    kept: list[np.ndarray] = []
    if not frames:
        return kept
    centres, sizes = _centres_and_sizes(np.array(frames, np.float32))
    if quads:
        old_centres, old_sizes = _centres_and_sizes(np.array(quads, np.float32))
    else:
        old_centres, old_sizes = np.zeros((0, 2), np.float32), np.zeros(0, np.float32)
    for frame, centre, size in zip(frames, centres, sizes):
        near = np.linalg.norm(old_centres - centre, axis=1) < SAME_PLACE * size
        alike = np.abs(np.log(np.maximum(old_sizes, 1e-6) / max(size, 1e-6))) < np.log(SAME_SIZE)
        if not (near & alike).any():
            kept.append(frame)
            old_centres = np.vstack([old_centres, centre[None]])
            old_sizes = np.append(old_sizes, size)
    return kept


def find_candidates(maps: Maps) -> list[Candidate]:
    """Every region of every maker, and every card framed from symbols, that could be a card by
    size, solidity and shape."""
    height, width = maps.score.shape
    low, high = MIN_AREA_SHARE * width * height, MAX_AREA_SHARE * width * height
    # a region of area ``low`` has a perimeter of at least 4 sqrt(low) pixels
    shortest = int(4 * np.sqrt(low))
    quads, regions, hulls, makers = [], [], [], []
    holes: list[np.ndarray] = []
    for maker, mask, shrunk in _masks(maps):
        contours, hierarchy = cv2.findContours(mask, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_NONE)
        if hierarchy is None:
            continue
        outer = hierarchy[0][:, 3] < 0
        if MAKERS[maker] in HOLE_MAKERS:
            holes += _symbol_holes(contours, hierarchy[0])
        for index in np.flatnonzero(outer):
            contour = contours[index]
            if len(contour) < shortest:
                continue
            area = cv2.contourArea(contour)
            if not low <= area <= high:
                continue
            hull_area = cv2.contourArea(cv2.convexHull(contour))
            if hull_area <= 0:
                continue
            shapes = [(contour, area, hull_area)]
            if area >= 2 * low and worth_cutting(area, hull_area):  # touching cards, cut apart
                shapes += [piece for piece in cut_at_necks(contour, area) if low <= piece[1]]
            for shape, shape_area, shape_hull in shapes:
                if shape_area >= MIN_SOLIDITY * shape_hull:
                    quads.append(_grown(_quad(shape), shrunk))
                    regions.append(shape_area)
                    hulls.append(shape_hull)
                    makers.append(maker)
    for quad in _new_places(symbol_frames(holes, (width, height)), quads):
        area = float(cv2.contourArea(quad))
        if low <= area <= high:
            quads.append(quad)
            regions.append(area)
            hulls.append(area)
            makers.append(SYMBOLS)
    if not quads:
        return []
    ordered = _clockwise(np.array(quads, np.float32))
    keep = _plausible(ordered, np.array(regions))
    return [
        Candidate(ordered[i], float(regions[i]), float(hulls[i]), makers[i])
        for i in np.flatnonzero(keep)
    ]


def previous_candidates(image: np.ndarray, on_card: OnCard | None = None) -> list[Candidate]:
    """The outlines of the previous, hand-set finder (symbol groups, split piles, cut paper):
    slower, asked only where the fast makers may have missed a card. With ``on_card`` (points
    in ``image``'s pixels -> whether each may lie on a card), it searches symbol groups only
    there and gives only the outlines centred there."""
    from setvision.vision.find.outlines import find_outlines

    candidates = []
    for outline in find_outlines(image, on_card):
        quad = outline.corners_xy.astype(np.float32)
        area = float(cv2.contourArea(quad))
        if on_card is not None and not on_card(quad.mean(axis=0)[None])[0]:
            continue
        if area > 0:
            candidates.append(
                Candidate(quad, area, area, PREVIOUS, outline.occluded, outline.long_side)
            )
    return candidates


def dedupe(candidates: list[Candidate]) -> list[Candidate]:
    """One of each group of candidates whose corners all lie within ``DUPLICATE_PX``."""
    kept: list[Candidate] = []
    keys: set[tuple[int, ...]] = set()
    for candidate in sorted(candidates, key=lambda c: -c.region_area / max(c.hull_area, 1.0)):
        key = tuple(np.round(candidate.quad.ravel() / DUPLICATE_PX).astype(int).tolist())
        if key not in keys:
            keys.add(key)
            kept.append(candidate)
    return kept
