"""The card finder: candidates made generously, judged by the learned model, overlaps resolved.

An image goes in; card ``Outline``s (corners in its pixels) come out. Everything is measured on
a copy of fixed long side, so a photo gives the same cards at any resolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from setvision.vision.find.bars import content
from setvision.vision.find.candidates import (
    MIN_AREA_SHARE,
    PAPER_SHRINK,
    Candidate,
    Maps,
    dedupe,
    find_candidates,
    make_maps,
    previous_candidates,
)
from setvision.vision.find.card_net import (
    CardPaper,
    card_maps,
    card_paper,
    load_card_net,
    net_cards,
)
from setvision.vision.find.cardness import CardnessModel, load_cardness
from setvision.vision.find.describe import describe_all
from setvision.vision.find.fit import snap_sides
from setvision.vision.find.outlines import BORDER_PX, SNAP_PX, OnCard, Outline
from setvision.vision.geometry import (
    contains_point,
    convex_iou,
    convex_overlap,
    long_side_index,
    order_corners,
    touches_border,
)
from setvision.vision.image import resize_long_side

#: Two accepted candidates overlapping by more than this share of the smaller are one card.
SAME_CARD = 0.3
#: A card of the net's overlapping a found card by at least this (intersection over union) is
#: that card; below it, the net sees a card the found ones do not explain.
EXPLAINED_IOU = 0.2
#: The card net's cards at this interior probability that no card found explains are places
#: the reader may take for cards (``Found.net_places``); one of the levels held-out net cards
#: are kept at (``find_training.CACHED_NET_LEVELS``), so that it can be measured held out.
PLACE_INTERIOR = 0.7
#: A card of the net's (at the gate's level, ``CardnessModel.net_interior``) that no card found
#: explains is named as a place where a card may be missed (``Found.possible``: no "no set" is
#: said over it) only where the net's interior reaches this probability inside it. Chosen held
#: out with ``setvision eval --find --loso --read``; kept among the held-out net cards' levels
#: (``find_training.CACHED_NET_LEVELS``) for that.
NAMED_INTERIOR = 0.9
#: The previous finder searches symbol groups for cards, and its outlines count, only where
#: the card net's card probability (at the group's or outline's centre) reaches this: elsewhere
#: the net sees no card paper at all, and what the previous finder builds there is mostly print
#: and clutter. Held out (``setvision eval --find --loso``), the highest level tried that loses
#: no card (0.1 loses one).
PREVIOUS_ON_CARD = 0.05
#: A doubtful candidate (judged below acceptance, not below doubt) is named as a place where a
#: card may be missed only where the card net sees some card paper: its card probability at the
#: doubt's centre at least this. Where the net sees none, such doubts are prints, cloths and
#: tiles. Held out (``setvision eval --find --loso --read``), 0.01 is the highest level that
#: leaves no more missed cards unsaid (0.02 leaves one); half of it keeps a level in hand.
DOUBT_ON_CARD = 0.005
#: A card of the net's named as a possible miss (``NAMED_INTERIOR``) must also be the size of
#: the cards found: its area within this factor of their median, where ``NAMED_SIZE_CARDS`` or
#: more are found. The net takes prints, sheets and boxes of any size for cards; a missed card
#: is the size of the others. Held out (``setvision eval --find --loso --read``), 2 is the
#: narrowest factor tried that leaves no more missed cards unsaid (1.5 leaves one); 3 keeps a
#: step in hand.
NAMED_SIZE_FACTOR = 3.0
#: Cards found before their median tells a card's size (fewer: every such card is named).
NAMED_SIZE_CARDS = 3
#: Accepted candidates overlapping a chosen card by at least this (intersection over union) are
#: outlines of that card, and the one ``CardnessModel.fit`` rates closest is kept. Held out on
#: the new source (by capture session), 0.5, 0.7 and 0.8 keep outlines as close to the labels
#: (mean overlap 0.956, against 0.945 for the likeliest); at 0.5 a squarish quad over two
#: thirds of a card, cut by a shadow's edge, replaced the card's outline on an older source.
SAME_OUTLINE = 0.8
#: Spots of coloured ink up to this share of a typical card can be a symbol's print; larger
#: ones are the table between cards.
SYMBOL_SPOT = 0.5


@dataclass(frozen=True)
class Judged:
    """A candidate with its features and the model's probability that it is a card."""

    candidate: Candidate
    features: np.ndarray
    probability: float


