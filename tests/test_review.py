"""`setvision review`: files written, the report in a real browser, capture order from EXIF."""

import contextlib
import csv
import io
import json
import os
import re
import shutil
import struct
import subprocess

import cv2
import jsonschema
import numpy as np
import pytest
from setvision.cli import main
from setvision.vision.exif import capture_time
from setvision.vision.report.review import capture_order

WEBCAM = "boards/tomwhite__set-game/data__webcam__20170604_"
ODD_NAME = '5-<i>odd & "name".jpg'


def _data_dir():
    from setvision.vision.learn.dataset import default_data_dir

    try:
        return default_data_dir()
    except Exception as error:  # noqa: BLE001 - any reason the data is absent
        pytest.skip(f"real photos not available: {error}")


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    """One review run (two worker processes) over a short game with a broken file in it.

    The folder holds, in file-name order: a table, a truncated file, the same table after a
    set was taken and three dealt, a photo with no cards, and a file whose name needs escaping.
    """
    data = _data_dir()
    photos = tmp_path_factory.mktemp("photos")
    shutil.copy(data / f"{WEBCAM}134005.jpg", photos / "1-before.jpg")
    whole = (data / f"{WEBCAM}134234.jpg").read_bytes()
    (photos / "2-broken.jpg").write_bytes(whole[: len(whole) // 2])
    (photos / "3-after.jpg").write_bytes(whole)
    shutil.copy(data / "boards/tomwhite__set-game/data__20150606_174355.jpg", photos / "4-egg.jpg")
    (photos / ODD_NAME).write_bytes(b"not an image")
    out = tmp_path_factory.mktemp("report")
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(["review", str(photos), "--report", str(out), "--sequence", "--jobs", "2"])
    return {
        "code": code,
        "out": out,
        "stdout": stdout.getvalue(),
        "stderr": stderr.getvalue(),
        "photos": photos,
    }


def test_review_writes_every_file_and_exits_non_zero_for_unreadable_photos(reviewed):
    assert reviewed["code"] == 2
    out = reviewed["out"]
    for name in ("index.html", "results.jsonl", "results.csv"):
        assert (out / name).stat().st_size > 0
    errors = reviewed["stderr"].strip().splitlines()
    assert len(errors) == 2 and all(e.startswith("setvision: error: ") for e in errors)
    assert "Traceback" not in reviewed["stderr"]
    look = _needing_a_look(reviewed["out"])
    assert look >= 3  # the two unreadable files and the photo without cards
    summary = f"5 photos, 24 cards read, 8 sets found, {look} need a look, 2 could not be read"
    assert summary in reviewed["stdout"]


def _needing_a_look(out) -> int:
    """Photos the report must flag, counted from the contract lines themselves."""
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return sum(
        bool(r.get("error") or r["verdict"] in ("uncertain", "no_cards") or r["uncertain"])
        or bool(r.get("doubts"))
        for r in lines
    )


def test_results_jsonl_holds_one_contract_line_per_photo(reviewed):
    text = (reviewed["out"] / "results.jsonl").read_text()
    lines = [json.loads(line) for line in text.splitlines()]
    names = [os.path.basename(r["source"]) for r in lines]
    assert names == ["1-before.jpg", "2-broken.jpg", "3-after.jpg", "4-egg.jpg", ODD_NAME]
    assert "truncated" in lines[1]["error"] and "not an image" in lines[4]["error"]
    assert [r.get("verdict") for r in lines] == ["sets", None, "sets", "no_cards", None]
    annotated = [r["annotated"] for r in lines if "annotated" in r]
    assert len(annotated) == 3  # the photos that could be read
    for name in annotated:
        assert (reviewed["out"] / name).stat().st_size > 0
    schema_file = _data_dir().parent / "contract" / "detect.schema.json"
    schema = json.loads(schema_file.read_text())
    for record in lines:
        jsonschema.validate(record, schema)


def test_results_csv_has_one_row_per_photo(reviewed):
    rows = list(csv.DictReader(io.StringIO((reviewed["out"] / "results.csv").read_text())))
    assert [r["verdict"] for r in rows] == ["sets", "error", "sets", "no_cards", "error"]
    assert rows[0]["cards"] == "12" and rows[0]["sets"] == "5"
    assert {"file", "uncertain_cards"} <= set(rows[0])


def test_the_replay_skips_the_broken_file_and_finds_the_set_taken(reviewed):
    out = reviewed["stdout"]
    assert "1-before.jpg -> 3-after.jpg" in out
    assert "1 photo(s) in between could not be read" in out
    assert (
        "a set was taken: #1 3-purple-open-diamond, #3 2-green-open-diamond, #11 1-red-open-diamond"
        in out
    )
    assert "3 cards dealt to refill the layout to 12" in out
    assert "mistake" not in out


def test_every_text_in_the_page_is_escaped(reviewed):
    page = (reviewed["out"] / "index.html").read_text()
    assert "<i>odd" not in page
    assert "&lt;i&gt;odd &amp; &quot;name&quot;.jpg" in page
    assert "<script" not in page and "http" not in page.split("</style>")[1]


# ---------------------------------------------------------------- in a browser


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("chromium is not installed (Debian: apt-get install chromium); .ci/run does it")
    return path


def _browser(page, profile, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium on ``page`` with a throw-away profile folder."""
    command = [
        _chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *args,
        page.as_uri(),
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_the_report_in_headless_chromium_shows_every_photo_and_the_summary(reviewed, tmp_path):
    page = reviewed["out"] / "index.html"
    dom = _browser(page, tmp_path / "profile", "--dump-dom").stdout
    assert "</html>" in dom, "chromium printed no page"
    stats = dict(re.findall(r'data-stat="(\w+)">(\d+)<', dom))
    assert stats.pop("unsure") in ("0", "1")  # 1 if a card that left was read uncertainly
    assert stats == {
        "photos": "5",
        "cards": "24",
        "sets": "8",
        "look": str(_needing_a_look(reviewed["out"])),
        "unreadable": "2",
        "mistakes": "0",
    }
    for k, name in enumerate(["1-before.jpg", "2-broken.jpg", "3-after.jpg", "4-egg.jpg"], 1):
        assert f'id="photo-{k}"' in dom and name in dom
    assert 'id="photo-5"' in dom and "&lt;i&gt;odd" in dom
    for src in re.findall(r'<img src="([^"]+)"', dom):
        assert (reviewed["out"] / src).is_file()
    assert len(re.findall(r"<img ", dom)) == 3  # the two tables and the photo without cards

    shot = tmp_path / "report.png"
    _browser(page, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1280,1600")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1280, 1600)
    picture = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert picture is not None and picture.std() > 10  # a rendered page, not a blank one


# ---------------------------------------------------------------- capture order


def _jpeg_taken_at(when: str | None) -> bytes:
    """A small JPEG, with an Exif block holding DateTimeOriginal when ``when`` is given."""
    ok, encoded = cv2.imencode(".jpg", np.full((32, 48, 3), 128, np.uint8))
    jpeg = encoded.tobytes()
    if when is None:
        return jpeg
    value = when.encode("ascii") + b"\x00"
    tiff = b"II*\x00" + struct.pack("<I", 8)
    tiff += struct.pack("<HHHII", 1, 0x8769, 4, 1, 26) + struct.pack("<I", 0)
    tiff += struct.pack("<HHHII", 1, 0x9003, 2, len(value), 44) + struct.pack("<I", 0)
    app1 = b"Exif\x00\x00" + tiff + value
    return jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:]


def test_capture_time_reads_date_time_original_and_nothing_else():
    assert capture_time(_jpeg_taken_at("2024:05:01 12:00:05")).isoformat() == (
        "2024-05-01T12:00:05"
    )
    assert capture_time(_jpeg_taken_at(None)) is None
    assert capture_time(_jpeg_taken_at("0000:00:00 00:00:00")) is None
    assert capture_time(b"\xff\xd8\xff\xe1\x00\x10Exif\x00\x00II*\x00\xff\xff") is None
    assert capture_time(b"\x89PNG\r\n\x1a\n") is None


def test_capture_order_prefers_exif_time_over_file_names(tmp_path):
    (tmp_path / "a.jpg").write_bytes(_jpeg_taken_at("2024:05:01 12:00:05"))
    (tmp_path / "b.jpg").write_bytes(_jpeg_taken_at("2024:05:01 12:00:01"))
    paths = [str(tmp_path / "a.jpg"), str(tmp_path / "b.jpg")]
    ordered, how = capture_order(paths)
    assert [os.path.basename(p) for p in ordered] == ["b.jpg", "a.jpg"]
    assert "EXIF capture time" in how
    (tmp_path / "c.jpg").write_bytes(_jpeg_taken_at(None))
    ordered, how = capture_order([*paths, str(tmp_path / "c.jpg")])
    assert [os.path.basename(p) for p in ordered] == ["a.jpg", "b.jpg", "c.jpg"]
    assert how == "ordered by file name: 1 of 3 photos carry no capture time"


def test_review_refuses_a_report_path_that_is_a_file(tmp_path, capsys):
    target = tmp_path / "report.html"
    target.write_text("")
    assert main(["review", str(tmp_path), "--report", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--report takes a folder" in err
