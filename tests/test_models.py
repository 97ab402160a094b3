"""The stored attribute models: exported forests predict as scikit-learn does, round-trip
through JSON, refitting is deterministic, and the shipped model loads and is small."""

import json
from importlib import resources

import numpy as np
import pytest
from setvision.solver import ATTRIBUTES, STANDARD
from setvision.vision.learn.training import FOREST, Sample, _export_forest, fit_models
from setvision.vision.read.classify import AttributeModels, ModelError, Tempering, load_models
from setvision.vision.read.features import FEATURE_NAMES, CardFeatures
from sklearn.ensemble import RandomForestClassifier


def _samples(seed: int = 0, n: int = 300) -> list[Sample]:
    rng = np.random.default_rng(seed)
    cards = [STANDARD.deck[i] for i in rng.integers(0, 81, n)]
    samples = []
    for k, card in enumerate(cards):
        vector = (
            rng.normal(size=len(FEATURE_NAMES)) + np.repeat(card.codes, 20)[: len(FEATURE_NAMES)]
        )
        samples.append(Sample(vector, card, f"source{k % 4}", "crop", f"f{k}.jpg"))
    return samples


def test_exported_forest_predicts_exactly_as_scikit_learn():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(400, 6))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5)
    forest = RandomForestClassifier(**{**FOREST, "n_estimators": 15}).fit(x, y)
    exported = _export_forest(forest, tuple(f"f{i}" for i in range(6)))
    test = rng.normal(size=(50, 6))
    assert np.allclose(exported.predict_proba(test), forest.predict_proba(test))


def test_models_round_trip_through_json_and_refitting_is_deterministic():
    samples = _samples()
    first = fit_models(samples, temper=False)
    again = fit_models(samples, temper=False)
    assert first.to_json() == again.to_json()
    loaded = AttributeModels.from_json(first.to_json())
    features = [CardFeatures(dict(zip(FEATURE_NAMES, s.vector))) for s in samples[:20]]
    predicted = first.predict(features)
    assert len(features) == 20 and tuple(predicted) == ATTRIBUTES
    for attribute, p in predicted.items():
        assert np.allclose(p, loaded.predict(features)[attribute], atol=1e-3)


def test_tempering_keeps_probabilities_and_floors_them():
    p = np.array([[1.0, 0.0, 0.0], [0.5, 0.3, 0.2]])
    tempered = Tempering(2.0, 0.03).apply(p)
    assert np.allclose(tempered.sum(axis=1), 1) and tempered.min() >= 0.01
    assert (tempered.argmax(axis=1) == p.argmax(axis=1)).all()


def test_the_shipped_model_loads_is_small_and_says_what_it_was_fitted_on():
    resource = resources.files("setvision.vision") / "models" / "default.json"
    assert len(resource.read_bytes()) < 5_000_000
    models = load_models()
    assert models.trained_on["crops"] > 5000 and len(models.trained_on["sources"]) >= 15


def test_damaged_or_foreign_model_files_are_refused(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ModelError, match="not a valid setvision model"):
        load_models(bad)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": 99}))
    with pytest.raises(ModelError, match="format 99"):
        load_models(other)
    with pytest.raises(ModelError, match="no such model"):
        load_models(tmp_path / "missing.json")


def test_the_four_forests_walked_together_predict_as_each_alone():
    models = load_models()
    rng = np.random.default_rng(3)
    features = [CardFeatures(dict(zip(FEATURE_NAMES, rng.normal(size=len(FEATURE_NAMES)))))
                for _ in range(9)]  # fmt: skip
    together = models.predict(features)
    assert tuple(models.models) == tuple(together) == ATTRIBUTES
    for attribute, model in models.models.items():
        alone = model.predict_proba(np.stack([f.vector(model.features) for f in features]))
        if models.tempering:
            alone = models.tempering[attribute].apply(alone)
        assert np.allclose(together[attribute], alone)


def test_training_copies_under_other_light_are_reproducible_and_change_the_photo():
    from setvision.vision.learn.augment import AUGMENTATIONS, augment

    photo = np.random.default_rng(1).integers(60, 200, (90, 140, 3)).astype(np.uint8)
    name, changed = augment(photo, "boards/some/photo.jpg")
    again = augment(photo, "boards/some/photo.jpg")
    assert name == again[0] and np.array_equal(changed, again[1])
    assert changed.shape == photo.shape and changed.dtype == np.uint8
    for change in AUGMENTATIONS.values():
        assert not np.array_equal(change(photo, np.random.default_rng(0)), photo)
    names = {augment(photo, f"photo{k}.jpg")[0] for k in range(40)}
    assert names == set(AUGMENTATIONS)  # every change is used


def test_far_copy_shrinks_and_mirrors_the_table_and_places_every_card_where_it_shows():
    from setvision.vision.learn.augment import augment_for_finder, far_away

    photo = np.full((90, 120, 3), 40, np.uint8)
    photo[30:36, 60:66] = 255  # one white "card", centre (62.5, 32.5)
    for seed in range(4):
        copy = far_away(photo, np.random.default_rng(seed))
        places = copy.places(np.array([[62.5, 32.5]]))
        tiles = int(round(np.sqrt(len(places))))
        assert tiles in (2, 3) and len(places) == tiles * tiles
        assert copy.weight == 1 / tiles**2  # the copy weighs as one photo
        assert copy.image.shape[:2] == (90 // tiles * tiles, 120 // tiles * tiles)
        for ((x, y),) in places:
            assert copy.image[int(round(y)), int(round(x))].min() > 150
        white = (copy.image.min(axis=2) > 150).mean()  # the card's share of the picture kept
        assert 0.5 < white / (36 / photo[..., 0].size) < 2
    names = {augment_for_finder(photo, f"photo{k}.jpg").name[:3] for k in range(60)}
    assert "far" in names and "sha" in names
