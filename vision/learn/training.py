"""Fit the attribute models from labelled card crops and board photos.

Samples are the features of rectified cards: single-card crops from ``shared/data/cards``
(the card is found inside each crop) and cards found on labelled board photos (paired with
their labels by position). Features are cached on disk keyed by the code that computes them,
so refitting and leave-one-source-out runs do not measure every photo again.
"""

from __future__ import annotations

import csv
import hashlib
import logging
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import cv2
import numpy as np
from setvision.solver import ATTRIBUTES, VALUES, Card
from setvision.vision.find.finder import find_cards
from setvision.vision.find.outlines import Outline, find_outlines
from setvision.vision.fingerprint import code_fingerprint, package_modules
from setvision.vision.geometry import pixel_corners
from setvision.vision.image import load
from setvision.vision.learn.augment import augment
from setvision.vision.learn.dataset import Board, default_data_dir, load_boards
from setvision.vision.learn.matching import match_by_position
from setvision.vision.pipeline import CardReader, MeasuredCard
from setvision.vision.read.classify import FEATURE_CODE, AttributeModels, ForestModel, Tempering
from setvision.vision.read.features import FEATURE_GROUPS, FEATURE_NAMES

logger = logging.getLogger(__name__)

FOREST = {
    "n_estimators": 60,
    "max_depth": 12,
    "min_samples_leaf": 3,
    "random_state": 0,
    "n_jobs": 2,
}


@dataclass(frozen=True)
class Sample:
    """One rectified card's features and its true identity."""

    vector: np.ndarray  # FEATURE_NAMES order
    card: Card
    source: str
    origin: str  # "crop" or "board"
    file: str


def card_in_crop(crop: np.ndarray) -> Outline:
    """The card's outline inside a single-card crop (the whole crop when it is cut tight)."""
    height, width = crop.shape[:2]
    pad = max(height, width) // 2
    padded = cv2.copyMakeBorder(crop, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=(20, 20, 20))
    outlines = find_outlines(padded)
    if outlines:
        best = max(outlines, key=lambda o: cv2.contourArea(o.corners_xy))
        corners = best.corners_xy - pad
        if cv2.contourArea(corners) > 0.06 * height * width:
            corners[:, 0] = np.clip(corners[:, 0], 0, width - 1)
            corners[:, 1] = np.clip(corners[:, 1], 0, height - 1)
            return Outline(corners.astype(np.float32), False, False, best.long_side)
    whole = pixel_corners(width, height)
    return Outline(whole, False, False, 0 if width >= height else 1)


def _crop_sample(row: dict, data_dir: str, augmented: bool = False) -> Sample | None:
    crop = cv2.imread(os.path.join(data_dir, row["file"]))
    if crop is None:
        return None
    origin, file = "crop", row["file"]
    if augmented:
        change, crop = augment(crop, row["file"])
        origin, file = "augmented", f"{file} ({change})"
    measured = CardReader.measure_outline(crop, card_in_crop(crop))
    if not isinstance(measured, MeasuredCard):
        return None  # no symbols found: nothing a reader would classify either
    card = Card(int(row["number"]), row["color"], row["shading"], row["shape"])
    return Sample(measured.features.vector(), card, row["source"], origin, file)


def _board_samples(board: Board, augmented: bool = False) -> list[Sample]:
    """The cards read on a labelled board, measured as the reader measures them (a card cut by
    the photo's edge only as far as the photo shows it: completed, its rest is no real pixels)."""
    photo = load(board.path)
    image, origin, file = photo.image, "board", board.file
    if augmented:
        change, image = augment(image, board.file)
        origin, file = "augmented", f"{file} ({change})"
    outlines = find_cards(image).outlines
    quads = [o.corners_xy * photo.scale for o in outlines]
    pairs = match_by_position(quads, [c.centre for c in board.cards])
    samples = []
    for label_index, outline_index in pairs:
        measured = CardReader.measure_outline(image, outlines[outline_index], complete_cut=False)
        if isinstance(measured, MeasuredCard):
            card = board.cards[label_index].card
            samples.append(Sample(measured.features.vector(), card, board.source, origin, file))
    return samples


#: Besides the feature code (``FEATURE_CODE``), the code that decides a sample's features: how
#: photos are decoded and changed, and where cards are found on boards (with ``vision/find/``).
SAMPLE_CODE = (
    "setvision.vision.geometry",
    "setvision.vision.image",
    "setvision.vision.pipeline",
    "setvision.vision.learn.augment",
)


