"""setvision's command line: parse arguments, call the application layer, print. Nothing else.

What a command does lives in ``setvision.app`` (reading, claims, calibrating, evaluating,
training, benchmarking); the text commands call the solver directly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from setvision.app.paths import data_dir, expand_paths, sample_photos
from setvision.solver import (
    SetvisionError,
    explain,
    find_sets,
    get_variant,
    parse_card,
    parse_cards,
)
from setvision.solver.cards import Card
from setvision.solver.errors import CardParseError
from setvision.solver.odds import MAX_TRIALS, simulate
from setvision.solver.rules import dealer_advice
from setvision.solver.variants import VARIANTS, Variant

if TYPE_CHECKING:
    from setvision.app.readers import ProfileChoice
    from setvision.vision.pipeline import CardReader
    from setvision.vision.report.files import Output

logger = logging.getLogger("setvision")

EXIT_OK, EXIT_NO, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def _require_seed(option: str, seed: int) -> None:
    """Refuse a negative random seed, naming its ``option``."""
    if seed < 0:
        raise SetvisionError(f"{option} must be 0 or more, got {seed}")


# ---------------------------------------------------------------- text commands


def _checked_layout(cards: list[Card], variant: Variant) -> list[Card]:
    seen: dict[Card, int] = {}
    for position, card in enumerate(cards, 1):
        if not variant.holds(card):
            raise SetvisionError(f"card {position} ({card}) is not in the {variant.name} deck")
        if card in seen:
            raise SetvisionError(
                f"card {card} is given twice (cards {seen[card]} and {position}): "
                "a deck holds each card once"
            )
        seen[card] = position
    return cards


def cmd_solve(args: argparse.Namespace) -> int:
    variant = get_variant(args.variant)
    cards = _checked_layout(parse_cards(args.cards), variant)
    most = len(variant.deck) - len(cards)
    if args.stock is not None and not 0 <= args.stock <= most:
        raise SetvisionError(
            f"--stock must be 0..{most} (the {len(variant.deck)} cards of the {variant.name} deck "
            f"less the {len(cards)} on the table), got {args.stock}"
        )
    sets = [tuple(i + 1 for i in found) for found in find_sets(cards)]
    verdict = "sets" if sets else ("no_set" if cards else "no_cards")
    advice = dealer_advice(len(cards), args.stock, bool(sets), variant)
    if args.json:
        print(
            json.dumps(
                {
                    "cards": [
                        {"id": i, "text": str(card), **_card_fields(card)}
                        for i, card in enumerate(cards, 1)
                    ],
                    "sets": [list(s) for s in sets],
                    "verdict": verdict,
                    "advice": {
                        "action": advice.action.value,
                        "deal": advice.deal,
                        "message": advice.message,
                    },
                }
            )
        )
        return EXIT_OK
    width = len(str(len(cards)))
    for i, card in enumerate(cards, 1):
        print(f"{i:>{width}}  {card}")
    print(f"{len(sets)} set{'s' if len(sets) != 1 else ''}" + (":" if sets else ""))
    for found in sets:
        names = ", ".join(str(cards[i - 1]) for i in found)
        print(f"  {' '.join(str(i) for i in found)}  ({names})")
    print(f"dealer: {advice.message}")
    return EXIT_OK


def _card_fields(card: Card) -> dict:
    return {
        "number": card.number,
        "color": card.color,
        "shading": card.shading,
        "shape": card.shape,
    }


def _print_claim(check) -> None:
    print(check.summary())
    for attribute in check.attributes:
        print(f"  {'ok  ' if attribute.passes else 'FAIL'} {attribute}")


def _looks_like_card(text: str) -> bool:
    try:
        parse_card(text)
    except CardParseError:
        return False
    return True


def cmd_check(args: argparse.Namespace) -> int:
    first = args.items[0]
    if not _looks_like_card(first) and (os.path.exists(first) or "." in os.path.basename(first)):
        return _check_image(args)
    if len(args.items) != 3:
        raise SetvisionError(
            "check takes three cards (e.g. 1-red-solid-oval 2-green-open-diamond "
            "3-purple-striped-squiggle) or an image and three card numbers"
        )
    cards = [parse_card(text) for text in args.items]
    check = explain(*cards)
    _print_claim(check)
    return EXIT_OK if check.valid else EXIT_NO


def cmd_odds(args: argparse.Namespace) -> int:
    variant = get_variant(args.variant)
    if not 3 <= args.cards <= len(variant.deck):
        raise SetvisionError(f"--cards must be 3..{len(variant.deck)} for the {variant.name} deck")
    if not 1 <= args.trials <= MAX_TRIALS:
        raise SetvisionError(
            f"--trials must be 1..{MAX_TRIALS:,} (that many take about 6 minutes), "
            f"got {args.trials:,}"
        )
    _require_seed("--seed", args.seed)
    odds = simulate(args.cards, args.trials, variant, seed=args.seed)
    low, high = odds.interval()
    print(f"deck: {variant.name} ({len(variant.deck)} cards), {odds.sets_in_deck} sets in all")
    print(
        f"{odds.trials} random layouts of {odds.layout_size} cards: "
        f"{odds.without_set} without a set"
    )
    if odds.without_set:
        print(
            f"  p(no set) = {odds.probability:.5f}  (about 1 in {1 / odds.probability:,.0f}); "
            f"95% interval {low:.5f}..{high:.5f}"
        )
    else:
        print(f"  p(no set) = 0; 95% interval 0..{high:.6f}")
    if odds.layout_size > variant.largest_set_free:
        print(f"  (exactly 0: any {variant.largest_set_free + 1} cards of this deck hold a set)")
    return EXIT_OK


# ---------------------------------------------------------------- photo commands


class Progress:
    """A one-line progress bar on stderr, only when stderr is a terminal and there is work."""

    def __init__(self, total: int):
        self.total = total
        self.enabled = total > 1 and sys.stderr.isatty()
        self.done = 0

    def step(self, label: str) -> None:
        self.done += 1
        if self.enabled:
            filled = round(30 * self.done / self.total)
            sys.stderr.write(
                f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} "
                f"{os.path.basename(label)[:40]:<40}"
            )
            if self.done == self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def _profile(args: argparse.Namespace) -> ProfileChoice:
    """The profile named by --profile, else the user's default one, else none."""
    from setvision.app.readers import choose_profile

    return choose_profile(getattr(args, "profile", None))


def _reader(args: argparse.Namespace, profile: ProfileChoice, models=None) -> CardReader:
    """The reader the reading options ask for, with the profile already chosen."""
    from setvision.app.readers import make_reader

    auto = not getattr(args, "no_auto_calibration", False)
    model = None if models is not None else getattr(args, "model", None)
    return make_reader(profile, model, auto, models)


def _set_line(found: list[int], uncertain: set[int]) -> str:
    """One set as text, naming the cards in it that were not read surely: the set stands
    only if they were read right."""
    line = "  set: " + " ".join(str(i) for i in found)
    unsure = [str(i) for i in found if i in uncertain]
    if unsure:
        cards = "card " + unsure[0] if len(unsure) == 1 else "cards " + ", ".join(unsure)
        line += f"  (if {cards} {'is' if len(unsure) == 1 else 'are'} read right)"
    return line


def _left_out_line(record: dict) -> str:
    """Beside sets found, what may have been left out (a card missed or cut off): sets with
    such a card are not counted. Without a set the message itself says it."""
    if record["verdict"] != "sets":
        return ""
    doubts = [doubt for doubt in record["doubts"] if doubt not in record["warnings"]]
    return f"  sets with a card not read are not counted: {'; '.join(doubts)}" if doubts else ""


