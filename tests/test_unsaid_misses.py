"""Held-out answers that miss a card and say nothing of it: where a wrong "no set" could come
from (a real photo read as ``CardReader.read`` would, cards hidden from its outlines; the
``shelf`` photo of ``conftest.py`` has twelve cards and no set among them)."""

from __future__ import annotations

import numpy as np
import pytest
from setvision.vision.find.finder import possible_places
from setvision.vision.learn.find_training import HeldOutOutlines
from setvision.vision.learn.vetting_eval import read_found, unsaid_line


@pytest.fixture(scope="module")
def labelled(shelf_truth):
    return [np.asarray(p, np.float32) for p in shelf_truth.polygons]


def _read(reader, shelf, shelf_truth, quads, possible=()):
    sure = (0.99,) * len(quads)
    outlines = HeldOutOutlines(shelf_truth.file, tuple(quads), sure, possible=possible)
    return read_found(shelf_truth, shelf.image, shelf.scale, outlines, reader)


def test_every_card_read_and_no_set_among_them_is_a_right_no_set(
    reader, shelf, shelf_truth, labelled
):
    read = _read(reader, shelf, shelf_truth, labelled)

    assert not read.missed_unsaid and read.verdict == "no_set"


def test_three_cards_hidden_and_nothing_said_is_an_unsaid_miss(
    reader, shelf, shelf_truth, labelled
):
    """Nine cards read, a multiple of three, all surely: nothing tells the dealer that three
    more lie on the table."""
    read = _read(reader, shelf, shelf_truth, labelled[3:])

    assert read.counted[(0.9, 0.4)][0] == len(labelled) - 3
    assert read.missed_unsaid and not read.doubted
    assert read.verdict == "no_set"  # nine of a table without a set hold none either
    assert unsaid_line([read]).startswith(
        '1 of the 1 photos missing a card say nothing of it; 1 of them answer "no set"; '
    )


def test_a_place_named_where_a_hidden_card_lies_is_said(reader, shelf, shelf_truth, labelled):
    read = _read(reader, shelf, shelf_truth, labelled[3:], possible=(labelled[0],))

    assert read.doubted and not read.missed_unsaid and read.places == 1


def test_a_place_named_beside_every_card_read_is_a_false_alarm(
    reader, shelf, shelf_truth, labelled
):
    # on the photo's edge, where a cut card may be (``still_possible``)
    corner = np.float32([[0, 0], [100, 0], [100, 150], [0, 150]]) * np.float32(shelf.scale)
    read = _read(reader, shelf, shelf_truth, labelled, possible=(corner,))

    assert read.result((0.9, 0.4)).complete and read.places == 1 and read.verdict == "uncertain"
    assert unsaid_line([read]).endswith(
        "1 of the 1 photos read complete name a place where a card may be missed all the same"
    )


def test_one_card_hidden_leaves_eleven_which_says_one_may_be_missed(
    reader, shelf, shelf_truth, labelled
):
    read = _read(reader, shelf, shelf_truth, labelled[1:])

    assert read.doubted and not read.missed_unsaid


def test_possible_places_are_the_doubts_and_the_nets_cards_no_doubt_explains():
    def square(x: float) -> np.ndarray:
        return np.array([[x, 0], [x + 10, 0], [x + 10, 10], [x, 10]], np.float32)

    doubts = np.array([square(0)])
    places = possible_places([square(1), square(50)], doubts)

    assert len(places) == 2
    assert np.array_equal(places[0], square(0)) and np.array_equal(places[1], square(50))


def test_a_doubt_is_named_only_where_the_net_sees_card_paper():
    from setvision.vision.find.card_net import CardPaper
    from setvision.vision.find.finder import DOUBT_ON_CARD, named_doubts

    def square(x: float) -> np.ndarray:
        return np.array([[x, 0], [x + 10, 0], [x + 10, 10], [x, 10]], np.float32)

    card = np.zeros((10, 20), np.float32)
    card[:, :10] = 2 * DOUBT_ON_CARD  # faint card paper on the left half of an 80x40 picture
    paper = CardPaper(card, 0.5)
    named = named_doubts(np.array([square(0), square(60)]), paper)
    assert len(named) == 1 and np.array_equal(named[0], square(0))
    assert len(named_doubts(np.zeros((0, 4, 2), np.float32), paper)) == 0


def test_a_card_of_the_nets_is_named_only_when_the_size_of_the_cards_found():
    from setvision.vision.find.finder import NAMED_SIZE_FACTOR, sized_like

    def box(side: float) -> np.ndarray:
        return np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32)

    cards = np.array([box(10), box(10), box(11)])  # a typical card of 100 pixels
    low, high = box(10 / NAMED_SIZE_FACTOR**0.5 + 0.1), box(10 * NAMED_SIZE_FACTOR**0.5 - 0.1)
    places = [box(3), low, box(10), high, box(30)]
    kept = sized_like(places, cards)
    assert [float(q[1, 0]) for q in kept] == [float(q[1, 0]) for q in (low, box(10), high)]
    assert len(sized_like(places, cards[:2])) == len(places)  # two cards tell no size
