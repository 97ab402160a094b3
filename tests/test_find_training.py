"""How held-out finding results are judged from cached probabilities: with the previous finder
asked where the fast makers leave paper unexplained, and by the fast makers alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from setvision.vision.find.candidates import PAPER_SHRINK
from setvision.vision.find.cardness import CardnessModel
from setvision.vision.find.describe import FEATURES
from setvision.vision.find.finder import PaperLeft
from setvision.vision.learn import find_training
from setvision.vision.learn.find_eval import FindResult, FindTruth
from setvision.vision.learn.find_training import (
    HeldOut,
    PhotoSamples,
    SentOrNot,
    choose_recheck,
    held_out_results,
    judge_held_out,
)

#: Two cards side by side on a 200x100 work image (work pixels = the labels' pixels).
LEFT = np.float32([[10, 10], [50, 10], [50, 70], [10, 70]])
RIGHT = np.float32([[100, 10], [140, 10], [140, 70], [100, 70]])


def _held_out() -> tuple[FindTruth, HeldOut]:
    """The left card found by a fast maker; the right one only by the previous finder, its
    paper left unexplained by the fast makers' cards."""
    features = np.zeros((2, len(FEATURES)), np.float32)
    features[1, FEATURES.index("maker_previous")] = 1.0
    paper = np.zeros((100 // PAPER_SHRINK, 200 // PAPER_SHRINK), np.uint8)
    for quad in (LEFT, RIGHT):
        (x0, y0), (x1, y1) = (
            (quad.min(axis=0) / PAPER_SHRINK).astype(int),
            (quad.max(axis=0) / PAPER_SHRINK).astype(int),
        )
        paper[y0:y1, x0:x1] = 1
    photo = PhotoSamples(
        "a.jpg", "somebody/photos", "somebody/photos", features, np.array([1, 1], np.int8),
        np.stack([LEFT, RIGHT]), 1.0, paper, np.zeros_like(paper),
    )  # fmt: skip
    truth = FindTruth("a.jpg", "a.jpg", "somebody/photos", polygons=[LEFT, RIGHT])
    return truth, HeldOut(photo, np.array([0.9]), np.array([0.9, 0.8]))


def test_the_previous_finder_is_asked_where_paper_is_left_and_never_for_the_fast_makers_alone():
    truth, held = _held_out()
    levels = CardnessModel(None, 0.5, 800, {}, unexplained=0.7, recheck=1.01)  # type: ignore[arg-type]
    judged = judge_held_out([truth], [held], levels)
    (both,) = held_out_results(judged, levels)
    assert both.fallback and both.found == 2 and both.false_detections == 0
    (fast,) = held_out_results(judged, levels, previous=False)
    assert not fast.fallback and fast.found == 1 and fast.false_detections == 0
    never = CardnessModel(None, 0.5, 800, {}, unexplained=np.inf, recheck=1.01)  # type: ignore[arg-type]
    (unsent,) = held_out_results(judge_held_out([truth], [held], never), never)
    assert not unsent.fallback and unsent.found == 1


def test_held_out_probabilities_cached_on_disk_are_keyed_by_how_the_looks_are_fitted(monkeypatch):
    from setvision.vision.learn import find_training

    before = find_training._fitting_digest()
    assert find_training._fitting_digest() == before  # the same code: the cache is reused
    trees = find_training.TREES
    monkeypatch.setattr(find_training, "TREES", trees + 1)
    assert find_training._fitting_digest() != before
    monkeypatch.setattr(find_training, "TREES", trees)  # the trees as before, the forest not
    monkeypatch.setattr(find_training, "_FOREST", {**find_training._FOREST, "max_depth": 3})
    assert find_training._fitting_digest() != before


def test_held_out_fits_cached_on_disk_are_keyed_by_the_fit_forests_settings(monkeypatch):
    samples, folds = _random_samples(0), {"a": ["a.jpg"], "b": ["b.jpg"]}

    def path() -> Path:
        return find_training._fits_cache_path(samples, [], folds, 0)

    before = path()
    assert path() == before  # the same settings: the cache is reused
    more = {
        **find_training._FIT_FOREST,
        "n_estimators": find_training._FIT_FOREST["n_estimators"] + 1,
    }
    monkeypatch.setattr(find_training, "_FIT_FOREST", more)
    assert path() != before


def _photo(fast_found: int, ink: float) -> SentOrNot:
    """A photo of 200 cards with a card's worth of paper left by the fast makers, holding
    ``ink``; the previous finder finds all 200."""
    fast = FindResult("a.jpg", "s", "s", 200, fast_found, fast_found, 0, 0.0)
    both = FindResult("a.jpg", "s", "s", 200, 200, 200, 0, 0.0, fallback=True)
    return SentOrNot(fast, both, PaperLeft(np.array([1.0]), np.array([ink])), 0.0)


def test_the_previous_finder_is_sent_the_fewest_photos_that_keep_recall(monkeypatch):
    # nine photos the fast makers read whole, with blank paper left; one missing a card whose
    # paper holds symbol ink
    judged = [_photo(200, 0.0) for _ in range(9)] + [_photo(199, 0.05)]
    levels = CardnessModel(None, 0.5, 800, {})  # type: ignore[arg-type]

    monkeypatch.setattr(find_training, "RECHECK_RECALL_SLACK", 0.0)
    chosen, tried = choose_recheck(judged, levels)
    assert [j.sent(chosen) for j in judged] == [False] * 9 + [True]
    assert max(recall for *_, recall, _ in tried) == 1.0

    # allowed to give up that one card in 2,000: nothing is sent
    monkeypatch.setattr(find_training, "RECHECK_RECALL_SLACK", 0.001)
    chosen, _ = choose_recheck(judged, levels)
    assert not any(j.sent(chosen) for j in judged)


def test_every_source_but_the_new_one_is_pooled_as_older_sources():
    def result(source: str) -> FindResult:
        return FindResult("a.jpg", source, source, 12, 12, 12, 0, 0.0)

    pooled = find_training.new_or_older([result(find_training.NEW_SOURCE), result("x/y")])
    assert [r.source for r in pooled] == [find_training.NEW_SOURCE, "older sources"]
    assert pooled[1].group == "x/y"  # the capture session is kept


def test_held_out_the_previous_finders_outlines_count_only_on_the_nets_card_paper():
    from setvision.vision.find.card_net import CardPaper
    from setvision.vision.learn.net_held_out import HeldOutNet

    truth, held = _held_out()
    sent = CardnessModel(None, 0.5, 800, {}, unexplained=0.7, recheck=1.01)  # type: ignore[arg-type]
    card = np.zeros((50, 100), np.float32)  # the net's map: 2 work pixels a map pixel
    card[:, :40] = 0.9  # card paper under the left card only
    blind = HeldOutNet({}, CardPaper(card, 1.0))
    (found,) = held_out_results(judge_held_out([truth], [held], sent, {"a.jpg": blind}), sent)
    assert found.fallback and found.found == 1  # the right card's outline is left out
    card[:, 40:] = 0.9
    seen = HeldOutNet({}, CardPaper(card, 1.0))
    (found,) = held_out_results(judge_held_out([truth], [held], sent, {"a.jpg": seen}), sent)
    assert found.found == 2


def test_held_out_a_doubt_is_named_only_on_the_nets_card_paper():
    from setvision.vision.find.card_net import CardPaper
    from setvision.vision.learn.net_held_out import HeldOutNet

    truth, held = _held_out()
    held.photo.features[1, FEATURES.index("maker_previous")] = 0.0  # both from the fast makers
    held = HeldOut(held.photo, np.array([0.9, 0.4]), np.array([0.9, 0.4]))  # the right in doubt
    levels = CardnessModel(None, 0.5, 800, {}, unexplained=np.inf, recheck=1.01, net_interior=0.85)  # type: ignore[arg-type]
    card = np.zeros((50, 100), np.float32)
    card[:, :40] = 0.9  # the net sees card paper under the left card only

    def named(card_map: np.ndarray) -> list[np.ndarray]:
        seen_by = HeldOutNet({0.85: []}, CardPaper(card_map, 1.0))
        (judged,) = judge_held_out([truth], [held], levels, {"a.jpg": seen_by})
        return list(judged.outlines(levels).possible)

    assert named(card) == []  # a doubt where the net sees no card paper is not named
    card[:, 40:] = 0.01
    (place,) = named(card)
    assert np.allclose(np.sort(place, 0), np.sort(RIGHT, 0))


def _random_samples(seed: int) -> list[PhotoSamples]:
    """Two photos of random candidates, half of them cards."""
    draw = np.random.default_rng(seed)
    photos = []
    for name in ("a.jpg", "b.jpg"):
        features = draw.normal(size=(60, len(FEATURES))).astype(np.float32)
        labels = (features[:, 0] + 0.5 * draw.normal(size=60) > 0).astype(np.int8)
        photos.append(PhotoSamples(
            name, "somebody/photos", "somebody/photos", features, labels,
            np.zeros((60, 4, 2), np.float32), 1.0, np.zeros((4, 4), np.uint8),
            np.zeros((4, 4), np.uint8),
        ))  # fmt: skip
    return photos


def test_the_seed_draws_the_finders_forests():
    samples = _random_samples(0)
    overlaps = {s.file: np.linspace(0.4, 1.0, len(s.labels)) for s in samples}

    def drawn(seed: int) -> tuple[np.ndarray, np.ndarray]:
        looks = find_training.fit_cardness(samples, trees=5, seed=seed)
        fit = find_training.fit_outline_fit(samples, overlaps, seed=seed)
        return looks.forest.threshold, fit.threshold

    again, other = drawn(0), drawn(1)
    assert all(np.array_equal(a, b) for a, b in zip(drawn(0), again, strict=True))
    assert not any(np.array_equal(a, b) for a, b in zip(again, other, strict=True))


def _seed_catcher(monkeypatch, module, name: str) -> list[int]:
    """``module.name`` replaced by a stand-in that records the seed it is given (its last
    argument) and stops there, as a failed run would; the seeds recorded."""
    from setvision.solver.errors import SetvisionError

    seeds: list[int] = []

    def stand_in(*args):
        seeds.append(args[-1])
        raise SetvisionError("stopped before fitting")

    monkeypatch.setattr(module, name, stand_in)
    return seeds


def test_train_finder_passes_its_seed_to_the_fit_and_refuses_a_negative_one(
    monkeypatch, tmp_path, capsys
):
    from setvision.cli import main

    seeds = _seed_catcher(monkeypatch, find_training, "train_finder")
    out = str(tmp_path / "finder.json")
    assert main(["train-finder", "--data", str(tmp_path), "--out", out, "--seed", "3"]) == 2
    assert seeds == [3]
    assert main(["train-finder", "--data", str(tmp_path), "--out", out, "--seed", "-1"]) == 2
    assert seeds == [3]
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "setvision: error: --seed must be 0 or more, got -1"
    )
    assert not (tmp_path / "finder.json").exists()


def test_held_out_looks_drawn_with_another_seed_are_cached_apart(monkeypatch, tmp_path):
    monkeypatch.setattr(find_training, "cache_dir", lambda: tmp_path)
    samples = _random_samples(1)
    folds = {"a": ["a.jpg"], "b": ["b.jpg"]}
    zero = find_training.held_out_first_looks(samples, folds)
    one = find_training.held_out_first_looks(samples, folds, seed=1)
    assert len(list(tmp_path.iterdir())) == 2
    assert not np.array_equal(zero["a.jpg"], one["a.jpg"])
    (tmp_path / "unrelated").write_text("")
    again = find_training.held_out_first_looks(samples, folds, seed=1)  # read from the cache
    assert np.array_equal(again["a.jpg"], one["a.jpg"]) and len(list(tmp_path.iterdir())) == 3


def test_eval_find_loso_passes_its_finder_seed_and_refuses_it_elsewhere(
    monkeypatch, tmp_path, capsys
):
    from setvision.app import evaluating
    from setvision.cli import main

    seeds = _seed_catcher(monkeypatch, evaluating, "held_out_finding")
    data = ["--data", str(tmp_path)]
    assert main(["eval", "--find", "--loso", "--finder-seed", "2", *data]) == 2
    assert seeds == [2]
    for wrong, message in [
        (["--find", "--loso", "--finder-seed", "-1"], "--finder-seed must be 0 or more, got -1"),
        (["--find", "--finder-seed", "1"], "use it with --find --loso"),
        (["--loso", "--finder-seed", "1"], "use it with --find --loso"),
    ]:
        assert main(["eval", *wrong, *data]) == 2
        assert capsys.readouterr().err.strip().splitlines()[-1].endswith(message)
    assert seeds == [2]