def _print_layout(record: dict, annotated: Output | None, reveal: str = "all") -> None:
    """The reading as text; ``reveal`` hides the sets as the annotated image does."""
    cards, sets = record["cards"], record["sets"]
    count = f", {len(sets)} set{'s' if len(sets) != 1 else ''}" if reveal != "none" else ""
    print(f"{record['source']}: {len(cards)} cards{count}")
    for warning in record["warnings"]:
        print(f"  warning: {warning}")
    uncertain = {u["id"] for u in record["uncertain"]}
    for card in cards:
        mark = "  ?" if card["id"] in uncertain else ""
        print(f"  {card['id']:>2}  {card['text']:<26} {card['confidence']:>5.0%}{mark}")
    shown = sets[:12] if reveal == "all" else sets[:1] if reveal == "one" else []
    for found in shown:
        print(_set_line(found, uncertain))
    if len(sets) > len(shown) and reveal in ("all", "one"):
        print(f"  ... and {len(sets) - len(shown)} more sets (--json lists them all)")
    reasons = Counter(ignored["reason"] for ignored in record["ignored"])
    for reason, count in reasons.items():
        print(f"  ignored {'one outline' if count == 1 else f'{count} outlines'}: {reason}")
    print(f"  {record['message']}")
    left_out = _left_out_line(record)
    if left_out:
        print(left_out)
    if annotated:
        print(f"  annotated: {annotated.path}" + (f" ({annotated.note})" if annotated.note else ""))


def cmd_detect(args: argparse.Namespace) -> int:
    from setvision.app.annotating import write_annotated
    from setvision.app.reading import read_photo
    from setvision.vision.contract import error_record
    from setvision.vision.report.files import (
        annotated_file,
        annotated_outputs,
        names_an_image,
        writable_folder,
    )
    from setvision.vision.report.overlay import Annotator

    paths = expand_paths(args.paths)
    outputs = None
    if args.out and names_an_image(args.out):
        outputs = annotated_file(args.out, paths, "--out")
    elif args.out:
        outputs = annotated_outputs(writable_folder(args.out, "--out"), paths)
    profile = _profile(args)
    reader = _reader(args, profile)
    annotator = Annotator(reveal=args.reveal)
    if not args.json:
        print(f"profile: {profile}")
    failures = 0
    progress = Progress(len(paths))
    for index, path in enumerate(paths):
        try:
            reading = read_photo(path, reader, profile, args.reveal)
        except SetvisionError as error:
            failures += 1
            message = str(error) if str(error).startswith(path) else f"{path}: {error}"
            print(f"setvision: error: {message}", file=sys.stderr)
            if args.json:
                print(json.dumps(error_record(path, message)), flush=True)
            progress.step(path)
            continue
        output = None
        if outputs:
            problem = write_annotated(reading, annotator, outputs[index])
            if problem is None:
                output = outputs[index]
            else:
                print(f"setvision: error: {problem}", file=sys.stderr)
                failures += 1
        if args.json:
            print(json.dumps(reading.record), flush=True)
        else:
            _print_layout(reading.record, output, args.reveal)
        progress.step(path)
    return EXIT_BAD_INPUT if failures else EXIT_OK


def _check_image(args: argparse.Namespace) -> int:
    from setvision.app.claims import card_numbers, check_claim

    path, *ids = args.items
    numbers = card_numbers(ids)
    profile = _profile(args)
    claim = check_claim(path, numbers, _reader(args, profile), profile)
    print(f"profile: {profile}")
    for number, reading in zip(claim.numbers, claim.cards):
        note = f"   not sure: {claim.doubts[number]}" if number in claim.doubts else ""
        print(f"  card {number}: {reading.card}{note}")
    _print_claim(claim.check)
    if not claim.confident:
        print("  (a card above was not read confidently: look at it before deciding)")
    return EXIT_OK if claim.check.valid else EXIT_NO


def cmd_review(args: argparse.Namespace) -> int:
    from functools import partial

    from setvision.app.readers import make_reader
    from setvision.vision.report.files import writable_folder
    from setvision.vision.report.html import write_report
    from setvision.vision.report.review import review

    if args.jobs < 1:
        raise SetvisionError("--jobs must be at least 1")
    writable_folder(args.report, "--report")
    paths = expand_paths(args.paths)
    profile = _profile(args)
    reader = partial(make_reader, profile, args.model, not args.no_auto_calibration)
    progress = Progress(len(paths))
    result = review(paths, args.report, reader, profile, args.jobs, args.sequence, progress.step)
    page = write_report(result, args.report)
    for photo in result.results:
        if photo.error:
            print(f"setvision: error: {photo.error}", file=sys.stderr)
    s = result.summary
    unreadable = f", {s.unreadable} could not be read" if s.unreadable else ""
    print(f"profile: {profile}")
    print(
        f"{s.photos} photos, {s.cards} cards read, {s.sets} sets found, "
        f"{s.needs_look} need a look{unreadable}"
    )
    if result.replay is not None:
        print(f"replay ({result.order}):")
        for step in result.replay.steps:
            print(f"  {step.before} -> {step.after}")
            for finding in step.findings:
                print(f"    {finding.level.value:<8} {finding.text}")
        for finding in result.replay.ending:
            print(f"  end: {finding.level.value:<8} {finding.text}")
        print(f"  ({result.replay.stock_basis})")
    print(f"report: {page}")
    return EXIT_BAD_INPUT if s.unreadable else EXIT_OK


# ---------------------------------------------------------------- live video


def cmd_live(args: argparse.Namespace) -> int:
    from contextlib import nullcontext

    from setvision.vision.live.output import VideoSink
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import open_source

    _check_live_options(args)
    game = _live_game(args)
    if not args.no_window and not _has_display():
        raise SetvisionError(
            "no display to open a window on: use --no-window (with --json or --save-video)"
        )
    profile = _profile(args)
    analyser = LiveAnalyser(_reader(args, profile))
    with open_source(args.camera, args.video) as source:
        sink = VideoSink(args.save_video, source.fps) if args.save_video else nullcontext()
        with sink:
            if game is not None and args.no_window:
                _game_headless(args, source, analyser, sink if args.save_video else None, game)
            elif args.no_window:
                _live_headless(args, source, analyser, sink if args.save_video else None, profile)
            else:
                _live_window(
                    args, source, analyser, sink if args.save_video else None, profile, game
                )
    for problem in source.problems:  # a damaged file was read as far as it could be
        print(f"setvision: error: {problem}", file=sys.stderr)
    return EXIT_BAD_INPUT if source.problems else EXIT_OK


def _check_live_options(args: argparse.Namespace) -> None:
    """Refuse bad numbers and paths before a camera, a video or a model is opened."""
    from setvision.vision.live.source import check_camera
    from setvision.vision.report.files import require_utf8, shown

    if args.max_frames is not None and args.max_frames < 1:
        raise SetvisionError(f"--max-frames must be at least 1, got {args.max_frames}")
    if args.camera is not None:
        check_camera(args.camera)
    require_utf8(args.out, "--out folder")
    if args.video:
        require_utf8(args.video, "video")
    if args.save_video:
        require_utf8(args.save_video, "--save-video file")
        if args.video and _same_file(args.video, args.save_video):
            raise SetvisionError(
                f"{shown(args.save_video)}: is the input video; --save-video must name another "
                "file (nothing written)"
            )


