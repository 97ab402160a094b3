"""Seeded fuzzing of everything that takes outside input: photo bytes, CLI arguments, profiles
and model files. Every input must give an answer or one clear error, never a traceback.

A few seconds by default; ``SETVISION_FUZZ_SCALE=20`` tries twenty times as many inputs (the
figures in the README and the issue's closing note).
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
from pathlib import Path

import cv2
import pytest
from conftest import profile_payload
from setvision.calibration.profiles import ProfileError, load_profile
from setvision.cli import main
from setvision.vision.errors import ImageError
from setvision.vision.find.cardness import FinderModelError, parse_model
from setvision.vision.image import decode
from setvision.vision.read.classify import AttributeModels, ModelError

SCALE = int(os.environ.get("SETVISION_FUZZ_SCALE", "1"))
BOARD = "boards/tomwhite__set-game/data__webcam__20170529_184024.jpg"  # 960x720, 12 cards
MODELS = Path(__file__).resolve().parent.parent / "vision" / "models"
ODD_VALUES = [None, -1, 0, 1e308, float("nan"), "x", "", [], {}, [[]], True, 2**70]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One random damage: bytes deleted, flipped, overwritten, repeated, or the file cut."""
    out = bytearray(data)
    at = rng.randrange(len(out))
    kind = rng.randrange(5)
    if kind == 0:
        del out[at : at + rng.randint(1, 40)]
    elif kind == 1:
        out[at] ^= 1 << rng.randrange(8)
    elif kind == 2:
        out[at : at + 8] = bytes(rng.randrange(256) for _ in range(8))
    elif kind == 3:
        out[at:at] = out[at : at + rng.randint(1, 400)]
    else:
        del out[at:]
    return bytes(out)


def mutate_json(value, rng: random.Random):
    """A copy of a parsed JSON value with one randomly chosen part replaced by an odd value."""
    value = copy.deepcopy(value)
    holder, key = None, None
    node = value
    for _ in range(rng.randint(1, 8)):
        if not isinstance(node, (dict, list)) or not node:
            break
        holder, key = node, rng.choice(list(node) if isinstance(node, dict) else range(len(node)))
        node = node[key]
    if holder is None:
        return rng.choice(ODD_VALUES)
    if rng.random() < 0.2 and isinstance(holder, dict):
        del holder[key]
    else:
        holder[key] = rng.choice(ODD_VALUES)
    return value


@pytest.fixture(scope="module")
def photo_bytes(data_dir) -> dict[str, bytes]:
    """The board small, as JPEG and as PNG: every mutation decodes in a blink."""
    image = cv2.resize(cv2.imread(str(data_dir / BOARD)), (320, 240), interpolation=cv2.INTER_AREA)
    return {ext: cv2.imencode(ext, image)[1].tobytes() for ext in (".jpg", ".png")}


def test_damaged_photo_bytes_decode_or_give_one_error(photo_bytes, capfd):
    rng = random.Random(12)
    tried = outcomes = 0
    for _ in range(150 * SCALE):
        data = mutate(photo_bytes[rng.choice([".jpg", ".png"])], rng)
        tried += 1
        try:
            photo = decode(data, "fuzz")
            assert photo.image.ndim == 3 and photo.image.dtype == "uint8"
            outcomes += 1
        except ImageError as error:
            assert str(error).startswith("fuzz") and "\n" not in str(error)
            outcomes += 1
    assert tried == outcomes == 150 * SCALE
    assert capfd.readouterr().err == ""  # the decoders' own messages never reach the terminal


def test_damaged_photos_get_one_json_line_each_and_no_confident_no_set(photo_bytes, tmp_path):
    rng = random.Random(7)
    count = 24 * SCALE
    for i in range(count):
        ext = rng.choice([".jpg", ".png"])
        (tmp_path / f"{i:04d}{ext}").write_bytes(mutate(photo_bytes[ext], rng))
    out = io.StringIO()
    from contextlib import redirect_stdout

    with redirect_stdout(out):
        code = main(["detect", str(tmp_path), "--json"])
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert code in (0, 2) and len(records) == count
    damaged = [r for r in records if r.get("warnings")]
    assert all(r["verdict"] != "no_set" for r in damaged)
    assert all(
        r["verdict"] in ("sets", "no_set", "uncertain", "no_cards")
        for r in records
        if "error" not in r
    )