def judge(
    maps: Maps, model: CardnessModel, candidates: list[Candidate], known: Sequence[Judged] = ()
) -> list[Judged]:
    """The ``known`` candidates (already described) and ``candidates``, each with the model's
    probability that it is a card (judged together: the model compares them)."""
    everyone = [j.candidate for j in known] + candidates
    if not everyone:
        return []
    features = describe_all(maps, candidates)
    if known:
        features = np.vstack([np.array([j.features for j in known]), features])
    probabilities = model.probability(features)
    return [Judged(c, f, float(p)) for c, f, p in zip(everyone, features, probabilities)]


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over the smaller area of two convex quads."""
    inter = convex_overlap(a, b)
    smaller = min(cv2.contourArea(a), cv2.contourArea(b))
    return float(inter / smaller) if smaller > 0 else 0.0


def _boxes_meet(quad: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Which of the quads ``others`` (N, 4, 2) have a bounding box meeting ``quad``'s: only
    those can overlap it."""
    points = quad.reshape(-1, 2)
    low, high = points.min(axis=0), points.max(axis=0)
    return ((others.min(axis=1) < high) & (others.max(axis=1) > low)).all(axis=1)


def _clear_of(quad: np.ndarray, others: Sequence[np.ndarray]) -> bool:
    """Whether ``quad`` is none of the cards ``others`` (overlaps none by more than
    ``SAME_CARD``)."""
    if not len(others):
        return True
    meet = _boxes_meet(quad, np.asarray(others).reshape(len(others), -1, 2))
    return all(_overlap(quad, others[k]) <= SAME_CARD for k in np.flatnonzero(meet))


def select(judged: list[Judged], accept: float) -> list[Judged]:
    """The likeliest candidates above ``accept``, no two of them one card."""
    chosen: list[Judged] = []
    quads: list[np.ndarray] = []
    for item in sorted(judged, key=lambda j: -j.probability):
        if item.probability < accept:
            break
        if _clear_of(item.candidate.quad, quads):
            chosen.append(item)
            quads.append(item.candidate.quad)
    return chosen


def fits_of(judged: Sequence[Judged], model: CardnessModel) -> np.ndarray | None:
    """Each accepted candidate's expected overlap with its card (``CardnessModel.fit``; 0 for
    the others, which are never kept); None without a fit model."""
    if model.fit_forest is None:
        return None
    fits = np.zeros(len(judged))
    accepted = [k for k, j in enumerate(judged) if j.probability >= model.accept]
    if accepted:
        fits[accepted] = model.fit(np.array([judged[k].features for k in accepted]))
    return fits


def closest_outlines(
    judged: Sequence[Judged], chosen: list[Judged], accept: float, fits: np.ndarray
) -> list[Judged]:
    """The ``chosen`` cards, each as the outline of it rated closest (``fits``: each of the
    ``judged`` candidates' expected overlap with its card) among the candidates accepted like it
    (``accept``) that overlap it by ``SAME_OUTLINE``, where that outline is no other card."""
    accepted = [k for k, j in enumerate(judged) if j.probability >= accept]
    if len(accepted) <= len(chosen):
        return chosen  # every accepted candidate is a card of its own: nothing to choose
    quads = np.array([judged[k].candidate.quad for k in accepted], np.float32)
    index = {id(j): k for k, j in enumerate(judged)}
    kept = list(chosen)
    rated = fits[accepted]
    for n, item in enumerate(chosen):
        quad, own = item.candidate.quad, index[id(item)]
        closer = np.flatnonzero(_boxes_meet(quad, quads) & (rated > fits[own]))
        for i in closer[np.argsort(-rated[closer], kind="stable")]:  # the closest first
            if convex_iou(quads[i], quad) >= SAME_OUTLINE:
                others = [kept[m].candidate.quad for m in range(len(kept)) if m != n]
                if _clear_of(quads[i], others):
                    kept[n] = judged[accepted[i]]
                break
    return kept


