"""Shared fixtures: real photos from ../shared/data are decoded once per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

PROJECT = Path(__file__).resolve().parent.parent
SAMPLES = PROJECT / "sample_images"
# The photos live beside the checkout, wherever pytest is started from.
os.environ.setdefault("SETVISION_DATA", str(PROJECT.parent / "shared" / "data"))

from setvision.vision.image import Photo, load  # noqa: E402
from setvision.vision.learn.dataset import Board, default_data_dir, load_boards  # noqa: E402
from setvision.vision.read.features import FEATURE_GROUPS  # noqa: E402


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return default_data_dir()


@pytest.fixture(scope="session")
def boards() -> dict[str, Board]:
    """Every labelled board by its file name under shared/data (and sample_images/...)."""
    return {b.file: b for b in load_boards()}


@pytest.fixture(scope="session", autouse=True)
def _no_user_profiles(tmp_path_factory):
    """Tests never read the user's calibration profiles or default profile."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    yield
    patch.undo()


_PHOTOS: dict[str, Photo] = {}


@pytest.fixture(scope="session")
def photo():
    """photo(path) -> Photo, each file decoded once for the whole session."""

    def get(path: str | Path) -> Photo:
        key = str(path)
        if key not in _PHOTOS:
            _PHOTOS[key] = load(key)
        return _PHOTOS[key]

    return get


@pytest.fixture(scope="session")
def reader():
    from setvision.calibration.profiles import reader_for

    return reader_for()


#: Whole-table photos of six sources (decks, cameras, tables) whose cards are placed by label.
PLACED_BOARDS = (
    "boards/antingshen__Set-Solver/training_raw__IMG_0574.jpg",
    "boards/nakkstar123__set-solver/grid__IMG_5809.jpg",
    "boards/piratefsh__set-solver/images__set-12-random-multi.jpg",
    "boards/robertdeleon98__SET_Solver/Test_Images__test1.jpg",
    "boards/tomwhite__set-game/data__webcam__20170604_134005.jpg",
    "boards/dbieber__setfinder/data__input_images__12.jpg",
)


@pytest.fixture(scope="session")
def placed_cards(photo, data_dir, boards):
    """placed_cards(files=PLACED_BOARDS) -> (image, outline, labelled card) for every outline
    the finder gives on these labelled boards that is not cut by the border and holds exactly
    one labelled card's centre; each board is searched once per session."""
    import cv2
    import numpy as np
    from setvision.vision.find.finder import find_cards

    found: dict[str, list] = {}

    def on_board(file: str) -> list:
        image = photo(data_dir / file).image
        placed = []
        for outline in find_cards(image).outlines:
            quad = np.float32(outline.corners_xy)
            inside = [
                c for c in boards[file].cards if cv2.pointPolygonTest(quad, c.centre, False) >= 0
            ]
            if not outline.touches_border and len(inside) == 1:
                placed.append((image, outline, inside[0]))
        return placed

    def get(files: tuple[str, ...] = PLACED_BOARDS) -> list:
        for file in files:
            if file not in found:
                found[file] = on_board(file)
        return [card for file in files for card in found[file]]

    return get


#: Twelve cards on a white bag, every one read surely, no set among them: the candidate makers
#: miss the first (white paper on white cloth), the card net sees it.
SHELF = "boards/TheBananaBender__Set_vision_player/train__photo_84_2025-06-15_12-18-12.jpg"


@pytest.fixture(scope="session")
def shelf(photo, data_dir) -> Photo:
    return photo(data_dir / SHELF)


@pytest.fixture(scope="session")
def shelf_truth(data_dir):
    from setvision.vision.learn.find_eval import outline_truths

    return next(t for t in outline_truths(data_dir) if t.file == SHELF)


@pytest.fixture(scope="session")
def sample_labels() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in SAMPLES.glob("*.json")}


@pytest.fixture(scope="session")
def drawn():
    """Two cards drawn on a dark cloth, one turned by 30 degrees, and their exact corners."""
    import cv2
    import numpy as np
    from test_segment import _card

    image = np.full((360, 480, 3), (45, 40, 38), np.uint8)
    expected = [
        _card(image, (130, 170), 110, 0, "red", 2),
        _card(image, (340, 190), 100, 30, "purple", 3),
    ]
    return cv2.GaussianBlur(image, (3, 3), 0), expected


def assert_put_back(mend, image: np.ndarray, card: np.ndarray, place: np.ndarray, overlap: float):
    """``mend`` (image, place -> corners or None) puts a ``place`` lying off ``card`` (overlap
    under 0.9) back onto it (overlap above ``overlap``)."""
    from setvision.vision.geometry import convex_iou

    assert convex_iou(place, card) < 0.9
    mended = mend(image, place)
    assert mended is not None
    assert convex_iou(mended, card) > overlap


def read_as(text: str, corners: np.ndarray, sure: float = 0.99):
    """A ``CardReading`` of the card ``text`` at ``corners``, each attribute read at ``sure``
    (the rest shared by the other two values)."""
    from setvision.solver import VALUES, parse_card
    from setvision.vision.layout import CardReading

    card = parse_card(text)
    probabilities = {}
    for attribute, values in VALUES.items():
        p = np.full(3, (1 - sure) / 2)
        p[values.index(card.value(attribute))] = sure
        probabilities[attribute] = p
    return CardReading(corners, probabilities, card)


def symbol_box(x: int, width: int = 30, height: int = 60) -> np.ndarray:
    """A symbol's contour: a box ``width`` wide from ``x`` along a laid-out card."""
    return np.array([[[x, 20]], [[x + width, 20]], [[x + width, 20 + height]], [[x, 20 + height]]])


def profile_payload(means_first: float) -> dict:
    """A small valid deck profile's JSON payload; ``means_first`` is one of its numbers."""
    features = list(FEATURE_GROUPS["color"][:2])
    return {
        "format": 1,
        "name": "deck",
        "fitted_on": {"photos": ["a.jpg"], "cards": 4, "values": {}, "date": "d", "model": "m"},
        "attributes": {
            "color": {
                "features": features,
                "values": ["red", "green"],
                "counts": [2, 2],
                "means": [[means_first, 0.0], [1.0, 1.0]],
                "spread": [1.0, 1.0],
            }
        },
    }


@pytest.fixture
def config_home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "setvision" / "profiles").mkdir(parents=True)
    return tmp_path / "setvision"