def _same_file(first: str, second: str) -> bool:
    """Whether two paths name one file, however spelled (links included)."""
    try:
        return os.path.samefile(first, second)
    except (OSError, ValueError):
        return os.path.realpath(first) == os.path.realpath(second)


def _has_display() -> bool:
    if sys.platform != "linux":
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _live_headless(args: argparse.Namespace, source, analyser, sink, profile) -> None:
    from setvision.vision.live.session import live_record
    from setvision.vision.live.worker import analysed_frames
    from setvision.vision.report.overlay import Annotator

    annotator = Annotator(reveal=args.reveal)
    frames = analysed_frames(source, analyser.analyse, args.max_frames, realtime=source.live)
    if not args.json:
        print(f"profile: {profile}", flush=True)
    count, last = 0, None
    for frame, result in frames:
        count += 1
        message = result.message(args.reveal)
        if args.json:
            record = live_record(result, source.name, args.reveal, profile.name)
            print(json.dumps(record), flush=True)
        elif result.summary() != last:  # a line when the reading changes, not every frame
            print(f"{result.t:7.2f} s  frame {result.frame:>5}: {message}", flush=True)
        last = result.summary()
        if sink is not None:
            sink.write(annotator.annotate(frame.image, result.layout, message))
    if not args.json:
        print(f"{count} frames analysed" + (f"; annotated video: {sink.path}" if sink else ""))


def _live_window(args: argparse.Namespace, source, analyser, sink, profile, game=None) -> None:
    from setvision.vision.live.session import live_record
    from setvision.vision.live.window import Controls, run_window

    def print_record(frame, result) -> None:
        record = live_record(result, source.name, args.reveal, profile.name)
        print(json.dumps(record), flush=True)

    last = [0.0]

    def referee(frame, result) -> None:
        last[0] = result.t
        game.update(result)

    on_result = print_record if args.json else None
    run_window(
        source,
        analyser.analyse,
        Controls(reveal=args.reveal),
        out_dir=args.out,
        max_frames=args.max_frames,
        sink=sink,
        on_result=referee if game is not None else on_result,
        notify=_notify_err if args.json else print,
        profile=profile.name,
        game=game,
    )
    if game is not None:
        _game_end(args, game, last[0])


def _notify_err(text: str) -> None:
    """A note for the player while ``--json`` owns standard output (one JSON record a line)."""
    print(text, file=sys.stderr, flush=True)


def _live_game(args: argparse.Namespace):
    """The referee of ``--game`` (None without it); its rules said at the start."""
    from setvision.app.refereeing import GameOptions, make_game
    from setvision.solver.referee import event_record, event_text

    if not args.game:
        if args.players or args.penalty or args.solo or args.opponent or args.claims:
            raise SetvisionError("--players, --penalty, --solo, --opponent, --claims need --game")
        return None
    options = GameOptions(
        args.players or "1", args.penalty, args.solo, args.opponent, args.seed, args.variant,
        args.claims,
    )  # fmt: skip
    game = make_game(options)

    def show(events) -> None:
        for event in events:
            print(json.dumps(event_record(event)) if args.json else event_text(event), flush=True)

    game.listener = show
    rules = f"players: {', '.join(game.players)}; {game.rules}; variant {args.variant}"
    print(json.dumps({"event": "rules", "text": rules}) if args.json else rules, flush=True)
    return game


def _game_headless(args: argparse.Namespace, source, analyser, sink, game) -> None:
    from setvision.vision.live.worker import analysed_frames
    from setvision.vision.report.overlay import Annotator

    annotator = Annotator(reveal=args.reveal)
    last = 0.0
    for frame, result in analysed_frames(
        source, analyser.analyse, args.max_frames, realtime=source.live
    ):
        game.update(result)
        last = result.t
        if sink is not None:
            message, clear = result.message(args.reveal), (game.overlay_box(frame.image.shape),)
            picture = annotator.annotate(frame.image, result.layout, message, keep_clear=clear)
            sink.write(game.overlay(picture))
    _game_end(args, game, last)


def _game_end(args: argparse.Namespace, game, t: float) -> None:
    from setvision.solver.referee import summary_record, summary_table

    game.finish(t)
    summary = game.summary()
    print(json.dumps(summary_record(summary)) if args.json else summary_table(summary), flush=True)


def _bench_live(args: argparse.Namespace) -> int:
    from functools import partial

    from setvision.app.benchmarking import bench_videos, this_machine
    from setvision.app.readers import make_reader
    from setvision.vision.learn.bench import parse_frame_size
    from setvision.vision.live.source import VIDEO_SUFFIXES

    size = parse_frame_size(args.frame_size) if args.frame_size else None
    paths = expand_paths(args.live, VIDEO_SUFFIXES, "videos")
    profile = _profile(args)
    reader = partial(make_reader, profile, args.model, not args.no_auto_calibration)
    print(
        f"every frame analysed in order, {args.threads} OpenCV thread(s); decoding not counted"
        + (f"; frames fitted into {size[0]}x{size[1]}" if size else "")
        + f"; profile: {profile}"
    )
    print(this_machine(args.threads).line())
    for path, b in bench_videos(paths, reader, args.max_frames, size, args.threads):
        print(
            f"{os.path.basename(path)}: {b.size[0]}x{b.size[1]}, {b.frames} frames "
            f"({b.video_seconds:.1f} s of video), {b.mean_cards:.1f} cards per frame"
        )
        print(
            f"  speed    {b.cpu_fps:6.1f} analysed frames/s on one core "
            f"({1000 / max(b.cpu_fps, 1e-9):.1f} ms CPU per frame); {b.fps:.1f}/s by the wall clock"
        )
        print(
            f"  latency  median {b.cpu_latency(50):.1f} ms, 95th percentile "
            f"{b.cpu_latency(95):.1f} ms of CPU per frame "
            f"(wall clock: {b.latency(50):.1f} and {b.latency(95):.1f} ms)"
        )
        print(
            f"  flicker  {b.set_changes} set-list changes in {b.still_seconds:.1f} s of unchanged "
            f"table ({b.flicker_per_10s:.2f} per 10 s); {b.card_changes} card readings changed, "
            f"{b.renumberings} renumberings, {b.tracks_started} cards tracked"
        )
    return EXIT_OK


# ---------------------------------------------------------------- models and measurement


def cmd_train(args: argparse.Namespace) -> int:
    from setvision.app.training import train_attributes

    written = train_attributes(data_dir(args.data), args.out, args.jobs, not args.crops_only)
    info, out = written.model.trained_on, written.path
    print(
        f"fitted on {info['samples']} cards: {info['crops']} crops, {info['board_cards']} on "
        f"boards and {info.get('augmented', 0)} copies of them under another camera or light, "
        f"from {len(info['sources'])} sources"
    )
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return EXIT_OK


def cmd_train_finder(args: argparse.Namespace) -> int:
    from setvision.app.training import train_card_finder

    _require_seed("--seed", args.seed)
    progress = Progress(1)
    report, out = train_card_finder(
        data_dir(args.data), args.out, args.jobs, progress.step, args.seed
    )
    _print_held_out(report)
    info = report.model.trained_on
    print(
        f"fitted on {info['candidates']} candidates ({info['cards']} cards) of {info['photos']} "
        f"photos and copies from {len(info['sources'])} sources"
    )
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
    return EXIT_OK


