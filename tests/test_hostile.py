"""Hostile input from issue 12: odd names and files, bad numbers, lost files, broken profiles.

Each test is one case of the issue. The CLI runs in a subprocess where a crash inside OpenCV
would kill the process (a segfault is a negative return code) or hang it (a timeout);
elsewhere ``main`` runs in-process with OpenCV's path-taking calls made to fail if touched.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np
import pytest
from conftest import profile_payload
from setvision.cli import main
from setvision.vision.contract import error_record
from setvision.vision.report.files import MARK
from setvision.vision.report.html import render_csv
from setvision.vision.report.review import PhotoResult

BOARD = "boards/tomwhite__set-game/data__webcam__20170529_184024.jpg"  # 960x720, 12 cards
ODD_NAME = b"\xff\xfe\xc3("  # not valid UTF-8
SHOWN_NAME = "\\xff\\xfe\\xc3("  # how setvision prints it
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def board(data_dir) -> Path:
    return data_dir / BOARD


@pytest.fixture(scope="module")
def small_jpeg(board) -> bytes:
    """The board at half size: cards still found, read in a blink."""
    image = cv2.imread(str(board))
    small = cv2.resize(image, (480, 360), interpolation=cv2.INTER_AREA)
    return cv2.imencode(".jpg", small)[1].tobytes()


def _run(*args: str | bytes, timeout: float = 60) -> subprocess.CompletedProcess:
    """The CLI in its own process; a segfault shows as a negative return code."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    command = [sys.executable, "-m", "setvision.cli", *args]
    return subprocess.run(command, capture_output=True, timeout=timeout, env=env)


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("setvision: error: "), err
    assert "Traceback" not in err and "internal error" not in err
    return lines[0]


@pytest.fixture
def opencv_untouched(monkeypatch):
    """OpenCV's calls that take a path or a camera number fail the test if reached."""

    def touched(*args, **kwargs):
        raise AssertionError(f"OpenCV was given {args!r}")

    for name in ("VideoCapture", "VideoWriter", "imwrite", "imread"):
        monkeypatch.setattr(cv2, name, touched)


# ---------------------------------------------------------------- 1. names that are not UTF-8


def test_a_name_that_is_not_utf8_is_read_annotated_and_printed(tmp_path, board):
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(board, os.path.join(os.fsencode(photos), ODD_NAME + b".jpg"))
    out = tmp_path / "out"
    done = _run("detect", str(photos), "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert f"{SHOWN_NAME}.jpg: 12 cards" in text
    assert f"annotated: {out}/{SHOWN_NAME}.annotated.jpg" in text
    with open(os.path.join(os.fsencode(out), ODD_NAME + b".annotated.jpg"), "rb") as handle:
        assert _decoded(handle.read()).shape == (720, 960, 3)


def _decoded(data: bytes) -> np.ndarray:
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)


def test_review_reports_a_name_that_is_not_utf8(tmp_path, board):
    photos = tmp_path / "photos"
    photos.mkdir()
    shutil.copy(board, os.path.join(os.fsencode(photos), ODD_NAME + b".jpg"))
    report = tmp_path / "report"
    done = _run("review", str(photos), "--report", str(report), "--jobs", "1")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO((report / "results.csv").read_text("utf-8"))))
    assert rows[0]["file"].endswith(f"{SHOWN_NAME}.jpg") and rows[0]["cards"] == "12"
    assert (report / rows[0]["annotated"]).is_file()
    assert SHOWN_NAME in (report / "index.html").read_text("utf-8")


def test_live_refuses_video_names_opencv_cannot_take(tmp_path, capsys, opencv_untouched):
    video = os.fsdecode(os.path.join(os.fsencode(tmp_path), ODD_NAME + b".mp4"))
    Path(video).write_bytes(b"not opened")
    assert main(["live", "--no-window", "--video", video]) == 2
    assert "not valid UTF-8" in _one_error_line(capsys.readouterr().err)
    saved = os.fsdecode(os.path.join(os.fsencode(tmp_path), ODD_NAME + b"-out.mp4"))
    assert main(["live", "--no-window", "--save-video", saved]) == 2
    assert "not valid UTF-8" in _one_error_line(capsys.readouterr().err)


