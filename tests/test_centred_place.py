"""A place the card net sees, moved onto the middle of its print: back onto a drawn card it was
pushed off, left alone where it is centred or holds nothing, and a grey card in shade on a real
photo read surely through it where its own outline reads below the level."""

from __future__ import annotations

import numpy as np
from conftest import assert_put_back
from setvision.vision.find.finder import place_outline
from setvision.vision.geometry import long_side_index
from setvision.vision.read.centred_place import MIN_SHIFT, centred_on_symbols
from setvision.vision.read.rescue import RESCUE_CONFIDENCE, outline_variants

#: Grey cards in shade on a pale ledge, their edges faint: no candidate outlines the one of two
#: purple striped squiggles, and the place a card net fitted without this photo's source sees
#: over it (``PLACE``, pixels of the photo as loaded) lies a tenth of a card too far along it.
LEDGE = "boards/TheBananaBender__Set_vision_player/train__photo_41_2025-06-15_12-09-03.jpg"
PLACE = np.float32([[402, 479], [544, 470], [578, 685], [418, 695]])


def _pushed(card: np.ndarray, along: float, across: float = 0.0) -> np.ndarray:
    """``card`` (4, 2) moved by ``along`` of its length along it and ``across`` of its width
    across it."""
    lengthwise = np.roll(card, -long_side_index(card), axis=0)
    return card + along * (lengthwise[1] - lengthwise[0]) + across * (lengthwise[3] - lengthwise[0])


def test_a_place_pushed_off_a_drawn_card_is_moved_back_onto_it(drawn):
    image, (two, three) = drawn  # two red symbols; three purple ones, turned 30 degrees
    pushes = [(two, along, across) for along in (-0.15, 0.12) for across in (0.0, 0.1)]
    pushes += [(three, along, 0.0) for along in (-0.08, 0.08)]  # its end symbols stay whole
    for corners, along, across in pushes:
        card = np.asarray(corners, np.float32)
        assert_put_back(centred_on_symbols, image, card, _pushed(card, along, across), 0.95)


def test_a_centred_place_or_one_without_print_is_left_as_it_is(drawn):
    image, (card, _) = drawn
    card = np.asarray(card, np.float32)
    assert centred_on_symbols(image, card) is None
    assert centred_on_symbols(image, _pushed(card, MIN_SHIFT / 3)) is None
    blank = np.full((200, 200, 3), 128, np.uint8)
    square = np.float32([[50, 50], [150, 60], [140, 160], [40, 150]])
    assert centred_on_symbols(blank, square) is None
    assert centred_on_symbols(image, np.zeros((4, 2), np.float32)) is None  # no area


def test_the_centred_place_is_a_variant_of_a_place_read_nearly_surely(drawn):
    image, (card, _) = drawn
    place = _pushed(np.asarray(card, np.float32), 0.12)
    centred = centred_on_symbols(image, place)
    assert centred is not None

    def offered(confidence: float) -> bool:
        return any(np.allclose(v, centred) for v in outline_variants(image, place, confidence))

    assert offered(0.5)
    assert not offered(0.2)  # read less surely, a place is seldom a card: not worth moving


def test_a_grey_card_in_shade_reads_surely_once_centred_on_its_print(reader, photo, data_dir):
    image = photo(data_dir / LEDGE).image
    size = (image.shape[1], image.shape[0])
    readings = reader.read_place(image, place_outline(PLACE, size, 2.0))
    own = readings[0][0]
    assert own < RESCUE_CONFIDENCE  # the net's place alone is not read surely
    best = max(readings, key=lambda r: r[0])
    assert best[0] >= RESCUE_CONFIDENCE
    (card,) = reader.classify([best[1]])
    assert str(card.card) == "2-purple-striped-squiggle"
