"""Cards that touch make one region; it is cut at the neck between them."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from setvision.vision.find.candidates import find_candidates, make_maps
from setvision.vision.find.necks import cut_at_necks, worth_cutting
from setvision.vision.geometry import convex_iou
from setvision.vision.image import resize_long_side


def _region(mask: np.ndarray) -> tuple[np.ndarray, float]:
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    assert len(contours) == 1
    return contours[0], cv2.contourArea(contours[0])


def _card(centre: tuple[float, float], angle: float) -> np.ndarray:
    """The corners of a 100x64 card turned by ``angle`` degrees about ``centre``."""
    return cv2.boxPoints((centre, (100, 64), angle)).astype(np.float32)


def _drawn(*cards: np.ndarray) -> np.ndarray:
    mask = np.zeros((300, 400), np.uint8)
    for card in cards:
        cv2.fillPoly(mask, [np.round(card).astype(np.int32)], 255)
    return mask


def test_two_cards_touching_at_a_corner_are_cut_apart():
    left = _card((120, 150), 30)
    # the second card's left corner on the first card's right corner
    right = _card((0, 0), -20)
    right += left[np.argmax(left[:, 0])] - right[np.argmin(right[:, 0])] + [-3, 0]
    contour, area = _region(_drawn(left, right))
    assert worth_cutting(area, cv2.contourArea(cv2.convexHull(contour)))

    pieces = cut_at_necks(contour, area)

    for card in (left, right):
        best = max(convex_iou(card, cv2.convexHull(p).reshape(-1, 2)) for p, _, _ in pieces)
        assert best > 0.93


def test_three_cards_in_a_row_touching_at_corners_are_cut_into_three():
    first = _card((75, 110), 35)
    step = first[np.argmax(first[:, 0])] - first[np.argmin(first[:, 0])] - [3, 0]
    second = first + step
    third = second + step
    contour, area = _region(_drawn(first, second, third))

    pieces = cut_at_necks(contour, area)

    for card in (first, second, third):
        best = max(convex_iou(card, cv2.convexHull(p).reshape(-1, 2)) for p, _, _ in pieces)
        assert best > 0.9


@pytest.mark.parametrize("angle", [0, 17, 45])
def test_one_card_is_not_cut(angle):
    contour, area = _region(_drawn(_card((200, 150), angle)))
    assert not worth_cutting(area, cv2.contourArea(cv2.convexHull(contour)))
    assert cut_at_necks(contour, area) == []


def test_a_card_with_a_chipped_corner_is_not_cut():
    card = _card((200, 150), 10)
    mask = _drawn(card)
    cv2.circle(mask, tuple(np.round(card[0]).astype(int).tolist()), 8, 0, -1)
    contour, area = _region(mask)
    assert cut_at_necks(contour, area) == []


def test_a_real_card_touching_another_at_a_corner_gets_a_candidate_of_its_own(data_dir, photo):
    """A card on dark wood whose corner touches the next card's: every mask joins the two."""
    picture = photo(data_dir / "boards/Webrewthebestbeer1__set-solver/images__DSC00531.jpg")
    small, factor = resize_long_side(picture.image, 800)
    centre = np.array([288, 451]) * factor  # the one purple solid squiggle, as labelled
    neighbour = np.array([474, 353]) * factor  # the red open squiggle beside it

    candidates = find_candidates(make_maps(small))

    def holds(quad: np.ndarray, point: np.ndarray) -> bool:
        return cv2.pointPolygonTest(quad.reshape(-1, 1, 2), tuple(point.tolist()), False) > 0

    alone = [c.quad for c in candidates if holds(c.quad, centre) and not holds(c.quad, neighbour)]
    beside = [c.quad for c in candidates if holds(c.quad, neighbour) and not holds(c.quad, centre)]
    assert alone, "no candidate holds the card without its neighbour"
    card_area = np.median([cv2.contourArea(q) for q in beside])  # the cards are one size
    assert any(0.7 < cv2.contourArea(q) / card_area < 1.4 for q in alone)
