"""Fit the card finder's model: every candidate of every labelled photo, marked card or not.

A candidate is a card when it overlaps a labelled outline by ``POSITIVE_IOU`` or more, and not
a card when it overlaps every outline by less than ``NEGATIVE_IOU``; in between it is left out
(a card's half, or a card with a bit of table, teaches nothing clear). Boards labelled with card
centres only get outlines from the previous finder where it found a card on a labelled centre;
candidates over a labelled card it missed are left out.
"""

from __future__ import annotations

import hashlib
import inspect
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
from setvision.vision.find.candidates import make_maps
from setvision.vision.find.card_net import CardPaper
from setvision.vision.find.cardness import CardnessModel
from setvision.vision.find.describe import CONTEXT, FEATURES, with_context
from setvision.vision.find.finder import NAMED_INTERIOR, PLACE_INTERIOR, PaperLeft
from setvision.vision.fingerprint import code_fingerprint, package_modules
from setvision.vision.geometry import contains_point, convex_iou
from setvision.vision.image import load, resize_long_side
from setvision.vision.learn.augment import augment_for_finder
from setvision.vision.learn.find_eval import FindResult, FindTruth, score_found
from setvision.vision.learn.net_held_out import HeldOutNet, NetCards, held_out_net_cards
from setvision.vision.learn.training import _export_forest, _parallel, cache_dir

#: Candidates overlapping a labelled card at least this much (intersection/union) are cards.
POSITIVE_IOU = 0.7
#: Candidates overlapping every labelled card less than this are not cards.
NEGATIVE_IOU = 0.4
#: The work image's long side: cards about 25 px wide in a 1280 px photo stay 15 px wide.
WORK_LONG_SIDE = 800
#: A candidate is taken for a card at this probability.
ACCEPT = 0.5
#: Settings tried for sending a photo to the previous finder: unexplained paper (share of a
#: typical card; inf: never) and the probability of a doubtful candidate (above 1: never).
RECHECK_UNEXPLAINED = (0.4, 0.7, 1.0, 1.5, 2.5, float("inf"))
RECHECK_DOUBT = (0.1, 0.2, 0.3, 0.4, 1.01)
#: ... and the coloured ink that paper must hold (share of a typical card's area; 0: any paper).
RECHECK_INK = (0.0, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12)
#: ... and the card net's interior probability at which a card it sees that the fast makers'
#: cards do not explain sends the photo (inf: the net is not asked).
RECHECK_NET = (0.5, 0.7, 0.85, float("inf"))
#: The levels at which the net's cards are looked for (every finite one of ``RECHECK_NET``).
NET_LEVELS = tuple(level for level in RECHECK_NET if np.isfinite(level))
#: Every level the held-out net cards are kept at: the gate's, and the place levels of
#: ``finder`` (``PLACE_INTERIOR``: read as cards; ``NAMED_INTERIOR``: named as places).
CACHED_NET_LEVELS = tuple(sorted({*NET_LEVELS, PLACE_INTERIOR, NAMED_INTERIOR}))
#: Recall (share of cards) given up at most to send fewer photos to the previous finder: one
#: card in 2,000. It costs 60 to 100 ms a photo, and where the fast makers leave no paper
#: holding symbol ink unexplained it rarely adds a card.
RECHECK_RECALL_SLACK = 0.0005


#: Candidates overlapping a labelled outline by at least this (intersection over union) teach
#: the fit model how closely an outline follows its card; below it, a candidate is hardly an
#: outline of the card at all (the finder compares outlines overlapping by ``SAME_OUTLINE``).
FIT_FROM_IOU = 0.4
#: Trees in each look's forest.
TREES = 80
#: The forest's settings (besides its size and seed).
_FOREST = {"min_samples_leaf": 3, "max_depth": 16, "class_weight": "balanced_subsample"}
#: The fit model's forest: as good held out (by capture session) with 30 trees and leaves of 10
#: candidates as with the looks' 80 and 3 (mean overlap of the outlines kept 0.956 either way,
#: 0.945 without it), at a third of the size and time.
_FIT_FOREST = {"n_estimators": 30, "min_samples_leaf": 10, "max_depth": 16}
#: Bumped when what a photo's samples hold, or how they are labelled, changes.
PHOTO_SAMPLES = 4


