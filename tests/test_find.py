"""The learned card finder: exact corners on drawn cards, every card on real photos and nothing
else, the same cards at any photo size, no false "no set" when a card is partly hidden, a model
file that is refused when damaged, and ``setvision eval --find``."""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import replace

import cv2
import numpy as np
import pytest
from conftest import read_as
from setvision.cli import main
from setvision.solver import find_sets
from setvision.vision.find import finder
from setvision.vision.find.cardness import CardnessModel, FinderModelError, parse_model
from setvision.vision.find.describe import FEATURES
from setvision.vision.find.finder import Found, find_cards
from setvision.vision.geometry import contains_point
from setvision.vision.image import Photo
from setvision.vision.learn.find_eval import (
    PhotoReading,
    centre_truths,
    decided_by_the_reader,
    outline_truths,
    run_scale_agreement,
    same_readings,
    scale_agreement,
    score_found,
)
from setvision.vision.read.classify import ForestModel

# --- paper the cards found leave: exact areas ------------------------------------------------

PAPER_SIZE = (100, 150)  # the paper mask (rows, columns): 4 work pixels a side each


def _paper_with(*rectangles: tuple[int, int, int, int]) -> np.ndarray:
    paper = np.zeros(PAPER_SIZE, np.uint8)
    for x, y, w, h in rectangles:
        paper[y : y + h, x : x + w] = 1
    return paper


def test_paper_left_counts_regions_and_the_symbol_ink_inside_them():
    found = np.float32([[[120, 240], [200, 240], [200, 360], [120, 360]]])  # 80x120 work px
    # a missed card (20x30 blocks: one typical card) printed with two 6x3 symbols, a blank
    # sheet four cards large and a scrap of half a card; the found card's own symbol and the
    # wooden table's colour are covered, or too large to be print
    paper = _paper_with((10, 10, 20, 30), (60, 10, 40, 60), (80, 80, 20, 15), (30, 60, 20, 30))
    ink = np.zeros(PAPER_SIZE, np.uint8)
    ink[15:21, 14:17] = ink[15:21, 22:25] = 1  # the missed card's symbols
    ink[70:76, 38:41] = 1  # a symbol of the card found (inside its quad)
    ink[:, 120:] = 1  # the table beside everything: coloured, but no symbol
    left = finder.paper_left(paper, ink, found, at_least=0.5)
    assert left.areas.tolist() == [1.0, 4.0, 0.5]
    assert left.inks.tolist() == [pytest.approx(36 * 16 / (80 * 120)), 0.0, 0.0]
    assert finder.unexplained(paper, ink, found, 0.5, 0.05)  # the missed card holds print
    blank = ink.copy()
    blank[15:21, 14:25] = 0
    assert not finder.unexplained(paper, blank, found, 0.5, 0.05)  # blank paper only
    assert finder.unexplained(paper, blank, found, 0.5, 0.0)  # unless no print is asked for
    assert not finder.unexplained(paper, ink, found, float("inf"), 0.0)


# --- drawn cards: exact geometry ------------------------------------------------------------


def test_two_drawn_cards_are_found_with_their_exact_corners(drawn):
    image, expected = drawn
    found = find_cards(image)
    assert isinstance(found, Found)
    assert len(found.outlines) == 2
    left, right = sorted(found.outlines, key=lambda o: float(o.corners_xy[:, 0].mean()))
    for got, want in ((left, expected[0]), (right, expected[1])):
        assert got.corners_xy.shape == (4, 2) and got.corners_xy.dtype == np.float32
        # clockwise from the top-left, like the drawn corners: the same corner in each place
        assert np.abs(got.corners_xy - want).max() < 1.5, got.corners_xy
        assert not got.touches_border and not got.occluded
        sides = np.linalg.norm(np.roll(want, -1, axis=0) - want, axis=1)
        assert got.long_side == int(sides[0] < sides[1])


@pytest.mark.parametrize("fill", [0, 128, 255])
def test_a_blank_image_holds_no_cards(fill):
    found = find_cards(np.full((480, 640, 3), fill, np.uint8))
    assert found.outlines == []
    assert len(found.possible) == 0


def test_random_noise_holds_no_cards():
    rng = np.random.default_rng(0)
    assert find_cards(rng.integers(0, 256, (300, 400, 3), dtype=np.uint8)).outlines == []


# --- real photos: recall and precision ------------------------------------------------------

