"""`setvision live --game` end to end: a scripted 81-card game filmed from real card crops,
refereed from the video under both penalty readings and solo, event for event as the script
says; the real videos of ../shared/data/videos refereed without a crash and without a claim
nobody made.
"""

from __future__ import annotations

import contextlib
import difflib
import io
import json
from pathlib import Path

import pytest
from game_script import PLAYERS, claims_script, expected_events, scripted_game, simplify
from game_video import DATA, choose_crops, compose, hand_over, table_texture, write_game_video
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
def crops(reader) -> dict:
    crops = choose_crops(reader)
    assert len(crops) == 81  # every card has a crop that live analysis reads right
    return crops


@needs_data
def test_a_card_taken_from_a_wooden_table_goes_and_one_under_a_hand_stays(crops, reader):
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import Frame

    cards = list(crops)[:12]
    slots = cards + [None] * 9
    table = table_texture()
    board = compose(table, slots, crops)
    hand = hand_over(board, slots, cards[3:6])
    bare = compose(table, [None if c in cards[3:6] else c for c in slots], crops)
    for after in (bare, board):
        analyser = LiveAnalyser(reader)
        frames = [board] * 10 + [hand] * 4 + [after] * 6
        results = [analyser.analyse(Frame(k, k / 10, f)) for k, f in enumerate(frames)]
        counts = [len(r.layout.cards) for r in results]
        if after is bare:  # grained wood where the cards lay (read as cards, if asked)
            assert counts[9] == 12 and counts[14 + 2] == 9  # gone two frames after
        else:  # the hand held still over three cards: they stay, in doubt, and come back
            assert counts[9:] == [12] * 11 and results[11].unsettled
            assert results[-1].track_ids == results[9].track_ids and not results[-1].unsettled


@pytest.fixture(scope="module")
def game_video(tmp_path_factory, crops) -> Path:
    video = tmp_path_factory.mktemp("game") / "game.avi"
    write_game_video(video, STEPS, crops)
    return video


def _options(reading: str) -> tuple[list[str], list[tuple]]:
    """The ``live --game`` options of ``reading`` (lose-set, sit-out or solo) and the events
    the script says a referee must give under it."""
    if reading == "solo":
        return ["--players", PLAYERS[0], "--solo"], expected_events(STEPS, "lose-set", solo=True)
    options = ["--players", ",".join(PLAYERS), "--penalty", reading]
    options += ["--claims", ",".join(claims_script(STEPS))]
    return options, expected_events(STEPS, reading)


@pytest.fixture(scope="module")
def refereed(game_video) -> tuple[list[dict], list[tuple]]:
    """The filmed game refereed by the command line under lose-set: its JSON lines and the
    script's events."""
    options, expected = _options("lose-set")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["live", "--video", str(game_video), "--no-window", "--json", "--game",
                     *options])  # fmt: skip
    assert code == 0
    return [json.loads(line) for line in out.getvalue().splitlines()], expected


@pytest.fixture(scope="module")
def analysed(game_video, reader) -> list:
    """The filmed game analysed once, frame by frame, as ``live`` analyses it (every frame of
    a file), so that the other readings are refereed without analysing it again."""
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import open_video

    analyser = LiveAnalyser(reader)
    with open_video(str(game_video)) as source:
        return [analyser.analyse(frame) for frame in source]


def _referee_analysed(analysed: list, reading: str) -> tuple[list[dict], list[tuple]]:
    """The analysed game handed to the referee the command line makes (``make_game`` with
    its options): the JSON lines it would print after the rules line, and the script's events."""
    from setvision.app.refereeing import GameOptions, make_game
    from setvision.solver.referee import event_record, summary_record

    options, expected = _options(reading)
    named = dict(zip(options[::2], options[1::2]))
    game = make_game(
        GameOptions(
            named["--players"], named.get("--penalty"), reading == "solo",
            claims=named.get("--claims"),
        )
    )  # fmt: skip
    records = [{"event": "rules"}]
    game.listener = lambda events: records.extend(event_record(e) for e in events)
    for result in analysed:
        game.update(result)
    game.finish(analysed[-1].t)
    return records + [summary_record(game.summary())], expected


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
@pytest.mark.parametrize("reading", ["lose-set", "sit-out", "solo"])
def test_the_whole_filmed_game_is_refereed_as_scripted(reading, request):
    if reading == "lose-set":  # end to end, by the command line
        records, expected = request.getfixturevalue("refereed")
    else:
        records, expected = _referee_analysed(request.getfixturevalue("analysed"), reading)
    got = [simplify(r) for r in records[1:-1]]
    print(f"{reading}: {events_right(got, expected)} of {len(expected)} scripted events right")
    assert got == expected
    scores = {p["name"]: p["score"] for p in records[-1]["players"]}
    assert records[-2]["event"] == "end" and records[-2]["scores"] == scores


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
