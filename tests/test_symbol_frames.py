"""Cards framed from the holes their symbols leave in the paper: drawn cards for exact answers."""

from __future__ import annotations

import cv2
import numpy as np
from setvision.vision.find.candidates import SYMBOLS, find_candidates, make_maps
from setvision.vision.find.fit import CARD_RATIO
from setvision.vision.find.symbol_frames import frame_area
from setvision.vision.find.symbols import (
    SYMBOL_SHAPE,
    SYMBOL_TO_WIDTH,
    Blob,
    card_frame,
    predicted_quad,
)
from setvision.vision.geometry import convex_iou

TABLE = (40, 45, 50)  # BGR: dark wood
PAPER = (235, 240, 240)
GREEN = (60, 150, 40)
WIDTH = 140  # a card's width in work pixels; its length is CARD_RATIO times that
LENGTH = round(CARD_RATIO * WIDTH)


def _card(left: int, top: int) -> np.ndarray:
    return np.float64([[left, top], [left + WIDTH, top], [left + WIDTH, top + LENGTH],
                       [left, top + LENGTH]])  # fmt: skip


def _two_touching_cards() -> tuple[np.ndarray, list[np.ndarray]]:
    """Two upright cards side by side with no gap (one region of paper), two ovals on each
    drawn in SET's proportions."""
    image = np.full((480, 640, 3), TABLE, np.uint8)
    cards = [_card(150, 100), _card(150 + WIDTH, 100)]
    symbol = SYMBOL_TO_WIDTH * WIDTH
    axes = (round(symbol / 2), round(SYMBOL_SHAPE * symbol / 2))
    for card in cards:
        cv2.fillConvexPoly(image, card.astype(np.int32), PAPER)
        cx, cy = card.mean(axis=0)
        for dy in (-0.215 * WIDTH, 0.215 * WIDTH):  # symbols 0.43 widths apart
            cv2.ellipse(image, (round(cx), round(cy + dy)), axes, 0, 0, 360, GREEN, cv2.FILLED)
    return image, cards


def test_touching_cards_merged_into_one_region_are_framed_from_their_symbols():
    image, cards = _two_touching_cards()
    candidates = find_candidates(make_maps(image))
    frames = [c.quad.astype(np.float64) for c in candidates if c.maker == SYMBOLS]
    others = [c.quad.astype(np.float64) for c in candidates if c.maker != SYMBOLS]
    for card in cards:
        assert max(convex_iou(card, other) for other in others) < 0.7  # no region parts them
        assert max(convex_iou(card, frame) for frame in frames) > 0.85


def test_a_card_without_print_and_a_plain_table_give_no_frames():
    image = np.full((480, 640, 3), TABLE, np.uint8)
    cv2.fillConvexPoly(image, _card(200, 100).astype(np.int32), PAPER)
    assert not [c for c in find_candidates(make_maps(image)) if c.maker == SYMBOLS]


def test_the_area_predicted_for_a_slanted_pair_of_symbols_is_its_quads():
    axis = np.array([np.cos(0.4), np.sin(0.4)])
    across = np.array([-axis[1], axis[0]])
    centre = np.array([300.0, 200.0])
    # stacked a little off square to the symbols' axis: the card seen at a slant
    step = 30 * (across + 0.2 * axis)
    group = [Blob(centre + s * step, axis, 60.0, 28.0, np.zeros(2), 1.0) for s in (-0.5, 0.5)]
    frame = card_frame(group)
    quad = predicted_quad(frame)
    assert quad is not None
    assert np.isclose(frame_area(frame), cv2.contourArea(quad), rtol=1e-4)
    assert np.allclose(quad.mean(axis=0), centre, atol=1e-3)