#: Photos with labelled outlines (TheBananaBender): the first, in name order (``sorted``), of
#: each of the nine capture sessions (``find_eval.capture_sessions``), in time order.
OUTLINED = [
    "boards/TheBananaBender__Set_vision_player/" + name
    for name in (
        "train__photo_12_2025-06-08_13-51-31.jpg",
        "train__photo_10_2025-06-08_18-42-13.jpg",
        "train__PHOTO-2025-06-08-19-59-59.jpg",
        "train__PHOTO-2025-06-09-20-12-16.jpg",
        "train__photo_10_2025-06-15_11-22-16.jpg",
        "train__photo_100_2025-06-15_12-09-03.jpg",
        "train__photo_16_2025-06-15_13-04-17.jpg",
        "train__photo_36_2025-06-15_14-33-25.jpg",
        "train__photo_13_2025-06-15_17-05-48.jpg",
    )
]
#: Boards with card centres checked by eye: the first, in name order, of six other sources
#: (black cloth, wood, a 49-card spread on carpet, white paper, a touching grid, a phone photo).
CENTRED = [
    "boards/Anaisdg__OpenCV/Card Detection Experiment Hub__Images__train_original.jpg",
    "boards/dbieber__setfinder/data__input_images__0.jpg",
    "boards/nakkstar123__set-solver/grid__0F6EA361-9E69-45F5-A443-501E35DFC79D.jpg",
    "boards/nicolashahn__set-solver/image-data__all-cards__raw__20180611_105137.jpg",
    "boards/piratefsh__set-solver/images__set-12-random-2sets.jpg",
    "boards/tomwhite__set-game/data__20170106_205126.jpg",
]
REAL = OUTLINED + CENTRED

_FOUND: dict[str, Found] = {}


def _found(picture: Photo) -> Found:
    """The finder's answer for a decoded photo, found once per session."""
    if picture.source not in _FOUND:
        _FOUND[picture.source] = find_cards(picture.image)
    return _FOUND[picture.source]


def _short(file: str) -> str:
    return file.split("/")[-1][-28:]


@pytest.fixture(scope="module")
def truths(data_dir, boards):
    """Where the cards of every photo of ``REAL`` are (a KeyError if one lost its labels)."""
    by_file = {t.file: t for t in outline_truths(data_dir) if t.file in OUTLINED}
    by_file.update({t.file: t for t in centre_truths(boards[f] for f in CENTRED)})
    return [by_file[file] for file in REAL]


@pytest.fixture(scope="module")
def finding(truths, photo):
    """(file, cards labelled, found, false detections) for every photo of ``REAL``."""
    rows = []
    for truth in truths:
        picture = photo(truth.path)
        quads = [o.corners_xy * np.float32(picture.scale) for o in _found(picture).outlines]
        found, false = score_found(truth, quads)
        rows.append((truth.file, truth.labelled, found, false))
    return rows


def _misses(rows) -> str:
    return "; ".join(
        f"{_short(file)}: {found}/{labelled} found, {false} false"
        for file, labelled, found, false in rows
        if found < labelled or false
    )


def test_real_photos_have_every_labelled_card_found(finding):
    labelled = sum(r[1] for r in finding)
    found = sum(r[2] for r in finding)
    assert labelled >= 150  # the photos hold their cards: the measure is not vacuous
    recall = found / labelled
    assert recall >= 0.97, f"recall {recall:.3f} ({found}/{labelled}): {_misses(finding)}"


def test_real_photos_have_nothing_else_taken_for_a_card(finding):
    found = sum(r[2] for r in finding)
    false = sum(r[3] for r in finding)
    assert found >= 150
    precision = found / (found + false)
    assert precision >= 0.97, f"precision {precision:.3f} ({false} false): {_misses(finding)}"


# --- the same cards at any size -------------------------------------------------------------


def _quads(image: np.ndarray) -> list[np.ndarray]:
    return [o.corners_xy for o in find_cards(image).outlines]


@pytest.mark.parametrize("file", REAL[::2], ids=_short)
def test_the_same_cards_are_found_at_long_sides_800_1200_and_1600(file, data_dir, photo):
    picture = photo(data_dir / file)
    agree, counts = scale_agreement(picture.image, _quads, (800, 1200, 1600))
    assert min(counts) > 0
    assert agree, f"cards found at long sides 800, 1200, 1600: {counts}"


