"""What a candidate looks like, as numbers a model can judge: shape, paper, ink, edges.

Every feature is relative (to the image's size, to the photo's paper score, to the region's
surroundings), so the same card gives the same numbers at any resolution and exposure.
"""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.find.candidates import MAKERS, Candidate, Maps
from setvision.vision.geometry import interior_angles, side_lengths

#: The card's margin, left out of the paper measurements (share of the quad, from each side).
INSET = 0.12
#: The ring around a candidate that stands for its surroundings (share of its short side).
RING = 0.25
#: Ink is this far below the candidate's paper score (score units).
INK_DROP = 25

FEATURES = (
    "log_area",
    "aspect",
    "fill",
    "solidity",
    "angle_error",
    "side_ratio",
    "paper_score",
    "paper_light",
    "paper_chroma",
    "paper_spread",
    "ring_score",
    "ring_spread",
    "contrast",
    "score_vs_otsu",
    "ink_share",
    "ink_chroma",
    "edge_strength",
    "edge_vs_inside",
    "touches_border",
    "turn_symmetry",
    "mirror_symmetry",
    "margin_ink",
    "centre_ink",
    "ink_depth",
    "centre_vs_margin_spread",
    "margin_spread",
    "rim_ink_most",
    "rim_ink_least",
    *(f"maker_{m}" for m in MAKERS),
)


#: Every candidate and its ring are sampled on a grid of this many points (width, height), the
#: card taking the central part; every measurement is made there, for all candidates at once.
PATCH = (40, 30)
#: The patch covers the card scaled by this factor about its centre.
OUTER = 1 + 2 * RING * 0.7