def _print_held_out(report) -> None:
    import numpy as np
    from setvision.vision.learn.find_eval import format_find_table, summarise_finding
    from setvision.vision.learn.find_training import new_or_older

    model, results = report.model, report.held_out
    print("card finding, each source judged by a finder fitted without it")
    print("(the new source: each capture session by a finder fitted without that session)")
    print(format_find_table(summarise_finding(results)))
    sent = np.mean([r.fallback for r in results])
    print(
        f"previous finder asked on {sent:.1%} of photos (unexplained paper >= "
        f"{model.unexplained:g} card holding ink >= {model.unexplained_ink:g} card, a "
        f"candidate in doubt >= {model.recheck:g}, or a card of the net's >= "
        f"{model.net_interior:g} unexplained)"
    )
    print("recall against the share of photos sent to the previous finder (held out):")
    for unexplained, ink, recheck, net, recall, share in report.recheck_options:
        if np.isfinite(unexplained) or recheck <= 1 or np.isfinite(net):
            print(f"  unexplained >= {unexplained:g}, ink >= {ink:g}, doubt >= {recheck:g}, "
                  f"net >= {net:g}: recall {recall:.4f}, sent {share:.1%}")  # fmt: skip
    if report.fast_only:
        print("\nthe same photos by the fast makers alone (the previous finder never asked)")
        print(format_find_table(summarise_finding(report.fast_only)))
    print("\nper capture session of the new source")
    sessions = [r for r in results if r.group != r.source]
    print(format_find_table(summarise_finding(sessions, key="group")))
    print("\nthe new source and the older sources together (the same held-out results)")
    print(format_find_table(summarise_finding(new_or_older(results))))
    print("\nthe new source, judged by a finder fitted without any of it")
    print(format_find_table(summarise_finding(report.unseen_source)))
    unseen_sent = np.mean([r.fallback for r in report.unseen_source])
    print(f"previous finder asked on {unseen_sent:.1%} of these photos")


def _print_level_rows(
    levels: tuple[float, ...], shipped: float, scored: Callable, held: list, unseen: list
) -> None:
    """One row per level: every card and nothing extra, recall and precision of the held-out
    photos and of the new source unseen, each photo scored by ``scored(photo, level)`` (a
    ``ReadPhoto`` method)."""
    from setvision.vision.learn.find_eval import summarise_finding

    for level in levels:
        row = []
        for photos in (held, unseen):
            s = summarise_finding([scored(p, level) for p in photos])["all"]
            row.append(f"{s.complete:.3f} {s.recall:.4f} {s.precision:.4f}")
        mark = "  (shipped)" if level == shipped else ""
        print(f"  {level:g}: {row[0]} | {row[1]}{mark}")


def _print_held_out_reading(held: list, unseen: list, details: bool) -> None:
    from setvision.vision.learn.find_eval import (
        format_find_table,
        incomplete_lines,
        summarise_finding,
    )
    from setvision.vision.learn.vetting_eval import (
        NO_VETTING,
        TEXTURED_LEVELS,
        ReadPhoto,
        unsaid_line,
        vetting_options,
    )
    from setvision.vision.read.rescue import RESCUE_CONFIDENCE, RESCUE_LEVELS
    from setvision.vision.read.vetting import (
        FINDER_UNSURE,
        READER_UNSURE,
        TEXTURED_MARGIN,
        TEXTURED_READER_UNSURE,
    )

    shipped = (FINDER_UNSURE, READER_UNSURE)
    print("\nthe same held-out cards as the reader counts them, each source read by attribute "
          "models fitted without it (unreadable outlines left out, unsure ones set aside: found "
          f"below {FINDER_UNSURE:g} and read below {READER_UNSURE:g})")  # fmt: skip
    print(format_find_table(summarise_finding([p.result(shipped) for p in held])))
    print("\nper capture session of the new source, as the reader counts them")
    sessions = [p.result(shipped) for p in held if p.group != p.source]
    print(format_find_table(summarise_finding(sessions, key="group")))
    print("\nthe new source judged by a finder fitted without any of it, as the reader counts them")
    print(format_find_table(summarise_finding([p.result(shipped) for p in unseen])))
    print("\nvetting levels (finder unsure below, reader unsure below): every card and nothing "
          "extra, recall, precision; held out, then the new source unseen")  # fmt: skip
    for (f, r, complete, recall, precision), (_, _, c2, r2, p2) in zip(
        vetting_options(held), vetting_options(unseen)
    ):
        name = "no vetting" if (f, r) == NO_VETTING else f"{f:g}, {r:g}"
        mark = "  (shipped)" if (f, r) == shipped else ""
        print(f"  {name}: {complete:.3f} {recall:.4f} {precision:.4f} | "
              f"{c2:.3f} {r2:.4f} {p2:.4f}{mark}")  # fmt: skip
    print("\nplaces the card net sees and no candidate outlines, counted as cards from this read "
          "confidence (1.01: none): every card and nothing extra, recall, precision; held out, "
          "then the new source unseen")  # fmt: skip
    _print_level_rows(RESCUE_LEVELS, RESCUE_CONFIDENCE, ReadPhoto.result_rescued, held, unseen)
    print(f"\noutlines read below {TEXTURED_READER_UNSURE:g} set aside where their margin's "
          "texture is above this level (inf: none): every card and nothing extra, recall, "
          "precision; held out, then the new source unseen")  # fmt: skip
    _print_level_rows(TEXTURED_LEVELS, TEXTURED_MARGIN, ReadPhoto.result_textured, held, unseen)
    print("\nphotos where a card is missed as read and the answer says nothing of it (no place "
          "where a card may be, no card unsure or partly seen, a multiple of three): were the "
          "cards read without a set, \"no set\" would be said wrongly")  # fmt: skip
    for name, photos in (("held out", held), ("the new source unseen", unseen)):
        print(f"  {name}: {unsaid_line(photos)}")
    if details:
        print("\nphotos held out not complete as the reader counts them")
        print("\n".join(incomplete_lines(p.result(shipped) for p in held)))
        print("\nthe new source's photos not complete as the reader counts them, by the finder "
              "fitted without it")  # fmt: skip
        print("\n".join(incomplete_lines(p.result(shipped) for p in unseen)))
        print("\nphotos where a card is missed as read and nothing is said of it (verdict)")
        for p in held + unseen:
            if p.missed_unsaid:
                found, _ = p.counted[shipped]
                print(f"{p.file}: read {found}/{p.labelled}, verdict {p.verdict}")


