"""Cards with one corner beyond the photo's edge: completed from their other three corners and
read where their whole row of symbols shows; never completed where a symbol may be hidden."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from setvision.vision.find.finder import find_cards
from setvision.vision.find.outlines import Outline
from setvision.vision.layout import Ignored
from setvision.vision.learn.cut_eval import crops_at_corner
from setvision.vision.pipeline import CUT_BY_BORDER, CardReader, MeasuredCard
from setvision.vision.read.cut_cards import CORNER_COMPLETED, MAX_CORNER_CUT, corner_completed

#: A 400 x 300 photo.
SIZE = (400, 300)


def _card(turn_degrees: float, first: tuple[float, float]) -> np.ndarray:
    """A 100 x 64 card's corners, clockwise from ``first``, its length turned by ``turn``."""
    turn = np.radians(turn_degrees)
    length = 100 * np.array([np.cos(turn), np.sin(turn)])
    width = 64 * np.array([-np.sin(turn), np.cos(turn)])
    start = np.array(first, np.float64)
    return np.array([start, start + length, start + length + width, start + width])


def _clipped_at_left(card: np.ndarray) -> np.ndarray:
    """The outline a finder gives for ``card`` whose last corner lies left of the photo: that
    corner moved along its side from the corner before it to where it meets the photo's edge."""
    before, corner = card[2], card[3]
    outline = card.copy()
    outline[3] = before + before[0] / (before[0] - corner[0]) * (corner - before)
    return outline


def _share_beyond(card: np.ndarray) -> float:
    photo = np.float32([[0, 0], [SIZE[0], 0], [SIZE[0], SIZE[1]], [0, SIZE[1]]])
    shown, _ = cv2.intersectConvexConvex(card.astype(np.float32), photo)
    return 1 - shown / cv2.contourArea(card.astype(np.float32))


def test_a_card_with_one_corner_beyond_the_edge_is_completed_there():
    card = _card(30, (3, 150))  # its last corner 29 pixels left of the photo
    assert card[3][0] < 0 and (card[:3, 0] > 2).all() and _share_beyond(card) < MAX_CORNER_CUT
    np.testing.assert_allclose(corner_completed(_clipped_at_left(card), SIZE), card, atol=1e-3)


def test_a_card_ending_inside_the_photo_is_not_completed():
    outline = _clipped_at_left(_card(30, (3, 150)))
    outline[2] += (40, 0)  # the other corners place the fourth well inside the photo
    assert corner_completed(outline, SIZE) is None


def test_a_card_cut_along_a_side_is_no_corner_cut():
    outline = _card(0, (-20, 100))  # both left corners beyond: cut across, not at a corner
    outline[[0, 3], 0] = 0
    assert corner_completed(outline, SIZE) is None


def test_a_card_mostly_beyond_the_edge_is_not_completed():
    card = _card(45, (5, 100))  # a quarter of it and more left of the photo
    assert card[3][0] < 0 and (card[:3, 0] > 2).all() and _share_beyond(card) > MAX_CORNER_CUT
    assert corner_completed(_clipped_at_left(card), SIZE) is None


@pytest.fixture(scope="module")
def bed(photo, data_dir):
    """Twelve cards on a bed sheet; the lowest on the left runs past the photo's left edge at
    one corner (the rest of its two red solid squiggles whole)."""
    path = "boards/TheBananaBender__Set_vision_player/train__PHOTO-2025-06-08-20-00-01_7.jpg"
    return photo(data_dir / path).image


#: That card's outline as the finder gives it: its lower left corner on the photo's edge.
BED_CARD = np.float32([[21, 1019], [183, 1031], [130, 1160], [0, 1148]])


def test_a_real_card_cut_at_a_corner_reads_whole(reader, bed):
    outline = Outline(BED_CARD, True, False, 0)
    measured = CardReader.measure_outline(bed, outline)
    assert isinstance(measured, MeasuredCard)
    assert measured.features.values.get(CORNER_COMPLETED)
    reading = reader.classify([measured])[0]
    assert str(reading.card) == "2-red-solid-squiggle" and reading.confidence >= 0.7


def _cut_at_corner(drawn, depth: float) -> tuple[np.ndarray, Outline]:
    """The drawn photo cropped across the turned card's rightmost corner (``depth`` of the way
    to its next corner, as ``eval --cut corner`` crops), and the finder's outline of that card."""
    image, (_, turned) = drawn
    crop = next(c for c in crops_at_corner(image, turned, True, axis=0) if c.shown == depth)
    found = find_cards(crop.image).outlines
    middle = crop.card.mean(axis=0)
    return crop.image, min(found, key=lambda o: np.linalg.norm(o.corners_xy.mean(0) - middle))


def test_a_card_whose_end_symbol_the_corner_cut_takes_is_left_out(drawn):
    image, outline = _cut_at_corner(drawn, 0.5)  # the edge runs through its first diamond
    size = (image.shape[1], image.shape[0])
    assert corner_completed(outline.corners_xy, size) is not None
    measured = CardReader.measure_outline(image, outline)
    assert isinstance(measured, Ignored) and measured.reason == CUT_BY_BORDER
