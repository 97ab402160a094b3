"""The card net: its maps turned into exact outlines, the finder asking its previous maker
where the net sees a card the fast makers missed, and the net itself on real photos."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest
from setvision.vision.find import card_net, finder
from setvision.vision.find.card_net import (
    CardMaps,
    CardNetError,
    card_maps,
    load_card_net,
    net_cards,
    net_path,
)
from setvision.vision.find.cardness import load_cardness
from setvision.vision.geometry import convex_iou
from setvision.vision.learn.net_held_out import HALF_A, UNSEEN, half_of

# --- outlines from maps: exact rectangles ---------------------------------------------------


def _maps(*cards: tuple[int, int, int, int], size=(60, 80)) -> np.ndarray:
    """Maps (interior, card) with each (x, y, w, h) card whole and its middle half inside."""
    maps = np.zeros((2, *size), np.float32)
    for x, y, w, h in cards:
        maps[1, y : y + h, x : x + w] = 0.95
        maps[0, y + h // 4 : y + h - h // 4, x + w // 4 : x + w - w // 4] = 0.9
    return maps


def _extent(quad: np.ndarray) -> tuple[float, float, float, float]:
    return (*quad.min(axis=0).tolist(), *quad.max(axis=0).tolist())


def test_a_card_is_the_rectangle_of_its_card_pixels_in_image_pixels():
    # map pixel (c, r) is input pixels 2c..2c+1: columns 10..21 are input 20..43, whose outer
    # edges lie at 19.5 and 43.5 (pixel centres at whole numbers), rows 10..29 at 19.5 and
    # 59.5; the input is the image at half size
    (quad,) = net_cards(CardMaps(_maps((10, 10, 12, 20)), factor=0.5), 0.5)
    assert _extent(quad) == pytest.approx((39, 39, 87, 119), abs=1e-3)


def test_touching_cards_are_two_cards_sharing_at_most_their_border():
    maps = CardMaps(_maps((10, 10, 12, 20), (22, 10, 12, 20)), factor=0.5)
    left, right = sorted(net_cards(maps, 0.5), key=lambda q: q[:, 0].min())
    one_map_pixel = 2 / 0.5
    assert _extent(left) == pytest.approx((39, 39, 87, 119), abs=one_map_pixel)
    assert _extent(right) == pytest.approx((87, 39, 135, 119), abs=one_map_pixel)
    assert convex_iou(left, right) < 0.1


def test_blobs_below_the_level_or_too_small_are_no_cards():
    maps = _maps((10, 10, 12, 20))
    assert net_cards(CardMaps(maps, 1.0), 0.95) == []  # the interior is 0.9
    speck = np.zeros_like(maps)
    speck[:, 5, 5] = 0.99  # one pixel: below the smallest blob
    assert net_cards(CardMaps(speck, 1.0), 0.5) == []
    assert net_cards(CardMaps(np.zeros_like(maps), 1.0), 0.5) == []


def test_the_net_sees_more_only_where_no_found_card_explains_its_card():
    card = np.float32([[0, 0], [40, 0], [40, 60], [0, 60]])
    shifted = card + np.float32([5, 5])
    elsewhere = card + np.float32([200, 0])
    found = np.stack([card])
    assert not finder.net_sees_more([shifted], found)
    assert finder.net_sees_more([shifted, elsewhere], found)
    assert finder.net_sees_more([card], np.zeros((0, 4, 2), np.float32))
    assert not finder.net_sees_more([], found)


# --- the model file -------------------------------------------------------------------------


def test_a_missing_or_damaged_net_is_one_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(card_net, "net_path", lambda held_out=None: tmp_path / "net.onnx")
    card_net._nets.__dict__.clear()
    try:
        with pytest.raises(CardNetError, match="missing"):
            load_card_net("test")
        (tmp_path / "net.onnx").write_bytes(b"not a net at all")
        with pytest.raises(CardNetError, match="not a card net"):
            load_card_net("test")
    finally:
        card_net._nets.__dict__.clear()


def test_the_shipped_and_held_out_nets_are_distinct_files():
    shipped = net_path().read_bytes()
    for name in ("A", "B", UNSEEN):
        assert net_path(name).read_bytes() != shipped


def test_the_two_halves_each_hold_sessions_of_the_new_source_and_older_sources():
    new = "TheBananaBender/Set_vision_player"
    assert half_of(new, "2025-06-08 18:34") == "A"
    assert half_of(new, "2025-06-08 13:51") == "B"
    assert half_of("dbieber/setfinder", "dbieber/setfinder") == "A"
    assert half_of("nicolashahn/set-solver", "nicolashahn/set-solver") == "B"
    assert {half_of(new, g) for g in HALF_A} == {"A"}


# --- on real photos -------------------------------------------------------------------------

SAMPLES = ["data__ad-hoc__DSC_4870.jpg", "data__webcam__20170604_134005.jpg"]


@pytest.mark.parametrize("name", SAMPLES)
def test_the_net_sees_each_card_the_finder_finds_on_a_real_photo(name, photo):
    from pathlib import Path

    image = photo(Path(__file__).parent.parent / "sample_images" / name).image
    found = [o.corners_xy for o in finder.find_cards(image).outlines]
    model = load_cardness()
    small, factor = finder.resize_long_side(image, model.work_long_side)
    seen = [q / factor for q in net_cards(card_maps(small, load_card_net()), 0.5)]
    assert len(found) >= 9
    assert len(seen) == len(found)
    for quad in found:
        assert max(convex_iou(quad, s) for s in seen) >= 0.6


def test_the_previous_finder_is_asked_when_the_net_sees_a_card_more(photo, monkeypatch):
    from pathlib import Path

    image = photo(Path(__file__).parent.parent / "sample_images" / SAMPLES[0]).image
    asked = []
    real = finder.previous_candidates

    def previous(small, on_card=None):
        asked.append(on_card)
        return real(small, on_card)

    monkeypatch.setattr(finder, "previous_candidates", previous)
    only_net = replace(load_cardness(), unexplained=np.inf, recheck=1.01, net_interior=0.7)
    first = finder.find_cards(image, only_net)
    assert not asked  # the net's cards are the cards found
    corner = np.float32([[2, 2], [42, 2], [42, 62], [2, 62]])  # half a card found's area
    monkeypatch.setattr(finder, "net_cards", lambda maps, level: [corner])
    again = finder.find_cards(image, only_net)
    (on_card,) = asked
    # it looks where the net sees card paper: the sample's cards, not the table between them
    small, _ = finder.resize_long_side(image, only_net.work_long_side)
    paper = finder.card_paper(finder.card_maps(small, finder.load_card_net()))
    grid = [[x, y] for x in range(0, small.shape[1], 37) for y in range(0, small.shape[0], 29)]
    wanted = paper.at(np.array(grid, float)) >= finder.PREVIOUS_ON_CARD
    assert on_card(np.array(grid, float)).tolist() == wanted.tolist()
    assert wanted.any() and not wanted.all()
    assert len(again.outlines) == len(first.outlines)  # asked, it finds no card in the corner
    # ... so the corner stays a place where a card may be missed: no "no set" over it
    _, factor = finder.resize_long_side(image, only_net.work_long_side)
    assert any(np.allclose(np.sort(q, 0), np.sort(corner / factor, 0)) for q in again.possible)
    assert not any(np.allclose(np.sort(q, 0), np.sort(corner / factor, 0)) for q in first.possible)
    never = replace(only_net, net_interior=np.inf)
    finder.find_cards(image, never)
    assert len(asked) == 1  # without the net, nothing sends this photo
    # a card of the net's far smaller than the cards found is a print, not a card missed
    speck = np.float32([[2, 2], [22, 2], [22, 32], [2, 32]])
    monkeypatch.setattr(finder, "net_cards", lambda maps, level: [speck])
    named = finder.find_cards(image, only_net).possible
    assert not any(np.allclose(np.sort(q, 0), np.sort(speck / factor, 0)) for q in named)
    monkeypatch.setattr(finder, "NAMED_SIZE_FACTOR", 100.0)
    named = finder.find_cards(image, only_net).possible
    assert any(np.allclose(np.sort(q, 0), np.sort(speck / factor, 0)) for q in named)


def _box(x: float, y: float, w: float, h: float) -> np.ndarray:
    return np.float32([[x, y], [x + w, y], [x + w, y + h], [x, y + h]])


def test_only_the_nets_unexplained_cards_holding_a_surer_card_are_named():
    found = np.array([_box(100, 0, 50, 80)])
    missed, explained = _box(0, 0, 50, 80), _box(101, 1, 50, 80)
    # at the higher level the found card's interior splits: a piece near its end no card explains
    piece = _box(105, 60, 20, 15)
    assert finder.unexplained_cards([piece], found)  # named alone, it would be a false place
    surer = [_box(10, 20, 30, 40), piece]
    unexplained = finder.unexplained_cards([missed, explained], found)
    assert [q.tolist() for q in finder.named_cards(unexplained, surer)] == [missed.tolist()]
    assert finder.named_cards(unexplained, [piece]) == []
    assert finder.named_cards(finder.unexplained_cards([missed], found), []) == []


@pytest.mark.parametrize("interior, named", [(0.87, False), (0.95, True)])
def test_a_card_of_the_nets_is_named_a_place_only_from_the_named_level(
    photo, monkeypatch, interior, named
):
    """The gate asks the previous finder from the model's level (0.85 here), but a card of the
    net's that no card found explains is named as a place only from ``NAMED_INTERIOR``."""
    from pathlib import Path

    assert 0.85 < 0.87 < finder.NAMED_INTERIOR <= 0.95
    image = photo(Path(__file__).parent.parent / "sample_images" / SAMPLES[0]).image
    real = finder.card_maps
    corner = (slice(2, 22), slice(2, 16))  # map pixels (rows, columns): the table's corner

    def with_a_card_in_the_corner(small, net):
        maps = real(small, net)
        drawn = maps.maps.copy()
        drawn[1][corner] = 0.95
        drawn[0][corner] = 0.0
        drawn[0][7:17, 5:13] = interior
        return replace(maps, maps=drawn)

    monkeypatch.setattr(finder, "card_maps", with_a_card_in_the_corner)
    model = replace(load_cardness(), net_interior=0.85)
    _, to_work = finder.resize_long_side(image, model.work_long_side)
    factor = card_net.INPUT_LONG_SIDE / model.work_long_side * to_work  # image to map input
    middle = tuple(float(v) / factor for v in (9 * 2 + 0.5, 12 * 2 + 0.5))  # image pixels

    def named_there() -> bool:
        found = finder.find_cards(image, model)
        return any(cv2.pointPolygonTest(q.astype(np.float32), middle, False) >= 0
                   for q in found.possible)  # fmt: skip

    assert named_there() == named
    monkeypatch.setattr(finder, "NAMED_INTERIOR", 0.85)
    assert named_there()  # named from the gate's level, as before


