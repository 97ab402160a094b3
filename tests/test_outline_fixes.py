"""Corrections to the published card outlines (vision/learn/labels/outline_fixes.jsonl): each one
applies to a photo and an outline that exist, stays inside the photo, and changes that photo's
finding truth as it says; the finder's training caches are keyed by what the truth holds."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import pytest
from setvision.solver.errors import SetvisionError
from setvision.vision.learn.dataset import LABELS_DIR
from setvision.vision.learn.find_eval import (
    OUTLINE_FIXES,
    apply_outline_fixes,
    load_outline_fixes,
    outline_truths,
)
from setvision.vision.learn.find_training import truths_digest

ACTIONS = {"drop", "replace", "add", "exclude"}


@pytest.fixture(scope="module")
def fixes() -> list[dict]:
    return load_outline_fixes()


@pytest.fixture(scope="module")
def published(data_dir) -> dict[str, dict]:
    lines = (data_dir / "outlines.jsonl").read_text().splitlines()
    return {e["file"]: e for e in map(json.loads, filter(str.strip, lines))}


@pytest.fixture(scope="module")
def both_ways(data_dir, tmp_path_factory):
    """The truths without any correction and with the shipped ones, by file."""
    none = tmp_path_factory.mktemp("fixes") / "none.jsonl"
    none.write_text("")
    before = {t.file: t for t in outline_truths(data_dir, fixes_file=none)}
    after = {t.file: t for t in outline_truths(data_dir)}
    return before, after


def _same(a: np.ndarray, b) -> bool:
    b = np.asarray(b, np.float64)
    return a.shape == b.shape and bool(np.allclose(a, b))


def test_the_fixes_ship_as_package_data():
    assert OUTLINE_FIXES == LABELS_DIR / "outline_fixes.jsonl"
    assert OUTLINE_FIXES.is_file()
    tomllib = pytest.importorskip("tomllib")
    project = Path(__file__).resolve().parent.parent
    package_data = tomllib.loads((project / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "labels/*" in package_data["package-data"]["setvision.vision.learn"]


def test_every_fix_applies_to_an_existing_photo_and_outline(fixes, published):
    assert len(fixes) >= 10  # the audit's corrections are there: the checks below are not vacuous
    for fix in fixes:
        assert fix["action"] in ACTIONS, fix
        assert fix.get("why", "").strip(), fix
        entry = published.get(fix["file"])
        assert entry is not None and entry["outlines"], fix["file"]
        if fix["action"] in ("drop", "replace"):
            assert 0 <= fix["outline"] < len(entry["outlines"]), fix
    touched = Counter((f["file"], f["outline"]) for f in fixes if "outline" in f)
    assert max(touched.values()) == 1, "an outline fixed twice"


def test_every_new_polygon_is_a_card_sized_quad_inside_the_photo(fixes, published):
    polygons = [f for f in fixes if f["action"] in ("add", "replace")]
    assert polygons
    for fix in polygons:
        width, height = published[fix["file"]]["image_size"]
        polygon = np.asarray(fix["polygon"], np.float64)
        assert polygon.shape == (4, 2), fix
        assert (polygon >= 0).all() and (polygon[:, 0] <= width).all(), fix
        assert (polygon[:, 1] <= height).all(), fix
        assert cv2.contourArea(polygon.astype(np.float32)) > 0.001 * width * height, fix


def test_fixed_photos_truth_changes_as_the_fix_says(fixes, published, both_ways):
    before, after = both_ways
    for fix in fixes:
        file = fix["file"]
        assert file in before, file
        if fix["action"] == "exclude":
            assert file not in after
            continue
        truth = after[file]
        held = truth.polygons + truth.ignore_polygons
        if fix["action"] in ("add", "replace"):
            assert any(_same(p, fix["polygon"]) for p in held), fix
        if fix["action"] in ("drop", "replace"):
            old = published[file]["outlines"][fix["outline"]]
            assert not any(_same(p, old) for p in held), fix
    untouched = set(before) - {f["file"] for f in fixes}
    assert untouched and all(len(after[f].polygons) == len(before[f].polygons) for f in untouched)


def test_a_photo_split_into_two_cards_counts_one_more(fixes, both_ways):
    before, after = both_ways
    file = "boards/TheBananaBender__Set_vision_player/val__PHOTO-2025-06-08-20-00-18_7.jpg"
    own = Counter(f["action"] for f in fixes if f["file"] == file)
    assert own == {"replace": 4, "add": 4}  # four outlines each around two cards
    assert after[file].labelled == before[file].labelled + 4


def test_training_caches_are_keyed_by_the_corrected_truth(both_ways):
    before, after = both_ways
    assert truths_digest(list(before.values())) != truths_digest(list(after.values()))
    assert truths_digest(list(after.values())) == truths_digest(list(after.values()))


def test_a_fix_that_does_not_apply_is_an_error():
    entry = {"file": "a.jpg", "outlines": [[[0, 0], [1, 0], [1, 1], [0, 1]]]}
    with pytest.raises(SetvisionError):
        apply_outline_fixes([entry], [{"file": "a.jpg", "action": "drop", "outline": 3}])
    with pytest.raises(SetvisionError):
        apply_outline_fixes([entry], [{"file": "a.jpg", "action": "merge", "outline": 0}])
    kept = apply_outline_fixes([entry], [{"file": "b.jpg", "action": "exclude"}])
    assert kept == [entry]
