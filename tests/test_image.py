"""Reading photos: the bad-input corpus and EXIF orientation."""

import struct
import zlib

import cv2
import numpy as np
import pytest
from setvision.vision.errors import ImageError
from setvision.vision.exif import orientation as exif_orientation
from setvision.vision.image import as_bgr, decode, load, orient_points


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
    cv2.rectangle(big, (1000, 1000), (2000, 1600), (255, 255, 255), -1)
    ok, data = cv2.imencode(".jpg", big)
    photo = decode(data.tobytes(), "big.jpg")
    assert photo.size == (4400, 3300)
    assert max(photo.image.shape[:2]) < 4400 and photo.image.shape[1] * photo.scale == 4400