def _patch_points() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The patch's points (rows, columns): column and row indices, and where each lies across
    and along the patch as a signed share of it (-0.5 to 0.5; 0 at the card's centre)."""
    width, height = PATCH
    ys, xs = np.mgrid[0:height, 0:width]
    return xs, ys, (xs + 0.5) / width - 0.5, (ys + 0.5) / height - 0.5


def _card_units(across: np.ndarray, along: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How far out from the card's centre each point lies, across and along: 1 at its edge."""
    return np.abs(across) * 2 * OUTER, np.abs(along) * 2 * OUTER


def _regions() -> tuple[np.ndarray, np.ndarray]:
    """Masks of the patch: the card's inside (margin left out) and the ring around the card."""
    u, v = _card_units(*_patch_points()[2:])
    inside = (u <= 1 - 2 * INSET) & (v <= 1 - 2 * INSET)
    around = (u > 1.08) | (v > 1.08)
    return inside.ravel(), around.ravel()


INSIDE, AROUND = _regions()


def _card_layout() -> tuple[np.ndarray, ...]:
    """Where a card's print lies in the patch: the card itself (its rounded corners' rim left
    out), its blank margin, the middle where symbols are printed; each card point's partner
    when the card is turned half round, or mirrored across its length; the card's points as a
    plane's design (light falling unevenly over a card is a plane); and, for each of its four
    sides, the points just inside it (corners left out)."""
    xs, ys, across, along = _patch_points()
    u, v = _card_units(across, along)
    card = (u <= CARD_RIM) & (v <= CARD_RIM)
    margin = card & ((u > SYMBOLS_SPAN[0]) | (v > SYMBOLS_SPAN[1]))
    middle = (u <= MIDDLE[0]) & (v <= MIDDLE[1])
    index = np.arange(xs.size).reshape(xs.shape)
    turned = index[::-1, ::-1].ravel()[card.ravel()]
    mirrored = index[::-1, :].ravel()[card.ravel()]
    plane = np.column_stack([np.ones(card.sum()), xs[card], ys[card]]).astype(np.float64)
    rim_u = (u > CARD_RIM) & (u <= 1.0) & (v <= SYMBOLS_SPAN[1])
    rim_v = (v > CARD_RIM) & (v <= 1.0) & (u <= SYMBOLS_SPAN[0])
    sides = np.stack([rim_u & (across < 0), rim_u & (across > 0), rim_v & (along < 0),
                      rim_v & (along > 0)]).reshape(4, -1)  # fmt: skip
    return card.ravel(), margin.ravel(), middle.ravel(), turned, mirrored, plane, sides


#: In card units (1 at its edge): the card's points within this of the edge (a corner's rim
#: and a slightly loose outline left out); the symbols' span along its length and across it
#: (beyond: the margin, blank on a card); the middle, where some symbol is always printed.
CARD_RIM = 0.92
SYMBOLS_SPAN = (0.78, 0.80)
MIDDLE = (0.6, 0.72)
CARD, MARGIN, MIDDLE_POINTS, TURNED, MIRRORED, PLANE, RIM_SIDES = _card_layout()
_PLANE_FIT = np.linalg.pinv(PLANE).T
#: The card's points, as indices into them, when it is turned half round or mirrored.
_CARD_INDEX = np.cumsum(CARD) - 1
TURNED_IN_CARD, MIRRORED_IN_CARD = _CARD_INDEX[TURNED], _CARD_INDEX[MIRRORED]
_GRID = np.stack(_patch_points()[2:], axis=-1).reshape(-1, 2) * (2 * OUTER)  # -1..1: the card
_UNIT = np.float32([[-1, -1], [1, -1], [1, 1], [-1, 1]])
_BOUNDARY = np.concatenate(
    [a + np.linspace(0.1, 0.9, 12)[:, None] * (b - a) for a, b in zip(_UNIT, np.roll(_UNIT, -1, 0))]
)


def _landscape(quad: np.ndarray) -> np.ndarray:
    sides = side_lengths(quad)
    return np.roll(quad, -1, axis=0) if sides[1] + sides[3] > sides[0] + sides[2] else quad


def _quantile(sorted_values: np.ndarray, q: float) -> np.ndarray:
    return sorted_values[:, int(q * (sorted_values.shape[1] - 1))]


def _correlation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of ``a`` with the same row of ``b`` (0 when flat)."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    return (a * b).sum(axis=1) / np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1) + 1e-6)


def _bilinear(image: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``image`` (float32) at points (x, y), interpolated linearly, edge pixels repeated.

    numpy rather than ``cv2.remap``: remap's float result differs in the last bits with how
    OpenCV splits the work between threads, and features must not change from run to run.
    """
    height, width = image.shape
    x = np.clip(x.astype(np.float64), 0, width - 1)
    y = np.clip(y.astype(np.float64), 0, height - 1)
    x0 = np.minimum(np.floor(x).astype(np.int64), width - 2)
    y0 = np.minimum(np.floor(y).astype(np.int64), height - 2)
    fx, fy = x - x0, y - y0
    flat = image.reshape(-1).astype(np.float64)
    top = flat[y0 * width + x0] * (1 - fx) + flat[y0 * width + x0 + 1] * fx
    bottom = flat[(y0 + 1) * width + x0] * (1 - fx) + flat[(y0 + 1) * width + x0 + 1] * fx
    return (top * (1 - fy) + bottom * fy).astype(np.float32)


def _print_columns(light: np.ndarray) -> list[np.ndarray]:
    """What the print inside each candidate says (rows: candidates; the darkest light near
    each of the patch's points): a card's symbols look the same turned half round (and
    mostly mirrored across its length), leave its margin blank and sit in its middle; a blank
    sheet, a patch of table or a textured cloth do none of that."""
    card = light[:, CARD]
    paper = _quantile(np.sort(card, axis=1), 0.75)
    lit = card.astype(np.float64)
    even = lit - (lit @ _PLANE_FIT) @ PLANE.T  # an even ramp of light is no print
    ink = light < (paper - INK_DROP)[:, None]
    middle = np.sort(light[:, MIDDLE_POINTS], axis=1)
    margin_spread = light[:, MARGIN].std(axis=1)
    # a card's edge never cuts its print: ink just inside one side, not the others, is a quad
    # cut short across a card (where a shadow or another card's edge crosses it)
    rim = np.stack([ink[:, side].mean(axis=1) for side in RIM_SIDES], axis=1)
    return [
        _correlation(even, even[:, TURNED_IN_CARD]),
        _correlation(even, even[:, MIRRORED_IN_CARD]),
        ink[:, MARGIN].mean(axis=1),
        ink[:, MIDDLE_POINTS].mean(axis=1),
        paper - _quantile(middle, 0.05),
        middle.std(axis=1) - margin_spread,
        margin_spread,
        rim.max(axis=1),
        rim.min(axis=1),
    ]


def describe_all(maps: Maps, candidates: list[Candidate]) -> np.ndarray:
    """Every candidate's feature vector (rows in the order of ``FEATURES``)."""
    height, width = maps.score.shape
    n = len(candidates)
    if n == 0:
        return np.zeros((0, len(FEATURES)), np.float32)
    quads = np.array([_landscape(c.quad.astype(np.float32)) for c in candidates])
    homographies = np.array([cv2.getPerspectiveTransform(_UNIT, q) for q in quads])
    grid = np.concatenate([_GRID, _BOUNDARY]).astype(np.float64)
    points = np.concatenate([grid, np.ones((len(grid), 1))], axis=1)
    mapped = np.matmul(points[None], homographies.transpose(0, 2, 1))
    mapped = (mapped[..., :2] / mapped[..., 2:3]).astype(np.float32)
    patch_points = len(_GRID)
    samples = cv2.remap(
        maps.stack, mapped[:, :patch_points, 0].copy(), mapped[:, :patch_points, 1].copy(),
        cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE,
    ).astype(np.float32)  # fmt: skip
    edge_points = mapped[:, patch_points:]
    gradient = _bilinear(maps.gradient, edge_points[..., 0], edge_points[..., 1])
    score, light, chroma, darkest = (samples[..., k] for k in range(4))
    inside = np.sort(score[:, INSIDE], axis=1)
    around = np.sort(score[:, AROUND], axis=1)
    paper = _quantile(inside, 0.75)
    inner_score, inner_chroma = score[:, INSIDE], chroma[:, INSIDE]
    inner_light = light[:, INSIDE]
    ink = inner_score < (paper - INK_DROP)[:, None]
    ink_share = ink.mean(axis=1)
    paper_chroma = np.where(ink, np.nan, inner_chroma)
    paper_chroma = np.nanmedian(np.where(ink.all(axis=1)[:, None], 0, paper_chroma), axis=1)
    ink_count = np.maximum(ink.sum(axis=1), 1)
    ink_chroma = np.where(ink.any(axis=1), (inner_chroma * ink).sum(axis=1) / ink_count, 0)
    ink_chroma = np.where(ink.any(axis=1), ink_chroma - paper_chroma, 0)
    inner = inner_light.reshape(n, -1)
    texture = np.abs(np.diff(inner, axis=1)).mean(axis=1)
    edge = np.median(gradient, axis=1)
    sides = np.array([side_lengths(q) for q in quads])
    long_side = (sides[:, 0] + sides[:, 2]) / 2
    short_side = (sides[:, 1] + sides[:, 3]) / 2
    quad_area = np.array([cv2.contourArea(q) for q in quads])
    angles = np.array([np.abs(interior_angles(q) - 90).max() for q in quads])
    region = np.array([c.region_area for c in candidates])
    hull = np.array([c.hull_area for c in candidates])
    touches = (
        (quads[..., 0].min(axis=1) <= 1) | (quads[..., 1].min(axis=1) <= 1)
        | (quads[..., 0].max(axis=1) >= width - 2) | (quads[..., 1].max(axis=1) >= height - 2)
    )  # fmt: skip
    makers = np.array([[c.maker == i for i in range(len(MAKERS))] for c in candidates], float)
    ring_score = _quantile(around, 0.5)
    columns = [
        np.log(np.maximum(quad_area, 1.0) / (width * height)),
        long_side / np.maximum(short_side, 1.0),
        region / np.maximum(quad_area, 1.0),
        region / np.maximum(hull, 1.0),
        angles,
        np.maximum(sides[:, 0], sides[:, 2]) / np.maximum(np.minimum(sides[:, 0], sides[:, 2]), 1)
        + np.maximum(sides[:, 1], sides[:, 3])
        / np.maximum(np.minimum(sides[:, 1], sides[:, 3]), 1),
        paper,
        _quantile(np.sort(inner_light, axis=1), 0.75),
        paper_chroma,
        _quantile(inside, 0.9) - _quantile(inside, 0.25),
        ring_score,
        _quantile(around, 0.9) - _quantile(around, 0.1),
        paper - ring_score,
        paper - maps.otsu,
        ink_share,
        ink_chroma,
        edge,
        edge / (texture + 1.0),
        touches.astype(float),
        *_print_columns(darkest),
    ]
    return np.column_stack([*columns, makers]).astype(np.float32)


#: What the model also knows of a candidate in its second look: its first probability and how
#: it compares with the likely cards of the same photo (cards of one deck share size and paper).
CONTEXT = (
    "first_look",
    "area_vs_cards",
    "paper_vs_cards",
    "chroma_vs_cards",
    "light_vs_cards",
    "ink_vs_cards",
    "cards_seen",
)
#: Candidates at least this likely at the first look stand for the photo's cards.
LIKELY_CARD = 0.5
#: What a comparison reads when the photo shows no likely card to compare with.
NO_CARDS = -1e3
_COMPARED = [FEATURES.index(n) for n in ("log_area", "paper_score", "paper_chroma", "paper_light",
                                         "ink_share")]  # fmt: skip


def with_context(x: np.ndarray, first: np.ndarray) -> np.ndarray:
    """The features ``x`` (rows: candidates of one photo) with ``CONTEXT`` appended, given
    each candidate's probability at the first look."""
    likely = first >= LIKELY_CARD
    if likely.any():
        reference = np.median(x[likely][:, _COMPARED], axis=0)
        compared = x[:, _COMPARED] - reference
    else:
        compared = np.full((len(x), len(_COMPARED)), NO_CARDS, np.float32)
    seen = np.full((len(x), 1), np.log1p(likely.sum()), np.float32)
    return np.hstack([x, first[:, None].astype(np.float32), compared, seen]).astype(np.float32)