@dataclass
class PhotoSamples:
    """The candidates of one labelled photo: features, labels (1, 0, or -1 left out)."""

    file: str
    source: str
    group: str
    features: np.ndarray
    labels: np.ndarray
    quads: np.ndarray  # (n, 4, 2) the candidates in work pixels
    to_original: float  # work pixels to the labels' pixels
    paper: np.ndarray  # the work image's paper mask (``Maps.paper``)
    ink: np.ndarray  # where coloured ink is printed, at the paper mask's size (``Maps.ink``)
    copy: str = ""  # the change of camera or light applied to the photo ("" for none)
    weight: float = 1.0  # each candidate's weight in fitting (see ``FinderCopy.weight``)


def _fingerprint() -> str:
    """Changes with the code and settings that make a photo's samples: the candidate makers
    (the previous finder's included), the features, the training copies and the labelling
    (decoding is OpenCV's)."""
    # no makers of the training samples: judging, the net, and outlining the net's places again
    judging = ("finder.py", "cardness.py", "card_net.py", "bars.py", "local_outline.py")
    judging += ("__init__.py",)
    makers = package_modules("setvision.vision.find", judging)
    makers.append("setvision.vision.learn.augment")
    settings = repr((POSITIVE_IOU, NEGATIVE_IOU, WORK_LONG_SIDE, PHOTO_SAMPLES, _FOREST))
    labelling = inspect.getsource(photo_samples).encode()
    return code_fingerprint(makers, (settings.encode(), labelling, cv2.__version__.encode()))[:12]


def _cache_path(kind: str, described: str) -> Path:
    """Where results of one ``kind`` for the data ``described`` are cached, keyed by the code
    that makes samples."""
    key = hashlib.sha1(described.encode()).hexdigest()[:8]
    return cache_dir() / f"finder-{kind}-{_fingerprint()}-{key}.pkl"


def _fitting_digest() -> str:
    """Changes with the code and settings that fit the held-out looks from the samples (a
    change there must not reuse held-out probabilities cached before it)."""
    from sklearn import __version__ as sklearn_version

    steps = (_forest, _labelled, fit_cardness, _second_look, held_out_first_looks,
             held_out_second_looks, with_context)  # fmt: skip
    digest = hashlib.sha1(repr((TREES, _FOREST, sklearn_version)).encode())
    for step in steps:
        digest.update(inspect.getsource(step).encode())
    return digest.hexdigest()[:12]


def _described(folds: dict[str, list[str]]) -> str:
    return repr(sorted((name, sorted(files)) for name, files in folds.items()))


def truths_digest(truths: list[FindTruth]) -> str:
    """A digest of where the truths put the cards (polygons, centres, what is ignored): it
    changes when a label or a correction (``labels/outline_fixes.jsonl``) does."""
    digest = hashlib.sha1()
    for t in sorted(truths, key=lambda t: t.file):
        places = [np.round(np.asarray(p, np.float64), 1).tolist() for p in t.polygons]
        ignored = [np.round(np.asarray(p, np.float64), 1).tolist() for p in t.ignore_polygons]
        digest.update(repr((t.file, places, ignored, t.centres, t.ignore_centres)).encode())
    return digest.hexdigest()[:12]


def _samples_digest(samples: list[PhotoSamples]) -> str:
    """A digest of the samples' labels, so models fitted on them are refitted when they change."""
    digest = hashlib.sha1()
    for s in sorted(samples, key=_key):
        digest.update(_key(s).encode() + np.ascontiguousarray(s.labels).tobytes())
    return digest.hexdigest()[:12]


def _centre_outlines(truth: FindTruth, image: np.ndarray) -> tuple[list, list]:
    """Outlines for a board labelled by centres: the previous finder's quads on its centres."""
    from setvision.vision.find.outlines import find_outlines
    from setvision.vision.learn.matching import match_by_position

    quads = [o.corners_xy for o in find_outlines(image)]
    pairs = match_by_position(quads, truth.centres)
    found = {i for i, _ in pairs}
    missed = [c for i, c in enumerate(truth.centres) if i not in found]
    return [quads[j] for _, j in pairs], missed + list(truth.ignore_centres)


