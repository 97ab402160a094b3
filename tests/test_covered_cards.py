"""A card partly under another, its outline running on under the card on top: read from the
margin at its whole end when that margin tells the number its symbols show, never surely. A
card wrongly taken for covered is read on another accepted outline of it, where there is one."""

from dataclasses import replace

import numpy as np
import pytest
from conftest import symbol_box
from setvision.vision.find.candidates import Candidate
from setvision.vision.find.finder import Found, Judged, find_cards, shifted, uncovered_outlines
from setvision.vision.find.outlines import Outline
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


def _judged(quad, probability: float, occluded: bool = False) -> Judged:
    return Judged(Candidate(np.float32(quad), 1.0, 1.0, 0, occluded), np.zeros(1), probability)


#: A card 100 by 60 and the same card outlined a little short at one end.
WHOLE = [[0, 0], [100, 0], [100, 60], [0, 60]]
SHORT = [[0, 0], [92, 0], [92, 60], [0, 60]]


def test_a_card_taken_for_covered_has_its_whole_outline_where_one_was_accepted():
    covered = _judged(SHORT, 0.97, occluded=True)
    whole = _judged(WHOLE, 0.99)
    unsure = _judged(WHOLE, 0.3)
    assert uncovered_outlines([covered, whole, unsure], [covered], 0.5) == [whole]
    # none accepted, or the card's own outline not taken for covered: nothing to offer
    assert uncovered_outlines([covered, unsure], [covered], 0.5) == [None]
    plain = _judged(SHORT, 0.97)
    assert uncovered_outlines([plain, whole], [plain], 0.5) == [None]
    # an outline reaching over a neighbouring card is not this card's
    neighbour = _judged([[60, 0], [160, 0], [160, 60], [60, 60]], 0.99)
    assert uncovered_outlines([covered, whole, neighbour], [covered, neighbour], 0.5)[0] is None


#: Twenty cards on a dark table; at long side 1200 the previous finder outlines the card of one
#: green striped squiggle at (647, 902) with a corner astray and takes it for one partly
#: covered, while the fast makers outline it whole.
ASTRAY = "boards/Webrewthebestbeer1__set-solver/images__DSC00553.jpg"


def test_a_card_outlined_astray_as_covered_is_read_on_its_whole_outline(reader, photo, data_dir):
    image = photo(data_dir / ASTRAY).image
    factor = 1200 / max(image.shape[:2])
    small = rescale(image, factor)
    found = find_cards(small)
    centre = (647 * factor, 902 * factor)
    here = [k for k, o in enumerate(found.outlines) if contains_point(o.corners_xy, centre)]
    assert len(here) == 1 and found.outlines[here[0]].occluded
    assert found.uncovered[here[0]] is not None
    layout = reader.read(small)
    there = [c for c in layout.cards if contains_point(np.asarray(c.corners_xy), centre)]
    assert [str(c.card) for c in there] == ["1-green-striped-squiggle"]


def test_uncovered_outlines_move_with_the_picture_between_bars():
    quad = np.float32(WHOLE)
    whole = Outline(quad, False, False, 0)
    found = Found([replace(whole, occluded=True)], [], [0.97], (), (whole,))
    moved = shifted(found, np.float32([10, 40]))
    assert np.allclose(moved.uncovered[0].corners_xy, quad + [10, 40])
    assert shifted(Found([whole], [], [0.99], (), (None,)), np.float32([1, 1])).uncovered == (None,)
