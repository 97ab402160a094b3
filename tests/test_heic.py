"""iPhone photos (HEIC/HEIF): recognised by brand, decoded upright, refused clearly when broken.

The HEIC files are made here from a real photo with pillow-heif's encoder, stored turned a
quarter with EXIF orientation 6 as a phone stores a portrait shot.
"""

import json
import struct
from pathlib import Path

import numpy as np
import pytest
from setvision.cli import expand_paths, main
from setvision.vision import image as image_module
from setvision.vision.errors import ImageError
from setvision.vision.exif import capture_time
from setvision.vision.image import IMAGE_SUFFIXES, bmff_end, decode, heif_brand, load

#: A real 960x720 board photo with 12 cards (upright as stored).
PHOTO = "boards/tomwhite__set-game/data__webcam__20170604_134005.jpg"
ORIENTATION, EXIF_IFD, TAKEN, TAKEN_SUBSECOND = 0x0112, 0x8769, 0x9003, 0x9291


def _box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", 8 + len(payload)) + kind + payload


def _ftyp(brand: bytes) -> bytes:
    return _box(b"ftyp", brand + b"\x00\x00\x00\x00" + b"mif1" + brand)


@pytest.fixture(scope="module")
def heic(data_dir, tmp_path_factory) -> Path:
    """The photo as ``photos/board.heic``: pixels stored turned left, EXIF orientation 6."""
    pillow_heif = pytest.importorskip("pillow_heif")
    from PIL import Image

    upright = Image.open(data_dir / PHOTO).convert("RGB")
    stored = upright.transpose(Image.Transpose.ROTATE_90)  # orientation 6 turns it back
    exif = Image.Exif()
    exif[ORIENTATION] = 6
    exif.get_ifd(EXIF_IFD).update({TAKEN: "2024:05:01 12:00:05", TAKEN_SUBSECOND: "25"})
    path = tmp_path_factory.mktemp("photos") / "board.heic"
    try:
        pillow_heif.register_heif_opener()
        stored.save(path, format="HEIF", exif=exif.tobytes(), quality=90,
                    enc_params={"preset": "ultrafast"})  # fmt: skip
    except (OSError, ValueError, RuntimeError, KeyError) as error:
        pytest.skip(f"pillow-heif cannot encode HEIC on this machine ({error})")
    return path


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


# ---------------------------------------------------------------- without encoding


def test_heif_is_recognised_by_its_ftyp_brand():
    for brand in (b"heic", b"heix", b"hevc", b"heim", b"heis", b"hevm", b"mif1", b"msf1"):
        assert heif_brand(_ftyp(brand)) == brand
    assert heif_brand(_ftyp(b"avif")) is None  # no AV1 decoder in the wheels
    assert heif_brand(_ftyp(b"isom")) is None  # an MP4 video
    assert heif_brand(b"\xff\xd8\xff\xe0" + b"\x00" * 20) is None
    assert heif_brand(b"") is None


def test_box_walk_finds_the_end_or_a_cut():
    whole = _ftyp(b"heic") + _box(b"meta", b"\x00" * 20) + _box(b"mdat", b"\x01" * 100)
    assert bmff_end(whole) == len(whole)
    assert bmff_end(whole[:-1]) is None  # stops inside mdat
    assert bmff_end(whole[:-104]) is None  # stops inside the mdat header
    assert bmff_end(whole + b"\x00\x00") == len(whole)  # zero padding is no cut
    to_end = _ftyp(b"heic") + b"\x00\x00\x00\x00mdat" + b"\x01" * 50  # size 0: up to the end
    assert bmff_end(to_end) == len(to_end)
    large = _ftyp(b"heic") + struct.pack(">I4sQ", 1, b"mdat", 16 + 10) + b"\x01" * 10
    assert bmff_end(large) == len(large) and bmff_end(large[:-1]) is None


def test_folders_pick_up_heic_and_heif_files(tmp_path):
    assert ".heic" in IMAGE_SUFFIXES and ".heif" in IMAGE_SUFFIXES
    for name in ("IMG_0001.HEIC", "IMG_0002.heif", "notes.txt"):
        (tmp_path / name).write_bytes(b"x")
    assert [Path(p).name for p in expand_paths([str(tmp_path)])] == [
        "IMG_0001.HEIC",
        "IMG_0002.heif",
    ]


def test_a_heic_without_its_image_is_one_clear_error():
    with pytest.raises(ImageError, match=r"^x\.heic: a damaged HEIC/HEIF file") as error:
        decode(_ftyp(b"heic") + _box(b"meta", b"\x00" * 20), "x.heic")
    assert "\n" not in str(error.value)


# ---------------------------------------------------------------- on an encoded photo


def test_heic_is_read_upright_with_the_pixels_of_the_original(heic, data_dir, photo):
    original = photo(data_dir / PHOTO)
    read = load(str(heic))
    assert read.image.dtype == np.uint8 and read.image.shape == original.image.shape
    assert read.size == original.size == (960, 720) and read.scale == 1.0
    difference = np.abs(read.image.astype(int) - original.image.astype(int))
    assert difference.mean() < 3  # lossy, but the same picture the same way up


def test_the_capture_time_is_read_from_the_heic_exif_item(heic):
    data = heic.read_bytes()
    assert capture_time(data).isoformat() == "2024-05-01T12:00:05.250000"
    exif = data.rindex(b"Exif\x00\x00")
    assert capture_time(data[:exif]) is None  # the item lies beyond the bytes given
    assert capture_time(data[:200]) is None


def test_a_large_heic_is_decoded_reduced_with_the_scale_kept(heic, monkeypatch):
    monkeypatch.setattr(image_module, "DECODE_LONG_SIDE", 400)
    read = load(str(heic))
    assert read.size == (960, 720) and read.image.shape == (360, 480, 3) and read.scale == 2.0


def test_a_heic_over_the_pixel_limit_is_refused_before_decoding(heic, monkeypatch):
    import pillow_heif

    def decoded(*_):
        raise AssertionError("pixels were decoded")

    monkeypatch.setattr(image_module, "MAX_PIXELS", 960 * 720 - 1)
    monkeypatch.setattr(pillow_heif.HeifFile, "to_pillow", decoded)
    with pytest.raises(ImageError, match=r"960x720 is too large"):
        load(str(heic))


def test_detect_reads_a_folder_of_heic_as_the_jpeg(heic, data_dir, capsys):
    assert main(["detect", "--json", str(data_dir / PHOTO)]) == 0
    (jpeg,) = _json_lines(capsys.readouterr().out)
    assert main(["detect", "--json", str(heic.parent)]) == 0
    (record,) = _json_lines(capsys.readouterr().out)
    assert record["image_size"] == [960, 720]
    assert len(record["cards"]) == len(jpeg["cards"]) == 12


def test_truncated_and_damaged_heic_exit_2_with_one_line(heic, tmp_path, capsys):
    data = heic.read_bytes()
    cut = tmp_path / "cut.heic"
    cut.write_bytes(data[: len(data) // 2])
    assert main(["detect", str(cut)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"setvision: error: {cut}: the file is truncated")
    meta = data.index(b"meta") + 4
    broken = tmp_path / "broken.heic"
    broken.write_bytes(data[:meta] + b"\x00" * 64 + data[meta + 64 :])  # its item list wiped
    assert main(["detect", str(broken)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"setvision: error: {broken}: a damaged HEIC/HEIF file")