def photo_samples(
    truth: FindTruth, work_long_side: int = WORK_LONG_SIDE, augmented: bool = False
) -> PhotoSamples:
    """Features and labels of every candidate of one photo (``augmented``: of a copy under
    another camera or light, see ``augment_for_finder``)."""
    from setvision.vision.find.candidates import dedupe, find_candidates, previous_candidates
    from setvision.vision.find.describe import describe_all

    photo = load(truth.path)
    polygons = [p / photo.scale for p in truth.polygons]
    unknown_centres = [(x / photo.scale, y / photo.scale) for x, y in truth.ignore_centres]
    if truth.centres:
        centres = [(x / photo.scale, y / photo.scale) for x, y in truth.centres]
        shifted = FindTruth(truth.file, truth.path, truth.source, centres=centres,
                            ignore_centres=unknown_centres)  # fmt: skip
        polygons, unknown_centres = _centre_outlines(shifted, photo.image)
    ignore = [np.asarray(p, np.float64) / photo.scale for p in truth.ignore_polygons]
    copy, image, weight = "", photo.image, 1.0
    if augmented:
        changed = augment_for_finder(photo.image, truth.file)
        copy, image, weight = changed.name, changed.image, changed.weight
        polygons = [q for p in polygons for q in changed.places(np.asarray(p, np.float64))]
        ignore = [q for p in ignore for q in changed.places(p)]
        unknown_centres = [
            (float(q[0, 0]), float(q[0, 1]))
            for c in unknown_centres
            for q in changed.places(np.array([c], np.float64))
        ]
    small, factor = resize_long_side(image, work_long_side)
    polygons = [np.asarray(p, np.float64) * factor for p in polygons]
    ignore = [p * factor for p in ignore]
    unknown_centres = [(x * factor, y * factor) for x, y in unknown_centres]
    maps = make_maps(small)
    candidates = dedupe(find_candidates(maps)) + previous_candidates(small)
    labels = []
    for candidate in candidates:
        quad = candidate.quad.astype(np.float64)
        best = max((convex_iou(p, quad) for p in polygons), default=0.0)
        if best >= POSITIVE_IOU:
            label = 1
        elif (
            best >= NEGATIVE_IOU
            or any(convex_iou(p, quad) >= NEGATIVE_IOU for p in ignore)
            or any(contains_point(quad, c) for c in unknown_centres)
        ):
            label = -1
        else:
            label = 0
        labels.append(label)
    features = describe_all(maps, candidates)
    return PhotoSamples(
        truth.file, truth.source, truth.group,
        np.array(features, np.float32).reshape(-1, len(FEATURES)), np.array(labels, np.int8),
        np.array([c.quad for c in candidates], np.float32).reshape(-1, 4, 2),
        photo.scale / factor, maps.paper(), maps.ink(), copy, weight,
    )  # fmt: skip


def _job(item: tuple[FindTruth, bool]) -> PhotoSamples | None:
    try:
        return photo_samples(item[0], augmented=item[1])
    except Exception:  # an unreadable photo is left out of training, not fatal
        return None


def all_samples(
    truths: list[FindTruth], jobs: int = 1, progress: Callable[[str], None] | None = None
) -> list[PhotoSamples]:
    """Every photo's candidates, cached on disk by the code that makes and measures them."""
    files = "\n".join(sorted(t.file for t in truths))
    path = _cache_path("samples", f"{files}\n{truths_digest(truths)}")
    if path.is_file():
        return pickle.loads(path.read_bytes())
    samples = []
    items = [(t, False) for t in truths] + [(t, True) for t in truths]
    for result in _parallel(_job, items, jobs):
        if result is not None:
            samples.append(result)
        if progress:
            progress(result.file if result else "")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(samples))
    return samples


def _forest(
    x: np.ndarray, y: np.ndarray, w: np.ndarray, names: tuple[str, ...], trees: int, seed: int
):
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(n_estimators=trees, n_jobs=2, random_state=seed, **_FOREST)
    forest.fit(np.nan_to_num(x, nan=-1e3), y, sample_weight=w)
    return _export_forest(forest, names)


def _labelled(samples: list[PhotoSamples], rows) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and weights of every candidate that teaches something."""
    x = np.concatenate([rows(s) for s in samples])
    y = np.concatenate([s.labels for s in samples])
    w = np.concatenate([np.full(len(s.labels), s.weight) for s in samples])
    return x[y >= 0], y[y >= 0], w[y >= 0]


def fit_cardness(
    samples: list[PhotoSamples],
    first: dict[str, np.ndarray] | None = None,
    trees: int = TREES,
    seed: int = 0,
) -> CardnessModel:
    """The first look over every labelled candidate (left-out ones excluded) and, given
    held-out first-look probabilities of every photo (``first``: key -> probabilities), the
    second look that compares a candidate with the photo's likely cards."""
    x, y, w = _labelled(samples, lambda s: s.features)
    trained = {
        "photos": len(samples),
        "candidates": int(len(y)),
        "cards": int(y.sum()),
        "sources": sorted({s.source for s in samples}),
    }
    model = CardnessModel(_forest(x, y, w, FEATURES, trees, seed), ACCEPT, WORK_LONG_SIDE, trained)
    if first is None:
        return model
    return replace(model, context_forest=_second_look(samples, first, trees, seed))