def _code_fingerprint() -> str:
    """Changes whenever the code that turns a photo into features changes."""
    finding = package_modules("setvision.vision.find")
    extra = [cv2.__version__.encode()]
    finder = resources.files("setvision.vision") / "models" / "finder.json"
    if finder.is_file():  # the boards' cards are found with it
        extra.insert(0, finder.read_bytes())
    return code_fingerprint((*FEATURE_CODE, *SAMPLE_CODE, *finding), extra)[:12]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "setvision"


def _cached(name: str, build: Callable[[], list[Sample]]) -> list[Sample]:
    path = cache_dir() / f"{name}-{_code_fingerprint()}.npz"
    if path.is_file():
        data = np.load(path, allow_pickle=False)
        return [
            Sample(v, Card.from_index(int(i)), s, o, f)
            for v, i, s, o, f in zip(
                data["X"], data["card"], data["source"], data["origin"], data["files"]
            )
        ]
    samples = build()
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        X=np.array([s.vector for s in samples]).reshape(len(samples), len(FEATURE_NAMES)),
        card=np.array([s.card.index for s in samples]),
        source=np.array([s.source for s in samples]),
        origin=np.array([s.origin for s in samples]),
        files=np.array([s.file for s in samples]),
    )
    return samples


def _parallel(function, items: list, jobs: int) -> Iterable:
    if jobs <= 1:
        return map(function, items)
    executor = ProcessPoolExecutor(max_workers=jobs)
    return executor.map(function, items, chunksize=8)


def _crop_job(args: tuple[dict, str, bool]) -> Sample | None:
    return _crop_sample(*args)


def _board_job(args: tuple[Board, bool]) -> list[Sample]:
    return _board_samples(*args)


def crop_samples(
    data_dir: Path | None = None, jobs: int = 1, augmented: bool = False
) -> list[Sample]:
    """Samples from every single-card crop listed in ``cards.csv`` (``augmented``: from their
    copies under another camera or light instead)."""
    data_dir = data_dir or default_data_dir()

    def build() -> list[Sample]:
        return measure_crops(crop_rows(data_dir), data_dir, jobs, augmented)

    return _cached("crops-augmented" if augmented else "crops", build)


def crop_rows(data_dir: Path | None = None) -> list[dict]:
    """The rows of ``cards.csv``: each crop's ``file``, identity and ``source``."""
    with open((data_dir or default_data_dir()) / "cards.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def measure_crops(
    rows: list[dict], data_dir: Path, jobs: int = 1, augmented: bool = False
) -> list[Sample]:
    """Samples from the crops of ``rows`` of ``cards.csv``, measured now (not cached); crops
    without symbols give none."""
    logger.info("measuring %d card crops", len(rows))
    found = _parallel(_crop_job, [(row, str(data_dir), augmented) for row in rows], jobs)
    return [s for s in found if s is not None]


def board_samples(boards: list[Board], jobs: int = 1, augmented: bool = False) -> list[Sample]:
    """Samples from the cards found on boards whose labels give positions and are trusted
    (``augmented``: on their copies under another camera or light instead)."""
    usable = [b for b in boards if b.has_positions and b.kind != "noisy"]
    key = hashlib.sha1("\n".join(sorted(repr((b.file, b.cards)) for b in usable)).encode())

    def build() -> list[Sample]:
        logger.info("measuring cards on %d boards", len(usable))
        items = [(board, augmented) for board in usable]
        return [s for found in _parallel(_board_job, items, jobs) for s in found]

    name = "boards-augmented" if augmented else "boards"
    return _cached(f"{name}-{key.hexdigest()[:8]}", build)


def training_samples(
    data_dir: Path | None = None, jobs: int = 1, boards: bool = True, augmented: bool = True
) -> list[Sample]:
    """Everything the models learn from: the crops, the labelled boards' cards (``boards``),
    and the same under other cameras and lights (``augmented``)."""
    data_dir = data_dir or default_data_dir()
    labelled = load_boards(data_dir=data_dir, include_samples=False) if boards else []
    samples = crop_samples(data_dir, jobs) + board_samples(labelled, jobs)
    if augmented:
        samples += crop_samples(data_dir, jobs, True) + board_samples(labelled, jobs, True)
    return samples


