"""`setvision bench` over photos: the per-stage summary and the command's table."""

from __future__ import annotations

import re

import numpy as np
import pytest
from setvision.app.benchmarking import processor_name
from setvision.cli import main
from setvision.solver import SetvisionError
from setvision.vision.image import filled
from setvision.vision.learn.bench import (
    STAGES,
    Timing,
    format_summary,
    parse_frame_size,
    summarise,
)


def _timing(label: str, find: float, cards: int = 12) -> Timing:
    stages = {"find": find, "measure": 2 * find, "classify": 1.0, "total": 3 * find + 1}
    return Timing(label, 1280, 720, cards, stages)


def test_summary_gives_median_p95_and_max_over_photos():
    # find times 1..21 ms: median 11, 95th percentile 1 + 0.95 * 20 = 20, max 21
    timings = [_timing(f"p{i}.jpg", float(i), cards=i % 3) for i in range(1, 22)]
    summary = summarise(timings)
    assert summary.photos == 21
    assert summary.cards_median == 1.0
    assert [s.stage for s in summary.stages] == list(STAGES)
    find = summary.stage("find")
    assert (find.median, find.p95, find.max, find.slowest) == (11.0, 20.0, 21.0, "p21.jpg")
    measure = summary.stage("measure")
    assert (measure.median, measure.p95, measure.max) == (22.0, 40.0, 42.0)
    classify = summary.stage("classify")
    assert (classify.median, classify.p95, classify.max) == (1.0, 1.0, 1.0)


def test_summary_interpolates_p95_between_photos():
    # four photos: the 95th percentile lies 85% of the way from the 3rd to the 4th value
    summary = summarise([_timing(str(v), v) for v in (40.0, 10.0, 30.0, 20.0)])
    find = summary.stage("find")
    assert find.median == 25.0
    assert find.p95 == pytest.approx(38.5)
    assert (find.max, find.slowest) == (40.0, "40.0")
    lines = format_summary(summary)
    assert len(lines) == 2 + len(STAGES)
    assert lines[1].split()[:4] == ["find", "25.0", "38.5", "40.0"]


def test_summary_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        summarise([])


@pytest.mark.parametrize("text", ["1280", "axb", "15x720", "1280x8193", "0x0"])
def test_frame_size_must_be_sane(text):
    with pytest.raises(SetvisionError):
        parse_frame_size(text)
    assert parse_frame_size("1280X720") == (1280, 720)


def test_bench_prints_a_summary_table_over_photos(capsys, data_dir):
    folder = data_dir / "boards" / "TheBananaBender__Set_vision_player"
    photos = sorted(folder.glob("*.jpg"))[:2]
    assert main(["bench", *map(str, photos), "--repeat", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("2 photo(s) letterboxed into 1280x720, median of 1 run(s)")
    # the machine the figures were measured on, and its speed at fixed work
    assert lines[1].startswith("machine: ") and " core(s); Python " in lines[1]
    reference = re.search(r"Python steps (\d+) ms, 1280x720 to 800x450 ([\d.]+) ms$", lines[1])
    assert reference and float(reference.group(1)) > 0 and float(reference.group(2)) > 0
    header = lines.index(next(line for line in lines if line.startswith("stage")))
    assert lines[header].split() == ["stage", "median", "p95", "max", "slowest", "photo"]
    rows = [line.split() for line in lines[header + 1 : header + 1 + len(STAGES)]]
    assert [row[0] for row in rows] == list(STAGES)
    for row in rows:
        median, p95, largest = map(float, row[1:4])
        assert 0 <= median <= p95 <= largest
        assert row[4] in {p.name for p in photos}
    assert lines[header + 1 + len(STAGES)].startswith("photos 2, cards per frame ")
    assert len(lines) == header + 2 + len(STAGES)  # no per-photo lines without --per-photo


@pytest.mark.parametrize(
    "arguments",
    [
        ["--repeat", "0"],
        ["--threads", "0"],
        ["--limit", "0"],
        ["--frame-size", "10x720"],
        ["--frame-size", "big"],
    ],
)
def test_bench_bad_arguments_exit_2_with_one_line(capsys, arguments):
    assert main(["bench", *arguments]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1 and err.startswith("setvision: error: ")


def test_the_processor_is_named_from_linux_cpuinfo():
    intel = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Processor\n"
    arm = "processor\t: 0\nBogoMIPS\t: 48.00\n\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n"
    assert processor_name(intel) == "Intel(R) Xeon(R) Processor"
    assert processor_name(arm) == "Raspberry Pi 4 Model B Rev 1.4"
    assert processor_name("processor\t: 0\nflags\t: fpu vme\n") is None


def test_a_filled_frame_is_the_photo_cut_about_its_centre_without_bars():
    photo = np.zeros((300, 200, 3), np.uint8)
    photo[150, 100] = 255  # the centre stays the frame's centre
    photo[10, 100] = 255  # the top is cut away (a portrait photo in a landscape frame)
    frame = filled(photo, (1280, 720))
    assert frame.shape == (720, 1280, 3)
    assert frame.max(axis=2).min() == 0 and frame[..., 0].max() > 0  # no bars: all photo
    y, x = np.unravel_index(np.argmax(frame[..., 0]), frame.shape[:2])
    assert abs(x - 640) <= 6 and abs(y - 360) <= 6
    assert frame.shape == filled(np.zeros((100, 400, 3), np.uint8), (1280, 720)).shape


def test_bench_fill_times_frames_without_bars(capsys, data_dir):
    folder = data_dir / "boards" / "TheBananaBender__Set_vision_player"
    photo = sorted(folder.glob("*.jpg"))[0]
    assert main(["bench", str(photo), "--repeat", "1", "--fill", "--per-photo"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("1 photo(s) filling 1280x720, median of 1 run(s)")
    framed = next(line for line in lines if " 1280x720 " in line and photo.name[:20] in line)
    assert int(framed.split()[3]) > 0  # cards found in the filled frame
    assert main(["bench", "--live", str(photo), "--fill"]) != 0
    assert "--fill" in capsys.readouterr().err