def uncovered_outlines(
    judged: Sequence[Judged], chosen: list[Judged], accept: float
) -> list[Judged | None]:
    """For each of the ``chosen`` cards marked occluded, its surest other outline accepted like
    it (``accept``) and not marked occluded, overlapping it by ``SAME_OUTLINE`` and clear of
    the other cards; else None. The previous finder takes a card for one partly covered where a
    corner of its fit goes astray, while another maker outlines it whole."""
    unoccluded = [j for j in judged if j.probability >= accept and not j.candidate.occluded]
    found: list[Judged | None] = []
    for n, item in enumerate(chosen):
        if not item.candidate.occluded:
            found.append(None)
            continue
        others = [c.candidate.quad for m, c in enumerate(chosen) if m != n]
        same = [
            j for j in unoccluded
            if convex_iou(j.candidate.quad, item.candidate.quad) >= SAME_OUTLINE
            and _clear_of(j.candidate.quad, others)
        ]  # fmt: skip
        found.append(max(same, key=lambda j: j.probability) if same else None)
    return found


def pick_cards(judged: list[Judged], accept: float, fits: np.ndarray | None = None) -> list[Judged]:
    """The cards among the ``judged`` candidates (``select``), each as its closest outline
    where their ``fits`` are known (``closest_outlines``)."""
    chosen = select(judged, accept)
    return chosen if fits is None else closest_outlines(judged, chosen, accept, fits)


@dataclass(frozen=True)
class Found:
    """The cards found in an image, and card-like places that were not taken for cards.

    ``possible``: quads (image pixels) that look enough like a card that one may have been
    missed there; a "no set" must not be said while any remains unexplained. ``probabilities``:
    the model's probability that each outline is a card (in the order of ``outlines``).
    ``net_places``: where the card net sees a card (at ``PLACE_INTERIOR``) that no outline
    explains, as the doubt there or else the net's own outline, its sides snapped to the
    photo's edges: the reader may take them for cards (``vision.read.rescue``).
    ``uncovered``: for each outline marked ``occluded``, the same card's surest accepted outline
    that is not (``uncovered_outlines``), else None; in the order of ``outlines`` (empty: none
    looked for).
    """

    outlines: list[Outline]
    possible: list[np.ndarray]
    probabilities: list[float]
    net_places: tuple[Outline, ...] = ()
    uncovered: tuple[Outline | None, ...] = ()

    @property
    def uncovered_each(self) -> tuple[Outline | None, ...]:
        """``uncovered`` for each outline (None for all where none were looked for)."""
        return self.uncovered or (None,) * len(self.outlines)


def _to_image(quads: np.ndarray, image: np.ndarray, factor: float) -> np.ndarray:
    return snap_sides(image, quads / factor, SNAP_PX / factor) if len(quads) else quads


@dataclass(frozen=True)
class PaperLeft:
    """Paper the cards found do not cover: each region's area and the symbol-sized spots of
    coloured ink inside its outline, both in typical card areas."""

    areas: np.ndarray
    inks: np.ndarray

    def holds(self, min_share: float, min_ink: float) -> bool:
        """Whether a region of at least ``min_share`` typical cards holds at least ``min_ink``
        of a typical card's area in ink: a card may have been missed there."""
        return bool(((self.areas >= min_share) & (self.inks >= min_ink)).any())