def outline_overlaps(samples: list[PhotoSamples], truths: list[FindTruth]) -> dict[str, np.ndarray]:
    """Each candidate's overlap (intersection over union) with the labelled outline it overlaps
    most, for every original photo whose cards are outlined (key: ``_key``); photos labelled by
    centres have no outline to measure against, and the copies' outlines are not kept."""
    outlined = {t.file: t for t in truths if t.polygons and not t.centres}
    overlaps = {}
    for photo in samples:
        truth = outlined.get(photo.file)
        if truth is None or photo.copy:
            continue
        cards = [np.asarray(p, np.float64) / photo.to_original for p in truth.polygons]
        boxes = np.array([[*c.min(axis=0), *c.max(axis=0)] for c in cards])
        best = np.zeros(len(photo.quads))
        for i, quad in enumerate(photo.quads.astype(np.float64)):
            low, high = quad.min(axis=0), quad.max(axis=0)
            meet = (boxes[:, :2] < high).all(axis=1) & (boxes[:, 2:] > low).all(axis=1)
            best[i] = max((convex_iou(cards[k], quad) for k in np.flatnonzero(meet)), default=0.0)
        overlaps[_key(photo)] = best
    return overlaps


def fit_outline_fit(samples: list[PhotoSamples], overlaps: dict[str, np.ndarray], seed: int = 0):
    """The fit model (``CardnessModel.fit_forest``): a regression forest over ``FEATURES`` from
    each candidate overlapping a labelled outline by ``FIT_FROM_IOU`` or more to that overlap."""
    from sklearn.ensemble import RandomForestRegressor

    measured = [s for s in samples if _key(s) in overlaps]
    x = np.concatenate([s.features for s in measured])
    y = np.concatenate([overlaps[_key(s)] for s in measured])
    near = y >= FIT_FROM_IOU
    forest = RandomForestRegressor(n_jobs=2, random_state=seed, **_FIT_FOREST)
    forest.fit(np.nan_to_num(x[near], nan=-1e3), y[near])
    return _export_forest(forest, FEATURES)


def _fits_cache_path(
    samples: list[PhotoSamples], truths: list[FindTruth], folds: dict[str, list[str]], seed: int
) -> Path:
    """Where ``held_out_fits`` caches its fits: keyed, besides the looks' fitting, by the fit
    forest's settings and the code that labels and fits it."""
    steps = inspect.getsource(outline_overlaps) + inspect.getsource(fit_outline_fit)
    described = _described(folds) + _samples_digest(samples) + _fitting_digest() + steps
    described += repr(_FIT_FOREST) + _seed_key(seed)
    return _cache_path("fits", described + truths_digest(truths))