#: Arguments a hostile user might give; none may crash or run for long.
WORDS = {
    "commands": ["solve", "check", "odds", "detect", "review", "live", "profiles", "nonsense", ""],
    "options": [
        "--json", "--trials", "--seed", "--stock", "--camera", "--video", "--out", "--jobs",
        "--variant", "--reveal", "--profile", "--frame-size", "--cards", "-h", "--penalty",
    ],
    "values": [
        "-1", "0", "3", "99999999999", "1e9", "abc", "", "x.jpg", "/dev/null", "/", "nan",
        "1-red-solid-oval", "12", "beginner", "show", "list", "default", "\x00", "../..", "0x0",
    ],
}  # fmt: skip


def test_random_arguments_give_an_answer_or_one_error_line(capsys, monkeypatch, tmp_path):
    def no_camera(*args, **kwargs):
        raise AssertionError(f"a camera or file was opened: {args!r}")

    monkeypatch.setattr(cv2, "VideoCapture", no_camera)
    monkeypatch.chdir(tmp_path)
    rng = random.Random(5)
    for _ in range(120 * SCALE):
        argv = [rng.choice(WORDS["commands"])]
        for _ in range(rng.randint(0, 4)):
            argv.append(rng.choice(WORDS["options"] + WORDS["values"]))
        if "live" in argv and "--video" not in argv or "odds" in argv and "--trials" not in argv:
            argv += ["--video", "missing.mp4"] if "live" in argv else ["--trials", "50"]
        try:
            code = main(argv)
        except SystemExit as exit_:  # argparse: usage error or --help
            code = exit_.code
        err = capsys.readouterr().err
        assert code in (0, 1, 2), (argv, code, err)
        assert "Traceback" not in err and "internal error" not in err, (argv, err)


def test_profiles_of_any_shape_load_or_give_one_error(config_home):
    rng = random.Random(3)
    valid = profile_payload(0.0)
    path = config_home / "profiles" / "deck.json"
    loaded = refused = 0
    for _ in range(200 * SCALE):
        path.write_text(json.dumps(mutate_json(valid, rng)))
        try:
            load_profile("deck")
            loaded += 1
        except ProfileError as error:
            assert "\n" not in str(error) and "not a usable profile" in str(error)
            refused += 1
    assert loaded and refused  # both kinds of input were tried


def _model_fuzz(path: Path, parse, error_type, trials: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    valid = json.loads(path.read_text())
    loaded = refused = 0
    for _ in range(trials):
        text = json.dumps(mutate_json(valid, rng))
        try:
            parse(text)
            loaded += 1
        except error_type as error:
            assert "\n" not in str(error)
            refused += 1
    return loaded, refused


def test_attribute_models_of_any_shape_load_or_give_one_error():
    loaded, refused = _model_fuzz(
        MODELS / "default.json", AttributeModels.from_json, ModelError, 20 * SCALE, 1
    )
    assert loaded + refused == 20 * SCALE and refused


def test_finder_models_of_any_shape_load_or_give_one_error():
    loaded, refused = _model_fuzz(
        MODELS / "finder.json", lambda t: parse_model(t, "m"), FinderModelError, 8 * SCALE, 2
    )
    assert loaded + refused == 8 * SCALE and refused


def test_the_mutations_change_the_input():
    rng = random.Random(0)
    data = bytes(range(256)) * 4
    assert all(mutate(data, rng) != data for _ in range(50))
    changed = sum(mutate_json({"a": [1, {"b": 2}]}, rng) != {"a": [1, {"b": 2}]} for _ in range(50))
    assert changed >= 45  # an odd value may equal the old one (True == 1)