# ---------------------------------------------------------------- 2. camera numbers


@pytest.mark.parametrize("camera", ["-1", "-7", "10000", "99999999999"])
def test_camera_numbers_out_of_range_are_refused_before_opencv(camera, capsys, opencv_untouched):
    assert main(["live", "--camera", camera, "--no-window"]) == 2
    assert "--camera must be 0..9999" in _one_error_line(capsys.readouterr().err)


# ---------------------------------------------------------------- 3. pipes and devices


def test_pipes_and_devices_are_refused_unread_and_the_others_read(tmp_path, small_jpeg):
    folder = tmp_path / "photos"
    folder.mkdir()
    os.mkfifo(folder / "a-pipe.jpg")
    (folder / "b-photo.jpg").write_bytes(small_jpeg)
    os.mkfifo(tmp_path / "given.jpg")
    done = _run("detect", "--json", str(tmp_path / "given.jpg"), "/dev/zero", str(folder))
    assert done.returncode == 2
    records = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert [("error" in r) for r in records] == [True, True, True, False]
    for record in records[:3]:
        assert "not a regular file" in record["error"]
    assert records[3]["source"].endswith("b-photo.jpg") and records[3]["cards"]
    errors = done.stderr.decode().strip().splitlines()
    assert len(errors) == 3 and all("not a regular file" in e for e in errors)


def test_review_sequence_does_not_wait_on_a_pipe(tmp_path, small_jpeg):
    folder = tmp_path / "photos"
    folder.mkdir()
    os.mkfifo(folder / "a-pipe.jpg")
    (folder / "b-photo.jpg").write_bytes(small_jpeg)
    done = _run("review", str(folder), "--report", str(tmp_path / "r"), "--sequence", "--jobs", "1")
    assert done.returncode == 2 and b"not a regular file" in done.stderr


# ---------------------------------------------------------------- 4. numbers out of range


@pytest.mark.parametrize(
    "argv, says",
    [
        (["odds", "--trials", "10000000000000"], "--trials must be 1..100,000,000"),
        (["odds", "--trials", "0"], "--trials must be 1..100,000,000"),
        (["odds", "--seed", "-1"], "--seed must be 0 or more"),
        (["solve", "--stock", "-5", "1-red-solid-oval"], "--stock must be 0..80"),
        (
            ["solve", "--stock", "80", "1-red-solid-oval", "2-red-solid-oval"],
            "--stock must be 0..79",
        ),
        (["bench", "--repeat", "0"], "--repeat must be at least 1"),
        (["bench", "--threads", "-3"], "--threads must be at least 1"),
        (["live", "--max-frames", "0"], "--max-frames must be at least 1"),
        (["live", "--max-frames", "0", "--no-window"], "--max-frames must be at least 1"),
    ],
)
def test_numbers_out_of_range_get_one_line(argv, says, capsys, opencv_untouched):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert says in _one_error_line(captured.err) and captured.out == ""


# ---------------------------------------------------------------- 5. lost or overwritten files


def test_save_video_onto_the_input_video_is_refused(tmp_path, capsys, opencv_untouched):
    (tmp_path / "sub").mkdir()
    video = tmp_path / "game.mp4"
    video.write_bytes(b"the only copy of the game")
    (tmp_path / "link.mp4").symlink_to(video)
    spellings = [
        (str(video), str(video)),
        (str(video), str(tmp_path / "sub" / ".." / "game.mp4")),
        (str(tmp_path / "link.mp4"), str(video)),
    ]
    for source, saved in spellings:
        assert main(["live", "--no-window", "--video", source, "--save-video", saved]) == 2
        assert "is the input video" in _one_error_line(capsys.readouterr().err)
    assert video.read_bytes() == b"the only copy of the game"


