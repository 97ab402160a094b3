"""A card whose outline stops short of it is never read surely with a symbol too few.

An outline misplaced along the card (a neighbour's edge taken for the card's, a card under
another) cuts a symbol at the card's end and may leave one beyond it. The reader sees a symbol
cut by the end (``features._cut_at_end``) and gives one symbol more a share of the number's
probability (``outline_doubts.doubt_symbols_beyond``): the reading stays, its confidence does not.
"""

from __future__ import annotations

import numpy as np
from setvision.vision.find.outlines import Outline
from setvision.vision.pipeline import MeasuredCard
from setvision.vision.read.features import CardFeatures
from setvision.vision.read.outline_doubts import BEYOND_OUTLINE, doubt_symbols_beyond

#: How far each outline is moved along its card, in card lengths (either way).
SHIFTS = (0.15, 0.22, -0.22)


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


def test_outlines_moved_along_their_cards_never_read_a_wrong_number_surely(reader, placed_cards):
    """Every whole card of six sources' boards, its outline moved along the card by 0.15 and
    0.22 of its length: measured, 192 views, none read with a wrong number while 90% sure
    (without the doubt, 16)."""
    views, wrong_while_sure = 0, []
    for image, outline, labelled in placed_cards():
        along = np.roll(np.asarray(outline.corners_xy, np.float64), -outline.long_side, axis=0)
        for shift in SHIFTS:
            moved = along + shift * (along[1] - along[0])
            corners = np.roll(moved, outline.long_side, axis=0).astype(np.float32)
            measured = reader.measure_outline(
                image, Outline(corners, False, False, outline.long_side)
            )
            if not isinstance(measured, MeasuredCard):
                continue
            reading = reader.classify([measured])[0]
            views += 1
            sure = reading.probability("number") >= 0.9
            if sure and reading.card.number != labelled.card.number:
                wrong_while_sure.append((shift, str(labelled.card), str(reading.card)))
    assert views >= 150
    assert not wrong_while_sure
