"""A card partly under another, its outline running on under the card on top: read from the
margin at its whole end when that margin tells the number its symbols show, never surely."""

import numpy as np
import pytest
from conftest import symbol_box
from setvision.vision.geometry import contains_point
from setvision.vision.image import rescale
from setvision.vision.pipeline import covered_at_one_end
from setvision.vision.read.cut_cards import COVERED_AT_END
from setvision.vision.read.features import CardFeatures
from setvision.vision.read.outline_doubts import doubt_symbols_beyond

#: A pile of twenty cards on a white sheet; the card of three red striped ovals at (694, 1003)
#: lies partly under its neighbour.
PILE = "boards/Webrewthebestbeer1__set-solver/images__DSC00535.jpg"


def _card(*xs: int, width: int = 30) -> CardFeatures:
    return CardFeatures({}, [symbol_box(x, width) for x in xs])


def test_one_whole_end_telling_the_number_shown_reads_the_card():
    # two symbols 30 wide, 10 apart: 36 from the left end is a two's margin (1.2 widths); the
    # outline runs on 94 past them on the right, where the card on top lies
    assert covered_at_one_end(_card(36, 76), (200, 100))
    assert covered_at_one_end(_card(94, 134), (200, 100))  # turned: the right end whole
    # one symbol at a one's margin (1.8 widths) from the left, the outline long on the right
    assert covered_at_one_end(_card(55), (200, 100))


def test_a_margin_telling_another_number_or_none_leaves_the_card_out():
    # two symbols at a three's margin: a third may lie under the card on top
    assert not covered_at_one_end(_card(16, 56), (200, 100))
    # both ends tell the number: the row is centred, nothing under the other card
    assert not covered_at_one_end(_card(36, 76), (142, 100))
    # symbols unlike, or not evenly spaced, are no row of one card
    unlike = CardFeatures({}, [symbol_box(36), symbol_box(76, 60)])
    assert not covered_at_one_end(unlike, (200, 100))
    assert not covered_at_one_end(_card(36, 110), (200, 100))
    assert not covered_at_one_end(_card(), (200, 100))


def test_a_card_read_from_its_whole_end_is_unsure_of_one_symbol_more():
    card = _card(36, 76)
    card.values[COVERED_AT_END] = 1.0
    number = np.array([[0.0, 1.0, 0.0]])
    doubted = doubt_symbols_beyond([card], {"number": number})["number"]
    assert doubted[0, 2] >= 0.3 and doubted[0, 1] < 1.0


@pytest.mark.parametrize("side", [800, 1200, 1600])
def test_a_card_partly_under_its_neighbour_reads_at_every_size(reader, photo, data_dir, side):
    image = photo(data_dir / PILE).image
    factor = side / max(image.shape[:2])
    layout = reader.read(rescale(image, factor))
    centre = (694 * factor, 1003 * factor)
    there = [c for c in layout.cards if contains_point(np.asarray(c.corners_xy), centre)]
    assert [str(c.card) for c in there] == ["3-red-striped-oval"]