def test_a_frame_gives_maps_of_the_net_input_size(photo):
    blank = np.full((500, 1000, 3), 128, np.uint8)
    maps = card_maps(blank, load_card_net())
    assert maps.maps.shape == (2, 96, 192)
    assert maps.factor == pytest.approx(384 / 1000)
    assert net_cards(maps, 0.5) == []  # a grey frame holds no card
    assert cv2.countNonZero((maps.maps[1] > 0.5).astype(np.uint8)) == 0


def test_unexplained_cards_match_the_overlap_of_every_pair():
    """Skipping quads whose boxes do not meet changes nothing: their overlap is 0."""
    rng = np.random.default_rng(3)

    def quad(x, y):
        return np.float32([[x, y], [x + 40, y + 5], [x + 35, y + 65], [x - 5, y + 60]])

    net_quads = [quad(*xy) for xy in rng.uniform(0, 300, (30, 2))]
    found = np.array([quad(*xy) for xy in rng.uniform(0, 300, (12, 2))])
    direct = [n for n in net_quads if max(convex_iou(n, q) for q in found) < finder.EXPLAINED_IOU]
    assert 0 < len(direct) < len(net_quads)
    got = finder.unexplained_cards(net_quads, found)
    assert len(got) == len(direct) and all(a is b for a, b in zip(got, direct))
    assert len(finder.unexplained_cards(net_quads, np.zeros((0, 4, 2), np.float32))) == 30


