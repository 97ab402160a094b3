"""Exact geometric answers for the polygon helpers the finder and the evaluation share."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from setvision.vision.geometry import convex_overlap, pixel_corners, turned_about_centre

SQUARE = np.float64([[0, 0], [10, 0], [10, 10], [0, 10]])

# two outlines of one card found at two photo sizes: they share their first corner to within
# float precision, where OpenCV's intersectConvexConvex returns 0
CARD_AT_800 = np.float64([[588.71643, 222.48425], [765.01337, 236.62071],
                          [748.1196, 508.3952], [571.8187, 498.17993]])  # fmt: skip
CARD_AT_1200 = np.float64([[588.71643, 222.48424], [765.26794, 236.64056],
                           [748.3685, 508.9889], [571.78503, 498.7437]])  # fmt: skip


@pytest.mark.parametrize(
    ("shift", "expected"),
    [((5, 0), 50.0), ((5, 5), 25.0), ((10, 0), 0.0), ((20, 3), 0.0), ((0, 0), 100.0)],
)
def test_the_overlap_of_two_squares_is_exact(shift, expected):
    assert convex_overlap(SQUARE, SQUARE + shift) == pytest.approx(expected)


def test_the_overlap_does_not_depend_on_corner_order_or_orientation():
    inner = np.float64([[2, 2], [2, 6], [7, 6], [7, 2]])  # anticlockwise on screen
    assert convex_overlap(SQUARE, inner) == pytest.approx(20.0)
    assert convex_overlap(inner[::-1], SQUARE[[2, 3, 0, 1]]) == pytest.approx(20.0)


def test_two_outlines_sharing_a_corner_overlap_by_nearly_all_their_area():
    shared = convex_overlap(CARD_AT_800, CARD_AT_1200)
    smaller = min(cv2.contourArea(q.astype(np.float32)) for q in (CARD_AT_800, CARD_AT_1200))
    assert shared > 0.99 * smaller


def test_pixel_corners_are_the_first_and_last_pixels_clockwise_from_the_top_left():
    corners = pixel_corners(3, 2)
    assert corners.dtype == np.float32
    assert corners.tolist() == [[0, 0], [2, 0], [2, 1], [0, 1]]


def test_corners_turn_about_their_centre():
    square = np.float32([[0, 0], [2, 0], [2, 2], [0, 2]])
    quarter = turned_about_centre(square, 90.0)  # clockwise on an image: each corner to the next
    assert np.allclose(quarter, np.roll(square, -1, axis=0), atol=1e-5)
    assert np.allclose(turned_about_centre(square, 0.0), square)
    assert quarter.dtype == np.float32
