"""`eval --cut`: photos cropped across a labelled card, and what the reader made of it."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from setvision.vision.learn.cut_eval import (
    CORNER_DEPTHS,
    RIGHT_WHILE_SURE,
    SHOWN,
    WRONG_WHILE_SURE,
    CutResult,
    crops_across,
    crops_at_corner,
    outcome,
    summarise_cuts,
)

#: A card lying along x in a 200 x 100 photo: 100 long, 64 across.
CARD = np.float32([[50, 20], [150, 20], [150, 84], [50, 84]])


def test_a_card_along_x_is_cut_by_columns_at_each_share():
    image = np.zeros((100, 200, 3), np.uint8)
    kept = crops_across(image, CARD, keep_start=True)
    assert [c.shown for c in kept] == list(SHOWN)
    first = kept[0]  # 0.55 of the card: columns 0 to 104
    assert first.image.shape == (100, 105, 3)
    np.testing.assert_allclose(first.card[:, 0], [50, 104, 104, 50])
    other_end = crops_across(image, CARD, keep_start=False)[0]  # columns 95 on
    assert other_end.image.shape == (100, 105, 3)
    np.testing.assert_allclose(other_end.card[:, 0], [0, 55, 55, 0])
    np.testing.assert_allclose(other_end.card[:, 1], CARD[:, 1])


def test_a_card_along_x_is_cut_along_its_length_by_rows():
    image = np.zeros((100, 200, 3), np.uint8)
    kept = crops_across(image, CARD, keep_start=True, along=True)
    first = kept[0]  # 0.55 of the card's width (64): rows 0 to 55
    assert first.shown == SHOWN[0] and first.image.shape == (55, 200, 3)
    np.testing.assert_allclose(first.card[:, 1], [20, 20, 54, 54])
    np.testing.assert_allclose(first.card[:, 0], CARD[:, 0])
    other_end = crops_across(image, CARD, keep_start=False, along=True)[0]  # rows 49 on
    np.testing.assert_allclose(other_end.card[:, 1], [0, 0, 35, 35])


def test_a_card_turned_off_the_axes_is_not_cut():
    centre = CARD.mean(axis=0)
    turn = np.radians(45)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    turned = (CARD - centre) @ rotation.T + centre
    assert crops_across(np.zeros((100, 200, 3), np.uint8), turned, True) == []


def test_the_cut_card_is_the_reading_holding_its_shown_part():
    shown = np.float32([[50, 20], [104, 20], [104, 84], [50, 84]])
    elsewhere = np.float32([[0, 0], [20, 0], [20, 10], [0, 10]])
    layout = SimpleNamespace(
        cards=[SimpleNamespace(corners_xy=elsewhere, card="1-red-solid-oval", confident=True),
               SimpleNamespace(corners_xy=shown, card="3-green-open-oval", confident=True)],
        ignored=[],
    )  # fmt: skip
    assert outcome(layout, shown, "3-green-open-oval") == ("right", "3-green-open-oval", True)
    assert outcome(layout, shown, "2-green-open-oval") == ("wrong", "3-green-open-oval", True)
    left_out = SimpleNamespace(cards=[], ignored=[SimpleNamespace(corners_xy=shown, reason="cut")])
    assert outcome(left_out, shown, "2-green-open-oval") == ("left out", "cut", False)
    assert outcome(SimpleNamespace(cards=[], ignored=[]), shown, "x") == ("not found", "", False)


def test_cuts_are_counted_per_share_and_sure_readings_apart():
    results = [
        CutResult("a", "s", 0.55, "1-red-solid-oval", "wrong", "2-red-solid-oval", True),
        CutResult("a", "s", 0.55, "1-red-solid-oval", "wrong", "2-red-solid-oval", False),
        CutResult("b", "s", 0.95, "1-red-solid-oval", "right", "1-red-solid-oval", True),
        CutResult("c", "s", 0.95, "1-red-solid-oval", "right", "1-red-solid-oval", False),
    ]
    table = summarise_cuts(results)
    assert table[0.55]["wrong"] == 2 and table[0.55][WRONG_WHILE_SURE] == 1
    assert table[0.55][RIGHT_WHILE_SURE] == 0
    assert table[-1.0]["right"] == 2 and table[-1.0][RIGHT_WHILE_SURE] == 1
    assert sum(table[0.65].values()) == 0


def test_a_card_at_a_slant_is_cut_at_its_outermost_corner_only():
    centre = CARD.mean(axis=0)
    turn = np.radians(30)
    rotation = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
    turned = (CARD - centre) @ rotation.T + centre
    image = np.zeros((160, 240, 3), np.uint8)
    crops = crops_at_corner(image, turned, keep_start=True, axis=0)
    assert [c.shown for c in crops] == list(CORNER_DEPTHS)
    ends = np.sort(turned[:, 0])
    for crop in crops:  # the cut lies between the rightmost corner and the next
        assert ends[-2] < crop.image.shape[1] <= ends[-1]
        assert (crop.card[:, 0] >= crop.image.shape[1] - 1).sum() == 1
    from_top = crops_at_corner(image, turned, keep_start=False, axis=1)[0]
    assert from_top.image.shape[0] < image.shape[0] and (from_top.card[:, 1] <= 0).sum() == 1


def test_a_card_along_an_axis_is_not_cut_at_a_corner():
    assert crops_at_corner(np.zeros((100, 200, 3), np.uint8), CARD, True, axis=0) == []