def test_card_paper_reads_the_map_pixel_under_each_point():
    from setvision.vision.find.card_net import STRIDE, CardPaper

    card = np.zeros((10, 20), np.float32)
    card[3, 7] = 0.8  # input pixels 14-15 across, 6-7 down (STRIDE 2)
    paper = CardPaper(card, 0.5)  # the image is twice the net's input
    assert STRIDE == 2
    points = np.array([[29.0, 13.0], [30.5, 14.0], [33.0, 13.0], [-50.0, 900.0]])
    assert paper.at(points).tolist() == pytest.approx([0.8, 0.8, 0.0, 0.0])


def test_the_previous_finder_looks_only_where_it_may_be_a_card(photo, data_dir, monkeypatch):
    from setvision.vision.find import outlines
    from setvision.vision.find.candidates import previous_candidates

    # 20 cards, some in piles: the previous finder searches symbol groups for cards
    image = photo(data_dir / "boards/Webrewthebestbeer1__set-solver/images__DSC00618.jpg").image
    everywhere = previous_candidates(image)
    assert everywhere
    assert len(previous_candidates(image, lambda p: np.ones(len(p), bool))) == len(everywhere)
    searched = []
    real = outlines.card_hypotheses

    def hypotheses(group, *args, **kwargs):
        searched.append(np.mean([b.centre for b in group], axis=0))
        return real(group, *args, **kwargs)

    monkeypatch.setattr(outlines, "card_hypotheses", hypotheses)
    previous_candidates(image)
    assert searched  # symbol groups are searched on this photo ...
    searched.clear()
    assert previous_candidates(image, lambda p: np.zeros(len(p), bool)) == []
    assert not searched  # ... but none where no card may be
    left_half = previous_candidates(image, lambda p: p[:, 0] < image.shape[1] / 2)
    assert left_half and all(c.quad.mean(axis=0)[0] < image.shape[1] / 2 for c in left_half)
    assert len(left_half) < len(everywhere)