def _export_forest(forest, features: tuple[str, ...]) -> ForestModel:
    roots, feature, threshold, left, right, value = [], [], [], [], [], []
    offset, depth = 0, 0
    for estimator in forest.estimators_:
        tree = estimator.tree_
        n = tree.node_count
        roots.append(offset)
        is_leaf = tree.children_left == -1
        feature.append(np.where(is_leaf, -1, tree.feature))
        threshold.append(tree.threshold)
        left.append(np.where(is_leaf, -1, tree.children_left + offset))
        right.append(np.where(is_leaf, -1, tree.children_right + offset))
        leaf_values = tree.value[:, 0, :]
        if leaf_values.shape[1] == 1:  # a regression tree's mean (0 to 1) as class 1's share
            leaf_values = np.hstack([1 - leaf_values, leaf_values]).clip(0, 1)
        leaf_values = leaf_values / np.maximum(leaf_values.sum(axis=1, keepdims=True), 1e-12)
        value.append(leaf_values)
        depth = max(depth, estimator.get_depth())
        offset += n
    return ForestModel(
        features,
        np.array(roots),
        np.concatenate(feature),
        np.concatenate(threshold),
        np.concatenate(left),
        np.concatenate(right),
        np.concatenate(value),
        depth,
    )


def fit_tempering(p: np.ndarray, y: np.ndarray) -> Tempering:
    """The temperature and floor that make out-of-source probabilities most honest (log loss)."""
    best, best_loss = Tempering(), np.inf
    for temperature in (1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0):
        for floor in (0.0, 0.005, 0.01, 0.02, 0.04, 0.08):
            candidate = Tempering(temperature, floor)
            q = candidate.apply(p)
            loss = -np.mean(np.log(np.clip(q[np.arange(len(y)), y], 1e-12, 1.0)))
            if loss < best_loss:
                best, best_loss = candidate, loss
    return best


def _out_of_source(
    x: np.ndarray, y: np.ndarray, groups: np.ndarray, settings: dict, folds: int = 5
) -> np.ndarray:
    """Probabilities for every sample from forests that never saw its source."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GroupKFold

    p = np.zeros((len(y), 3))
    for train, test in GroupKFold(n_splits=min(folds, len(set(groups)))).split(x, y, groups):
        forest = RandomForestClassifier(**settings).fit(x[train], y[train])
        p[np.ix_(test, forest.classes_)] = forest.predict_proba(x[test])
    return p


def fit_models(
    samples: list[Sample], note: dict | None = None, temper: bool = True, forest: dict | None = None
) -> AttributeModels:
    """One random forest per attribute, each on its own group of features, honestly tempered.

    ``forest`` changes settings of ``FOREST`` (e.g. fewer trees for a quick measurement).
    """
    from sklearn.ensemble import RandomForestClassifier

    settings = {**FOREST, **(forest or {})}
    if not samples:
        raise ValueError("no samples to fit")
    x = np.stack([s.vector for s in samples])
    groups = np.array([s.source for s in samples])
    models, tempering = {}, {}
    for attribute in ATTRIBUTES:
        names = FEATURE_GROUPS[attribute]
        columns = [FEATURE_NAMES.index(n) for n in names]
        y = np.array([VALUES[attribute].index(s.card.value(attribute)) for s in samples])
        if len(set(y.tolist())) < 3:
            raise ValueError(f"the samples lack some values of {attribute}")
        fitted = RandomForestClassifier(**settings).fit(x[:, columns], y)
        models[attribute] = _export_forest(fitted, names)
        if temper and len(set(groups.tolist())) >= 3:
            held_out = _out_of_source(x[:, columns], y, groups, settings)
            tempering[attribute] = fit_tempering(held_out, y)
    sources = sorted({s.source for s in samples})
    trained_on = {
        "samples": len(samples),
        "crops": sum(s.origin == "crop" for s in samples),
        "board_cards": sum(s.origin == "board" for s in samples),
        "augmented": sum(s.origin == "augmented" for s in samples),
        "sources": sources,
        "forest": settings,
        **(note or {}),
    }
    return AttributeModels(models, trained_on, tempering or None)


def fit_without_source(
    samples: list[Sample],
    source: str,
    tempering: dict[str, Tempering] | None,
    forest: dict | None = None,
) -> AttributeModels:
    """Models fitted on every sample but those of ``source`` (a deck they have never seen),
    with ``forest`` settings changed as ``fit_models`` allows."""
    return fit_without(samples, [source], tempering, forest)


def fit_without(
    samples: list[Sample],
    sources: Iterable[str],
    tempering: dict[str, Tempering] | None,
    forest: dict | None = None,
) -> AttributeModels:
    """Models fitted on every sample but those of ``sources`` (decks they have never seen),
    with ``forest`` settings changed as ``fit_models`` allows.

    Tempering is itself fitted out of source, so the shipped model's is reused as it is.
    """
    held_out = {source.replace(" (sample)", "") for source in sources}
    kept = [s for s in samples if s.source not in held_out]
    fitted = fit_models(kept, temper=False, forest=forest)
    return AttributeModels(fitted.models, fitted.trained_on, tempering)
