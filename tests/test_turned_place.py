"""A place the card net sees, turned to the straight edges inside it: exact on a drawn card,
nothing where there is nothing to turn to, and a white card on a white table of a real photo
read at every size through it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import assert_put_back
from setvision.vision.find.finder import find_cards
from setvision.vision.find.turned_place import MIN_TURN, edge_angle, turned_place
from setvision.vision.geometry import convex_iou, turned_about_centre
from setvision.vision.image import rescale
from setvision.vision.read.rescue import outline_variants

#: A pile on a white table: a white card lying at a slant among others, one red striped
#: squiggle, that no candidate maker parts from its table; the net's rectangle over it is turned
#: some 5 degrees off it and read it below the level at long sides 800 and 1600.
PILE = "boards/Webrewthebestbeer1__set-solver/images__DSC00580.jpg"
#: That card's centre (pixels of the photo as loaded).
PILE_CARD = np.array([317.0, 553.0])


def test_a_place_turned_off_a_drawn_card_is_turned_back_onto_it(drawn):
    image, (_, slanted) = drawn  # the second card lies turned by 30 degrees
    card = np.asarray(slanted, np.float32)
    for off in (-20.0, -8.0, 12.0):
        assert_put_back(turned_place, image, card, turned_about_centre(card, off), 0.97)


def test_a_place_along_its_card_or_on_a_bare_table_is_left_as_it_is(drawn):
    image, (_, slanted) = drawn
    card = np.asarray(slanted, np.float32)
    assert turned_place(image, card) is None  # already within MIN_TURN of the card's edges
    assert turned_place(image, turned_about_centre(card, MIN_TURN / 2)) is None
    blank = np.full((200, 200, 3), 128, np.uint8)
    square = np.array([[50, 50], [150, 60], [140, 160], [40, 150]], np.float32)
    assert edge_angle(blank, square) is None and turned_place(blank, square) is None
    assert turned_place(image, np.zeros((4, 2), np.float32)) is None  # no area


def test_the_turned_place_is_one_of_a_places_outline_variants(drawn):
    image, (_, slanted) = drawn
    place = turned_about_centre(np.asarray(slanted, np.float32), 15.0)
    variants = outline_variants(image, place, 0.2)
    assert any(convex_iou(v, np.asarray(slanted, np.float32)) > 0.97 for v in variants)


@pytest.mark.parametrize("side", [800, 1600])
def test_a_white_card_on_a_white_table_reads_through_its_turned_place(
    reader, photo, data_dir, side
):
    image = photo(data_dir / PILE).image
    factor = side / max(image.shape[:2])
    small = rescale(image, factor)
    (place,) = [
        p
        for p in find_cards(small).net_places
        if np.linalg.norm(p.corners_xy.mean(axis=0) / factor - PILE_CARD) < 60
    ]
    own = reader.read_place(small, place)[0][0]
    assert own < 0.7  # the net's rectangle alone is not read surely
    (card,) = [
        c
        for c in reader.read(small).cards
        if np.linalg.norm(np.mean(c.corners_xy, axis=0) / factor - PILE_CARD) < 60
    ]
    assert str(card.card) == "1-red-striped-squiggle" and card.confident