def test_find_cards_names_a_doubt_only_where_the_net_sees_card_paper(photo, monkeypatch):
    from pathlib import Path

    from setvision.vision.find.candidates import Candidate

    image = photo(Path(__file__).parent.parent / "sample_images" / SAMPLES[0]).image
    corner = np.float32([[2, 2], [40, 2], [40, 60], [2, 60]])  # the table, work pixels
    features = np.zeros(1, np.float32)
    doubt = finder.Judged(Candidate(corner, 0.0, 0.0, 0), features, 0.4)
    monkeypatch.setattr(finder, "doubtful", lambda judged, chosen, model: [doubt])
    model = load_cardness()
    _, factor = finder.resize_long_side(image, model.work_long_side)

    def names_the_corner() -> bool:
        found = finder.find_cards(image, model)
        return any(np.allclose(np.sort(q, 0), np.sort(corner / factor, 0)) for q in found.possible)

    assert not names_the_corner()
    monkeypatch.setattr(finder, "DOUBT_ON_CARD", 0.0)  # named wherever the net looks
    assert names_the_corner()
    no_net = replace(model, net_interior=np.inf)
    found = finder.find_cards(image, no_net)  # without the net, every doubt is named
    assert any(np.allclose(np.sort(q, 0), np.sort(corner / factor, 0)) for q in found.possible)