def _eval_find(args: argparse.Namespace) -> int:
    import numpy as np
    from setvision.app import evaluating
    from setvision.vision.learn.bench import parse_frame_size
    from setvision.vision.learn.find_eval import (
        format_find_table,
        incomplete_lines,
        summarise_finding,
    )

    data = data_dir(args.data)
    if args.read and args.finder != "learned":
        raise SetvisionError("--read measures what the reader counts of the learned finder's cards")
    if args.loso and args.finder != "learned":
        raise SetvisionError(
            f"--loso refits the learned finder without each source; --finder {args.finder} is "
            "measured with the shipped models: leave out --loso"
        )
    if args.letterbox and (args.loso or args.scales):
        raise SetvisionError("--letterbox reads photos in a frame with the shipped models: "
                             "leave out --loso and --scales")  # fmt: skip
    frame = parse_frame_size(args.letterbox, "--letterbox") if args.letterbox else None
    if args.loso:
        report = evaluating.held_out_finding(data, args.jobs, Progress(1).step, args.finder_seed)
        _print_held_out(report)
        if args.details:
            print("\nphotos held out not found complete (each judged as in the tables above)")
            print("\n".join(incomplete_lines(report.held_out)))
            print("\nthe new source's photos not found complete by the finder fitted without it")
            print("\n".join(incomplete_lines(report.unseen_source)))
        if args.read:
            truths = evaluating.finding_truths(data)
            progress = Progress(len(report.held_out) + len(report.unseen_source))
            held, unseen = evaluating.held_out_reading(
                data, truths, report, args.jobs, progress.step
            )
            _print_held_out_reading(held, unseen, args.details)
        return EXIT_OK
    truths = evaluating.finding_truths(data, args.source)
    progress = Progress(len(truths))
    finder = "read" if args.read else args.finder
    if args.scales:
        agreement = evaluating.scale_agreement(truths, finder, args.jobs, progress.step)
        read_alike = not np.isnan(agreement.overall.same_read)  # asked of the reader only
        answered = not np.isnan(agreement.overall.same_answer)  # where the reader answers
        print("| source | photos | same cards at long sides 800, 1200, 1600 | same re-saved "
              "| same at 0.95 and 1.05 times | same turned a quarter and half round |"
              + (" each read the same at 800, 1200, 1600 | each read the same every way |"
                 if read_alike else "")
              + (" same answer at 800, 1200, 1600 | same answer every way |"
                 if answered else ""))  # fmt: skip
        print("|---|---:|---:|---:|---:|---:|" + ("---:|---:|" if read_alike else "")
              + ("---:|---:|" if answered else ""))  # fmt: skip
        for row in (*agreement.sources, replace(agreement.overall, source="**all**")):
            print(f"| {row.source} | {row.photos} | {row.same:.3f} | {row.same_resaved:.3f} "
                  f"| {row.same_near:.3f} | {row.same_turned:.3f} |"
                  + (f" {row.same_read:.3f} | {row.read_every_way:.3f} |"
                     if read_alike else "")
                  + (f" {row.same_answer:.3f} | {row.answer_every_way:.3f} |"
                     if answered else ""))  # fmt: skip
        if agreement.decided_by_reader is not None:
            differ, same = agreement.decided_by_reader
            print(
                f"of the {differ} photos whose cards differ between sizes, {same} get the same "
                "outlines from the finder at every size: there the reader decides differently"
                if differ
                else "no photo's cards differ between sizes"
            )
        if args.details:
            for c in agreement.differing:
                outlines = ""
                if c.same_outlines is not None:
                    outlines = f", the finder's outlines the same at every size: {c.same_outlines}"
                if c.same_read is not None:
                    outlines += (f", each card read the same at every size: {c.same_read}, "
                                 f"every way: {c.read_every_way}")  # fmt: skip
                if c.same_answer is not None:
                    outlines += (f", the same answer at every size: {c.same_answer}, "
                                 f"every way: {c.answer_every_way}")  # fmt: skip
                print(f"{c.file}: cards per size {c.counts}, same cards re-saved: "
                      f"{c.same_resaved}, at 0.95 and 1.05 times: {c.same_near}, "
                      f"turned: {c.same_turned}{outlines}")  # fmt: skip
        return EXIT_OK
    results = evaluating.evaluate_finding(truths, finder, args.jobs, progress.step, frame)
    if frame:
        print(f"each photo letterboxed into {frame[0]}x{frame[1]}")
    print(format_find_table(summarise_finding(results)))
    if args.details:
        print("\n".join(incomplete_lines(results)))
    return EXIT_OK


def _eval_cut(args: argparse.Namespace, boards: list, reader) -> int:
    from setvision.app import evaluating
    from setvision.vision.learn.cut_eval import (
        ACROSS,
        ALONG,
        AT_CORNER,
        CORNER_DEPTHS,
        OUTCOMES,
        RIGHT_WHILE_SURE,
        SHOWN,
        WRONG_WHILE_SURE,
        summarise_cuts,
    )

    hows = {"both": (ACROSS, ALONG), "all": (ACROSS, ALONG, AT_CORNER)}.get(args.cut, (args.cut,))
    step = Progress(len(boards)).step
    results = evaluating.cut_reading(boards, reader, hows, args.jobs, step)
    print("cards cut by the photo's edge: labelled boards cropped across up to 4 cards each")
    titles = {
        ACROSS: ("cut across the card's length", "share shown", SHOWN),
        ALONG: ("cut along the card's length", "share of width shown", SHOWN),
        AT_CORNER: ("cut at one corner (cards at a slant)", "depth to next corner", CORNER_DEPTHS),
    }
    for how in hows:
        title, column, shares = titles[how]
        cuts = [r for r in results if r.how == how]
        print(f"\n{title}")
        sure = f"{RIGHT_WHILE_SURE} | {WRONG_WHILE_SURE}"
        print(f"| {column} | cuts | {' | '.join(OUTCOMES)} | {sure} |")
        print("|---:|---:|" + "---:|" * (len(OUTCOMES) + 2))
        for share, counts in summarise_cuts(cuts, shares).items():
            name = "**all**" if share < 0 else f"{share:.2f}"
            total = sum(counts[o] for o in OUTCOMES)
            cells = " | ".join(f"{counts[o]} ({counts[o] / max(total, 1):.1%})" for o in OUTCOMES)
            sure = f"{counts[RIGHT_WHILE_SURE]} | {counts[WRONG_WHILE_SURE]}"
            print(f"| {name} | {total} | {cells} | {sure} |")
        reasons = Counter(r.read for r in cuts if r.outcome == "left out")
        print("left out: " + ", ".join(f"{n} {reason}" for reason, n in reasons.most_common()))
    if args.details:
        for r in results:
            if r.outcome == "wrong":
                sure = " (sure)" if r.sure else ""
                print(f"{r.file}: cut {r.how}, {r.shown:.2f}, read {r.read}{sure}, is {r.truth}")
    return EXIT_OK


