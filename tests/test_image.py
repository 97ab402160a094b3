"""Reading photos: the bad-input corpus and EXIF orientation."""

import json
import struct
import zlib
from dataclasses import replace
from itertools import combinations

import cv2
import numpy as np
import pytest
from conftest import SAMPLES
from setvision.cli import main
from setvision.solver import is_set
from setvision.vision.errors import ImageError
from setvision.vision.exif import orientation as exif_orientation
from setvision.vision.image import as_bgr, decode, jpeg_end, load, orient_points

#: A phone photo kept byte-for-byte as published (EXIF orientation 6).
PHONE = "boards/dbieber__setfinder/data__input_images__12.jpg"


def _png(array: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".png", array)
    assert ok
    return data.tobytes()


def test_missing_file_and_folder(tmp_path):
    with pytest.raises(ImageError, match="no such file"):
        load(str(tmp_path / "nope.jpg"))
    with pytest.raises(ImageError, match="is a folder"):
        load(str(tmp_path))


def test_empty_truncated_and_non_image_files(tmp_path):
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    with pytest.raises(ImageError, match="empty"):
        load(str(empty))
    ok, jpeg = cv2.imencode(".jpg", np.full((64, 64, 3), 200, np.uint8))
    truncated = tmp_path / "cut.jpg"
    truncated.write_bytes(jpeg.tobytes()[: len(jpeg) // 2])
    with pytest.raises(ImageError, match="truncated"):
        load(str(truncated))
    text = tmp_path / "notes.jpg"
    text.write_text("not a photo at all")
    with pytest.raises(ImageError, match="not an image"):
        load(str(text))


def test_greyscale_is_refused_but_16_bit_and_rgba_are_converted():
    grey = np.full((40, 50), 128, np.uint8)
    with pytest.raises(ImageError, match="greyscale"):
        decode(_png(grey), "grey.png")
    deep = np.full((40, 50, 3), 40000, np.uint16)
    deep[..., 1] = 10000  # a colour, not grey
    photo = decode(_png(deep), "deep.png")
    assert photo.image.dtype == np.uint8 and photo.image.shape == (40, 50, 3)
    assert int(photo.image[0, 0, 0]) == 40000 >> 8
    rgba = np.zeros((40, 50, 4), np.uint8)
    rgba[..., 2] = 255
    rgba[..., 3] = 128
    photo = decode(_png(rgba), "rgba.png")
    assert photo.image.shape == (40, 50, 3) and photo.image[0, 0, 2] == 255


def test_a_huge_image_is_refused_from_its_header_without_decoding():
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR"
    header += struct.pack(">IIBBBBB", 40000, 40000, 8, 2, 0, 0, 0)
    header += struct.pack(">I", zlib.crc32(header[12:29]))
    fake = header + b"\x00\x00\x00\x00IEND\xaeB`\x82"
    with pytest.raises(ImageError, match="too large"):
        decode(fake, "huge.png")


def test_arrays_are_validated():
    with pytest.raises(ImageError, match="empty"):
        as_bgr(np.zeros((0, 0, 3), np.uint8))
    with pytest.raises(ImageError, match="shape"):
        as_bgr(np.zeros((20, 20, 5), np.uint8))
    with pytest.raises(TypeError, match="numpy array"):
        as_bgr([[1, 2, 3]])
    with pytest.raises(ImageError, match="pixel type"):
        as_bgr(np.zeros((20, 20, 3), np.int32))


def test_exif_rotated_phone_photo_is_upright(data_dir):
    rotated = data_dir / "boards/dbieber__setfinder/data__input_images__12.jpg"
    data = rotated.read_bytes()
    assert exif_orientation(data) == 6
    photo = load(str(rotated))
    stored = cv2.imread(str(rotated), cv2.IMREAD_IGNORE_ORIENTATION | cv2.IMREAD_COLOR)
    assert photo.size == (stored.shape[0], stored.shape[1])  # turned a quarter
    turned = cv2.rotate(stored, cv2.ROTATE_90_CLOCKWISE)
    assert np.abs(photo.image.astype(int) - turned.astype(int)).mean() < 3


def test_orient_points_matches_a_real_rotation():
    stored = np.zeros((30, 40), np.uint8)
    stored[5, 7] = 255
    for orientation, rotate in ((6, cv2.ROTATE_90_CLOCKWISE), (3, cv2.ROTATE_180),
                                (8, cv2.ROTATE_90_COUNTERCLOCKWISE)):  # fmt: skip
        turned = cv2.rotate(stored, rotate)
        y, x = np.argwhere(turned == 255)[0]
        assert orient_points(np.array([[7, 5]]), orientation, (40, 30))[0].tolist() == [x, y]


def test_large_jpeg_is_decoded_reduced_with_the_scale_kept():
    big = np.zeros((3300, 4400, 3), np.uint8)
    cv2.rectangle(big, (1000, 1000), (2000, 1600), (40, 40, 220), -1)
    ok, data = cv2.imencode(".jpg", big)
    photo = decode(data.tobytes(), "big.jpg")
    assert photo.size == (4400, 3300)
    assert max(photo.image.shape[:2]) < 4400 and photo.image.shape[1] * photo.scale == 4400


def _appended(kind: str) -> bytes:
    """100 KB to append after the EOI: random bytes, or bytes with FFD8/FFD9 not ending in FFD9."""
    junk = np.random.default_rng(7).integers(0, 256, 100_000, np.uint8).tobytes()
    if kind == "random":
        return junk
    return b"\xff\xd8\xff\xe1\x00\x10" + junk[:50_000] + b"\xff\xd9" + junk[50_000:] + b"\xff\xd8"


@pytest.mark.parametrize("kind", ["random", "markers"])
def test_data_after_the_jpeg_end_is_ignored(data_dir, photo, kind):
    """Samsung and Pixel motion photos append data (even an MP4) after the JPEG's EOI."""
    data = (data_dir / PHONE).read_bytes()
    extended = data + _appended(kind)
    assert not extended.endswith(b"\xff\xd9") and jpeg_end(extended) == len(data)
    original, read = photo(data_dir / PHONE), decode(extended, "motion.jpg")
    assert np.array_equal(read.image, original.image)
    assert (read.size, read.scale) == (original.size, original.scale)


def test_a_jpeg_cut_short_is_still_truncated(data_dir):
    data = (data_dir / PHONE).read_bytes()
    with pytest.raises(ImageError, match="truncated"):
        decode(data[: len(data) * 7 // 10], "cut.jpg")
    assert all(jpeg_end(data[:n]) is None for n in range(len(data) - 64, len(data)))


def test_the_walk_skips_restart_markers_stuffed_bytes_and_ffd9_in_segments():
    noise = np.random.default_rng(1).integers(0, 256, (64, 64, 3), np.uint8)
    ok, encoded = cv2.imencode(".jpg", noise, [cv2.IMWRITE_JPEG_RST_INTERVAL, 1])
    data = encoded.tobytes()
    assert b"\xff\xd0" in data and b"\xff\x00" in data
    comment = b"\xff\xfe\x00\x06\xff\xd9\xff\xd9"  # a COM segment holding FFD9 twice
    with_comment = data[:2] + comment + data[2:]
    assert jpeg_end(data) == len(data) and jpeg_end(with_comment) == len(with_comment)
    assert all(jpeg_end(with_comment[:n]) is None for n in range(len(with_comment)))


def test_detect_reads_a_motion_photo_like_the_original(data_dir, tmp_path, capsys):
    original = data_dir / PHONE
    motion = tmp_path / "motion.jpg"
    motion.write_bytes(original.read_bytes() + _appended("markers"))
    assert main(["detect", "--json", str(original), str(motion)]) == 0
    first, second = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first["cards"] and first["verdict"] == second["verdict"]
    assert [c["text"] for c in first["cards"]] == [c["text"] for c in second["cards"]]
    assert first["image_size"] == second["image_size"]


@pytest.mark.parametrize("stored", ["rgb.jpg", "rgb.png", "rgba.png"])
def test_a_greyscale_photo_stored_as_colour_is_refused(tmp_path, capsys, photo, stored):
    sample = str(SAMPLES / "data__webcam__20170604_134005.jpg")
    colour = photo(sample).image
    grey = cv2.cvtColor(cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
    if stored.startswith("rgba"):
        grey = cv2.cvtColor(grey, cv2.COLOR_BGR2BGRA)
    path = tmp_path / f"grey-{stored}"
    cv2.imwrite(str(path), grey)
    with pytest.raises(ImageError, match="holds no colour"):
        load(str(path))
    assert main(["detect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds no colour" in err
    assert load(sample).image.shape == colour.shape  # the colour original reads


# ---------------------------------------------------------------- damaged data, oversized photos

BOARD = "boards/tomwhite__set-game/data__webcam__20170529_184024.jpg"  # 960x720, 12 cards


def _tiff_claiming(width: int, height: int) -> bytes:
    """A 1 KB uncompressed RGB TIFF whose header states ``width`` x ``height`` pixels."""
    tags = [(256, 4, width), (257, 4, height), (258, 3, 8), (259, 3, 1), (262, 3, 2),
            (273, 4, 134), (277, 3, 3), (278, 4, height), (279, 4, width * height * 3)]  # fmt: skip
    entries = b"".join(struct.pack("<HHII", tag, kind, 1, value) for tag, kind, value in tags)
    return b"II*\0" + struct.pack("<IH", 8, len(tags)) + entries + b"\0" * 1028


def _webp_claiming(width: int, height: int) -> bytes:
    """A lossless WebP of 8x8 pixels whose header is edited to state ``width`` x ``height``."""
    tile = np.zeros((8, 8, 3), np.uint8)
    tile[:, :, 2] = 200
    data = bytearray(cv2.imencode(".webp", tile, [cv2.IMWRITE_WEBP_QUALITY, 101])[1].tobytes())
    assert data[12:16] == b"VP8L"
    rest = int.from_bytes(data[21:25], "little") & ~((1 << 28) - 1)
    data[21:25] = ((width - 1) | (height - 1) << 14 | rest).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize(
    "made, stated",
    [
        (lambda: _tiff_claiming(30000, 30000), "900 megapixels is "),  # Pillow's own limit
        (lambda: _tiff_claiming(12000, 11000), "12000x11000 is "),
        (lambda: _webp_claiming(16000, 16000), "256 megapixels is "),
        (lambda: _webp_claiming(12000, 12000), "12000x12000 is "),
    ],
)
def test_every_format_is_refused_over_the_pixel_limit_before_decoding(made, stated, tmp_path):
    path = tmp_path / "bomb.img"
    path.write_bytes(made())
    assert path.stat().st_size < 2000
    with pytest.raises(ImageError, match=f"bomb.img: {stated}too large .over 120 megapixels"):
        load(str(path))
    assert decode(_webp_claiming(64, 48), "small.webp").size == (64, 48)  # the edit is sound


def test_a_name_holding_nul_is_one_error():
    with pytest.raises(ImageError, match="not a file name .it holds a NUL character"):
        load("photo\0.jpg")


@pytest.fixture(scope="module")
def damaged_board(data_dir) -> bytes:
    """A 12-card board with 7 bytes deleted at 60% of its data: the lower part is garbage."""
    data = (data_dir / BOARD).read_bytes()
    cut = len(data) * 6 // 10
    return data[:cut] + data[cut + 7 :]


def test_damaged_data_is_reported_with_the_photo_and_never_gives_no_set(
    damaged_board, data_dir, tmp_path, capfd
):
    assert decode((data_dir / BOARD).read_bytes(), "whole.jpg").warnings == ()
    assert decode(damaged_board, "cut.jpg").warnings == (
        "the photo's data is damaged (Corrupt JPEG data: premature end of data segment): "
        "part of the picture may be wrong",
    )
    path = tmp_path / "damaged.jpg"
    path.write_bytes(damaged_board)
    assert main(["detect", "--json", str(path)]) == 0
    record = json.loads(capfd.readouterr().out)
    assert record["warnings"] and record["verdict"] != "no_set"
    assert main(["detect", str(path)]) == 0
    captured = capfd.readouterr()
    assert "  warning: the photo's data is damaged" in captured.out
    assert captured.err == ""  # libjpeg's own message no longer reaches the terminal


def test_the_smallest_images_are_read_without_error(reader):
    rng = np.random.default_rng(3)
    for height, width in [(16, 16), (16, 17), (20, 20), (16, 2000), (2000, 16), (31, 33)]:
        for image in (rng.integers(0, 256, (height, width, 3), np.uint8),
                      np.full((height, width, 3), 255, np.uint8)):  # fmt: skip
            assert reader.read(image).cards == ()


def test_a_damaged_photo_whose_cards_hold_no_set_is_uncertain(damaged_board, reader):
    layout = reader.read_photo(decode(damaged_board, "cut.jpg"))
    kept: list = []  # a share of its cards holding no set, as a table may
    for card in layout.cards:
        if not any(is_set(a.card, b.card, card.card) for a, b in combinations(kept, 2)):
            kept.append(card)
    assert len(kept) >= 6
    without_sets = replace(layout, cards=tuple(kept[:6]))
    assert without_sets.sets == [] and without_sets.verdict == "uncertain"
    assert without_sets.layout_doubts[0] == layout.warnings[0]