def held_out_fits(
    samples: list[PhotoSamples],
    truths: list[FindTruth],
    folds: dict[str, list[str]],
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Every original photo's candidates' fits from a fit model fitted without its fold (the
    photos of folds without outlined photos share the model fitted on every outlined photo),
    its forests drawn with ``seed``; cached on disk."""
    path = _fits_cache_path(samples, truths, folds, seed)
    if path.is_file():
        return pickle.loads(path.read_bytes())
    overlaps = outline_overlaps(samples, truths)
    measured = {s.file for s in samples if _key(s) in overlaps}
    every = None
    fits = {}
    for name, files in folds.items():
        held = set(files)
        if held & measured:
            forest = fit_outline_fit([s for s in samples if s.file not in held], overlaps, seed)
        else:
            if every is None:
                every = fit_outline_fit(samples, overlaps, seed)
            forest = every
        model = replace(_levels(), fit_forest=forest)
        for photo in (s for s in samples if s.file in held and not s.copy):
            fits[_key(photo)] = model.fit(photo.features)
        if progress:
            progress(name)
    path.write_bytes(pickle.dumps(fits))
    return fits


def _second_look(samples: list[PhotoSamples], first: dict[str, np.ndarray], trees: int, seed: int):
    x, y, w = _labelled(samples, lambda s: with_context(s.features, first[_key(s)]))
    return _forest(x, y, w, FEATURES + CONTEXT, trees, seed)


def _seed_key(seed: int) -> str:
    """What a cache key adds for forests drawn with ``seed`` (nothing for the default, 0)."""
    return f"seed {seed}" if seed else ""


def _key(s: PhotoSamples) -> str:
    return f"{s.file} ({s.copy})" if s.copy else s.file


def held_out_first_looks(
    samples: list[PhotoSamples],
    folds: dict[str, list[str]],
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Every photo's (and copy's) first-look probabilities from a model fitted without its
    fold (``folds``: name -> files; a photo's copies leave training with it), drawn with
    ``seed``; cached on disk."""
    described = _described(folds) + _samples_digest(samples) + _fitting_digest()
    path = _cache_path("first", described + _seed_key(seed))
    if path.is_file():
        return pickle.loads(path.read_bytes())
    probabilities = {}
    for name, files in folds.items():
        held = set(files)
        model = fit_cardness([s for s in samples if s.file not in held], seed=seed)
        for photo in (s for s in samples if s.file in held):
            probabilities[_key(photo)] = model.first_look(photo.features)
        if progress:
            progress(name)
    path.write_bytes(pickle.dumps(probabilities))
    return probabilities


@dataclass
class HeldOut:
    """One photo's candidate probabilities from models fitted without its fold: with the
    fast makers' candidates alone, and with the previous finder's too."""

    photo: PhotoSamples
    fast: np.ndarray
    all: np.ndarray
    #: each candidate's fit (``CardnessModel.fit``) from a fit model fitted without the fold
    #: (None: no fit model, the likeliest outline of each card is kept)
    fits: np.ndarray | None = None


def held_out_second_looks(
    samples: list[PhotoSamples],
    folds: dict[str, list[str]],
    first: dict[str, np.ndarray],
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
) -> list[HeldOut]:
    """Every original photo's probabilities as ``find_cards`` computes them, the second look
    fitted without the photo's fold (drawn with ``seed``); cached on disk."""
    described = _described(folds) + _samples_digest(samples) + _fitting_digest()
    path = _cache_path("second", described + _seed_key(seed))
    by_key = {_key(s): s for s in samples}
    if path.is_file():
        cached = pickle.loads(path.read_bytes())
        return [HeldOut(by_key[k], fast, every) for k, fast, every in cached]
    results = []
    previous_column = FEATURES.index("maker_previous")
    for name, files in folds.items():
        held = set(files)
        training = [s for s in samples if s.file not in held]
        second = _second_look(training, first, TREES, seed)
        model = CardnessModel(None, ACCEPT, WORK_LONG_SIDE, {},  # type: ignore[arg-type]
                              context_forest=second)  # fmt: skip
        for photo in (s for s in samples if s.file in held and not s.copy):
            p1 = first[_key(photo)]
            fast = photo.features[:, previous_column] < 0.5
            results.append(
                HeldOut(photo, model.probability(photo.features[fast], p1[fast]),
                        model.probability(photo.features, p1))
            )  # fmt: skip
        if progress:
            progress(name)
    path.write_bytes(pickle.dumps([(_key(h.photo), h.fast, h.all) for h in results]))
    return results


@dataclass(frozen=True)
class HeldOutOutlines:
    """One held-out photo's cards as ``find_cards`` gives them: quads (in the labels' pixels)
    and the model's probability that each is a card."""

    file: str
    quads: tuple[np.ndarray, ...]
    probabilities: tuple[float, ...]
    #: where the card net sees a card that no card explains, as ``finder.net_places`` gives
    #: them (labels' pixels, not yet snapped), and how far ``find_cards`` snaps their sides
    net_places: tuple[np.ndarray, ...] = ()
    snap_reach: float = 0.0
    #: where ``find_cards`` says a card may have been missed (``Found.possible``; labels' pixels)
    possible: tuple[np.ndarray, ...] = ()


@dataclass(frozen=True)
class SentOrNot:
    """One held-out photo judged both ways (the fast makers alone; with the previous finder
    too), and what decides whether it is sent: the paper left, the likeliest doubt, and the
    card net's interior levels at which it sees a card the fast makers' cards do not explain."""

    fast: FindResult
    both: FindResult
    left: PaperLeft
    doubt: float
    fast_outlines: HeldOutOutlines | None = None
    both_outlines: HeldOutOutlines | None = None
    net_sees_more: frozenset[float] = frozenset()
    net: NetCards | None = None  # the card net's cards (work pixels) by interior level
    fast_doubts: np.ndarray | None = None  # the doubts beside the cards found (work pixels)
    both_doubts: np.ndarray | None = None
    to_original: float = 1.0  # work pixels to the labels' pixels
    paper: CardPaper | None = None  # the card net's card map (where it sees card paper)

    def sent(self, model: CardnessModel) -> bool:
        """Whether ``find_cards`` with ``model``'s levels asks the previous finder (as
        ``finder.needs_previous`` and ``finder.net_sees_more`` decide)."""
        if model.net_interior in self.net_sees_more:
            return True
        unexplained = self.left.holds(model.unexplained, model.unexplained_ink)
        return unexplained or self.doubt >= model.recheck

    def outlines(self, model: CardnessModel) -> HeldOutOutlines | None:
        """The cards found with ``model``'s levels for sending a photo to the previous finder,
        the places where the net sees a card that none explains (``Found.net_places``), and
        where a card may have been missed (``Found.possible``)."""
        from setvision.vision.find.finder import (
            named_places,
            net_places,
            unexplained_cards,
        )
        from setvision.vision.find.outlines import SNAP_PX
        from setvision.vision.geometry import order_corners

        sent = self.sent(model)
        found = self.both_outlines if sent else self.fast_outlines
        if found is None:
            return None
        asked = np.isfinite(model.net_interior)
        seen = (self.net or {}).get(PLACE_INTERIOR, []) if asked else []
        quads = np.array(found.quads, np.float32).reshape(-1, 4, 2) / np.float32(self.to_original)
        doubts = self.both_doubts if sent else self.fast_doubts
        doubts = np.zeros((0, 4, 2), np.float32) if doubts is None else doubts
        gate = (self.net or {}).get(model.net_interior, []) if asked else []
        surer = (self.net or {}).get(NAMED_INTERIOR, []) if asked else []
        paper = self.paper if asked else None
        possible = named_places(unexplained_cards(gate, quads), surer, quads, doubts, paper)
        found = replace(found, possible=tuple(order_corners(q) * self.to_original
                                              for q in possible))  # fmt: skip
        if not seen:
            return found
        places = net_places(seen, quads, doubts)
        return replace(found, net_places=tuple(q * self.to_original for q in places),
                       snap_reach=SNAP_PX * self.to_original)  # fmt: skip


def both_ways(
    truth: FindTruth, held: HeldOut, model: CardnessModel, seen_by: HeldOutNet | None = None
) -> SentOrNot:
    """One photo's results as ``find_cards`` would give them, sent or not (``model``'s
    acceptance and doubt levels; ``seen_by``: the card net's view of it). The previous
    finder's outlines where the net sees no card paper are left out, as ``find_cards`` leaves
    them (``finder.on_card_of``); its symbol groups searched there are not replayed."""
    from setvision.vision.find.candidates import Candidate
    from setvision.vision.find.finder import (
        Judged,
        doubtful,
        net_sees_more,
        on_card_of,
        paper_left,
        pick_cards,
    )

    photo = held.photo
    fast = photo.features[:, FEATURES.index("maker_previous")] < 0.5

    def judged(rows: np.ndarray, probability: np.ndarray) -> list[Judged]:
        return [
            Judged(Candidate(q, 0.0, 0.0, 0), f, float(p))
            for q, f, p in zip(photo.quads[rows], photo.features[rows], probability)
        ]

    def outlines(chosen: list[Judged]) -> HeldOutOutlines:
        return HeldOutOutlines(
            truth.file,
            tuple(j.candidate.quad * photo.to_original for j in chosen),
            tuple(j.probability for j in chosen),
        )

    def result(found_outlines: HeldOutOutlines, sent: bool) -> FindResult:
        found, false = score_found(truth, list(found_outlines.quads))
        return FindResult(truth.file, truth.source, truth.group, truth.labelled, found,
                          len(found_outlines.quads), false, 0.0, fallback=sent)  # fmt: skip

    def quads_of(items: list[Judged]) -> np.ndarray:
        return np.array([j.candidate.quad for j in items], np.float32).reshape(-1, 4, 2)

    def pick(items: list[Judged], rows: np.ndarray) -> list[Judged]:
        return pick_cards(items, model.accept, None if held.fits is None else held.fits[rows])

    candidates = judged(fast, held.fast)
    chosen = pick(candidates, fast)
    quads = quads_of(chosen)
    left = paper_left(photo.paper, photo.ink, quads, min(RECHECK_UNEXPLAINED))
    doubts = doubtful(candidates, chosen, model)
    doubt = max((j.probability for j in doubts), default=0.0)
    counted = np.ones(len(fast), bool)
    if seen_by is not None and (~fast).any():
        counted[~fast] = on_card_of(seen_by.paper)(photo.quads[~fast].mean(axis=1))
    every_candidate = judged(counted, held.all[counted])
    net = None if seen_by is None else seen_by.cards
    everything = pick(every_candidate, counted)
    alone, both = outlines(chosen), outlines(everything)
    seen = frozenset(level for level, cards in (net or {}).items() if net_sees_more(cards, quads))
    both_doubts = quads_of(doubtful(every_candidate, everything, model))
    return SentOrNot(result(alone, False), result(both, True), left, doubt, alone, both, seen,
                     net, quads_of(doubts), both_doubts, photo.to_original,
                     None if seen_by is None else seen_by.paper)  # fmt: skip


def judge_held_out(
    truths: list[FindTruth],
    held: list[HeldOut],
    model: CardnessModel,
    net: dict[str, HeldOutNet] | None = None,
) -> list[SentOrNot]:
    """Every held-out photo judged both ways with ``model``'s acceptance and doubt levels (the
    levels that send a photo to the previous finder are applied after, by ``SentOrNot.sent``);
    ``net``: each photo's held-out card-net cards (none: the net never sends a photo)."""
    by_file = {t.file: t for t in truths}
    net = net or {}
    return [both_ways(by_file[h.photo.file], h, model, net.get(h.photo.file)) for h in held]


def held_out_results(
    judged: list[SentOrNot], model: CardnessModel, previous: bool = True
) -> list[FindResult]:
    """The ``judged`` photos' results with ``model``'s levels for sending a photo to the
    previous finder (with ``previous`` false: by the fast makers alone, never sent)."""
    return [j.both if previous and j.sent(model) else j.fast for j in judged]


def choose_recheck(
    judged: list[SentOrNot], model: CardnessModel
) -> tuple[CardnessModel, list[tuple[float, float, float, float, float, float]]]:
    """The levels that send a photo to the previous finder, learned from the ``judged``
    held-out photos: the fewest photos sent among the settings within ``RECHECK_RECALL_SLACK``
    of the best recall (the previous finder is slow; most photos do not need it); and every
    setting tried as (unexplained, ink, recheck, net, recall, share of photos sent)."""
    labelled = max(1, sum(j.fast.labelled for j in judged))
    options = []
    for unexplained, ink, recheck, net in _recheck_settings():
        levels = replace(model, unexplained=unexplained, unexplained_ink=ink, recheck=recheck,
                         net_interior=net)  # fmt: skip
        sent = [j.sent(levels) for j in judged]
        found = sum(j.both.found if s else j.fast.found for j, s in zip(judged, sent))
        options.append((found / labelled, float(np.mean(sent)), levels))
    best = max(found for found, _, _ in options)
    chosen = min((o for o in options if o[0] >= best - RECHECK_RECALL_SLACK), key=lambda o: o[1])
    tried = [(m.unexplained, m.unexplained_ink, m.recheck, m.net_interior, found, sent)
             for found, sent, m in options]  # fmt: skip
    return chosen[2], tried


def _recheck_settings():
    """Every (unexplained, ink, doubt, net) setting ``choose_recheck`` tries."""
    for unexplained in RECHECK_UNEXPLAINED:
        for ink in RECHECK_INK if np.isfinite(unexplained) else (0.0,):
            for recheck in RECHECK_DOUBT:
                for net in RECHECK_NET:
                    yield unexplained, ink, recheck, net


def source_folds(samples: list[PhotoSamples], split_source: str) -> dict[str, list[str]]:
    """One fold per source; ``split_source`` is split by capture session instead."""
    folds: dict[str, list[str]] = {}
    for s in samples:
        if s.copy:
            continue
        name = f"{s.source} {s.group}" if s.source == split_source else s.source
        folds.setdefault(name, []).append(s.file)
    return folds


NEW_SOURCE = "TheBananaBender/Set_vision_player"


def new_or_older(results: list[FindResult]) -> list[FindResult]:
    """``results`` with every source but the new one named "older sources"."""
    return [r if r.source == NEW_SOURCE else replace(r, source="older sources") for r in results]


def finder_truths(data_dir: Path) -> list[FindTruth]:
    """Every photo whose cards are all placed: outlines, and boards with card centres."""
    from setvision.vision.learn.dataset import load_boards
    from setvision.vision.learn.find_eval import centre_truths, outline_truths

    boards = [b for b in load_boards(data_dir=data_dir, include_samples=False) if b.kind != "noisy"]
    return outline_truths(data_dir) + centre_truths(boards)


def _without_source(
    samples: list[PhotoSamples],
    source: str,
    progress: Callable[[str], None] | None,
    seed: int = 0,
) -> list[HeldOut]:
    """``source``'s photos judged by both looks fitted with none of it (drawn with ``seed``):
    the other sources' first looks held out among themselves, the second look fitted on those."""
    others = [s for s in samples if s.source != source]
    first = held_out_first_looks(others, source_folds(others, source), progress, seed)
    unseen = {source: [s.file for s in samples if s.source == source and not s.copy]}
    first.update(held_out_first_looks(samples, unseen, progress, seed))
    return held_out_second_looks(samples, unseen, first, progress, seed)


def _levels() -> CardnessModel:
    """The decision levels alone (no forest): for judging held-out probabilities."""
    return CardnessModel(None, ACCEPT, WORK_LONG_SIDE, {})  # type: ignore[arg-type]


@dataclass
class FinderReport:
    """A fitted finder and how it did on photos held out of its fitting."""

    model: CardnessModel
    held_out: list[FindResult]  # each source (the new one: each capture session) left out
    unseen_source: list[FindResult]  # the new source, with none of it in training
    #: (unexplained, ink, recheck, net, recall, share of photos sent to the previous finder)
    recheck_options: list[tuple[float, float, float, float, float, float]]
    #: ``held_out`` by the fast makers alone: what the previous finder's time buys, per source
    fast_only: list[FindResult] = field(default_factory=list)
    #: the cards found on each photo of ``held_out`` and ``unseen_source`` (same order)
    held_out_outlines: list[HeldOutOutlines | None] = field(default_factory=list)
    unseen_outlines: list[HeldOutOutlines | None] = field(default_factory=list)


def train_finder(
    data_dir: Path,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
    held_out_seed: int = 0,
) -> FinderReport:
    """The finder's two looks fitted on every labelled photo (the second look on held-out
    first looks), the decision levels learned from held-out results, and those results.
    ``seed`` draws the shipped forests, ``held_out_seed`` the held-out ones (and so the
    levels and the held-out figures): another seed shows how much a draw alone moves them."""
    truths = finder_truths(data_dir)
    samples = all_samples(truths, jobs)
    folds = source_folds(samples, NEW_SOURCE)
    first = held_out_first_looks(samples, folds, progress, held_out_seed)
    held = held_out_second_looks(samples, folds, first, progress, held_out_seed)
    fits = held_out_fits(samples, truths, folds, progress, held_out_seed)
    held = [replace(h, fits=fits.get(_key(h.photo))) for h in held]
    acceptance = _levels()
    net = held_out_net_cards(truths, WORK_LONG_SIDE, CACHED_NET_LEVELS, None, jobs, progress)
    judged = judge_held_out(truths, held, acceptance, net)
    levels, tried = choose_recheck(judged, acceptance)
    net_unseen = held_out_net_cards(
        [t for t in truths if t.source == NEW_SOURCE], WORK_LONG_SIDE, CACHED_NET_LEVELS,
        NEW_SOURCE, jobs, progress,
    )  # fmt: skip
    unseen = _without_source(samples, NEW_SOURCE, progress, held_out_seed)
    judged_unseen = judge_held_out(truths, unseen, levels, net_unseen)
    model = fit_cardness(samples, first, seed=seed)
    fit_forest = fit_outline_fit(samples, outline_overlaps(samples, truths), seed=seed)
    trained_on = {**model.trained_on, **levels.trained_on}
    return FinderReport(
        replace(
            model,
            unexplained=levels.unexplained,
            unexplained_ink=levels.unexplained_ink,
            recheck=levels.recheck,
            net_interior=levels.net_interior,
            trained_on=trained_on,
            fit_forest=fit_forest,
        ),  # fmt: skip
        held_out_results(judged, levels),
        held_out_results(judged_unseen, levels),
        tried,
        held_out_results(judged, levels, previous=False),
        [j.outlines(levels) for j in judged],
        [j.outlines(levels) for j in judged_unseen],
    )
