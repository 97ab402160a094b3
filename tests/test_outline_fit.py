"""Of several outlines of one card, the finder keeps the one its fit model rates closest: drawn
quads with exact overlaps, the fit forest in the model file, and the regression forest's export."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from setvision.vision.find import finder
from setvision.vision.find.candidates import Candidate
from setvision.vision.find.cardness import (
    CardnessModel,
    FinderModelError,
    load_cardness,
    parse_model,
)
from setvision.vision.find.describe import FEATURES
from setvision.vision.geometry import side_lengths
from setvision.vision.learn.training import _export_forest
from setvision.vision.read.classify import ForestModel


def _box(x: float, y: float, w: float, h: float) -> np.ndarray:
    return np.float32([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])


def _quads(judged: list[finder.Judged]) -> list[int]:
    """Which of the drawn quads each judged candidate is (by identity)."""
    drawn = [CARD_A, LOOSE_A, CARD_B, OVER_B]
    return [next(k for k, q in enumerate(drawn) if j.candidate.quad is q) for j in judged]


def _judged(quad: np.ndarray, probability: float) -> finder.Judged:
    return finder.Judged(Candidate(quad, 0.0, 0.0, 0), np.zeros(len(FEATURES)), probability)


#: Card A at (0, 0) and card B beside it; a loose outline of A (its IoU with A 0.9), judged
#: likelier than A's close one; an outline of A stretched over half of B.
CARD_A, LOOSE_A = _box(0, 0, 100, 140), _box(-3, -3, 106, 146)
CARD_B, OVER_B = _box(110, 0, 100, 140), _box(0, 0, 160, 140)


def test_the_closest_outline_of_a_card_is_kept_over_the_likeliest():
    judged = [_judged(LOOSE_A, 0.9), _judged(CARD_A, 0.7), _judged(CARD_B, 0.8)]
    fits = np.array([0.8, 0.95, 0.9])
    chosen = finder.select(judged, 0.5)
    assert _quads(chosen) == [1, 2]
    kept = finder.closest_outlines(judged, chosen, 0.5, fits)
    assert _quads(kept) == [0, 2]
    assert [j.probability for j in kept] == [0.7, 0.8]


def test_a_closer_outline_below_acceptance_or_rated_lower_is_not_taken():
    judged = [_judged(LOOSE_A, 0.9), _judged(CARD_A, 0.4), _judged(CARD_B, 0.8)]
    chosen = finder.select(judged, 0.5)
    kept = finder.closest_outlines(judged, chosen, 0.5, np.array([0.8, 0.95, 0.9]))
    assert kept[0].candidate.quad is LOOSE_A  # below acceptance: no outline of a card
    judged[1] = _judged(CARD_A, 0.7)
    kept = finder.closest_outlines(judged, chosen, 0.5, np.array([0.95, 0.8, 0.9]))
    assert kept[0].candidate.quad is LOOSE_A  # the likeliest is rated closest itself


def test_an_outline_reaching_over_another_card_is_not_taken():
    judged = [_judged(CARD_A, 0.9), _judged(OVER_B, 0.6), _judged(CARD_B, 0.8)]
    chosen = finder.select(judged, 0.5)
    kept = finder.closest_outlines(judged, chosen, 0.5, np.array([0.7, 0.99, 0.9]))
    assert _quads(kept) == [0, 2]


def test_without_a_fit_forest_the_likeliest_outline_is_kept():
    judged = [_judged(LOOSE_A, 0.9), _judged(CARD_A, 0.7), _judged(CARD_B, 0.8)]
    model = CardnessModel(None, 0.5, 800, {})  # type: ignore[arg-type]
    fits = finder.fits_of(judged, model)
    assert fits is None
    assert finder.pick_cards(judged, 0.5, fits) == finder.select(judged, 0.5)


def _forest(value_of_right: float) -> ForestModel:
    """One tree splitting on the first feature at 0.5: 0.6 below, ``value_of_right`` above."""
    nodes = ([0], [0, -1, -1], [0.5, 0.0, 0.0], [1, -1, -1], [2, -1, -1])
    leaves = [[0.5, 0.5], [0.4, 0.6], [1 - value_of_right, value_of_right]]
    return ForestModel(FEATURES, *map(np.array, nodes), np.array(leaves), 2)


def _model_with_fit() -> CardnessModel:
    return CardnessModel(_forest(0.9), 0.5, 800, {}, fit_forest=_forest(0.95))


def test_the_fit_forest_survives_the_model_file_and_rates_candidates():
    model = parse_model(_model_with_fit().to_json(), "finder-test.json")
    x = np.zeros((2, len(FEATURES)))
    x[1, 0] = 1.0
    assert model.fit(x).tolist() == pytest.approx([0.6, 0.95])
    assert replace(model, fit_forest=None).fit(x).tolist() == [0.0, 0.0]


def test_a_model_file_without_a_fit_forest_still_loads():
    data = json.loads(_model_with_fit().to_json())
    del data["fit_forest"]
    assert parse_model(json.dumps(data), "finder-test.json").fit_forest is None


def test_a_damaged_fit_forest_is_refused_naming_the_file():
    data = json.loads(_model_with_fit().to_json())
    data["fit_forest"]["left"] = [7, -1, -1]
    with pytest.raises(FinderModelError, match="finder-test.json"):
        parse_model(json.dumps(data), "finder-test.json")


def test_a_regression_forest_exports_its_mean_as_the_second_share():
    from sklearn.ensemble import RandomForestRegressor

    rng = np.random.default_rng(0)
    x = rng.uniform(size=(300, 3))
    y = np.clip(0.4 + 0.5 * x[:, 0] + 0.05 * rng.normal(size=300), 0, 1)
    forest = RandomForestRegressor(n_estimators=5, min_samples_leaf=3, random_state=0).fit(x, y)
    exported = _export_forest(forest, ("a", "b", "c"))
    shares = exported.predict_proba(x)
    assert shares.sum(axis=1) == pytest.approx(np.ones(len(x)))
    assert shares[:, 1] == pytest.approx(forest.predict(x), abs=1e-9)


# --- on real photos ---------------------------------------------------------------------------

OUTLINED_PHOTO = "boards/TheBananaBender__Set_vision_player/train__photo_24_2025-06-15_12-32-06.jpg"
#: Twelve cards touching in a grid; a shadow's edge crosses the card at about (833, 976), and a
#: quad over two thirds of that card is one of its accepted outlines.
SHADOWED_GRID = "boards/nakkstar123__set-solver/grid__IMG_6055.jpg"


def test_overlaps_with_the_labels_agree_with_the_cards_that_teach_the_looks(data_dir):
    from setvision.vision.learn.find_eval import outline_truths
    from setvision.vision.learn.find_training import (
        POSITIVE_IOU,
        outline_overlaps,
        photo_samples,
    )

    (truth,) = [t for t in outline_truths(data_dir) if t.file == OUTLINED_PHOTO]
    samples = photo_samples(truth)
    overlaps = outline_overlaps([samples], [truth])[samples.file]
    assert len(overlaps) == len(samples.labels) and (samples.labels == 1).sum() >= 9
    assert np.array_equal(overlaps >= POSITIVE_IOU, samples.labels == 1)


def test_the_shipped_finder_keeps_whole_outlines_on_a_shadowed_grid(data_dir, photo):
    """Cards seen nearly head-on: each outline as long as a card over its width (1.56), not
    the squarish quad of two thirds of one (1.09 where outlines overlapping by 0.5 compete)."""
    assert load_cardness().fit_forest is not None
    picture = photo(data_dir / SHADOWED_GRID)
    outlines = finder.find_cards(picture.image).outlines
    assert len(outlines) == 12
    for outline in outlines:
        sides = side_lengths(outline.corners_xy)
        across, along = sorted((sides[0] + sides[2], sides[1] + sides[3]))
        assert 1.3 < along / across < 1.8, outline.corners_xy.mean(axis=0)