def _card_but_at_800(image: np.ndarray) -> list[np.ndarray]:
    """A reader's cards that change with the photo's size: one card, none at long side 800."""
    if max(image.shape[:2]) == 800:
        return []
    return [np.float64([[0, 0], [50, 0], [50, 80], [0, 80]])]


def test_the_scale_check_tells_the_readers_decisions_from_the_finders(truths):
    """Cards that differ between sizes over outlines that do not are the reader's doing."""
    photo = truths[0]  # its outlines agree at every size (the test above)
    (asked,) = run_scale_agreement([photo], _card_but_at_800, outlines_too=True)
    assert not asked.same and asked.counts == [0, 1, 1]
    assert asked.same_outlines is True
    assert decided_by_the_reader([asked]) == (1, 1)
    (unasked,) = run_scale_agreement([photo], _card_but_at_800)
    assert unasked.same_outlines is None
    assert decided_by_the_reader([unasked]) == (0, 0)
    finder_too = replace(asked, same_outlines=False)
    assert decided_by_the_reader([asked, finder_too, replace(asked, same=True)]) == (2, 1)


CARD = np.float64([[0, 0], [50, 0], [50, 80], [0, 80]])


def test_readings_are_the_same_only_when_each_card_is_read_as_the_same_card():
    moved = CARD + 2.0  # the same card outlined a little differently (overlap well over 0.5)
    elsewhere = CARD + 200.0
    assert same_readings([(CARD, "one red")], [(moved, "one red")])
    assert not same_readings([(CARD, "one red")], [(moved, "two red")])
    assert not same_readings([(CARD, "one red")], [(elsewhere, "one red")])
    assert not same_readings([(CARD, "one red")], [])
    assert same_readings([], [])