def paper_left(
    paper: np.ndarray, ink: np.ndarray | None, quads: np.ndarray, at_least: float
) -> PaperLeft:
    """The regions of ``paper`` (a mask ``PAPER_SHRINK`` times smaller than the work image) that
    the card ``quads`` (work pixels) leave, of at least ``at_least`` typical cards (the median
    quad, or the smallest card looked for when none was found); ``ink`` as ``Maps.ink`` (None:
    not asked for, every region's ink is 0)."""
    mask = paper.copy()
    covered = np.zeros_like(paper)
    scaled = [np.round(q / PAPER_SHRINK).astype(np.int32) for q in quads]
    if scaled:
        for target, value in ((mask, 0), (covered, 1)):
            cv2.fillPoly(target, scaled, value)
            cv2.polylines(target, scaled, True, value, 2)
        typical = float(np.median([cv2.contourArea(q.astype(np.float32)) for q in quads]))
    else:
        typical = MIN_AREA_SHARE * paper.size * PAPER_SHRINK**2
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    _, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    areas = stats[1:, cv2.CC_STAT_AREA] * PAPER_SHRINK**2 / typical
    large = np.nonzero(areas >= at_least)[0]
    inks = np.zeros(len(large))
    if ink is None or not len(large):
        return PaperLeft(areas[large], inks)
    # symbols are small spots of ink on paper; coloured spots the size of a card or more are
    # the table (wood, a cloth) seen between or around the cards
    free_ink = ink & (1 - covered)
    _, spot_labels, spot_stats, _ = cv2.connectedComponentsWithStats(free_ink, connectivity=8)
    small = spot_stats[:, cv2.CC_STAT_AREA] * PAPER_SHRINK**2 <= SYMBOL_SPOT * typical
    small[0] = False
    symbol_ink = small[spot_labels].astype(np.uint8)
    for k, label in enumerate(large):
        outline, _ = cv2.findContours(
            (labels == label + 1).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
        )
        inside = np.zeros_like(paper)
        cv2.drawContours(inside, outline, -1, 1, cv2.FILLED)
        inks[k] = np.count_nonzero(symbol_ink & inside) * PAPER_SHRINK**2 / typical
    return PaperLeft(areas[large], inks)


def unexplained(
    paper: np.ndarray, ink: np.ndarray | None, quads: np.ndarray, min_share: float, min_ink: float
) -> bool:
    """Whether the card ``quads`` leave a region of paper of at least ``min_share`` typical
    cards holding at least ``min_ink`` of a typical card's area in coloured ink (``ink`` may be
    None when ``min_ink`` is 0)."""
    if not np.isfinite(min_share):
        return False
    return paper_left(paper, ink if min_ink > 0 else None, quads, min_share).holds(
        min_share, min_ink
    )


def needs_previous(
    paper: np.ndarray,
    ink: np.ndarray | None,
    chosen: list[Judged],
    in_doubt: list[Judged],
    model: CardnessModel,
) -> bool:
    """Whether the fast makers leave something to look at again: paper the ``chosen`` cards do
    not explain, or a candidate in doubt beside them (``in_doubt``, as ``doubtful`` gives)."""
    if unexplained(paper, ink, _quads_of(chosen), model.unexplained, model.unexplained_ink):
        return True
    return any(j.probability >= model.recheck for j in in_doubt)


def unexplained_cards(net_quads: Sequence[np.ndarray], quads: np.ndarray) -> list[np.ndarray]:
    """The net's cards that are none of the cards ``quads`` (both in one image's pixels)."""
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    unexplained = []
    for net_quad in net_quads:
        near = quads[_boxes_meet(net_quad, quads)]
        if max((convex_iou(net_quad, q) for q in near), default=0.0) < EXPLAINED_IOU:
            unexplained.append(net_quad)
    return unexplained


def sized_like(places: Sequence[np.ndarray], cards: np.ndarray) -> list[np.ndarray]:
    """Those of ``places`` whose area is within ``NAMED_SIZE_FACTOR`` of the median card of
    ``cards`` (all of them while fewer than ``NAMED_SIZE_CARDS`` cards tell the size)."""
    cards = np.asarray(cards, np.float32).reshape(-1, 4, 2)
    if len(cards) < NAMED_SIZE_CARDS:
        return list(places)
    typical = float(np.median([cv2.contourArea(c) for c in cards]))
    return [
        q
        for q in places
        if typical / NAMED_SIZE_FACTOR
        <= cv2.contourArea(np.asarray(q, np.float32))
        <= typical * NAMED_SIZE_FACTOR
    ]