def _eval_card_free(args: argparse.Namespace) -> int:
    from setvision.app import evaluating
    from setvision.vision.learn.card_free import card_free_files, format_card_free

    others = ("--loso", args.loso), ("--find", args.find), ("--cut", args.cut)
    others += (("--calibration", args.calibration), ("LABELS.jsonl", args.labels))
    given = [name for name, value in others if value]
    if given:
        raise SetvisionError(f"--card-free reads its own photos as shipped: leave out {given[0]}")
    data = data_dir(args.data)
    files = card_free_files()
    progress = Progress(len(files))
    reader = _reader(args, _profile(args))
    results = evaluating.card_free_reading(data, files, reader, progress.step)
    print("photos checked by eye to show no SET card, read as shipped (every card read is false)")
    print(format_card_free(results))
    for r in results:
        if r.error:
            print(f"error on {r.file}: {r.error}", file=sys.stderr)
        elif args.details and not r.right:
            cards = f"{r.cards} card{'s' if r.cards != 1 else ''}"
            print(f"{r.file}: {cards} read ({r.unsure} unsure), verdict {r.verdict}")
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
    from setvision.app import evaluating
    from setvision.vision.learn.evaluate import format_seed_table, format_table, summarise

    if args.seeds is not None:
        if args.seeds < 1:
            raise SetvisionError(f"--seeds must be at least 1, got {args.seeds}")
        if not args.loso or args.find or args.cut or args.calibration:
            raise SetvisionError(
                "--seeds refits the held-out attribute forests: use it with --loso alone"
            )
    _require_seed("--finder-seed", args.finder_seed)
    if args.finder_seed and not (args.find and args.loso):
        raise SetvisionError(
            "--finder-seed refits the held-out finder forests: use it with --find --loso"
        )
    if args.card_free:
        return _eval_card_free(args)
    if args.find:
        return _eval_find(args)
    if args.read or args.scales or args.letterbox:
        raise SetvisionError("--read, --scales and --letterbox measure card finding: add --find")
    data = data_dir(args.data)
    boards = evaluating.labelled_boards(data, args.labels, args.noisy, args.source)
    if args.calibration:
        return _eval_calibration(args, boards, data)
    profile = _profile(args)
    if args.cut:
        if args.loso:
            raise SetvisionError("--cut reads with the shipped models: leave out --loso")
        return _eval_cut(args, boards, _reader(args, profile))
    seeds = range(args.seeds or 1)
    progress = Progress(len(boards) * len(seeds))
    by_seed = {}
    if args.loso:
        auto = not args.no_auto_calibration
        for seed in seeds:
            by_seed[seed] = evaluating.evaluate_held_out(
                boards, data, profile, args.model, auto, args.jobs, progress.step,
                seed if args.seeds else None,
            )  # fmt: skip
        results = by_seed[0]
        print("leave-one-source-out: each source read by models fitted without it")
        if args.seeds:
            print("(the table and details: seed 0, the shipped settings' seed)")
    else:
        results = evaluating.evaluate_reader(boards, _reader(args, profile), progress.step)
    print(f"profile: {profile}")
    print(format_table(summarise(results)))
    failures = [r for r in results if r.error]
    for r in failures:
        print(f"error on {r.file}: {r.error}", file=sys.stderr)
    if args.details:
        for r in results:
            if not r.board_right:
                print(
                    f"{r.file}: found {r.found}/{r.labelled}, exact {r.exact}, "
                    f"false {r.false_detections}, verdict {r.verdict}"
                    + (" FALSE NO SET" if r.false_no_set else "")
                )
    if args.seeds:
        print(format_seed_table({seed: summarise(rows) for seed, rows in by_seed.items()}))
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    from setvision.app.benchmarking import bench_photos, this_machine
    from setvision.vision.learn.bench import format_summary, parse_frame_size, summarise

    for option, value in (
        ("--repeat", args.repeat),
        ("--threads", args.threads),
        ("--limit", args.limit),
        ("--max-frames", args.max_frames),
    ):
        if value is not None and value < 1:
            raise SetvisionError(f"{option} must be at least 1, got {value}")
    size = parse_frame_size(args.frame_size or "1280x720")
    if args.live:
        if args.paths or args.repeat or args.limit or args.per_photo or args.fill:
            raise SetvisionError(
                "--live times videos: PATH, --repeat, --limit, --per-photo and --fill are for "
                "photos"
            )
        return _bench_live(args)
    if args.max_frames:
        raise SetvisionError("--max-frames is for --live videos; for photos use --limit")
    given = args.paths or [sample_photos()]
    paths = expand_paths(given)[: args.limit]
    repeat = args.repeat or (3 if any(os.path.isdir(p) for p in given) else 15)
    profile = _profile(args)
    reader = _reader(args, profile)
    frame = f"{size[0]}x{size[1]}"
    stages = ("find", "measure", "classify", "total")
    framing = "filling" if args.fill else "letterboxed into"
    print(
        f"{len(paths)} photo(s) {framing} {frame}, median of {repeat} run(s) per photo, "
        f"{args.threads} thread(s), profile: {profile}; ms"
    )
    print(this_machine(args.threads).line())
    if args.per_photo:
        print(f"{'photo':<48} {'size':>10} {'cards':>5} " + " ".join(f"{s:>8}" for s in stages))
    progress = Progress(0 if args.per_photo else len(paths))

    def show(path: str, label: str, timing) -> None:
        if args.per_photo:
            name = os.path.basename(path)
            print(
                f"{f'{name[:38]} {label}':<48} {f'{timing.width}x{timing.height}':>10} "
                f"{timing.cards:>5} "
                + " ".join(f"{timing.stages_ms.get(s, 0.0):>8.1f}" for s in stages)
            )
        if label == frame:
            progress.step(path)

    timings = bench_photos(
        paths, reader, size, repeat, args.threads, args.per_photo, show, fill=args.fill
    )
    if args.per_photo:
        print()
    print(f"over photos, {frame} frames (ms; each photo's figure is the median of its runs):")
    print("\n".join(format_summary(summarise(timings, stages))))
    return EXIT_OK


# ---------------------------------------------------------------- calibration profiles


def cmd_calibrate(args: argparse.Namespace) -> int:
    from setvision.app.calibrating import calibrate, refuse_existing

    refuse_existing(args.name, args.force)
    paths = expand_paths(args.photos)
    if args.cards is None and not args.interactive:
        raise SetvisionError(
            "name the cards: --cards CARD,CARD,... once per photo, in the order "
            "`setvision detect` numbers them, or --interactive to confirm the reading"
        )
    if args.cards is not None and len(args.cards) != len(paths):
        raise SetvisionError(
            f"{len(paths)} photo(s) but --cards given {len(args.cards)} time(s): "
            "give one --cards per photo, in the same order"
        )
    confirm = _confirm_cards if args.cards is None else None
    done = calibrate(args.name, paths, args.cards, confirm, args.model, args.force)
    profile = done.profile
    print(f"profile {profile.name!r} written to {done.path}")
    _print_profile(profile)
    print(
        f"use it: setvision detect PHOTO --profile {profile.name}; "
        f"make it the default: setvision profiles default {profile.name}"
    )
    return EXIT_OK


def _ask(prompt: str) -> str:
    try:
        return input(prompt).strip()
    except EOFError:
        raise SetvisionError("calibration cancelled: nothing written") from None


def _ask_card(number: int, card: Card) -> Card:
    while True:
        answer = _ask(f"  card {number} is {card}? Enter keeps it, or type the card: ")
        if not answer:
            return card
        try:
            return parse_card(answer)
        except CardParseError as error:
            print(f"  {error}")


def _confirm_cards(path: str, photo, layout) -> list[Card]:
    """Show the reading on a temporary annotated image (removed at the end); confirm it."""
    import tempfile

    from setvision.vision.report.files import write_image
    from setvision.vision.report.overlay import Annotator

    handle, picture = tempfile.mkstemp(prefix="setvision-calibrate-", suffix=".jpg")
    os.close(handle)
    try:
        write_image(picture, Annotator().annotate(photo.image, layout.scaled(1 / photo.scale)))
        print(f"{path}: {len(layout.cards)} cards read; their numbers are drawn on {picture}")
        return _ask_cards(layout)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(picture)


def _ask_cards(layout) -> list[Card]:
    """Ask about the uncertain cards, then about any other card the user names."""
    from setvision.calibration.deck import repeated_card
    from setvision.vision.layout import describe_card_doubt

    cards = [reading.card for reading in layout.cards]
    for number, reading in enumerate(layout.cards, 1):
        doubt = "" if reading.confident else f"   not sure: {describe_card_doubt(layout, number)}"
        print(f"  {number:>2}  {reading.card}{doubt}")
    for number in layout.uncertain:
        cards[number - 1] = _ask_card(number, cards[number - 1])
    while True:
        repeated = repeated_card(cards)
        if repeated:
            print(f"  {repeated[0]} is given twice (cards {repeated[1]} and {repeated[2]})")
        answer = _ask("  number of a card read wrong (Enter when every card is right): ")
        if not answer and not repeated:
            return cards
        if answer.isdigit() and 1 <= int(answer) <= len(cards):
            cards[int(answer) - 1] = _ask_card(int(answer), cards[int(answer) - 1])
        elif answer:
            print(f"  cards are numbered 1 to {len(cards)}")


