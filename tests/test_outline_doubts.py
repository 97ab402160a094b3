"""A card whose outline stops short of it is never read surely with a symbol too few.

An outline misplaced along the card (a neighbour's edge taken for the card's, a card under
another) cuts a symbol at the card's end and may leave one beyond it. The reader sees a symbol
cut by the end (``features._cut_at_end``) and gives one symbol more a share of the number's
probability (``outline_doubts.doubt_symbols_beyond``): the reading stays, its confidence does not.
"""

from __future__ import annotations

import numpy as np
from conftest import PLACED_BOARDS
from setvision.vision.find.outlines import Outline
from setvision.vision.pipeline import MeasuredCard
from setvision.vision.read.cut_cards import COMPLETED_PAST_EDGE, KNOWN_NUMBER
from setvision.vision.read.features import CUT_SYMBOL, CardFeatures, _cut_in_rim
from setvision.vision.read.outline_doubts import BEYOND_OUTLINE, doubt_symbols_beyond

#: How far each outline is moved along its card, in card lengths (either way).
SHIFTS = (0.15, 0.22, -0.22)
#: Outlines cut on a slant at one end: how far that end's two corners move in along their long
#: sides, in card lengths.
SLANTS = ((0.15, 0.35), (0.05, 0.25), (0.1, 0.3), (0.3, 0.1))
#: Boards of eight sources whose cards are cut on a slant: the six placed ones and three more.
SLANT_BOARDS = (
    *PLACED_BOARDS,
    "boards/cire694__set_solver/misc__set14.jpg",
    "boards/nicolashahn__set-solver/image-data__all-cards__raw__20180611_105216.jpg",
    "boards/Webrewthebestbeer1__set-solver/images__DSC00511.jpg",
)


def _number_read(reader, image: np.ndarray, outline: Outline, along: np.ndarray):
    """The number read (and its probability) from ``along`` (the outline's corners, starting at
    a long side) put back in the outline's order, or None where it is not read as a card."""
    corners = np.roll(along, outline.long_side, axis=0).astype(np.float32)
    measured = reader.measure_outline(image, Outline(corners, False, False, outline.long_side))
    if not isinstance(measured, MeasuredCard):
        return None
    reading = reader.classify([measured])[0]
    return reading.card.number, reading.probability("number")


def _card(symbols: int, cut: bool) -> CardFeatures:
    square = np.array([[[0, 0]], [[1, 0]], [[1, 1]], [[0, 1]]], np.int32)
    return CardFeatures({"cut_at_end": float(cut)}, [square] * symbols)


def test_a_symbol_cut_at_the_end_makes_one_symbol_more_likely():
    sure = np.array([[0.0, 1.0, 0.0]] * 3)
    other = {"shape": np.full((3, 3), 1 / 3)}
    cards = [_card(2, cut=True), _card(2, cut=False), _card(3, cut=True)]
    doubted = doubt_symbols_beyond(cards, {"number": sure, **other})
    assert np.allclose(doubted["number"][0], [0.0, 1 - BEYOND_OUTLINE, BEYOND_OUTLINE])
    assert np.allclose(doubted["number"][1:], sure[1:])  # not cut; no fourth symbol
    assert doubted["shape"] is other["shape"]
    assert doubt_symbols_beyond([], {"number": np.empty((0, 3))})["number"].shape == (0, 3)


def test_a_card_completed_past_the_photos_edge_may_have_one_symbol_more():
    square = np.array([[[0, 0]], [[1, 0]], [[1, 1]], [[0, 1]]], np.int32)
    completed = CardFeatures({COMPLETED_PAST_EDGE: 1.0}, [square])
    doubted = doubt_symbols_beyond([completed], {"number": np.array([[1.0, 0.0, 0.0]])})
    assert np.allclose(doubted["number"][0], [1 - BEYOND_OUTLINE, BEYOND_OUTLINE, 0.0])


def test_a_two_told_from_one_whole_symbol_may_be_a_three():
    # read from its one whole symbol, its number told by the margin: one more than that
    square = np.array([[[0, 0]], [[1, 0]], [[1, 1]], [[0, 1]]], np.int32)
    told = CardFeatures({KNOWN_NUMBER: 2.0, COMPLETED_PAST_EDGE: 1.0}, [square])
    doubted = doubt_symbols_beyond([told], {"number": np.array([[0.0, 1.0, 0.0]])})
    assert np.allclose(doubted["number"][0], [0.0, 1 - BEYOND_OUTLINE, BEYOND_OUTLINE])


def test_outlines_moved_along_their_cards_never_read_a_wrong_number_surely(reader, placed_cards):
    """Every whole card of six sources' boards, its outline moved along the card by 0.15 and
    0.22 of its length: measured, 192 views, none read with a wrong number while 90% sure
    (without the doubt, 16)."""
    views, wrong_while_sure = 0, []
    for image, outline, labelled in placed_cards():
        along = np.roll(np.asarray(outline.corners_xy, np.float64), -outline.long_side, axis=0)
        for shift in SHIFTS:
            read = _number_read(reader, image, outline, along + shift * (along[1] - along[0]))
            if read is None:
                continue
            views += 1
            number, probability = read
            if probability >= 0.9 and number != labelled.card.number:
                wrong_while_sure.append((shift, str(labelled.card), number))
    assert views >= 150
    assert not wrong_while_sure


def _rim(piece: tuple[int, int, int, int], rows: int = 85, columns: int = 150) -> np.ndarray:
    ink = np.zeros((rows, columns), np.uint8)
    x, y, w, h = piece
    ink[y : y + h, x : x + w] = 1
    return ink


def test_a_symbol_cut_in_the_rim_is_seen_and_the_cards_own_edge_is_not():
    card_height = 97
    tall = int(CUT_SYMBOL * card_height) + 10
    assert _cut_in_rim(_rim((0, 20, 8, tall)), card_height)  # a sliver at the left end
    assert _cut_in_rim(_rim((143, 20, 7, tall)), card_height)  # and at the right
    assert not _cut_in_rim(_rim((0, 0, 8, 85)), card_height)  # table along the whole end
    assert not _cut_in_rim(_rim((0, 20, 1, tall)), card_height)  # the card's edge, a pixel wide
    assert not _cut_in_rim(_rim((0, 30, 8, tall // 3)), card_height)  # too short for a symbol
    assert not _cut_in_rim(_rim((20, 20, 8, tall)), card_height)  # not at the end


def test_outlines_cut_on_a_slant_never_read_a_symbol_too_few_surely(reader, placed_cards):
    """Every whole card of nine boards of eight sources, one end of its outline cut on a slant
    (a neighbour's edge taken for its own): measured, none read with a symbol too few while
    90% sure; 6 without the rim check (``features._cut_in_rim``: the slant leaves only a sliver
    of the last symbol, inside the margin that reading leaves out)."""
    views, too_few_while_sure = 0, []
    for image, outline, labelled in placed_cards(SLANT_BOARDS):
        along = np.roll(np.asarray(outline.corners_xy, np.float64), -outline.long_side, axis=0)
        for near, far in SLANTS:
            for end in (0, 1):
                cut = along.copy()
                a, b, c, d = (0, 1, 3, 2) if end == 0 else (1, 0, 2, 3)
                cut[a] = along[a] + near * (along[b] - along[a])
                cut[c] = along[c] + far * (along[d] - along[c])
                read = _number_read(reader, image, outline, cut)
                if read is None:
                    continue
                views += 1
                number, probability = read
                if probability >= 0.9 and number < labelled.card.number:
                    too_few_while_sure.append((near, far, end, str(labelled.card)))
    assert views >= 300
    assert not too_few_while_sure