def named_cards(missed: Sequence[np.ndarray], surer: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Those of the net's cards that no card found explains (``missed``, at the gate's level)
    that hold the middle of one of its ``surer`` cards (found at ``NAMED_INTERIOR``): each
    surer card lies within a card of the gate's lower level, whose blobs hold together where a
    higher level's may split one card in two (all in one image's pixels)."""
    middles = [np.asarray(q, np.float64).mean(axis=0) for q in surer]
    return [
        quad
        for quad in missed
        if any(contains_point(np.asarray(quad, np.float64), tuple(m)) for m in middles)
    ]


def net_sees_more(net_quads: Sequence[np.ndarray], quads: np.ndarray) -> bool:
    """Whether one of the net's cards is none of the cards ``quads``: a card the fast makers
    may have missed."""
    return bool(unexplained_cards(net_quads, quads))


def doubtful(judged: list[Judged], chosen: list[Judged], model: CardnessModel) -> list[Judged]:
    """Candidates below acceptance but not below doubt, none of them one of the ``chosen``
    cards: where a card may have been missed."""
    in_doubt = [j for j in judged if model.doubt <= j.probability < model.accept]
    cards = [c.candidate.quad for c in chosen]
    return [j for j in select(in_doubt, model.doubt) if _clear_of(j.candidate.quad, cards)]


def find_cards(image: np.ndarray, model: CardnessModel | None = None) -> Found:
    """Card outlines in ``image`` ((H, W, 3) uint8 BGR), corners in its pixels. Only the
    picture between black bars is looked at, at the scale the whole image is read at."""
    model = model or load_cardness()
    inside = content(image)
    if inside.is_whole(image):
        return _find_cards(image, model, model.work_long_side)
    picture = inside.of(image)
    scale = min(1.0, model.work_long_side / max(image.shape[:2]))
    found = _find_cards(picture, model, max(1, round(max(picture.shape[:2]) * scale)))
    return shifted(found, inside.offset)


def shifted(found: Found, offset: np.ndarray) -> Found:
    """``found`` with every quad moved by ``offset`` (x, y pixels)."""

    def moved(outline: Outline) -> Outline:
        return replace(outline, corners_xy=outline.corners_xy + offset)

    return Found(
        [moved(o) for o in found.outlines],
        [q + offset for q in found.possible],
        found.probabilities,
        tuple(moved(o) for o in found.net_places),
        tuple(None if o is None else moved(o) for o in found.uncovered),
    )


def _find_cards(image: np.ndarray, model: CardnessModel, work_long_side: int) -> Found:
    """``find_cards`` on a picture without bars, its work copy of this long side at most."""
    small, factor = resize_long_side(image, work_long_side)
    maps = make_maps(small)
    judged = judge(maps, model, dedupe(find_candidates(maps)))
    chosen = pick_cards(judged, model.accept, fits_of(judged, model))
    ink = maps.ink() if model.unexplained_ink > 0 else None  # asked for by the model only
    seen = []  # the card net's cards (work pixels), where the model asks for the net
    net = card_maps(small, load_card_net()) if np.isfinite(model.net_interior) else None
    paper = None if net is None else card_paper(net)
    if net is not None:
        seen = net_cards(net, model.net_interior)
    in_doubt = doubtful(judged, chosen, model)
    if net_sees_more(seen, _quads_of(chosen)) or needs_previous(
        maps.paper(), ink, chosen, in_doubt, model
    ):
        on_card = None if paper is None else on_card_of(paper)
        judged = judge(maps, model, previous_candidates(small, on_card), known=judged)
        chosen = pick_cards(judged, model.accept, fits_of(judged, model))
        in_doubt = doubtful(judged, chosen, model)
    margin = BORDER_PX / factor
    size = (image.shape[1], image.shape[0])

    def outlined(items: list[Judged]) -> list[Outline]:
        outlines = []
        for quad, item in zip(_to_image(_quads_of(items), image, factor), items):
            candidate = item.candidate
            if candidate.long_side is None:
                quad = order_corners(quad)
                long_side = long_side_index(quad)
            else:  # the previous finder's corners keep their order (its long side refers to it)
                long_side = candidate.long_side
            touches = touches_border(quad, size, margin)
            outlines.append(Outline(quad, touches, candidate.occluded, long_side))
        return outlines

    outlines = outlined(chosen)
    alternatives = uncovered_outlines(judged, chosen, model.accept)
    whole = iter(outlined([j for j in alternatives if j is not None]))
    uncovered = tuple(None if j is None else next(whole) for j in alternatives)
    doubt_quads, chosen_quads = _quads_of(in_doubt), _quads_of(chosen)
    missed, surer, places = [], [], []  # the net's cards: unexplained, and offered to the reader
    if net is not None:
        missed = unexplained_cards(seen, chosen_quads)
        surer = net_cards(net, NAMED_INTERIOR) if missed else []
        places = net_places(net_cards(net, PLACE_INTERIOR), chosen_quads, doubt_quads)
    named = named_places(missed, surer, chosen_quads, doubt_quads, paper)
    possible = [order_corners(q / factor) for q in named]
    to_read = [place_outline(q, size, margin) for q in _to_image(np.array(places), image, factor)]
    probabilities = [j.probability for j in chosen]
    return Found(outlines, possible, probabilities, tuple(to_read), uncovered)


def on_card_of(paper: CardPaper) -> OnCard:
    """Which points (N, 2; pixels of the image ``paper`` was made from) the previous finder
    may look at: where the net's card probability reaches ``PREVIOUS_ON_CARD``."""
    return lambda points: paper.at(points) >= PREVIOUS_ON_CARD


