"""Black bars around a picture (a portrait photo or video in a landscape frame): exact
bounds on drawn frames, and on real photos letterboxed as `setvision bench` frames them, the
finder looks between the bars and finds the cards it found in the frame without them."""

from __future__ import annotations

import numpy as np
import pytest
from setvision.cli import main
from setvision.vision.find.bars import BAR_LEVEL, MIN_BARS_SHARE, Content, content
from setvision.vision.find.finder import find_cards
from setvision.vision.image import letterbox, letterbox_placed
from setvision.vision.learn.find_eval import InFrame, outline_truths, score_found


def _framed(left: int, top: int, right: int, bottom: int, bar: int = 0) -> np.ndarray:
    frame = np.full((120, 200, 3), bar, np.uint8)
    frame[top:bottom, left:right] = (90, 140, 200)
    return frame


def test_the_picture_between_bars_is_bounded_exactly():
    assert content(_framed(50, 0, 150, 120)) == Content(50, 0, 150, 120)
    assert content(_framed(0, 10, 200, 100)) == Content(0, 10, 200, 100)
    noisy = _framed(30, 5, 170, 115, bar=BAR_LEVEL)  # compression's noise on the black
    assert content(noisy) == Content(30, 5, 170, 115)


def test_a_sliver_of_dark_pixels_is_no_bar():
    share = int(200 * MIN_BARS_SHARE)  # columns
    assert content(_framed(share, 0, 200, 120)) == Content(share, 0, 200, 120)
    sliver = _framed(share - 2, 0, 199, 120)  # bars of (share - 2) and 1 columns: too thin
    assert content(sliver).is_whole(sliver)


def test_a_frame_without_bars_or_dark_throughout_is_all_picture():
    whole = _framed(0, 0, 200, 120)
    assert content(whole).is_whole(whole) and content(whole).of(whole) is whole
    dark = np.full((120, 200, 3), 3, np.uint8)
    assert content(dark) == Content(0, 0, 200, 120)
    table = _framed(0, 0, 200, 120)
    table[:20] = BAR_LEVEL + 15  # a dark table's edge is no bar
    assert content(table).is_whole(table)


def test_content_is_cut_out_and_its_pixels_moved_back_into_the_frame():
    frame = _framed(40, 12, 160, 108)
    inside = content(frame)
    picture = inside.of(frame)
    assert picture.shape == (96, 120, 3) and picture.flags["C_CONTIGUOUS"]
    assert (picture == (90, 140, 200)).all()
    assert inside.offset.tolist() == [40.0, 12.0]


def test_drawn_cards_between_bars_keep_their_exact_corners(drawn):
    """The two drawn cards framed by bars 120 pixels wide (no shrinking at this size): the
    corners found are the picture's own, moved by the bar, within a pixel and a half of the
    drawn ones."""
    image, expected = drawn
    frame = np.zeros((image.shape[0], image.shape[1] + 240, 3), np.uint8)
    frame[:, 120 : 120 + image.shape[1]] = image
    alone = sorted(find_cards(image).outlines, key=lambda o: float(o.corners_xy[:, 0].mean()))
    framed = sorted(find_cards(frame).outlines, key=lambda o: float(o.corners_xy[:, 0].mean()))
    assert len(framed) == len(alone) == 2
    for got, own, want in zip(framed, alone, expected):
        assert np.allclose(got.corners_xy, own.corners_xy + (120, 0), atol=1e-3)
        assert np.abs(got.corners_xy - (want + (120, 0))).max() < 1.5
        assert got.long_side == own.long_side and not got.touches_border


def test_letterboxing_places_the_photo_where_its_pixels_are_given_back():
    photo = np.zeros((300, 200, 3), np.uint8)
    photo[100, 50] = 255
    frame, factor, offset = letterbox_placed(photo, (1280, 720))
    assert factor == pytest.approx(2.4) and offset.tolist() == [400.0, 0.0]
    y, x = np.unravel_index(np.argmax(frame[..., 0]), frame.shape[:2])
    assert abs(x - (50 * factor + offset[0])) <= 2 and abs(y - (100 * factor + offset[1])) <= 2


#: Phone photos (4:3 and 3:4) on which the finder, before it looked between the bars, missed
#: cards once letterboxed into a 1280x720 frame (11 of 12, and 10 of 12); it finds them all.
PILLARBOXED = (
    "boards/TheBananaBender__Set_vision_player/train__photo_12_2025-06-15_11-21-29.jpg",
    "boards/TheBananaBender__Set_vision_player/train__photo_47_2025-06-08_18-34-56.jpg",
)


@pytest.fixture(scope="module")
def pillarboxed_truths(data_dir):
    wanted = {t.file: t for t in outline_truths(data_dir) if t.file in PILLARBOXED}
    assert len(wanted) == len(PILLARBOXED)
    return wanted


@pytest.mark.parametrize("file", PILLARBOXED)
def test_a_letterboxed_phone_photo_has_every_card_found(file, pillarboxed_truths, photo):
    truth = pillarboxed_truths[file]
    image = photo(truth.path).image
    frame = letterbox(image, (1280, 720))
    found = find_cards(frame)
    inside = content(frame)
    for outline in found.outlines:  # only the picture is looked at
        assert (outline.corners_xy[:, 0] >= inside.x0 - 1).all()
        assert (outline.corners_xy[:, 0] <= inside.x1 + 1).all()
    quads = InFrame((1280, 720))(image)
    assert score_found(truth, quads) == (truth.labelled, 0)


def test_eval_find_letterbox_reads_photos_in_a_camera_frame(capsys):
    assert main(["eval", "--find", "--letterbox", "1280x720", "--source", "antingshen"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("each photo letterboxed into 1280x720")
    assert any(line.startswith("| antingshen") for line in out.splitlines())


@pytest.mark.parametrize(
    "extra", [["--loso"], ["--scales"], []], ids=["loso", "scales", "without-find"]
)
def test_eval_letterbox_refuses_what_it_cannot_measure(extra, capsys):
    find = [] if extra == [] else ["--find"]
    assert main(["eval", *find, *extra, "--letterbox", "1280x720"]) != 0
    assert "--letterbox" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["abc", "12x7"])
def test_eval_letterbox_names_itself_when_its_frame_is_wrong(text, capsys):
    assert main(["eval", "--find", "--letterbox", text]) != 0
    err = capsys.readouterr().err
    assert "--letterbox" in err and "--frame-size" not in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("box", [(100, 100, 101, 101), (0, 0, 2, 1280), (600, 0, 601, 720)])
def test_a_sliver_of_picture_between_bars_holds_no_cards(box):
    """A picture of one or two pixels between wide bars is looked at, and holds no card."""
    frame = np.zeros((720, 1280, 3), np.uint8)
    y0, x0, y1, x1 = box
    frame[y0:y1, x0:x1] = 255
    assert not content(frame).is_whole(frame)
    found = find_cards(frame)
    assert found.outlines == [] and found.net_places == ()
