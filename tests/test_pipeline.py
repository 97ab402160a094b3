"""Real photos, one or two per source, read against their labels (each photo decoded once)."""

from dataclasses import replace

import numpy as np
import pytest
from setvision.vision.learn.evaluate import score_board

# Boards of every source, on dark, pale, wooden, carpet and paper tables, webcam frames and
# phone photos, rotated, oblique and overlapping. The reader must find and read every card.
BOARDS = [
    "boards/Anaisdg__OpenCV/IMG_1821.jpg",
    "boards/Webrewthebestbeer1__set-solver/images__DSC00486.jpg",
    "boards/antingshen__Set-Solver/training_raw__IMG_0574.jpg",
    "boards/cire694__set_solver/misc__set14.jpg",
    "boards/dbieber__setfinder/data__input_images__26.jpg",
    "boards/jtclark2__card_shark/ImageLibrary__IMG_6438.jpg",
    "boards/maormagori__OpenCV-Set-Cards-Player/photos__20200221_162013.jpg",
    "boards/nakkstar123__set-solver/grid__IMG_5809.jpg",
    "boards/nicolashahn__set-solver/image-data__all-cards__raw__20180611_110608.jpg",
    "boards/olicht__set-solver/images__set-12-random-2sets-new.jpg",
    "boards/omega697__set-finder/app__src__androidTest__assets__scenes__cards_8_no_set.jpg",
    "boards/piratefsh__set-solver/images__set-12-random-2sets.jpg",
    "boards/robertdeleon98__SET_Solver/Test_Images__test1.jpg",
    "boards/tomwhite__set-game/data__ad-hoc__DSC_4870.jpg",
    "boards/yosemitebandit__setbot/irl-dealt-hand-images__dealt-hand-1.jpg",
]


@pytest.mark.parametrize("file", BOARDS, ids=lambda f: f.split("/")[1])
def test_every_card_is_found_and_read(file, boards, photo, reader):
    board = boards[file]
    layout = reader.read_photo(photo(board.path))
    result = score_board(board, layout)
    assert result.found == result.labelled, f"found {result.found} of {result.labelled} cards"
    assert result.false_detections == 0
    assert result.exact == result.labelled, f"{result.labelled - result.exact} cards misread"
    assert result.sets_right


@pytest.mark.parametrize(
    "file",
    [
        "boards/nakkstar123__set-solver/grid__IMG_6053.jpg",  # a hard shadow across two cards
        "boards/nakkstar123__set-solver/grid__IMG_6055.jpg",
        # lit blue by a screen on one side: that paper scores below paper, so it was never seen
        # as unexplained and two of twelve cards were missed; the card net sees them
        "boards/tomwhite__set-game/data__webcam__20170529_203823.jpg",
    ],
    ids=lambda f: f.split("__")[-1],
)
def test_cards_under_a_shadow_edge_or_a_tinted_light_are_read(file, boards, photo, reader):
    board = boards[file]
    result = score_board(board, reader.read_photo(photo(board.path)))
    assert result.found == result.labelled, f"found {result.found} of {result.labelled} cards"
    assert result.exact == result.labelled


@pytest.mark.parametrize(
    "file",
    [
        "boards/omega697__set-finder/app__src__androidTest__assets__scenes__cards_13_wide_shot.jpg",
        "boards/yosemitebandit__setbot/irl-deck-images__deck-image-1.jpg",
    ],
    ids=lambda f: f.split("__")[-1],
)
@pytest.mark.parametrize("lamp", [(0.7, 0.92, 1.12), (1.12, 1.0, 0.8)], ids=["warm", "cool"])
def test_cards_under_a_coloured_light_are_found_and_read(file, lamp, boards, photo, reader):
    board = boards[file]
    original = photo(board.path)
    tinted = np.clip(original.image * np.float32(lamp), 0, 255).astype(np.uint8)
    result = score_board(board, reader.read_photo(replace(original, image=tinted)))
    assert result.found == result.labelled, f"found {result.found} of {result.labelled} cards"
    assert result.false_detections == 0
    assert result.exact >= result.labelled - 1


@pytest.mark.parametrize(
    "file",
    ["boards/nakkstar123__set-solver/grid__IMG_6064.jpg",
     "boards/dbieber__setfinder/data__setcards.jpg"],
    ids=lambda f: f.split("__")[-1],
)  # fmt: skip
def test_cards_in_deep_shade_under_a_dim_lamp_are_found(file, boards, photo, reader):
    board = boards[file]
    original = photo(board.path)
    dim = np.clip(255 * (original.image / 255.0) ** 1.8 * 0.8, 0, 255).astype(np.uint8)
    result = score_board(board, reader.read_photo(replace(original, image=dim)))
    assert result.found == result.labelled, f"found {result.found} of {result.labelled} cards"
    assert result.false_detections == 0


def test_a_board_without_cards_says_so(boards, photo, reader):
    egg = boards["boards/tomwhite__set-game/data__20150606_174355.jpg"]
    assert egg.cards == []
    assert reader.read_photo(photo(egg.path)).verdict == "no_cards"


@pytest.mark.parametrize(
    "file, size",
    [
        ("boards/dbieber__setfinder/data__input_images__7.jpg", (360, 640)),  # webcam frame
        ("boards/dbieber__setfinder/data__input_images__22.jpg", (2322, 4128)),  # 9.6 MP phone
    ],
)
def test_exif_rotated_photos_are_read_upright_in_original_pixels(file, size, boards, photo, reader):
    board = boards[file]
    layout = reader.read_photo(photo(board.path))
    assert layout.image_size == size
    result = score_board(board, layout)
    assert result.found == result.exact == len(board.cards)