def named_doubts(doubts: np.ndarray, paper: CardPaper) -> np.ndarray:
    """Those of the ``doubts`` (quads (N, 4, 2), pixels of the image ``paper`` was made from)
    named as places where a card may be missed: where the net sees card paper at their centre
    (``DOUBT_ON_CARD``)."""
    if not len(doubts):
        return doubts
    return doubts[paper.at(np.asarray(doubts).mean(axis=1)) >= DOUBT_ON_CARD]


def named_places(
    missed: Sequence[np.ndarray],
    surer: Sequence[np.ndarray],
    cards: np.ndarray,
    doubts: np.ndarray,
    paper: CardPaper | None,
) -> list[np.ndarray]:
    """Where a card may have been missed (``Found.possible``), all in one image's pixels: the
    net's cards that no card found explains (``missed``), where it is surer (``named_cards``)
    and the size of the ``cards`` found, and the ``doubts`` on its card ``paper`` (all of
    them without the net)."""
    said = doubts if paper is None else named_doubts(doubts, paper)
    return possible_places(sized_like(named_cards(missed, surer), cards), said)


def possible_places(missed: Sequence[np.ndarray], doubts: np.ndarray) -> list[np.ndarray]:
    """Where a card may have been missed (``Found.possible``): each doubt, and each of the
    net's cards that no card found explains (``missed``) and no doubt explains either."""
    return [*doubts, *unexplained_cards(missed, doubts)]


def net_places(
    net_quads: Sequence[np.ndarray], cards: np.ndarray, doubts: np.ndarray
) -> list[np.ndarray]:
    """The net's cards that none of the ``cards`` explains, each as the doubt that explains it
    (a candidate's outline follows the card closer than the net's) or else as the net gives
    it; no doubt twice (all in one image's pixels)."""
    places, used = [], set()
    for quad in unexplained_cards(net_quads, cards):
        overlaps = [convex_iou(quad, doubt) for doubt in doubts]
        best = int(np.argmax(overlaps)) if overlaps else -1
        if best < 0 or overlaps[best] < EXPLAINED_IOU:
            places.append(quad)
        elif best not in used:
            used.add(best)
            places.append(doubts[best])
    return places


def place_outline(quad: np.ndarray, size: tuple[int, int], margin: float) -> Outline:
    """A place where a card may be (image pixels) as an outline to read: corners in order, its
    long side told by its shape, touching the border within ``margin`` pixels."""
    corners = order_corners(np.asarray(quad, np.float32))
    return Outline(corners, touches_border(corners, size, margin), False, long_side_index(corners))


def _quads_of(judged: Sequence[Judged]) -> np.ndarray:
    return np.array([j.candidate.quad for j in judged], np.float32).reshape(-1, 4, 2)
