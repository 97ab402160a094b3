"""Outlines found unsurely and read with little confidence are set aside, not counted as cards:
on a real photo, with a print a held-out finder took for a card, and in what is reported."""

from __future__ import annotations

import numpy as np
import pytest
from setvision.vision.find.finder import Found, find_cards
from setvision.vision.find.outlines import Outline
from setvision.vision.geometry import long_side_index, order_corners
from setvision.vision.layout import UNSURE, Ignored, Layout
from setvision.vision.learn.find_eval import outline_truths
from setvision.vision.learn.find_training import HeldOutOutlines
from setvision.vision.learn.vetting_eval import NO_VETTING, read_found
from setvision.vision.read.vetting import FINDER_UNSURE, READER_UNSURE, TEXTURED_MARGIN

BAG = "boards/TheBananaBender__Set_vision_player/train__photo_49_2025-06-15_12-18-12.jpg"
#: Where a finder fitted without this photo's source took the bag's banana print for a card
#: (corners in the pixels of the photo as loaded), and how sure it was.
PRINT = np.array([[163, 76], [363, 53], [365, 224], [142, 245]], np.float32)
PRINT_PROBABILITY = 0.59


@pytest.fixture(scope="module")
def bag(photo, data_dir):
    return photo(data_dir / BAG)


@pytest.fixture(scope="module")
def found_on_bag(bag) -> Found:
    return find_cards(bag.image)


def _print_outline() -> Outline:
    corners = order_corners(PRINT)
    return Outline(corners, False, False, long_side_index(corners))


def _read_with_print(reader, bag, found: Found, probability: float, monkeypatch) -> Layout:
    with_print = Found([*found.outlines, _print_outline()], [], [*found.probabilities, probability])
    monkeypatch.setattr("setvision.vision.pipeline.find_cards", lambda image: with_print)
    return reader.read(bag.image)


def test_a_print_found_unsurely_and_read_unsurely_is_set_aside(
    reader, bag, found_on_bag, monkeypatch
):
    alone = reader.read(bag.image)
    layout = _read_with_print(reader, bag, found_on_bag, PRINT_PROBABILITY, monkeypatch)

    assert [c.card for c in layout.cards] == [c.card for c in alone.cards]
    aside = [i for i in layout.ignored if i.reason == UNSURE]
    assert len(aside) == 1
    assert np.allclose(aside[0].corners_xy, order_corners(PRINT))
    assert layout.verdict != "no_set"


def test_the_same_print_found_surely_is_counted_as_a_card(reader, bag, found_on_bag, monkeypatch):
    """Either doubt alone keeps an outline: the finder's certainty outweighs a poor reading."""
    alone = reader.read(bag.image)
    layout = _read_with_print(reader, bag, found_on_bag, 0.99, monkeypatch)

    assert len(layout.cards) == len(alone.cards) + 1
    assert not any(i.reason == UNSURE for i in layout.ignored)


def test_the_cards_of_the_photo_are_not_set_aside(reader, bag, found_on_bag):
    layout = reader.read(bag.image)

    assert len(layout.cards) == len(found_on_bag.outlines) - len(layout.ignored)
    assert not any(i.reason == UNSURE for i in layout.ignored)


def test_held_out_reading_counts_the_print_only_without_vetting(reader, bag, data_dir):
    truth = next(t for t in outline_truths(data_dir) if t.file == BAG)
    cards = [np.asarray(p, np.float64) for p in truth.polygons]
    outlines = HeldOutOutlines(
        BAG,
        (*cards, PRINT.astype(np.float64) * bag.scale),
        (*[0.97] * len(cards), PRINT_PROBABILITY),
    )

    read = read_found(truth, bag.image, bag.scale, outlines, reader)

    found, false = read.counted[NO_VETTING]
    assert false == 1 and found >= len(cards) - 1  # a card may be unreadable (cut by the border)
    assert read.counted[(FINDER_UNSURE, READER_UNSURE)] == (found, 0)
    # the textured-margin levels are scored at the shipped levels, the shipped one as counted
    assert read.textured[TEXTURED_MARGIN] == read.counted[(FINDER_UNSURE, READER_UNSURE)]
    assert read.textured[float("inf")][0] >= found


def test_a_shape_set_aside_is_named_and_keeps_no_set_from_being_said():
    square = np.array([[0, 0], [60, 0], [60, 90], [0, 90]], np.float32)
    layout = Layout((400, 300), (), (Ignored(square, UNSURE),))

    assert layout.layout_doubts == ["1 card-like shape too unsure to count as a card"]


