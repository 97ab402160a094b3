"""Shared fixtures: real photos from ../shared/data are decoded once per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

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
