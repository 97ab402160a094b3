"""Card outline detection: exact corners on a drawn table, nothing on blank images, real photos."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from setvision.vision.find.outlines import find_outlines
from setvision.vision.geometry import order_corners

COLOURS = {"red": (40, 40, 220), "green": (60, 160, 30), "purple": (140, 40, 110)}


def _card(image: np.ndarray, centre, width: float, angle: float, colour: str, count: int):
    """Draw a white card (portrait, ``width`` wide) with ``count`` diamonds; return its corners."""
    length = 1.56 * width
    u = np.array([np.cos(np.radians(angle)), np.sin(np.radians(angle))])  # across the card
    v = np.array([-u[1], u[0]])  # along it
    c = np.asarray(centre, float)
    corners = np.array(
        [
            c + sx * width / 2 * u + sy * length / 2 * v
            for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
        ]
    )
    cv2.fillConvexPoly(
        image, np.rint(corners * 8).astype(np.int32), (235, 235, 232), cv2.LINE_AA, 3
    )
    for k in range(count):
        s = c + (k - (count - 1) / 2) * 0.43 * width * v
        diamond = [
            s + 0.36 * width * u,
            s + 0.16 * width * v,
            s - 0.36 * width * u,
            s - 0.16 * width * v,
        ]
        cv2.fillConvexPoly(
            image, np.rint(np.array(diamond) * 8).astype(np.int32), COLOURS[colour], cv2.LINE_AA, 3
        )
    return order_corners(corners.astype(np.float32))


def test_drawn_cards_are_found_with_exact_corners_clockwise_from_top_left(drawn):
    image, expected = drawn
    outlines = find_outlines(image)
    assert len(outlines) == 2
    for want in expected:
        got = min(outlines, key=lambda o: np.linalg.norm(o.corners_xy.mean(0) - want.mean(0)))
        assert got.corners_xy.shape == (4, 2) and got.corners_xy.dtype == np.float32
        assert np.abs(got.corners_xy - want).max() < 2.0
        corners = got.corners_xy.astype(np.float64)
        edges = np.roll(corners, -1, axis=0) - corners
        turns = (
            edges[:, 0] * np.roll(edges, -1, axis=0)[:, 1]
            - edges[:, 1] * np.roll(edges, -1, axis=0)[:, 0]
        )
        assert (turns > 0).all()  # clockwise on screen (y down)
        assert int(np.argmin(corners.sum(axis=1))) == 0
        assert not got.touches_border and not got.occluded
        sides = np.linalg.norm(np.roll(want, -1, axis=0) - want, axis=1)
        assert got.long_side == int(sides[0] < sides[1])


def test_a_card_seen_at_a_slant_along_its_length_keeps_its_long_side(drawn):
    image, expected = drawn
    squashed = cv2.resize(image, (480, 200), interpolation=cv2.INTER_AREA)  # looks wider than long
    upright = [o for o in find_outlines(squashed) if o.corners_xy[:, 0].mean() < 200]
    assert len(upright) == 1
    sides = np.linalg.norm(
        np.roll(upright[0].corners_xy, -1, axis=0) - upright[0].corners_xy, axis=1
    )
    assert sides[0] > sides[1]  # in the image the card is wider than it is long
    assert upright[0].long_side == 1  # yet its long sides are the upright ones


def test_a_card_cut_by_the_image_border_touches_it(drawn):
    image, expected = drawn
    crop = image[:, 85:]  # the first card loses a tenth of its width
    outlines = find_outlines(crop)
    cut = [o for o in outlines if o.corners_xy[:, 0].mean() < 100]
    assert len(cut) == 1 and cut[0].touches_border
    # its corners still describe the whole card, the part outside the image included
    assert np.abs(cut[0].corners_xy - (expected[0] - [85, 0])).max() < 4.0


def test_cards_touching_at_a_corner_are_found_apart():
    image = np.full((360, 480, 3), (45, 40, 38), np.uint8)
    expected = [
        _card(image, (150, 120), 100, 0, "green", 2),
        _card(image, (252, 262), 100, 0, "purple", 1),
    ]
    outlines = find_outlines(cv2.GaussianBlur(image, (3, 3), 0))
    assert len(outlines) == 2
    for want in expected:
        got = min(outlines, key=lambda o: np.linalg.norm(o.corners_xy.mean(0) - want.mean(0)))
        assert np.abs(got.corners_xy - want).max() < 3.0


def _length_covered(cover: str) -> tuple[np.ndarray, np.ndarray]:
    """A three-diamond card whose last diamond lies under another card or a hand: the image,
    and the card's corners."""
    image = np.full((400, 480, 3), (45, 40, 38), np.uint8)
    card = _card(image, (200, 150), 100, 0, "red", 3)
    if cover == "card":
        over = _card(image, (200, 222), 100, 90, "purple", 2)
        cv2.polylines(image, [np.rint(over * 8).astype(np.int32)], True, (150, 150, 150), 2,
                      cv2.LINE_AA, 3)  # fmt: skip
    else:  # a hand, coming in from below
        cv2.rectangle(image, (100, 176), (300, 399), (120, 150, 200), cv2.FILLED)
    return cv2.GaussianBlur(image, (3, 3), 0), card


@pytest.mark.parametrize("cover", ["card", "hand"])
def test_a_card_with_a_symbol_covered_is_not_taken_for_a_whole_card(cover):
    image, card = _length_covered(cover)
    seen = (200.0, 120.0)  # the middle of what shows of the card
    holding = [
        outline
        for outline in find_outlines(image)
        if cv2.pointPolygonTest(outline.corners_xy.reshape(-1, 1, 2), seen, False) >= 0
    ]
    assert holding, "the card's visible part was not found at all"
    for outline in holding:
        # the outline describes the whole card, covered end included, and says it is covered
        assert outline.occluded
        assert np.abs(outline.corners_xy - card).max() < 10.0


@pytest.mark.parametrize("fill", [0, 128, 255])
def test_blank_images_hold_no_cards(fill):
    assert find_outlines(np.full((480, 640, 3), fill, np.uint8)) == []


def test_noise_holds_no_cards():
    rng = np.random.default_rng(0)
    assert find_outlines(rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)) == []


REAL = [
    "boards/tomwhite__set-game/data__webcam__20170604_134005.jpg",  # dark cloth, webcam
    "boards/nakkstar123__set-solver/grid__IMG_6054.jpg",  # touching grid, glare and shadows
    "boards/dbieber__setfinder/data__input_images__34.jpg",  # oblique view on wood
    "boards/yosemitebandit__setbot/irl-deck-images__deck-image-1.jpg",  # white cards on white
]


@pytest.mark.parametrize("name", REAL)
def test_real_photos_find_the_labelled_cards(name, boards, photo, data_dir):
    board = boards.get(name)
    assert board is not None and board.has_positions, f"{name}: its labels are lost"
    picture = photo(data_dir / name)
    outlines = find_outlines(picture.image)
    centres = [np.array(c.centre) / picture.scale for c in board.cards]

    def holds(outline, point) -> bool:
        contour = outline.corners_xy.reshape(-1, 1, 2)
        return cv2.pointPolygonTest(contour, (float(point[0]), float(point[1])), False) >= 0

    found = sum(any(holds(o, c) for o in outlines) for c in centres)
    assert found >= len(centres) - 1
    assert len(outlines) <= len(centres) + len(board.partial) + 1