def test_detect_never_overwrites_an_input_or_its_own_outputs(tmp_path, capsys, small_jpeg):
    photos = tmp_path / "photos"
    (photos / "a").mkdir(parents=True)
    (photos / "b").mkdir()
    for name in ("a/x.jpg", "b/x.jpg", "a/x.annotated.jpg", "a/photo.jpg"):
        (photos / name).write_bytes(small_jpeg)
    png = cv2.imencode(".png", _decoded(small_jpeg))[1].tobytes()
    (photos / "a" / "photo.png").write_bytes(png)
    originals = {p: p.read_bytes() for p in photos.rglob("*") if p.is_file()}
    out = photos / "a"
    argv = ["detect", str(out), str(photos / "b" / "x.jpg"), "--out", str(out), "--reveal", "none"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert all(p.read_bytes() == data for p, data in originals.items())
    written = [line.split("annotated: ")[1] for line in text.splitlines() if "annotated: " in line]
    paths = [w.split(" (")[0] for w in written]
    assert len(paths) == 5 == len(set(paths))
    assert f"{out}/x.annotated-2.jpg (not x.annotated.jpg: that is one of the photos read)" in text
    assert "photo.annotated-2.jpg (not photo.annotated.jpg: another photo of this run" in text
    for path in paths:
        assert Path(path).read_bytes()[2:].startswith(b"\xff\xfe\x00\x1b" + MARK)


def test_detect_keeps_a_file_it_did_not_write_and_replaces_its_own(tmp_path, capsys, small_jpeg):
    photo = tmp_path / "table.jpg"
    photo.write_bytes(small_jpeg)
    out = tmp_path / "out"
    out.mkdir()
    (out / "table.annotated.jpg").write_bytes(b"someone's own file")
    assert main(["detect", str(photo), "--out", str(out)]) == 0
    first = capsys.readouterr().out
    assert (
        "table.annotated-2.jpg (not table.annotated.jpg: a file not written by setvision" in first
    )
    assert (out / "table.annotated.jpg").read_bytes() == b"someone's own file"
    (out / "table.annotated-2.jpg").unlink()
    (out / "table.annotated.jpg").unlink()
    assert main(["detect", str(photo), "--out", str(out)]) == 0
    assert main(["detect", str(photo), "--out", str(out)]) == 0
    again = capsys.readouterr().out
    assert "table.annotated.jpg (replaces an earlier annotated image)" in again
    assert sorted(p.name for p in out.iterdir()) == ["table.annotated.jpg"]


def test_out_naming_an_image_writes_that_one_file_and_never_a_users(tmp_path, capsys, small_jpeg):
    photo = tmp_path / "table.jpg"
    photo.write_bytes(small_jpeg)
    for name in ("result.jpg", "result.PNG"):
        out = tmp_path / "new" / name
        for note in ("", " (replaces an earlier annotated image)"):
            assert main(["detect", str(photo), "--out", str(out), "--reveal", "none"]) == 0
            assert f"annotated: {out}{note}\n" in capsys.readouterr().out
            assert out.is_file() and _decoded(out.read_bytes()).shape == _decoded(small_jpeg).shape
    users = tmp_path / "mine.png"
    users.write_bytes(b"someone's own file")
    for out, says in (
        (users, "a file not written by setvision is there"),
        (photo, "that is one of the photos read"),
    ):
        assert main(["detect", str(photo), "--out", str(out)]) == 2
        assert says in _one_error_line(capsys.readouterr().err)
    assert main(["detect", str(photo), str(photo), "--out", str(tmp_path / "two.jpg")]) == 2
    assert "give --out a folder" in _one_error_line(capsys.readouterr().err)
    assert users.read_bytes() == b"someone's own file" and photo.read_bytes() == small_jpeg
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["result.PNG", "result.jpg"]


# ---------------------------------------------------------------- 6. formulas in results.csv


def test_results_csv_never_holds_a_formula():
    names = ["=cmd|' calc'!A0.jpg", "+1.jpg", "-2.jpg", "@sum.jpg", "\tx.jpg", "\rx.jpg", "ok.jpg"]
    results = tuple(
        PhotoResult(i, name, error_record(name, f"{name}: not an image"))
        for i, name in enumerate(names, 1)
    )
    rows = list(csv.DictReader(io.StringIO(render_csv(results), newline="")))
    assert [r["file"] for r in rows] == ["'" + n for n in names[:-1]] + ["ok.jpg"]
    assert all(not r[key].startswith(("=", "+", "-", "@", "\t", "\r")) for r in rows for key in r)


# ---------------------------------------------------------------- 7. calibration's temp files


@pytest.mark.parametrize("answer", ["", None])  # None: the user gives up (end of input)
def test_interactive_calibration_leaves_no_temp_file(answer, tmp_path, monkeypatch, board):
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    def reply(prompt: str = "") -> str:
        assert any(temp.glob("setvision-calibrate-*.jpg"))  # there while the user is asked
        if answer is None:
            raise EOFError
        return answer

    monkeypatch.setattr("builtins.input", reply)
    code = main(["calibrate", str(board), "--name", "hostile", "--interactive"])
    assert code == (0 if answer == "" else 2)
    assert list(temp.iterdir()) == []


# ---------------------------------------------------------------- 8. --out that cannot be written


def test_out_onto_a_file_or_under_one_is_one_line(tmp_path, capsys, small_jpeg):
    photo = tmp_path / "table.jpg"
    photo.write_bytes(small_jpeg)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for out, says in ((blocker, "is a file, not a folder"), (blocker / "sub", "cannot write")):
        assert main(["detect", str(photo), "--out", str(out)]) == 2
        captured = capsys.readouterr()
        assert says in _one_error_line(captured.err) and captured.out == ""
    assert main(["review", str(photo), "--report", str(blocker / "sub")]) == 2
    assert "cannot write" in _one_error_line(capsys.readouterr().err)
    assert blocker.read_text() == "not a folder"


def test_a_failed_write_costs_one_line_and_the_batch_goes_on(
    tmp_path, capsys, monkeypatch, small_jpeg
):
    from setvision.solver import SetvisionError
    from setvision.vision.report import files

    for name in ("first.jpg", "second.jpg"):
        (tmp_path / name).write_bytes(small_jpeg)
    real = files.write_image

    def flaky(path, *args, **kwargs):
        if "first" in os.path.basename(path):
            raise SetvisionError(f"{path}: cannot write (No space left on device)")
        return real(path, *args, **kwargs)

    monkeypatch.setattr(files, "write_image", flaky)
    out = tmp_path / "out"
    paths = [str(tmp_path / "first.jpg"), str(tmp_path / "second.jpg")]
    assert main(["detect", "--json", *paths, "--out", str(out)]) == 2
    captured = capsys.readouterr()
    first, second = (json.loads(line) for line in captured.out.splitlines())
    assert "No space left" in _one_error_line(captured.err)
    assert (
        first["cards"] and "annotated" not in first and "could not be written" in first["warning"]
    )
    assert second["cards"] and Path(second["annotated"]).is_file()


# ---------------------------------------------------------------- 9. profiles and config


@pytest.mark.parametrize("text", ["[]", "null", "NaN", '{"default_profile": 5}', DEEP])
def test_a_config_of_the_wrong_shape_is_one_line_and_clear_repairs_it(text, config_home, capsys):
    (config_home / "config.json").write_text(text)
    assert main(["profiles", "list"]) == 2
    assert "config.json" in _one_error_line(capsys.readouterr().err)
    assert main(["profiles", "default", "--clear"]) == 0
    assert "no default profile" in capsys.readouterr().out
    assert json.loads((config_home / "config.json").read_text()) == {}
    assert main(["profiles", "list"]) == 0


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "null",
        '"deck"',
        DEEP,
        json.dumps(profile_payload(float("nan"))),
        '{"format": 1, "attributes": []}',
    ],
)
def test_a_profile_of_the_wrong_shape_is_one_line(text, config_home, capsys):
    (config_home / "profiles" / "deck.json").write_text(text)
    assert main(["profiles", "show", "deck"]) == 2
    assert "not a usable profile" in _one_error_line(capsys.readouterr().err)


def test_the_same_profile_with_finite_means_loads(config_home, capsys):
    (config_home / "profiles" / "deck.json").write_text(json.dumps(profile_payload(0.0)))
    assert main(["profiles", "show", "deck"]) == 0
