"""Finding cards from their symbols: ink blobs grouped into cards, then edges searched around them.

This finds cards whose outlines do not come out as regions: cards on a white or pale table
whose edges fade out, cards touching each other, cards crossed by shadows, cards partly covered
by others. SET symbols are centred on the card, span about 0.71 of its width (measured over
every source) and are stacked along its length 0.43 widths apart, so a group of 1-3 alike
symbols predicts the card's centre, orientation and size. Each side is then looked for as the
first straight edge out from the symbols, parallel to the prediction; a side that cannot be
seen is mirrored from the opposite one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np
from setvision.vision.find.fit import CARD_RATIO

#: A symbol's length (across the card) over the card's width, and its thickness over length.
SYMBOL_TO_WIDTH = 0.71
SYMBOL_SHAPE = 0.49
#: Ink stronger than this (lightness units of darkness plus chroma) is a symbol.
INK = 18.0
#: Symbols are coloured: their chroma exceeds the paper's around them by at least this much.
MIN_COLOUR = 0.0
#: A side counts as seen when this share of points along it steps in lightness; fainter edges,
#: down to LOW, are weighed as evidence only when the first guess fails.
SEEN, LOW = 0.5, 0.35

# Ink blobs.
#: Pixels are compared with the paper within a window at least this wide (work pixels, odd).
MIN_PAPER_WINDOW = 5
#: Ink is closed over this window (work pixels) so a symbol's thin outline and stripes join.
INK_CLOSE = (3, 3)
#: A blob's ring, where its share of paper is measured, is what dilating it over this window
#: adds (work pixels: 2 wide).
RING_WINDOW = (5, 5)

# Grouping blobs into cards.
#: A symbol's thickness over its length lies in this range (ratio), and at least this share of
#: the ring around it is paper.
MIN_SYMBOL_SHAPE, MAX_SYMBOL_SHAPE = 0.25, 0.8
MIN_ON_PAPER = 0.4
#: Two symbols of one card: the longer under this many times the shorter, their axes under this
#: many degrees apart, their colours under this far apart (Lab a, b units; the grouping cost
#: counts colour difference in shares of it).
MAX_LENGTH_RATIO = 1.35
MAX_AXIS_TURN = 15
MAX_COLOUR_DIFF = 25
#: ...and stacked: offset along their axis by under this share of the shorter's length; apart
#: across it by over this share of the shorter's length or of the thinner's thickness (the
#: smaller), and by under this share of the longer's length.
MAX_STACK_SLIP = 0.35
MIN_GAP_LENGTH, MIN_GAP_THICKNESS = 0.42, 0.9
MAX_GAP_LENGTH = 0.85
#: Symbols are stacked about this many of their thicknesses apart, centre to centre (the
#: grouping cost counts the departure from it).
SYMBOL_PITCH = 1.2
#: A card shows 1 to this many symbols (the game's rule).
MAX_SYMBOLS = 3
#: Three symbols' centres stray from one line by under this share of the shorter symbol's
#: length (root mean square).
IN_LINE = 0.25

# The card a group predicts.
#: The symbols' stacking direction is taken for the long sides' when within this many degrees
#: of square to their axis.
MAX_STACK_TURN = 35
#: The foreshortening judged from the symbols' proportions is held within this range (ratio).
MIN_SQUASH, MAX_SQUASH = 0.6, 1.25
#: Neighbouring sides make a corner only when the sine of the angle between them is this or more.
MIN_CORNER_SINE = 0.2

# Searching for edges.
#: The default step an edge must show (lightness levels per pixel).
STRONG_STEP = 4.0
#: A line's step may lie this far either side of it (work pixels).
STEP_SLACK = 1.0
#: A line's points span this share of its half length either way from its middle.
LINE_SPAN = 0.7
#: A line is scored only when at least this share of its points lies in the image.
MIN_INSIDE = 0.6
#: Points per line in the coarse and the fine search (count).
COARSE_SAMPLES, FINE_SAMPLES = 11, 15
#: The coarse search tries at least this many distances per side (count).
MIN_DISTANCES = 3
#: The coarse search's turns of a side from its predicted direction (radians).
COARSE_TURNS = np.radians(np.arange(-10, 10.1, 2.5))
#: The fine search's steps around a coarse edge: distance (pixels) and turn (radians).
FINE_STEPS = np.array([-0.5, 0.0, 0.5])
FINE_TURNS = np.radians([-1.25, 0.0, 1.25])
#: A side's search starts this share of the card's width beyond the symbols (long sides: their
#: ends; short sides: the outermost symbol's edge), ...
LONG_SIDE_GAP, SHORT_SIDE_GAP = 0.06, 0.08
#: ...and reaches at least this many work pixels further, and out to this share of the side's
#: predicted distance.
MIN_REACH = 2
FAR_REACH = 1.4
#: A side's first clear edge scores at least this share of the side's best.
CLEAR_SHARE = 0.7
#: Other edges worth refining: peaks more than this many distance steps (work pixels) from the
#: pick and from each other, at most this many per side.
PEAK_GAP = 2
MORE_EDGES = 2

# Placing the sides.
#: A quad is kept only when the symbols span this range of its width (share), and its length
#: over width is within this range of the card's foreshortened proportions (share).
MIN_SPAN, MAX_SPAN = 0.55, 0.88
MIN_PROPORTION, MAX_PROPORTION = 0.75, 1.35
#: First guess: opposite sides seen at distances differing by over this share of the nearer's,
#: the one further from the prediction counts as unseen.
FIRST_UNEVEN = 0.2
#: A first guess needs an edge seen in both pairs of opposite sides, or this many sides seen.
MIN_SIDES_SEEN = 2
#: Other quads: opposite sides at distances differing by at most this share of the nearer's.
PAIR_UNEVEN = 0.25
#: How far, as a log ratio, a pair of sides may plausibly lie from the prediction: long sides,
#: short sides.
LONG_SPREAD, SHORT_SPREAD = 0.25, 0.35
#: A pair placement's costs: per share of the spread it lies off the prediction; per this many
#: degrees between its two sides; per edge passed over for one further out.
OFF_COST, TURN_COST_DEGREES, PASSED_COST = 0.5, 20, 0.15
#: Placements tried per pair of opposite sides, and other quads given at most (count).
PAIR_OPTIONS, MAX_ALTERNATIVES = 3, 3
#: Other quads need summed side scores (about the sides seen) of this or more, and differ from
#: the first guess by this many work pixels or more at some corner.
MIN_EVIDENCE = 1.5
SAME_QUAD = 2
#: Other quads' cost starts this far above the first guess's (0).
ALTERNATIVE_COST = 1.0


@dataclass(frozen=True)
class Blob:
    """A connected patch of ink with its principal axis and extents."""

    centre: np.ndarray  # (2,) x, y: the middle of its extents
    axis: np.ndarray  # unit vector along the long axis
    length: float  # extent along the axis
    thickness: float  # extent across it
    colour: np.ndarray  # mean Lab a, b
    excess: float  # mean chroma above the paper around it
    on_paper: float = 1.0  # share of paper in a thin ring around it


def ink_strength(
    lightness: np.ndarray, chroma: np.ndarray, paper: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """How much darker or more coloured each pixel is than the paper around it (float32).

    Returns the total and its colour part: chroma above the least coloured paper within
    ``size`` pixels (the table's colour must not count as paper, or a card's edge on a dark
    cloth would look like coloured ink).
    """
    k = max(MIN_PAPER_WINDOW, size | 1)
    kernel = np.ones((k, k), np.uint8)
    dark = cv2.morphologyEx(lightness, cv2.MORPH_BLACKHAT, kernel).astype(np.float32)
    base = cv2.erode(np.where(paper > 0, chroma, np.float32(255)), kernel)
    excess = np.maximum(chroma - base, 0)
    return dark + excess, excess


def find_blobs(
    strength: np.ndarray,
    excess: np.ndarray,
    a_chan: np.ndarray,
    b_chan: np.ndarray,
    min_area: int,
    max_length: float,
    paper: np.ndarray | None = None,
) -> list[Blob]:
    """Connected ink blobs with their principal axis and extents (vectorised over blobs).

    With a ``paper`` mask, each blob's ``on_paper`` tells how much of a thin ring around it is
    paper: a symbol is printed on a card, while a patch of table seen between cards is not.
    """
    ink = (strength > INK).astype(np.uint8)
    ink = cv2.morphologyEx(ink, cv2.MORPH_CLOSE, np.ones(INK_CLOSE, np.uint8))
    n, labels = cv2.connectedComponents(ink)
    if n <= 1:
        return []
    on_paper = np.ones(n)
    if paper is not None:
        grown = cv2.dilate(labels.astype(np.float32), np.ones(RING_WINDOW, np.uint8))
        ring = (labels == 0) & (grown > 0)
        owner = grown[ring].astype(np.int64)
        counts = np.bincount(owner, minlength=n)
        on_paper = np.bincount(owner, weights=paper[ring] > 0, minlength=n) / np.maximum(counts, 1)
    keep = np.bincount(labels.ravel(), minlength=n) >= min_area
    keep[0] = False
    if not keep.any():
        return []
    ys, xs = np.nonzero(keep[labels])
    lab = labels[ys, xs]
    order = np.argsort(lab, kind="stable")
    ys, xs, lab = ys[order], xs[order], lab[order]
    _, starts, counts = np.unique(lab, return_index=True, return_counts=True)
    x, y = xs.astype(np.float64), ys.astype(np.float64)

    def mean(v: np.ndarray) -> np.ndarray:
        return np.add.reduceat(v, starts) / counts

    mx, my = mean(x), mean(y)
    dx, dy = x - np.repeat(mx, counts), y - np.repeat(my, counts)
    theta = 0.5 * np.arctan2(2 * mean(dx * dy), mean(dx * dx) - mean(dy * dy))
    ux, uy = np.cos(theta), np.sin(theta)
    along = dx * np.repeat(ux, counts) + dy * np.repeat(uy, counts)
    across = -dx * np.repeat(uy, counts) + dy * np.repeat(ux, counts)
    a_hi, a_lo = np.maximum.reduceat(along, starts), np.minimum.reduceat(along, starts)
    c_hi, c_lo = np.maximum.reduceat(across, starts), np.minimum.reduceat(across, starts)
    amid, cmid = (a_hi + a_lo) / 2, (c_hi + c_lo) / 2
    cx = mx + amid * ux - cmid * uy
    cy = my + amid * uy + cmid * ux
    ex = mean(excess[ys, xs].astype(np.float64))
    ca = mean(a_chan[ys, xs].astype(np.float64))
    cb = mean(b_chan[ys, xs].astype(np.float64))
    size = np.maximum(a_hi - a_lo, c_hi - c_lo) + 1
    return [
        Blob(
            np.array([cx[i], cy[i]]),
            np.array([ux[i], uy[i]]),
            float(a_hi[i] - a_lo[i] + 1),
            float(c_hi[i] - c_lo[i] + 1),
            np.array([ca[i], cb[i]]),
            float(ex[i]),
            float(on_paper[lab[starts[i]]]),
        )
        for i in range(len(starts))
        if size[i] <= max_length
    ]


def group_blobs(blobs: list[Blob]) -> list[list[Blob]]:
    """Blobs that look like the 1-3 symbols of one card: alike, parallel, stacked side by side,
    and lying on paper."""
    cand = [
        b
        for b in blobs
        if MIN_SYMBOL_SHAPE <= b.thickness / b.length <= MAX_SYMBOL_SHAPE
        and b.excess >= MIN_COLOUR
        and b.on_paper >= MIN_ON_PAPER
    ]
    n = len(cand)
    if n == 0:
        return []
    centre = np.array([b.centre for b in cand])
    axis = np.array([b.axis for b in cand])
    length = np.array([b.length for b in cand])
    thickness = np.array([b.thickness for b in cand])
    colour = np.array([b.colour for b in cand])
    d = centre[None, :, :] - centre[:, None, :]
    along = np.abs((d * axis[:, None, :]).sum(-1))
    perp = np.abs(d[..., 0] * -axis[:, None, 1] + d[..., 1] * axis[:, None, 0])
    lmin = np.minimum(length[:, None], length[None, :])
    lmax = np.maximum(length[:, None], length[None, :])
    tmin = np.minimum(thickness[:, None], thickness[None, :])
    # symbols are 0.43 card widths apart, about 1.2 of their thickness (both shrink alike
    # when the card is seen at a slant along its length)
    linked = (
        (lmax / lmin < MAX_LENGTH_RATIO)
        & (np.abs(axis @ axis.T) > np.cos(np.radians(MAX_AXIS_TURN)))
        & (np.linalg.norm(colour[:, None] - colour[None, :], axis=-1) < MAX_COLOUR_DIFF)
        & (along < MAX_STACK_SLIP * lmin)
        & (perp > np.minimum(MIN_GAP_LENGTH * lmin, MIN_GAP_THICKNESS * tmin))
        & (perp < MAX_GAP_LENGTH * lmax)
    )
    np.fill_diagonal(linked, False)
    # join the most alike pairs first, never beyond three symbols or off a straight line
    cost = (
        np.abs(np.log(lmax / lmin))
        + np.linalg.norm(colour[:, None] - colour[None, :], axis=-1) / MAX_COLOUR_DIFF
        + along / lmin
        + np.abs(perp / (SYMBOL_PITCH * tmin) - 1)
    )
    label = np.arange(n)
    for flat in np.argsort(np.where(linked, cost, np.inf), axis=None):
        i, j = divmod(int(flat), n)
        if not linked[i, j]:
            break
        if label[i] == label[j]:
            continue
        members = np.nonzero((label == label[i]) | (label == label[j]))[0]
        if len(members) > MAX_SYMBOLS or not _in_line(centre[members], lmin[i, j]):
            continue
        label[members] = label[i]
    return [[cand[i] for i in np.nonzero(label == g)[0]] for g in np.unique(label)]


@dataclass(frozen=True)
class CardFrame:
    """Where a group of symbols puts its card: the centre, the outward normals of its sides
    (long, short, long, short), how far out each pair lies along its normal, the card's size
    and the foreshortening along its length (judged from the symbols' proportions)."""

    centre: np.ndarray
    normals: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    expect: tuple[float, float]
    across_scale: float  # a long side's distance along its normal, per unit of card width
    symbol_length: float
    width: float
    card_length: float
    squash: float


def card_frame(group: list[Blob]) -> CardFrame:
    """The card a symbol group predicts: its short sides run along the symbols' axis, its long
    sides along the line through the symbols (seen at a slant, a card is a parallelogram)."""
    centres = np.array([b.centre for b in group])
    centre = centres.mean(axis=0)
    u = group[0].axis.copy()
    for b in group[1:]:
        u += b.axis if b.axis @ u > 0 else -b.axis
    u /= np.linalg.norm(u)
    v = np.array([-u[1], u[0]])
    if len(group) > 1:  # the stacking direction, when the symbols show it
        ends = centres[np.argsort(centres @ v)]
        stack = ends[-1] - ends[0]
        stack /= np.linalg.norm(stack)
        if stack @ v > np.cos(np.radians(MAX_STACK_TURN)):
            v = stack
    n_long = np.array([-v[1], v[0]])  # normal of the long sides (which run along v)
    n_long *= np.sign(n_long @ u)
    n_short = np.array([-u[1], u[0]])  # normal of the short sides (which run along u)
    n_short *= np.sign(n_short @ v)
    length = float(np.mean([b.length for b in group]))
    width = length / SYMBOL_TO_WIDTH
    thickness = float(np.mean([b.thickness for b in group]))
    squash = float(np.clip(thickness / length / SYMBOL_SHAPE, MIN_SQUASH, MAX_SQUASH))
    card_length = CARD_RATIO * width * squash
    across_scale = abs(float(u @ n_long))
    return CardFrame(
        centre, (n_long, n_short, -n_long, -n_short),
        (across_scale * width / 2, card_length / 2),
        across_scale, length, width, card_length, squash,
    )  # fmt: skip


def corners_of(centre: np.ndarray, lines: list[tuple[np.ndarray, float]]) -> np.ndarray | None:
    """The quad bounded by four lines, each (outward normal, distance from ``centre``), in
    order round the card; None when two neighbours are near parallel."""
    corners = []
    for k in range(4):
        (n1, d1), (n2, d2) = lines[k - 1], lines[k]
        m = np.array([n1, n2])
        if abs(np.linalg.det(m)) < MIN_CORNER_SINE:
            return None
        corners.append(centre + np.linalg.solve(m, np.array([d1, d2])))
    return np.array(corners, np.float32)


def predicted_quad(frame: CardFrame) -> np.ndarray | None:
    """The card where its symbols alone put it, no edge looked at."""
    return corners_of(frame.centre, [(n, frame.expect[k % 2]) for k, n in enumerate(frame.normals)])


def _in_line(points: np.ndarray, size: float) -> bool:
    """Whether points lie along one straight line (within ``IN_LINE`` of ``size``)."""
    if len(points) < 3:
        return True
    centred = points - points.mean(axis=0)
    _, values, _ = np.linalg.svd(centred, full_matrices=False)
    return float(values[-1]) / np.sqrt(len(points)) < IN_LINE * size


@dataclass(frozen=True)
class _Lines:
    """Lightness steps sampled along lines (sides, distances, angles, points): the strongest
    rise and fall across each point (a pixel either way counts, so a thin gap between touching
    cards is seen as well), and whether the point lies in the image."""

    highest: np.ndarray
    lowest: np.ndarray
    inside: np.ndarray

    def scores(self, strong: float) -> np.ndarray:
        """Each line's share of points stepping by ``strong`` per pixel or more, all the same
        way (0 for lines mostly outside the image)."""
        rise = np.minimum(np.maximum(self.highest, 0), strong) * self.inside
        fall = np.minimum(np.maximum(-self.lowest, 0), strong) * self.inside
        valid = self.inside.sum(-1)
        score = np.maximum(rise.sum(-1), fall.sum(-1)) / (strong * np.maximum(valid, 1))
        return score * (valid >= MIN_INSIDE * self.inside.shape[-1])


def _sample_lines(
    grad_x: np.ndarray,
    grad_y: np.ndarray,
    centre: np.ndarray,
    normals: np.ndarray,
    dist: np.ndarray,
    angles: np.ndarray,
    halves: np.ndarray,
    samples: int,
) -> _Lines:
    """Lines out from ``centre`` for several sides at once (one call: numpy's cost per call,
    not per point, dominates at these sizes). Side k's lines lie at distances ``dist[k]``,
    their normal ``normals[k]`` turned by each of ``angles[k]``, with ``samples`` points
    within ``halves[k]`` of their middle."""
    h, w = grad_x.shape
    along = (_unit_steps(samples)[None, :] * halves[:, None])[None, :, None, None, :]
    cos, sin = np.cos(angles), np.sin(angles)
    nx = (normals[:, :1] * cos - normals[:, 1:] * sin)[None, :, None, :, None]
    ny = (normals[:, :1] * sin + normals[:, 1:] * cos)[None, :, None, :, None]
    # the three lines a pixel apart (r - STEP_SLACK, r, r + STEP_SLACK) on a first axis
    r = (dist[None] + np.array([-STEP_SLACK, 0.0, STEP_SLACK])[:, None, None])[..., None, None]
    px = centre[0] + r * nx - along * ny
    py = centre[1] + r * ny + along * nx
    inside = ((px >= 0) & (px <= w - 1) & (py >= 0) & (py <= h - 1)).all(axis=0)
    xi = np.minimum(np.maximum(np.rint(px).astype(np.int32), 0), w - 1)  # np.clip: slower
    yi = np.minimum(np.maximum(np.rint(py).astype(np.int32), 0), h - 1)
    flat = yi * w + xi  # np.take on the flat array: the same pixels, gathered faster
    steps = np.take(grad_x.reshape(-1), flat) * nx + np.take(grad_y.reshape(-1), flat) * ny
    return _Lines(
        np.maximum(np.maximum(steps[0], steps[1]), steps[2]),
        np.minimum(np.minimum(steps[0], steps[1]), steps[2]),
        inside,
    )


@functools.cache
def _unit_steps(samples: int) -> np.ndarray:
    """Where a line's ``samples`` points lie along it, as shares of its half length."""
    steps = np.linspace(-LINE_SPAN, LINE_SPAN, samples)
    steps.flags.writeable = False
    return steps


Edge = tuple[float, float, float]  # distance from the centre, angle (radians), score


@dataclass(frozen=True)
class _SideSearch:
    """The coarse search for the four sides' edges around a centre, on a photo's lightness
    gradients: each side's distances and sampled lines."""

    grad_x: np.ndarray
    grad_y: np.ndarray
    centre: np.ndarray
    normals: np.ndarray  # (4, 2)
    halves: np.ndarray  # (4,)
    dists: list[np.ndarray]
    lines: _Lines  # distances padded to the longest side's

    def scores(self, strong: float) -> list[np.ndarray]:
        """Each side's line scores (distances, angles) at step strength ``strong``."""
        score = self.lines.scores(strong)
        return [s[: len(d)] for s, d in zip(score, self.dists)]

    def refine(self, wanted: list[tuple[int, int, float]], strong: float) -> list[Edge]:
        """The best nearby line (a finer search) for each (side, distance index, angle)
        wanted."""
        if not wanted:
            return []
        sides = np.array([k for k, _, _ in wanted])
        dist = np.array([self.dists[k][i] + FINE_STEPS for k, i, _ in wanted])
        angles = np.array([angle + FINE_TURNS for _, _, angle in wanted])
        fine = _sample_lines(
            self.grad_x, self.grad_y, self.centre, self.normals[sides], dist, angles,
            self.halves[sides], FINE_SAMPLES,
        ).scores(strong)  # fmt: skip
        edges = []
        for row, d, a in zip(fine, dist, angles):
            i, k = np.unravel_index(int(np.argmax(row)), row.shape)
            edges.append((float(d[i]), float(a[k]), float(row[i, k])))
        return edges


def _side_search(
    grad_x: np.ndarray,
    grad_y: np.ndarray,
    centre: np.ndarray,
    normals: np.ndarray,
    reaches: list[tuple[float, float]],
    halves: np.ndarray,
) -> _SideSearch:
    """Lines out from the centre near-parallel to each side (within 10 degrees), at every
    pixel of distance within its reach."""
    dists = [
        np.linspace(d_min, d_max, max(MIN_DISTANCES, int(round(d_max - d_min)) + 1))
        for d_min, d_max in reaches
    ]
    longest = max(len(d) for d in dists)
    padded = np.array([np.pad(d, (0, longest - len(d)), mode="edge") for d in dists])
    turns = np.broadcast_to(COARSE_TURNS, (len(dists), len(COARSE_TURNS)))
    lines = _sample_lines(grad_x, grad_y, centre, normals, padded, turns, halves, COARSE_SAMPLES)
    return _SideSearch(grad_x, grad_y, centre, normals, halves, dists, lines)


def _side_picks(best: np.ndarray) -> tuple[int, list[int]]:
    """Which distances to refine for one side, given each distance's best score: the first
    clear edge (a neighbour's edge lies further out), or the strongest when none is clear; and
    the two strongest other edges, nearest first, however faint (down to ``LOW``)."""
    top = best.max()
    last = len(best) - 1
    peaks = [
        i
        for i in range(len(best))
        if best[i] >= LOW and best[i] >= best[max(0, i - 1)] and best[i] >= best[min(last, i + 1)]
    ]
    clear = [i for i in peaks if best[i] >= max(SEEN, CLEAR_SHARE * top)]
    pick = clear[0] if clear else int(np.argmax(best))
    others: list[int] = []
    for i in sorted(peaks, key=lambda i: -best[i]):  # the strongest, one per plateau
        if abs(i - pick) > PEAK_GAP and all(abs(i - j) > PEAK_GAP for j in others):
            others.append(i)
    return pick, sorted(others[:MORE_EDGES])


def _pair_options(
    near: list[Edge], far: list[Edge], expect: float, spread: float
) -> list[tuple[float, tuple[float, float], tuple[float, float], float]]:
    """Ways to place two opposite sides, best first: (cost, side, opposite side, evidence).

    Each side is an edge found or, unseen, the mirror of the other (symbols are centred on the
    card); neither seen, both lie where the symbols predict. The evidence is the edges' scores.
    The cost rewards clear edges and penalises sides placed unevenly about the symbols, out of
    parallel, or at a distance far from the prediction (``spread``: how far, as a log ratio, it
    may plausibly be).
    """
    options = [(0.0, (expect, 0.0), (expect, 0.0), 0.0)]
    for ia, a in enumerate([*near, None]):
        for ib, b in enumerate([*far, None]):
            if a is None and b is None:
                continue
            first, second = a if a is not None else b, b if b is not None else a
            d1, d2 = first[0], second[0]
            if abs(d1 - d2) > PAIR_UNEVEN * min(d1, d2):
                continue  # symbols are centred: opposite sides lie at about the same distance
            size = abs(float(np.log((d1 + d2) / (2 * expect)))) / spread
            if size > 1:
                continue
            evidence = (a[2] if a is not None else 0) + (b[2] if b is not None else 0)
            cost = (
                -evidence
                + OFF_COST * size
                + abs(d1 - d2) / min(d1, d2)
                + abs(np.degrees(first[1] - second[1])) / TURN_COST_DEGREES
                + PASSED_COST * (ia + ib)  # an edge beyond a clear nearer one: less likely
            )
            options.append((cost, first[:2], second[:2], evidence))
    return sorted(options, key=lambda o: o[0])


Hypothesis = tuple[np.ndarray, int, float]  # corners, sides seen, cost (lower: likelier)


def card_hypotheses(
    group: list[Blob],
    grad_x: np.ndarray,
    grad_y: np.ndarray,
    strong: float = STRONG_STEP,
    fainter: float | None = None,
) -> tuple[Hypothesis | None, Callable[[], list[Hypothesis]]]:
    """Card quadrilaterals around a symbol group: the most likely one (or None), and a function
    giving others (looked for only when needed).

    The card's short sides run along the symbols' axis; its long sides along the line through
    the symbols (seen at a slant, a card is a parallelogram rather than a rectangle). A side is
    an edge stepping by ``strong`` lightness units per pixel or more (when no likely quad shows,
    by ``fainter`` if given: white cards on white). The first quad takes the first clear edge
    out from the symbols on each side (a side unseen, or placed much further from the symbols
    than its opposite, is the mirror of that one). Up to three others, for when the content
    check rejects it (a neighbour's edge taken for the card's), place each pair of opposite
    sides by ``_pair_options``, best first. At least two sides must be seen.
    """
    frame = card_frame(group)
    centre, normals, expect = frame.centre, frame.normals, frame.expect
    n_short, across_scale, length = normals[1], frame.across_scale, frame.symbol_length
    width, card_length = frame.width, frame.card_length
    reach_v = max(float(abs((b.centre - centre) @ n_short)) + b.thickness / 2 for b in group)
    reaches, halves = [], []
    for k in range(4):
        near = (
            across_scale * (length / 2 + LONG_SIDE_GAP * width)
            if k % 2 == 0
            else reach_v + SHORT_SIDE_GAP * width
        )
        reaches.append((near, max(near + MIN_REACH, FAR_REACH * expect[k % 2])))
        halves.append(card_length / 2 if k % 2 == 0 else width / 2)
    search = _side_search(grad_x, grad_y, centre, np.array(normals), reaches, np.array(halves))

    def quad(sides: list[tuple[float, float]]) -> np.ndarray | None:
        lines = []
        for k, normal in enumerate(normals):
            dist, angle = sides[k]
            cos, sin = np.cos(angle), np.sin(angle)
            turned = np.array(
                [normal[0] * cos - normal[1] * sin, normal[0] * sin + normal[1] * cos]
            )
            lines.append((turned, dist))
        across = (lines[0][1] + lines[2][1]) / across_scale
        along = lines[1][1] + lines[3][1]
        ratio = along / across  # the card's proportions, as foreshortened like its symbols
        if not (
            MIN_SPAN < length / across < MAX_SPAN
            and MIN_PROPORTION < ratio / (CARD_RATIO * frame.squash) < MAX_PROPORTION
        ):
            return None
        return corners_of(centre, lines)

    def first_look(
        strong: float,
    ) -> tuple[Hypothesis | None, list[Edge], list[tuple[int, int, float]]]:
        """The likeliest quad at this strength, each side's first edge, and where the other
        edges worth refining lie (side, distance index, angle)."""
        scores = search.scores(strong)
        picks = [_side_picks(score.max(axis=1)) for score in scores]

        def at(k: int, i: int) -> tuple[int, int, float]:
            return k, i, COARSE_TURNS[int(np.argmax(scores[k][i]))]

        firsts = search.refine([at(k, p[0]) for k, p in enumerate(picks)], strong)
        others = [at(k, i) for k, p in enumerate(picks) for i in p[1]]
        seen = [s[2] >= SEEN for s in firsts]
        for k in (0, 1):  # symbols are centred: opposite sides lie at about the same distance
            a, b = firsts[k], firsts[k + 2]
            if seen[k] and seen[k + 2] and abs(a[0] - b[0]) > FIRST_UNEVEN * min(a[0], b[0]):
                seen[k if abs(a[0] - expect[k]) > abs(b[0] - expect[k]) else k + 2] = False
        pairs = [seen[0] or seen[2], seen[1] or seen[3]]
        if not (any(pairs) and (all(pairs) or sum(seen) >= MIN_SIDES_SEEN)):
            return None, firsts, others
        sides = []
        for k in range(4):
            opposite = (k + 2) % 4
            side = firsts[k] if seen[k] else firsts[opposite] if seen[opposite] else None
            sides.append(side[:2] if side is not None else (expect[k % 2], 0.0))
        corners = quad(sides)
        return (corners, int(sum(seen)), 0.0) if corners is not None else None, firsts, others

    primary, firsts, others = first_look(strong)

    def alternatives() -> list[Hypothesis]:
        more: list[list[Edge]] = [[] for _ in range(4)]
        for (k, _, _), edge in zip(others, search.refine(others, strong)):
            more[k].append(edge)
        edges = [[e for e in [firsts[k], *more[k]] if e[2] >= LOW] for k in range(4)]
        pairs = [
            _pair_options(edges[0], edges[2], expect[0], LONG_SPREAD)[:PAIR_OPTIONS],
            _pair_options(edges[1], edges[3], expect[1], SHORT_SPREAD)[:PAIR_OPTIONS],
        ]
        found = []
        for cost_a, side_0, side_2, evidence_a in pairs[0]:
            for cost_b, side_1, side_3, evidence_b in pairs[1]:
                if evidence_a + evidence_b < MIN_EVIDENCE:
                    continue  # too little of the card's outline shows
                corners = quad([side_0, side_1, side_2, side_3])
                if corners is None or (primary and np.abs(corners - primary[0]).max() < SAME_QUAD):
                    continue
                found.append(
                    (corners, round(evidence_a + evidence_b), ALTERNATIVE_COST + cost_a + cost_b)
                )
        return sorted(found, key=lambda h: h[2])[:MAX_ALTERNATIVES]

    if primary is None and fainter is not None:
        return first_look(fainter)[0], alternatives
    return primary, alternatives
