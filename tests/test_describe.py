"""What the finder's features say of a candidate: drawn cards for exact answers, a real photo
for repeatability."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from setvision.vision.find.candidates import Candidate, dedupe, find_candidates, make_maps
from setvision.vision.find.describe import FEATURES, describe_all
from setvision.vision.image import resize_long_side

#: A card's corners on the drawn table (work pixels, clockwise from the top-left).
CARD = np.float32([[200, 150], [440, 150], [440, 310], [200, 310]])
TABLE = (60, 90, 130)  # BGR: brown wood
PAPER = (235, 240, 240)
PURPLE = (130, 30, 110)
REAL_PHOTO = "train__photo_12_2025-06-08_13-51-31.jpg"


def _table_with_card() -> np.ndarray:
    image = np.full((480, 640, 3), TABLE, np.uint8)
    cv2.fillConvexPoly(image, CARD.astype(np.int32), PAPER)
    return image


def _diamond(image: np.ndarray, centre_x: int) -> None:
    """A solid diamond standing across the card (its length along the card's width)."""
    x = centre_x
    points = np.int32([[x, 175], [x + 22, 230], [x, 285], [x - 22, 230]])
    cv2.fillConvexPoly(image, points, PURPLE)


def _features(image: np.ndarray, quad: np.ndarray = CARD) -> dict[str, float]:
    row = describe_all(make_maps(image), [Candidate(quad.copy(), 38400.0, 38400.0, 0)])[0]
    return dict(zip(FEATURES, row.tolist()))


def test_three_centred_symbols_look_the_same_turned_half_round_and_leave_the_margin_blank():
    image = _table_with_card()
    for x in (270, 320, 370):
        _diamond(image, x)
    card = _features(image)
    assert card["turn_symmetry"] > 0.9
    assert card["mirror_symmetry"] > 0.9
    assert card["margin_ink"] == 0.0
    assert card["centre_ink"] > 0.2
    assert card["ink_depth"] > 60


def test_a_quad_cut_short_across_the_print_shows_ink_at_one_side_only():
    image = _table_with_card()
    for x in (270, 320, 370):
        _diamond(image, x)
    whole = _features(image)
    assert whole["rim_ink_most"] == 0.0 and whole["rim_ink_least"] == 0.0
    cut = _features(image, np.float32([[268, 150], [440, 150], [440, 310], [268, 310]]))
    assert cut["rim_ink_most"] > 0.3  # its left side runs through the first diamond
    assert cut["rim_ink_least"] == 0.0


def test_a_blank_sheet_shows_no_print():
    blank = _features(_table_with_card())
    assert blank["turn_symmetry"] == pytest.approx(0.0, abs=1e-3)  # flat: nothing to compare
    assert blank["centre_ink"] == 0.0 and blank["margin_ink"] == 0.0
    assert blank["ink_depth"] < 5


def test_print_at_one_end_is_not_a_cards_print():
    image = _table_with_card()
    _diamond(image, 230)  # one symbol, against the card's left end
    lopsided = _features(image)
    assert lopsided["turn_symmetry"] < 0.3
    assert lopsided["margin_ink"] > 0.0


def test_texture_is_not_symmetric():
    image = _table_with_card()
    rng = np.random.default_rng(1)
    inside = (slice(160, 300), slice(210, 430))
    image[inside] = rng.integers(60, 250, image[inside].shape, dtype=np.uint8)
    noise = _features(image)
    assert abs(noise["turn_symmetry"]) < 0.2
    assert noise["margin_spread"] > 5 * _features(_table_with_card())["margin_spread"] + 5


def test_features_are_the_same_however_opencv_splits_its_work(photo, data_dir):
    """Repeatable features give repeatable answers (OpenCV's float paths varied by thread)."""
    picture = photo(data_dir / "boards/TheBananaBender__Set_vision_player" / REAL_PHOTO)
    image, _ = resize_long_side(picture.image, 800)
    threads = cv2.getNumThreads()
    try:
        described = []
        for count in (1, 2, 4):
            cv2.setNumThreads(count)
            maps = make_maps(image)
            described.append(describe_all(maps, dedupe(find_candidates(maps))))
    finally:
        cv2.setNumThreads(threads)
    assert len(described[0]) > 10
    for other in described[1:]:
        assert np.array_equal(described[0], other)