def _print_profile(profile) -> None:
    from setvision.calibration.deck import CALIBRATED, attribute_name
    from setvision.solver import ATTRIBUTES

    record = profile.fitted_on
    print(
        f"  fitted on {record.cards} cards from {len(record.photos)} photo(s) on {record.date}"
        f" (model {record.model})"
    )
    for photo in record.photos:
        print(f"    {photo}")
    for attribute in ATTRIBUTES:
        counts = ", ".join(f"{v} {n}" for v, n in record.values.get(attribute, {}).items())
        state = "refined" if attribute in profile.attributes else "not refined"
        state = state if attribute in CALIBRATED else "general"  # never calibrated
        print(f"  {attribute_name(attribute):<8} {state:<12} {counts}")
        if attribute in profile.not_refined:
            print(f"           ({profile.not_refined[attribute]})")


def cmd_profiles(args: argparse.Namespace) -> int:
    from setvision.calibration import profiles

    action = args.action or "list"
    if action == "list":
        names, default = profiles.list_profiles(), profiles.default_profile()
        if not names:
            print(f"no profiles yet (setvision calibrate PHOTO --name NAME); stored in "
                  f"{profiles.profiles_dir()}")  # fmt: skip
        for name in names:
            print(f"{'*' if name == default else ' '} {name}")
        if names:
            marked = "(* the default) " if default in names else ""
            print(f"{marked}stored in {profiles.profiles_dir()}")
    elif action == "show":
        profile = profiles.load_profile(args.name)
        default = " (the default)" if profiles.default_profile() == profile.name else ""
        print(f"profile {profile.name!r}{default}: {profiles.profile_path(profile.name)}")
        _print_profile(profile)
    elif action == "delete":
        print(f"deleted {args.name!r} ({profiles.delete_profile(args.name)})")
    elif args.clear or args.name:
        replaced = profiles.set_default(None if args.clear else args.name)
        if replaced:
            print(f"replaced the unusable {profiles.config_dir() / 'config.json'}")
        print("no default profile" if args.clear else f"default profile: {args.name}")
    else:
        print(f"default profile: {profiles.default_profile() or 'none'}")
    return EXIT_OK


def _eval_calibration(args: argparse.Namespace, boards: list, data) -> int:
    from setvision.app.calibrating import calibration_sources, measure_calibration
    from setvision.calibration.measure import format_results

    sources = calibration_sources(boards)
    progress = Progress(sum(len(b) for b in sources.values()))
    results = measure_calibration(sources, data, args.jobs, args.model, progress.step)
    print(
        "card exact on each source's boards but the one its profile is fitted on; "
        "models fitted without the source"
    )
    print(format_results(results))
    for r in results:
        if r.fitted_on:
            print(f"  {r.source}: profile fitted on {r.fitted_on}")
        if r.note:
            print(f"  {r.source}: {r.note}")
    return EXIT_OK


# ---------------------------------------------------------------- parser and entry point


REVEALS = ("all", "one", "count", "none")