@pytest.mark.parametrize(
    "arguments",
    [
        ["eval", "--read"],
        ["eval", "--scales"],
        ["eval", "--find", "--read", "--finder", "previous"],
        ["eval", "--find", "--loso", "--finder", "live"],
    ],
)
def test_finding_options_without_what_they_measure_are_refused_in_one_line(arguments, capsys):
    from setvision.cli import main

    assert main(arguments) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("setvision: error:") and "\n" not in error


def test_the_live_referee_sets_the_print_aside_too(reader, bag, monkeypatch):
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import Frame

    def with_print(small):
        found = find_cards(small)
        factor = max(small.shape[:2]) / max(bag.image.shape[:2])
        corners = order_corners(PRINT * np.float32(factor))
        print_outline = Outline(corners, False, False, long_side_index(corners))
        return Found([*found.outlines, print_outline], [], [*found.probabilities, 0.59])

    monkeypatch.setattr("setvision.vision.live.session.find_cards", with_print)
    analyser = LiveAnalyser(reader)
    layouts = [analyser.analyse(Frame(k, k / 30, bag.image)).layout for k in range(3)]

    assert len(layouts[-1].cards) == len(reader.read(bag.image).cards)
    assert sum(i.reason == UNSURE for i in layouts[-1].ignored) == 1


def _laid_out_card(print_amplitude: float = 0.0, ramp: float = 0.0) -> np.ndarray:
    """A laid-out card (``CARD_SIZE``): white paper, three purple ovals across its middle, a
    lightness ``ramp`` (grey levels per pixel along it, as shade falls) and a checked print of
    ``print_amplitude`` grey levels over all of it."""
    import cv2
    from setvision.vision.read.rectify import CARD_SIZE

    width, height = CARD_SIZE
    xs = np.arange(width, dtype=np.float32)[None, :, None]
    ys = np.arange(height, dtype=np.float32)[:, None, None]
    card = np.full((height, width, 3), 230.0, np.float32) - ramp * xs
    checks = ((xs // 3 + ys // 3) % 2) * 2 - 1
    card = card + print_amplitude / 2 * checks
    for centre in (45, 75, 105):
        cv2.ellipse(card, (centre, height // 2), (10, 26), 0, 0, 360, (140, 40, 120), -1)
    return np.clip(card, 0, 255).astype(np.uint8)


def test_a_cards_blank_margin_is_smooth_and_a_prints_is_textured():
    from setvision.vision.read.vetting import TEXTURED_MARGIN, margin_texture

    assert margin_texture(_laid_out_card()) == 0.0  # the ovals lie inside the band
    assert margin_texture(_laid_out_card(ramp=1.0)) == pytest.approx(1.0, abs=0.05)
    assert margin_texture(_laid_out_card(print_amplitude=40)) > 2 * TEXTURED_MARGIN


def test_a_textured_margin_sets_aside_only_what_reads_unsurely():
    from setvision.vision.read.vetting import TEXTURED_MARGIN, TEXTURED_READER_UNSURE, set_aside

    rough, smooth = TEXTURED_MARGIN + 1, TEXTURED_MARGIN - 1
    unsure = TEXTURED_READER_UNSURE - 0.05
    assert set_aside(0.99, unsure, rough)  # however sure the finder was
    assert not set_aside(0.99, unsure, smooth)
    assert not set_aside(0.99, TEXTURED_READER_UNSURE + 0.05, rough)
    assert not set_aside(0.99, unsure, rough, textured_margin=float("inf"))


def test_the_cards_of_real_photos_have_smooth_margins(reader, photo, data_dir):
    """Cards on a banana-print bag, on wood, in shade and under a lamp: their margins read
    smooth, the product sets none aside for its texture."""
    from setvision.vision.read.vetting import TEXTURED_MARGIN

    files = [
        BAG,
        "boards/TheBananaBender__Set_vision_player/train__photo_80_2025-06-08_18-40-37.jpg",
        "boards/nicolashahn__set-solver/image-data__all-cards__raw__20180611_105137.jpg",
        "boards/Webrewthebestbeer1__set-solver/images__DSC00486.jpg",
    ]
    margins = []
    for file in files:
        measured, _, _, _ = reader.measure(photo(data_dir / file).image)
        margins += [m.margin for m in measured]
    assert len(margins) >= 30
    assert max(margins) < TEXTURED_MARGIN
