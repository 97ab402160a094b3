"""`setvision live --game` end to end: a scripted 81-card game filmed from real card crops,
refereed from the video; the real videos of ../shared/data/videos refereed without a crash
and without a claim nobody made.

The whole scripted game is not refereed right from the video yet: after a set is taken the
live tracker keeps some of the taken cards (tracks on bare table), so later tables read
more cards than lie there and the "no set" reading is never sure. That test is a strict
expected failure carrying the figure; the pure referee plays the same script exactly
(tests/test_referee.py).
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
from pathlib import Path

import pytest
from game_script import PLAYERS, claims_script, expected_events, scripted_game, simplify
from game_video import DATA, choose_crops, write_game_video
from setvision.cli import main

STEPS = scripted_game()
VIDEOS = DATA / "videos"
needs_data = pytest.mark.skipif(not (DATA / "cards.csv").exists(), reason="no ../shared/data")


def _referee(video: Path, *options: str, capsys) -> list[dict]:
    code = main(["live", "--video", str(video), "--no-window", "--json", "--game", *options])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return [json.loads(line) for line in captured.out.splitlines()]


def events_right(got: list[tuple], expected: list[tuple]) -> int:
    """How many scripted events the referee gave, in order (a longest common subsequence)."""
    matcher = difflib.SequenceMatcher(a=got, b=expected, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks())


@pytest.fixture(scope="module")
def refereed(tmp_path_factory, reader) -> tuple[list[dict], list[tuple]]:
    """The filmed game refereed under lose-set: the JSON lines and the script's events."""
    crops = choose_crops(reader)
    assert len(crops) == 81  # every card has a crop that live analysis reads right
    video = tmp_path_factory.mktemp("game") / "game.avi"
    write_game_video(video, STEPS, crops)
    out = io.StringIO()
    options = ["--players", ",".join(PLAYERS), "--penalty", "lose-set"]
    options += ["--claims", ",".join(claims_script(STEPS))]
    with contextlib.redirect_stdout(out):
        code = main(["live", "--video", str(video), "--no-window", "--json", "--game", *options])
    assert code == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    return records, expected_events(STEPS, "lose-set")


@needs_data
def test_the_filmed_deal_and_three_more_twice_are_refereed_exactly(refereed):
    records, expected = refereed
    assert records[0]["event"] == "rules" and "lose-set" in records[0]["text"]
    assert records[-1]["event"] == "summary"
    got = [simplify(r) for r in records[1:-1]]
    deals = [e for e in got if e[0] == "deal"][:3]
    assert deals == [e for e in expected if e[0] == "deal"][:3]  # 12 (stock 69), 15, 18
    assert got[0] == ("prompt", "deal 12")
    assert not [e for e in got if e[0] == "claim" and e not in expected]  # no claim invented


@needs_data
@pytest.mark.xfail(strict=True, reason="taken cards linger as tracks: see the module docstring")
def test_the_whole_filmed_game_is_refereed_as_scripted(refereed):
    records, expected = refereed
    got = [simplify(r) for r in records[1:-1]]
    print(f"{events_right(got, expected)} of {len(expected)} scripted events right")
    assert got == expected


@needs_data
@pytest.mark.parametrize("name", ["zedosoad1995__SetCardGameCV__video3.mp4",
                                  "zedosoad1995__SetCardGameCV__video5.mp4"])  # fmt: skip
def test_real_videos_are_refereed_without_an_invented_claim(name, capsys):
    video = VIDEOS / name
    if not video.exists():
        pytest.skip(f"{video} is absent")
    records = _referee(video, "--players", "Ann,Bob", "--penalty", "sit-out", capsys=capsys)
    kinds = [r["event"] for r in records]
    assert kinds[0] == "rules" and kinds[-1] == "summary" and kinds[-2] == "end"
    assert "claim" not in kinds and "score" not in kinds
    assert all(p["score"] == 0 for p in records[-1]["players"])