def _read_otherwise_at_800(image: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """A reader whose one card is read as another at long side 800 (in the photo's pixels at
    every size: the card's outline scales with the photo)."""
    side = max(image.shape[:2])
    return [(CARD * side / 800, "two red" if side == 800 else "one red")]


def test_the_scale_check_tells_a_card_read_otherwise_at_one_size(truths):
    (asked,) = run_scale_agreement(
        [truths[0]], lambda image: [q for q, _ in _read_otherwise_at_800(image)],
        reader=_read_otherwise_at_800,
    )  # fmt: skip
    assert asked.same and asked.counts == [1, 1, 1]  # the same card found at every size
    assert asked.same_read is False and asked.read_every_way is False
    (unasked,) = run_scale_agreement([truths[0]], _card_but_at_800)
    assert unasked.same_read is None and unasked.read_every_way is None


def _read_otherwise_turned(image: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """A reader whose one card (the photo's middle) is read as another when the photo stands
    the other way round (its height over its width flipped)."""
    height, width = image.shape[:2]
    middle = np.float64([[0.4, 0.4], [0.6, 0.4], [0.6, 0.6], [0.4, 0.6]]) * [width, height]
    return [(middle, "one red" if width >= height else "two red")]


def test_the_scale_check_tells_a_card_read_otherwise_turned(truths):
    (asked,) = run_scale_agreement(
        [truths[0]], lambda image: [q for q, _ in _read_otherwise_turned(image)],
        reader=_read_otherwise_turned,
    )  # fmt: skip
    assert asked.same and asked.same_turned  # the same card found every way
    assert asked.same_read is True  # ... read alike at every size
    assert asked.read_every_way is False  # ... but not turned a quarter round


def _answered_otherwise_at_800(image: np.ndarray) -> PhotoReading:
    """A reader whose one card is read alike at every size but whose answer changes at long
    side 800 (its card read less surely there: "uncertain" rather than "no_set")."""
    side = max(image.shape[:2])
    answer = "uncertain" if side == 800 else "no_set"
    return PhotoReading([(CARD * side / 800, "one red")], answer)


def test_the_scale_check_tells_an_answer_that_changes_over_the_same_readings(truths):
    (asked,) = run_scale_agreement(
        [truths[0]], lambda image: [q for q, _ in _answered_otherwise_at_800(image).cards],
        reader=_answered_otherwise_at_800,
    )  # fmt: skip
    assert asked.same and asked.same_read is True  # the same card, read alike, at every size
    assert asked.same_answer is False and asked.answer_every_way is False
    (unanswered,) = run_scale_agreement(
        [truths[0]], lambda image: [q for q, _ in _read_otherwise_at_800(image)],
        reader=_read_otherwise_at_800,
    )  # fmt: skip
    assert unanswered.same_answer is None and unanswered.answer_every_way is None


def test_the_answer_shown_names_each_set_by_its_cards_not_their_numbers():
    from setvision.vision.layout import Layout
    from setvision.vision.learn.vetting_eval import shown_answer

    cards = ["1-red-solid-oval", "2-green-striped-diamond", "3-purple-open-squiggle",
             "1-red-solid-diamond"]  # fmt: skip
    layout = Layout((400, 300), tuple(_layout_card(text, 70 * k) for k, text in enumerate(cards)))
    again = Layout((400, 300), tuple(_layout_card(text, 300 - 70 * k)
                                     for k, text in enumerate(reversed(cards))))  # fmt: skip
    answer = shown_answer(layout)
    assert answer == "sets; 1-red-solid-oval + 2-green-striped-diamond + 3-purple-open-squiggle"
    assert shown_answer(again) == answer  # numbered the other way round: the same answer
    unsure = Layout((400, 300), (*layout.cards[1:], _layout_card(cards[0], 0, sure=0.5)))
    assert shown_answer(unsure).startswith("sets; ")  # a set still found over an unsure card
    no_set = Layout((400, 300), layout.cards[:2] + layout.cards[3:])
    assert shown_answer(no_set) == "no_set"
    doubted = Layout((400, 300), no_set.cards[:2] + (_layout_card(cards[3], 210, sure=0.5),))
    assert shown_answer(doubted) == "uncertain"  # no set, but a card read unsurely


def _layout_card(text: str, x: float, sure: float = 0.99):
    return read_as(text, CARD + [x, 0.0], sure)


# --- the dealer's safety check: a card partly hidden ----------------------------------------


def _cover(corners: np.ndarray, long_side: int, share: float = 0.6) -> np.ndarray:
    """The polygon covering ``share`` of a card's length from one short end (so its centre
    too), reaching a little past the card's edges but not past the cut."""
    q = np.roll(np.asarray(corners, np.float64), -long_side, axis=0)  # q0-q1: a long side
    along = (q[1] - q[0]) / np.linalg.norm(q[1] - q[0])
    across = (q[3] - q[0]) / np.linalg.norm(q[3] - q[0])
    grow = 0.06 * np.linalg.norm(q[3] - q[0])
    cut_0 = q[0] + share * (q[1] - q[0])
    cut_3 = q[3] + share * (q[2] - q[3])
    return np.array(
        [
            q[0] - grow * (along + across),
            cut_0 - grow * across,
            cut_3 + grow * across,
            q[3] - grow * (along - across),
        ]
    )


def _table_texture(image, cards, centre, length, shape) -> np.ndarray | None:
    """The table's texture in an array of ``shape``: the nearest square (a fifth of a card
    long) free of cards around ``centre``, tiled mirrored; None when there is none."""
    height, width = cards.shape
    side = max(8, int(0.2 * length))
    for distance in np.arange(0.5, 5.0, 0.125) * length:
        for angle in np.radians(np.arange(0, 360, 15)):
            x = int(round(centre[0] + distance * np.cos(angle))) - side // 2
            y = int(round(centre[1] + distance * np.sin(angle))) - side // 2
            if x < 0 or y < 0 or x + side > width or y + side > height:
                continue
            if cards[y : y + side, x : x + side].any():
                continue
            square = image[y : y + side, x : x + side].astype(np.float32)
            block = np.block(
                [[[square], [square[:, ::-1]]], [[square[::-1]], [square[::-1, ::-1]]]]
            )
            reps = (shape[0] // (2 * side) + 1, shape[1] // (2 * side) + 1, 1)
            return np.tile(block, reps)[: shape[0], : shape[1]]
    return None


def _hide(picture: Photo, board, hidden: list[int]) -> np.ndarray:
    """The photo with 60% of each ``hidden`` card (label positions) covered by the table's own
    texture: a card-free square of the table near it, tiled and brought to the colour of the
    table right around the card (``cv2.inpaint`` if no such square is found)."""
    image = picture.image
    height, width = image.shape[:2]
    found = _found(picture).outlines
    centres = [np.asarray(c.centre, np.float64) / picture.scale for c in board.cards]
    centres += [np.asarray(p, np.float64) / picture.scale for p in board.partial]
    hiding = []
    for index in hidden:
        holding = [o for o in found if contains_point(o.corners_xy, tuple(centres[index]))]
        assert len(holding) == 1, f"card {index} at {centres[index]} was not found unhidden"
        hiding.append(holding[0])
    # where cards are: every card found and a disc of half a card's width at every label
    length = float(np.median([cv2.arcLength(o.corners_xy, True) for o in found])) / 3.28
    cards = np.zeros((height, width), np.uint8)
    cv2.fillPoly(cards, [np.rint(o.corners_xy).astype(np.int32) for o in found], 1)
    for centre in centres:
        cv2.circle(cards, tuple(int(v) for v in np.rint(centre)), int(0.35 * length), 1, -1)
    cards = cv2.dilate(cards, np.ones((9, 9), np.uint8))
    modified = image.copy()
    for outline in hiding:
        cover = _cover(outline.corners_xy, outline.long_side)
        x0, y0 = np.floor(cover.min(axis=0)).astype(int) - 3
        x1, y1 = np.ceil(cover.max(axis=0)).astype(int) + 4
        local = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillPoly(local, [np.rint(cover - (x0, y0)).astype(np.int32)], 1)
        alpha = cv2.GaussianBlur(local.astype(np.float32), (5, 5), 0)[..., None]
        # the window clipped to the image
        xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x1, width), min(y1, height)
        window = (slice(ya, yb), slice(xa, xb))
        part = (slice(ya - y0, yb - y0), slice(xa - x0, xb - x0))
        texture = _table_texture(image, cards, outline.corners_xy.mean(axis=0), length,
                                 local.shape)  # fmt: skip
        if texture is None:
            mask = np.zeros((height, width), np.uint8)
            mask[window] = local[part]
            patch = cv2.inpaint(modified, mask, 7, cv2.INPAINT_TELEA)[window].astype(np.float32)
        else:
            # the table's colour in a ring just around the card
            ring = np.zeros((height, width), np.uint8)
            cv2.fillPoly(ring, [np.rint(cover).astype(np.int32)], 1)
            ring = cv2.dilate(ring, np.ones((15, 15), np.uint8)) & ~cards & 1
            patch = texture[part]
            if ring.sum() > 50:
                patch = patch - texture.reshape(-1, 3).mean(0) + image[ring > 0].mean(0)
        blend = alpha[part] * patch + (1 - alpha[part]) * modified[window]
        modified[window] = np.clip(np.rint(blend), 0, 255).astype(np.uint8)
    return modified


def _in_most_sets(board) -> int:
    """The labelled card that takes part in the most sets (the first of them)."""
    sets = find_sets([c.card for c in board.cards])
    assert sets, "the board must hold a set for hiding a card of it to matter"
    counts = np.bincount(np.ravel(sets), minlength=len(board.cards))
    return int(np.argmax(counts))


#: Twelve-card boards of four sources (dark cloth, wood, a table top, a webcam frame); the card
#: that takes part in the most sets is hidden.
ONE_HIDDEN = {
    "dark cloth": "boards/antingshen__Set-Solver/training_raw__IMG_0572.jpg",
    "wood": "boards/maormagori__OpenCV-Set-Cards-Player/photos__20200221_161937.jpg",
    "table top": "boards/robertdeleon98__SET_Solver/Test_Images__test3.jpg",
    "webcam": "boards/jtclark2__card_shark/ImageLibrary__IMG_6394.jpg",
}


@pytest.mark.parametrize("file", ONE_HIDDEN.values(), ids=ONE_HIDDEN.keys())
def test_a_partly_hidden_card_never_gives_no_set(file, boards, photo, reader):
    board = boards[file]
    picture = photo(board.path)
    modified = _hide(picture, board, [_in_most_sets(board)])
    layout = reader.read_photo(replace(picture, image=modified))
    assert layout.verdict != "no_set", f"{len(layout.cards)} cards read, {layout.layout_doubts}"


#: Boards on which one card takes part in every set: hiding it leaves none among the rest.
EVERY_SET_HIDDEN = [
    "boards/cire694__set_solver/misc__set5.jpg",
    "boards/nakkstar123__set-solver/grid__IMG_5810.jpg",
]


@pytest.mark.parametrize("file", EVERY_SET_HIDDEN, ids=lambda f: f.split("/")[1])
def test_hiding_the_card_of_every_set_gives_no_false_no_set(file, boards, photo, reader):
    board = boards[file]
    cards = [c.card for c in board.cards]
    hidden = _in_most_sets(board)
    assert find_sets(cards) and not find_sets(cards[:hidden] + cards[hidden + 1 :])
    picture = photo(board.path)
    layout = reader.read_photo(replace(picture, image=_hide(picture, board, [hidden])))
    assert layout.verdict != "no_set", f"{len(layout.cards)} cards read, {layout.layout_doubts}"


def _three_to_hide(board) -> list[int]:
    """The first three cards (in label order) whose hiding leaves nine cards without a set."""
    cards = [c.card for c in board.cards]
    for hidden in itertools.combinations(range(len(cards)), 3):
        if not find_sets([c for i, c in enumerate(cards) if i not in hidden]):
            return list(hidden)
    raise AssertionError(f"{board.file}: no three cards hide every set")


#: Twelve-card boards (wood, a table top, a touching grid); three cards are partly hidden so
#: that the nine in full view, a count that raises no doubt, hold no set.
THREE_HIDDEN = [
    "boards/antingshen__Set-Solver/training_raw__IMG_0573.jpg",
    "boards/dbieber__setfinder/data__input_images__50.jpg",
    "boards/nakkstar123__set-solver/grid__IMG_6056.jpg",
]


@pytest.mark.parametrize("file", THREE_HIDDEN, ids=lambda f: f.split("/")[1])
def test_three_partly_hidden_cards_leaving_no_set_in_view_give_no_false_no_set(
    file, boards, photo, reader
):
    board = boards[file]
    assert len(board.cards) == 12 and find_sets([c.card for c in board.cards])
    hidden = _three_to_hide(board)
    picture = photo(board.path)
    layout = reader.read_photo(replace(picture, image=_hide(picture, board, hidden)))
    assert layout.verdict != "no_set", f"{len(layout.cards)} cards read, {layout.layout_doubts}"


# --- the model file -------------------------------------------------------------------------


def _model_text() -> str:
    """A small valid model: one tree of three nodes."""
    forest = ForestModel(
        FEATURES,
        roots=np.array([0]),
        feature=np.array([0, -1, -1]),
        threshold=np.array([0.5, 0.0, 0.0]),
        left=np.array([1, -1, -1]),
        right=np.array([2, -1, -1]),
        value=np.array([[0.5, 0.5], [0.9, 0.1], [0.1, 0.9]]),
        depth=2,
    )
    return CardnessModel(forest, accept=0.5, work_long_side=800, trained_on={}).to_json()


def test_a_small_valid_model_is_read():
    model = parse_model(_model_text(), "finder-test.json")
    assert model.accept == 0.5
    assert model.probability(np.zeros((1, len(FEATURES)))).tolist() == pytest.approx([0.1])


def _edited(change) -> str:
    data = json.loads(_model_text())
    change(data)
    return json.dumps(data)


def _set(path: tuple, value):
    def change(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


DAMAGED = {
    "not json": lambda: _model_text()[:-40],
    "empty": lambda: "",
    "a list": lambda: "[1, 2]",
    "format 0": lambda: _edited(_set(("format",), 0)),
    "format 99": lambda: _edited(_set(("format",), 99)),
    "features reordered": lambda: _edited(_set(("features",), list(reversed(FEATURES)))),
    "feature dropped": lambda: _edited(_set(("features",), list(FEATURES[:-1]))),
    "feature added": lambda: _edited(_set(("features",), [*FEATURES, "new_feature"])),
    "left child past the end": lambda: _edited(_set(("forest", "left"), [7, -1, -1])),
    "right child past the end": lambda: _edited(_set(("forest", "right"), [3, -1, -1])),
    "negative child of a split": lambda: _edited(_set(("forest", "left"), [-2, -1, -1])),
    "root past the end": lambda: _edited(_set(("forest", "roots"), [3])),
    "accept 0": lambda: _edited(_set(("accept",), 0.0)),
    "accept 1": lambda: _edited(_set(("accept",), 1.0)),
    "accept 1.5": lambda: _edited(_set(("accept",), 1.5)),
    "accept -0.2": lambda: _edited(_set(("accept",), -0.2)),
    "accept missing": lambda: _edited(lambda data: data.pop("accept")),
    "net level 0": lambda: _edited(_set(("net_interior",), 0.0)),
    "net level 1": lambda: _edited(_set(("net_interior",), 1.0)),
    "net level text": lambda: _edited(_set(("net_interior",), "high")),
}


@pytest.mark.parametrize("level", [0.85, float("inf")])
def test_the_card_net_level_survives_the_model_file(level):
    model = parse_model(_model_text(), "finder-test.json")
    again = parse_model(replace(model, net_interior=level).to_json(), "finder-test.json")
    assert again.net_interior == level


@pytest.mark.parametrize("flaw", list(DAMAGED))
def test_a_damaged_or_stale_model_is_refused_naming_the_file(flaw):
    with pytest.raises(FinderModelError, match="finder-test.json"):
        parse_model(DAMAGED[flaw](), "finder-test.json")


# --- setvision eval --find ------------------------------------------------------------------


def test_eval_find_prints_recall_and_precision_per_source(capsys, boards):
    placed = [
        b
        for b in boards.values()
        if b.source == "antingshen/Set-Solver" and b.has_positions and b.kind != "noisy"
    ]
    assert main(["eval", "--find", "--source", "antingshen", "--details"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| source"))
    for column in ("photos", "cards", "recall", "precision", "every card"):
        assert column in header
    rows = [line for line in out.splitlines() if line.startswith("| antingshen")]
    assert len(rows) == 1
    total = [line for line in out.splitlines() if line.startswith("| **all** |")]
    assert len(total) == 1
    cells = [c.strip() for c in total[0].strip("|").split("|")]
    assert int(cells[1]) == len(placed) > 0  # photos
    assert int(cells[2]) == sum(len(b.cards) for b in placed)  # cards
    assert all(0.0 <= float(c) <= 1.0 for c in cells[3:6])  # recall, precision, complete
    listed = [line for line in out.splitlines() if ": found " in line]
    assert len(listed) == round(int(cells[1]) * (1 - float(cells[5])))  # the photos not complete
    assert all(line.startswith("boards/antingshen__Set-Solver/") for line in listed)


def _total_row(out: str) -> list[str]:
    total = [line for line in out.splitlines() if line.startswith("| **all** |")]
    assert len(total) == 1
    return [c.strip() for c in total[0].strip("|").split("|")][:5]


def test_eval_find_live_counts_what_live_shows_as_a_photos_reading(capsys):
    """Live analysis of a still table shows the cards a photo's reading counts (its finder
    runs on the same work copy, its net's places are read the same way)."""
    assert main(["eval", "--find", "--finder", "live", "--source", "antingshen"]) == 0
    live = _total_row(capsys.readouterr().out)
    assert main(["eval", "--find", "--read", "--source", "antingshen"]) == 0
    assert live == _total_row(capsys.readouterr().out)


def test_eval_find_scales_prints_agreement_per_source(capsys):
    assert main(["eval", "--find", "--scales", "--source", "antingshen"]) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("| source"))
    assert "same re-saved" in header and "same at 0.95 and 1.05 times" in header
    assert "same turned a quarter and half round" in header
    assert any(line.startswith("| antingshen") for line in out.splitlines())
    total = [line for line in out.splitlines() if line.startswith("| **all** |")]
    assert len(total) == 1
    shares = [float(c) for c in total[0].strip("|").split("|")[-4:]]
    assert all(0.0 <= share <= 1.0 for share in shares)
    assert "the reader decides differently" not in out  # the finder itself was measured


def test_eval_find_scales_read_says_where_the_reader_decided(capsys):
    assert main(["eval", "--find", "--scales", "--read", "--source", "olicht"]) == 0
    out = capsys.readouterr().out
    said = re.search(r"of the (\d+) photos whose cards differ between sizes, (\d+) get the same "
                     r"outlines from the finder at every size", out)  # fmt: skip
    if said is None:  # its one photo gives the same cards at every size
        assert "no photo's cards differ between sizes" in out, out
    else:
        differ, same = (int(n) for n in said.groups())
        assert 0 <= same <= differ == 1
    _check_read_and_answer_columns(out)


def _check_read_and_answer_columns(out: str) -> None:
    """The scale check as a reader counts: each card read the same, and the answer the same,
    at every size and every way; every way never more often than at the sizes."""
    header = next(line for line in out.splitlines() if line.startswith("| source"))
    assert header.endswith(
        "| each read the same at 800, 1200, 1600 | each read the same every way "
        "| same answer at 800, 1200, 1600 | same answer every way |"
    )
    total = next(line for line in out.splitlines() if line.startswith("| **all** |"))
    read_alike, every_way, answer, answer_every_way = (
        float(c) for c in total.strip("|").split("|")[-4:]
    )
    same = float(total.split("|")[3])
    assert 0.0 <= every_way <= read_alike <= same <= 1.0  # read alike only where found alike
    assert 0.0 <= answer_every_way <= answer <= 1.0


def test_eval_find_scales_live_reads_each_card_too(capsys):
    """What live analysis shows is checked card by card too, as a photo's reading is."""
    assert main(["eval", "--find", "--scales", "--finder", "live", "--source", "olicht"]) == 0
    out = capsys.readouterr().out
    _check_read_and_answer_columns(out)


def test_a_finder_that_depends_on_exact_pixels_is_caught_when_the_photo_is_re_saved(
    photo, data_dir
):
    from setvision.vision.learn.find_eval import resave_agreement, resaved

    image = photo(data_dir / "boards/antingshen__Set-Solver/training_raw__IMG_0574.jpg").image
    card = np.float32([[10, 10], [60, 10], [60, 90], [10, 90]])
    exact = int(image.sum())

    def by_exact_pixels(picture):  # a card only while not one pixel has changed
        return [card] if int(picture.sum()) == exact else []

    def by_size(picture):  # a card wherever the picture has this size
        return [card] if picture.shape == image.shape else []

    assert resaved(image).shape == image.shape
    assert not np.array_equal(resaved(image), image)
    assert not resave_agreement(image, by_exact_pixels)
    assert resave_agreement(image, by_size)


def test_a_finder_that_depends_on_the_photos_exact_size_is_caught_when_it_is_resized_a_little(
    photo, data_dir
):
    from setvision.vision.learn.find_eval import near_agreement

    image = photo(data_dir / "boards/antingshen__Set-Solver/training_raw__IMG_0574.jpg").image
    unit = np.float32([[0.1, 0.1], [0.3, 0.1], [0.3, 0.4], [0.1, 0.4]])

    def by_size(picture):  # a card only at the photo's own size
        return [unit * 500] if picture.shape == image.shape else []

    def in_proportion(picture):  # the same card, wherever the picture is resized
        return [unit * np.float32(picture.shape[1::-1])]

    assert not near_agreement(image, by_size)
    assert near_agreement(image, in_proportion)


@pytest.mark.parametrize("turn", [cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_180], ids=["quarter", "half"])
def test_a_point_of_a_turned_photo_is_mapped_back_to_its_own_pixel(turn):
    from setvision.vision.learn.find_eval import turned_back

    image = np.zeros((30, 50), np.uint8)
    image[7, 41] = 255  # row 7, column 41: the point (41, 7)
    turned = cv2.rotate(image, turn)
    row, column = np.argwhere(turned == 255)[0]
    home = turned_back(np.array([[column, row]]), turn, (50, 30))
    assert home.tolist() == [[41.0, 7.0]]


def test_a_finder_that_depends_on_the_photos_orientation_is_caught_when_it_is_turned():
    from setvision.vision.learn.find_eval import turn_agreement

    image = np.zeros((300, 400, 3), np.uint8)
    image[40:120, 250:300] = 255  # one bright card-like patch

    def on_the_patch(picture):  # outlines the patch, wherever it lies
        ys, xs = np.nonzero(picture[..., 0])
        x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
        return [np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])]

    def upright_only(picture):  # the same, but only in the photo's own orientation
        return on_the_patch(picture) if picture.shape == image.shape else []

    def right_half_only(picture):  # the same, but only in the picture's right half
        found = on_the_patch(picture)
        return found if found[0][:, 0].mean() > picture.shape[1] / 2 else []

    assert turn_agreement(image, on_the_patch)
    assert not turn_agreement(image, upright_only)  # caught turned a quarter round
    assert right_half_only(cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE))  # not by a quarter...
    assert not turn_agreement(image, right_half_only)  # ... but turned half round


def test_points_inside_many_quads_at_once_agree_with_opencv_one_quad_at_a_time():
    from setvision.vision.find.outlines import _inside, _inside_each

    rng = np.random.default_rng(4)
    centres = rng.uniform(50, 450, (30, 2))
    angles = rng.uniform(0, np.pi, 30)
    unit = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float64) * [40, 25]
    quads = []
    for centre, angle in zip(centres, angles):
        turn = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        quads.append((centre + unit @ turn.T).astype(np.float32))
    points = rng.uniform(0, 500, (200, 2))
    each = _inside_each(points, np.array(quads))
    assert each.shape == (200, 30) and each.any() and not each.all()
    for k, quad in enumerate(quads):
        truth = [cv2.pointPolygonTest(quad, (float(x), float(y)), False) > 0 for x, y in points]
        assert (each[:, k] == truth).all()
        assert (_inside(points, quad) == truth).all()