def _add_reading_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", metavar="NAME", help="calibration profile (see `profiles`)")
    parser.add_argument("--model", metavar="PATH", help="a model file other than the shipped one")
    parser.add_argument(
        "--no-auto-calibration",
        action="store_true",
        help="do not adapt colours to each photo",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="setvision", description="Find every SET on a photo of real cards."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug log and tracebacks")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    solve = sub.add_parser("solve", help="every set among cards given as text")
    solve.add_argument("cards", nargs="*", metavar="CARD", help="e.g. 2-red-striped-oval")
    solve.add_argument("--json", action="store_true", help="one JSON object")
    solve.add_argument("--stock", type=int, default=None, help="cards left in the stock")
    solve.add_argument("--variant", default="standard", choices=sorted(VARIANTS))
    solve.set_defaults(handler=cmd_solve)

    check = sub.add_parser(
        "check",
        help="is a claimed set valid? three cards as text, or IMAGE and three card numbers",
    )
    check.add_argument("items", nargs="+", metavar="CARD_OR_IMAGE")
    _add_reading_options(check)
    check.set_defaults(handler=cmd_check)

    detect = sub.add_parser("detect", help="find every card and set on photos")
    detect.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders")
    detect.add_argument(
        "--out", metavar="DIR", help="write annotated images here (or NAME.jpg/.png: one photo's)"
    )
    detect.add_argument("--json", action="store_true", help="JSON Lines (shared/contract)")
    detect.add_argument("--reveal", choices=REVEALS, default="all", help="how much to show")
    _add_reading_options(detect)
    detect.set_defaults(handler=cmd_detect)

    review = sub.add_parser(
        "review", help="check photos after the fact: an HTML report, and a game replay"
    )
    review.add_argument("paths", nargs="+", metavar="PATH", help="image files or folders")
    review.add_argument("--report", required=True, metavar="DIR", help="write the report here")
    review.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="photos read in parallel"
    )
    review.add_argument(
        "--sequence",
        action="store_true",
        help="photos of one game in capture order: replay what happened between them",
    )
    _add_reading_options(review)
    review.set_defaults(handler=cmd_review)

    live = sub.add_parser("live", help="a camera or video: cards and sets shown as play goes on")
    where = live.add_mutually_exclusive_group()
    where.add_argument("--camera", type=int, metavar="INDEX", help="camera number (default 0)")
    where.add_argument("--video", metavar="PATH_OR_URL", help="a video file or stream instead")
    live.add_argument("--reveal", choices=REVEALS, default="all", help="how much to show (key h)")
    live.add_argument("--no-window", action="store_true", help="no window: print or save instead")
    live.add_argument("--json", action="store_true", help="one JSON line per analysed frame")
    live.add_argument("--save-video", metavar="OUT", help="write the annotated stream (.mp4, .avi)")
    live.add_argument("--out", metavar="DIR", default=".", help="where key s saves (default .)")
    live.add_argument("--max-frames", type=int, metavar="N", help="stop after N frames")
    game = live.add_argument_group("refereeing a game (--game)")
    game.add_argument("--game", action="store_true", help="referee the game: scores, prompts")
    game.add_argument("--players", metavar="NAMES", help='"Ann,Bob,Eve" or a number (default 1)')
    game.add_argument(
        "--penalty",
        choices=("lose-set", "sit-out"),
        help="wrong claim: hand back a set won, or sit out until another finds a set (required "
        "with two players or more)",
    )
    game.add_argument("--solo", action="store_true", help="one player against the clock")
    game.add_argument("--opponent", choices=("easy", "medium", "hard"), help="play the computer")
    game.add_argument("--seed", type=int, default=0, help="the computer's dice (default 0)")
    game.add_argument("--variant", choices=sorted(VARIANTS), default="standard", help="the deck")
    game.add_argument(
        "--claims",
        metavar="NAMES",
        help='who took each set that leaves the table, in order ("Ann,Bob,table"); without '
        "it a player key names the taker, a lone player takes all, else the table",
    )
    _add_reading_options(live)
    live.set_defaults(handler=cmd_live)

    train = sub.add_parser("train", help="fit the attribute models from shared/data")
    train.add_argument("--data", metavar="DIR", help="the data folder (default ../shared/data)")
    train.add_argument(
        "--out", metavar="PATH", help="model file to write (default: the checkout's shipped one)"
    )
    train.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    train.add_argument("--crops-only", action="store_true", help="leave board photos out")
    train.set_defaults(handler=cmd_train)

    train_finder = sub.add_parser(
        "train-finder", help="fit the card finder's model from the labelled outlines and centres"
    )
    train_finder.add_argument(
        "--data", metavar="DIR", help="the data folder (default ../shared/data)"
    )
    train_finder.add_argument(
        "--out", metavar="PATH", help="model file to write (default: the checkout's shipped one)"
    )
    train_finder.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    train_finder.add_argument(
        "--seed",
        type=int,
        default=0,
        help="draw the shipped forests with this seed (default 0, the shipped model's): "
        "another seed shows what a refit alone moves",
    )
    train_finder.set_defaults(handler=cmd_train_finder)

    evaluation = sub.add_parser("eval", help="measure accuracy on labelled photos")
    evaluation.add_argument("labels", nargs="*", metavar="LABELS.jsonl")
    evaluation.add_argument(
        "--data", metavar="DIR", help="the data folder (default ../shared/data)"
    )
    evaluation.add_argument("--source", action="append", help="only sources containing this text")
    evaluation.add_argument("--noisy", action="store_true", help="include unchecked noisy labels")
    evaluation.add_argument(
        "--loso",
        action="store_true",
        help="leave-one-source-out: read each source with models fitted without it",
    )
    evaluation.add_argument(
        "--seeds",
        type=int,
        metavar="N",
        help="with --loso: fit the held-out attribute forests with seeds 0 to N-1 and report "
        "board exact per source under each, its mean and range (the draw's own noise)",
    )
    evaluation.add_argument(
        "--finder-seed",
        type=int,
        default=0,
        metavar="N",
        help="with --find --loso: draw every held-out finder forest with seed N (default 0, the "
        "shipped settings'): another seed shows what a draw alone moves",
    )
    evaluation.add_argument(
        "--details",
        action="store_true",
        help="list the boards not read right (with --find: the photos not found complete; "
        "with --read as well: not complete as read)",
    )
    evaluation.add_argument(
        "--calibration",
        action="store_true",
        help="per source: general model, per-photo and explicit calibration (models without it)",
    )
    evaluation.add_argument(
        "--find",
        action="store_true",
        help="card finding alone: recall, precision, photos complete (with --loso: held out)",
    )
    evaluation.add_argument(
        "--card-free",
        action="store_true",
        help="photos checked by eye to show no card: how often the answer is 'no cards'",
    )
    evaluation.add_argument(
        "--scales",
        action="store_true",
        help="with --find: read photos at long sides 800, 1200, 1600, re-saved, resized by 5%%"
        " and turned; share with the same cards",
    )
    evaluation.add_argument(
        "--read",
        action="store_true",
        help="with --find: count the cards the whole reader counts (unreadable and unsure "
        "outlines left out); with --loso also the vetting levels that set unsure ones aside",
    )
    evaluation.add_argument(
        "--cut",
        nargs="?",
        const="all",
        choices=("across", "along", "corner", "both", "all"),
        help="cards cut by the photo's edge: labelled photos cropped across their cards' "
        "length, along it, at one corner of cards at a slant, across and along (both), or "
        "all three (the default); read right, left out or read wrong",
    )
    evaluation.add_argument(
        "--finder",
        choices=("learned", "previous", "live"),
        default="learned",
        help="with --find: the learned finder (default), the previous hand-set one, or what "
        "`live` shows of each photo as a still camera frame",
    )
    evaluation.add_argument(
        "--letterbox",
        metavar="WxH",
        help="with --find: read each photo letterboxed into this frame (as `bench` times it), "
        "e.g. 1280x720",
    )
    evaluation.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    _add_reading_options(evaluation)
    evaluation.set_defaults(handler=cmd_eval)

    bench = sub.add_parser(
        "bench", help="time detection over photos: median, p95, max (default: sample_images)"
    )
    bench.add_argument("paths", nargs="*", metavar="PATH", help="photos or folders of photos")
    bench.add_argument(
        "--frame-size",
        metavar="WxH",
        help="letterbox photos into this frame (default 1280x720); with --live: fit frames into it",
    )
    bench.add_argument(
        "--repeat",
        type=int,
        metavar="N",
        help="timed runs per photo, its figure the median (default 3 with a folder, else 15)",
    )
    bench.add_argument(
        "--threads", type=int, default=1, metavar="N", help="OpenCV and numpy threads (default 1)"
    )
    bench.add_argument(
        "--limit", type=int, metavar="N", help="only the first N photos (folders in name order)"
    )
    bench.add_argument(
        "--per-photo",
        action="store_true",
        help="also a line per photo, letterboxed and at full size (before the summary)",
    )
    bench.add_argument(
        "--fill",
        action="store_true",
        help="fill the frame with each photo (scaled to cover it, cut about its centre) "
        "instead of letterboxing it: a camera's frame without bars",
    )
    bench.add_argument(
        "--live", nargs="+", metavar="VIDEO", help="time live analysis on videos (or folders)"
    )
    bench.add_argument("--max-frames", type=int, metavar="N", help="with --live: first N frames")
    _add_reading_options(bench)
    bench.set_defaults(handler=cmd_bench)

    calibrate = sub.add_parser(
        "calibrate", help="fit a profile of a deck and its light from photos of known cards"
    )
    calibrate.add_argument("photos", nargs="+", metavar="PHOTO", help="photos of 6 or more cards")
    calibrate.add_argument("--name", required=True, help="profile name (letters, digits, - _)")
    named = calibrate.add_mutually_exclusive_group()
    named.add_argument(
        "--cards",
        action="append",
        metavar="CARD,CARD,...",
        help="the cards of one photo in the order `detect` numbers them; once per photo",
    )
    named.add_argument(
        "--interactive", action="store_true", help="confirm the reading card by card instead"
    )
    calibrate.add_argument("--force", action="store_true", help="replace a profile of that name")
    calibrate.add_argument("--model", metavar="PATH", help="a model other than the shipped one")
    calibrate.set_defaults(handler=cmd_calibrate)

    profiles = sub.add_parser("profiles", help="list, show, delete calibration profiles; default")
    actions = profiles.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="every profile (the default marked *)")
    for action, text in (("show", "what a profile was fitted on"), ("delete", "remove a profile")):
        actions.add_parser(action, help=text).add_argument("name", metavar="NAME")
    default = actions.add_parser("default", help="show, set or --clear the default profile")
    default.add_argument("name", nargs="?", metavar="NAME")
    default.add_argument("--clear", action="store_true", help="no default profile")
    profiles.set_defaults(handler=cmd_profiles)

    odds = sub.add_parser("odds", help="how often a random layout holds no set")
    odds.add_argument("--cards", type=int, default=12)
    odds.add_argument("--trials", type=int, default=200_000)
    odds.add_argument("--variant", default="standard", choices=sorted(VARIANTS))
    odds.add_argument("--seed", type=int, default=0)
    odds.set_defaults(handler=cmd_odds)
    return parser


def _show_any_name() -> None:
    """Print file names that are not UTF-8 as ``\\xNN`` instead of failing on them."""
    from setvision.vision.report.files import SHOWN

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors=SHOWN)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # argparse has printed its usage message
        return int(exit_.code or 0)
    _show_any_name()
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        return args.handler(args)
    except SetvisionError as error:
        print(f"setvision: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("setvision: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader of our output went away (e.g. `| head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:  # a bug: one line for the user, the traceback with -v
        if args.verbose:
            raise
        print(
            f"setvision: internal error: {type(error).__name__}: {error} (run with -v for details)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
