"""The live window (OpenCV HighGUI): the newest frame, the latest reading, keys and clicks.

Keys: ``h`` cycles the hint level (none, count, one set, all sets), ``space`` freezes the
picture, ``s`` saves the annotated frame and its JSON, ``c`` shows confidences, ``q`` or Esc
quits. Clicking three cards checks them as a claimed set. In a refereed game (``--game``) a
player's key ``1``-``9`` before the three clicks makes the claim that player's (the claim line
then shows the referee's verdict, ``hand_claim``), and a player key alone names who takes the
next three cards to leave the table. ``Controls`` holds that
state and is plain logic; ``run_window`` is the loop around HighGUI.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import cv2
import numpy as np
from setvision.solver import Card, explain
from setvision.vision.geometry import contains_point
from setvision.vision.live.output import VideoSink, save_snapshot
from setvision.vision.live.session import live_record
from setvision.vision.live.source import Frame, FrameSource
from setvision.vision.live.tracking import LiveLayout
from setvision.vision.live.worker import Analyse, AnalysisWorker
from setvision.vision.report.overlay import REVEALS, Annotator, bgr

WINDOW = "setvision live"
KEY_HELP = "h hints  space freeze  s save  c confidence  1-9 player  q quit"
CLICK_HELP = "click three cards to check a set"
BAR_RGB = (20, 20, 20)
VALID_RGB = (90, 230, 90)
INVALID_RGB = (255, 90, 90)
TEXT_RGB = (235, 235, 235)
#: The window fits in this many pixels (width, height); larger frames are shown scaled.
MAX_WINDOW = (1280, 800)


@dataclass
class Controls:
    """What the player chose: hint level, freeze, confidences, and cards picked for a claim.

    Picked cards are kept as track ids, so a claim survives renumbering.
    """

    reveal: str = "all"
    show_confidence: bool = False
    frozen: bool = False
    picked: list[int] = field(default_factory=list)
    claim: str | None = None
    claim_valid: bool = False
    player: int | None = None  # the player key pressed before a claim (a refereed game)
    claimed: tuple[int, tuple[int, ...]] | None = None  # (player key, track ids) to referee

    def __post_init__(self) -> None:
        if self.reveal not in REVEALS:
            raise ValueError(f"reveal must be one of {', '.join(REVEALS)}, got {self.reveal!r}")

    def key(self, code: int) -> str | None:
        """Apply a key press; returns ``"quit"`` or ``"save"`` when the loop must act."""
        if code < 0:
            return None
        char = chr(code & 0xFF).lower()
        if char == "q" or code & 0xFF == 27:
            return "quit"
        if char == "h":
            self.reveal = REVEALS[(REVEALS.index(self.reveal) + 1) % len(REVEALS)]
        elif char == " ":
            self.frozen = not self.frozen
        elif char == "c":
            self.show_confidence = not self.show_confidence
        elif char == "s":
            return "save"
        elif char in "123456789":
            self.player = int(char)
            return "player"
        return None

    def click(self, result: LiveLayout, x: float, y: float) -> None:
        """Pick (or unpick) the card under the click; three picked cards are checked."""
        hit = next(
            (
                track_id
                for track_id, card in zip(result.track_ids, result.layout.cards)
                if contains_point(card.corners_xy, (x, y))
            ),
            None,
        )
        if hit is None:
            self.picked, self.claim = [], None
            return
        if len(self.picked) == 3:
            self.picked, self.claim = [], None
        if hit in self.picked:
            self.picked.remove(hit)
        else:
            self.picked.append(hit)
        if len(self.picked) == 3:
            self._check(result)

    def _check(self, result: LiveLayout) -> None:
        numbers = self.highlight(result)
        if len(numbers) != 3:
            self.picked, self.claim = [], None
            return
        cards = [result.layout.cards[n - 1].card for n in numbers]
        if self.player is not None:  # a player's claim: the referee judges it
            self.claimed, self.player = (self.player, tuple(self.picked)), None
        check = explain(*cards)
        self.claim_valid = check.valid
        names = " ".join(str(n) for n in numbers)
        self.claim = f"cards {names}: {check.summary()}"

    def highlight(self, result: LiveLayout) -> tuple[int, ...]:
        """Card numbers of the picked cards still on the table."""
        return tuple(result.track_ids.index(t) + 1 for t in self.picked if t in result.track_ids)

    def annotator(self) -> Annotator:
        return Annotator(reveal=self.reveal, show_confidence=self.show_confidence)


def draw(
    frame: Frame,
    result: LiveLayout | None,
    controls: Controls,
    status: str,
    overlay: Callable[[np.ndarray], np.ndarray] | None = None,
    keep_clear: tuple[tuple[int, int, int, int], ...] = (),
) -> np.ndarray:
    """The annotated frame over a status bar: the claim checked (or how to), keys, state;
    ``overlay`` draws on the picture (a game's scoreboard) before the bar is added, and the
    annotation's legend keeps off the rectangles ``keep_clear`` (where the overlay draws)."""
    image = frame.image
    if result is not None:
        annotator = controls.annotator()
        message = result.message(controls.reveal)
        highlight = controls.highlight(result)
        image = annotator.annotate(image, result.layout, message, highlight, keep_clear)
    if overlay is not None:
        image = overlay(image)
    claim = (CLICK_HELP, TEXT_RGB)
    if controls.claim:
        claim = (controls.claim, VALID_RGB if controls.claim_valid else INVALID_RGB)
    state = f"hints: {controls.reveal}   {status}" + ("   FROZEN" if controls.frozen else "")
    lines = [claim, (KEY_HELP, TEXT_RGB), (state, TEXT_RGB)]
    width = image.shape[1]
    unit = max(1.0, width / 900)
    face, thickness = cv2.FONT_HERSHEY_SIMPLEX, max(1, round(unit))
    line_height = round(24 * unit)
    bar = np.zeros((line_height * len(lines) + round(6 * unit), width, 3), np.uint8)
    bar[:] = bgr(BAR_RGB)
    margin = round(8 * unit)
    for row, (text, colour) in enumerate(lines, 1):
        scale = 0.55 * unit
        (text_width, _), _ = cv2.getTextSize(text, face, scale, thickness)
        if text_width > width - 2 * margin:  # shrink a long line until it fits
            scale *= (width - 2 * margin) / text_width
        cv2.putText(bar, text, (margin, row * line_height), face, scale, bgr(colour), thickness,
                    cv2.LINE_AA)  # fmt: skip
    return np.vstack([image, bar])


def run_window(
    source: FrameSource,
    analyse: Analyse,
    controls: Controls,
    out_dir: str = ".",
    max_frames: int | None = None,
    sink: VideoSink | None = None,
    notify: Callable[[str], None] = print,
    on_result: Callable[[Frame, LiveLayout], None] | None = None,
    wait_key: Callable[[int], int] = cv2.waitKey,
    profile: str | None = None,
    game: GameHooks | None = None,
) -> int:
    """Show the source until it ends, ``max_frames`` are read, or the player quits.

    Returns the number of frames analysed. A video file plays at its own speed; analysis
    runs on a worker thread and skips frames when it falls behind. ``on_result`` hears of
    each new result; ``wait_key`` (``cv2.waitKey``) can be scripted in tests; ``profile``
    (the calibration profile ``analyse`` reads with) is named in saved records; ``game``
    (a refereed game) hears of player keys and claims and draws its scoreboard.
    """
    window = _Window(source, controls, out_dir, sink, notify, on_result, wait_key, profile, game)
    cv2.namedWindow(WINDOW, cv2.WINDOW_NORMAL | cv2.WINDOW_KEEPRATIO | cv2.WINDOW_GUI_NORMAL)
    cv2.setMouseCallback(WINDOW, window.mouse)
    try:
        return window.run(analyse, max_frames)
    finally:
        cv2.destroyWindow(WINDOW)
        cv2.waitKey(1)


@dataclass
class _Window:
    """One window session: what is shown, and what the player did."""

    source: FrameSource
    controls: Controls
    out_dir: str
    sink: VideoSink | None
    notify: Callable[[str], None]
    on_result: Callable[[Frame, LiveLayout], None] | None
    wait_key: Callable[[int], int]
    profile: str | None = None
    game: GameHooks | None = None
    clicks: list[tuple[int, int]] = field(default_factory=list)

    def mouse(self, event: int, x: int, y: int, *_) -> None:
        if event == cv2.EVENT_LBUTTONDOWN:
            self.clicks.append((x, y))

    def run(self, analyse: Analyse, max_frames: int | None) -> int:
        source, controls = self.source, self.controls
        shown: tuple[Frame, LiveLayout | None] | None = None
        frame: Frame | None = None
        sized, reported = False, -1
        started = next_due = time.monotonic()
        with AnalysisWorker(analyse) as worker:
            while True:
                paused = controls.frozen and not source.live and frame is not None
                if not paused:  # a camera keeps delivering while frozen: read and drop
                    frame = source.read()
                    if frame is None or (max_frames is not None and frame.index >= max_frames):
                        break
                    if not controls.frozen:
                        worker.submit(frame)
                latest = worker.latest()
                if latest is not None and self.on_result and latest[0].index != reported:
                    reported = latest[0].index
                    self.on_result(*latest)
                if not controls.frozen or shown is None:
                    shown = (frame, latest[1] if latest else None)
                for x, y in self.clicks:
                    if shown[1] is not None:
                        controls.click(shown[1], x, y)
                self.clicks.clear()
                if self.game is not None and shown[1] is not None:
                    hand_claim(controls, shown[1], self.game)
                rate = worker.analysed / max(time.monotonic() - started, 1e-6)
                overlay, clear = None, ()
                if self.game is not None:
                    overlay = self.game.overlay
                    clear = (self.game.overlay_box(shown[0].image.shape),)
                status = f"{rate:4.1f} analysed/s"
                canvas = draw(shown[0], shown[1], controls, status, overlay, clear)
                picture = canvas[: shown[0].image.shape[0]]
                if self.sink is not None and not controls.frozen:
                    self.sink.write(picture)
                if not sized:
                    _fit_window(canvas)
                    sized = True
                cv2.imshow(WINDOW, canvas)
                now = time.monotonic()
                next_due = now if paused or now > next_due + 0.5 else next_due + 1 / source.fps
                wait = 1 if source.live else max(1, round((next_due - now) * 1000))
                action = controls.key(self.wait_key(wait))
                if action == "quit" or _closed():
                    break
                if action == "save" and shown[1] is not None:
                    self._save(shown[0], shown[1], picture)
                if action == "player" and self.game is not None:
                    self.game.arm(shown[0].t, controls.player)
            return worker.analysed

    def _save(self, frame: Frame, result: LiveLayout, picture: np.ndarray) -> None:
        record = live_record(result, self.source.name, self.controls.reveal, self.profile)
        stem = f"setvision-live-{frame.index:06d}"
        saved = save_snapshot(self.out_dir, stem, picture, record)
        self.notify(f"saved {saved[0]} and {saved[1]}")


class GameHooks(Protocol):
    """What the window asks of a refereed game: ``claim`` returns the referee's events."""

    def arm(self, t: float, number: int) -> None: ...

    def claim(self, t: float, number: int, cards: list[Card]) -> Sequence[object]: ...

    def overlay(self, image: np.ndarray) -> np.ndarray: ...

    def overlay_box(self, shape: tuple[int, ...]) -> tuple[int, int, int, int]: ...


def hand_claim(controls: Controls, result: LiveLayout, game: GameHooks) -> None:
    """Hand a player's three picked cards (``Controls.claimed``) to the referee, by identity,
    and show its verdict on the claim line: the referee, not the bare check, decides (a
    player sitting out is refused even a valid set)."""
    if controls.claimed is None:
        return
    number, track_ids = controls.claimed
    controls.claimed = None
    by_track = dict(zip(result.track_ids, result.layout.cards))
    cards = [by_track[t].card for t in track_ids if t in by_track]
    if len(cards) != 3:
        return
    verdict = next(
        (e for e in game.claim(result.t, number, cards) if getattr(e, "kind", "") == "verdict"),
        None,
    )
    if verdict is None:  # a key beyond the players, or the round is over
        controls.claim = f"key {number}: not refereed (no such player, or the round is over)"
        controls.claim_valid = False
    elif verdict.outcome == "valid":
        controls.claim, controls.claim_valid = f"{verdict.player}: {verdict.reason}", True
    else:
        text = f"{verdict.player}: {verdict.outcome} claim, {verdict.reason}"
        controls.claim, controls.claim_valid = text, False


def _fit_window(canvas: np.ndarray) -> None:
    """Show the picture as large as fits ``MAX_WINDOW`` (small phone videos are enlarged)."""
    height, width = canvas.shape[:2]
    factor = min(2.0, MAX_WINDOW[0] / width, MAX_WINDOW[1] / height)
    cv2.resizeWindow(WINDOW, round(width * factor), round(height * factor))


def _closed() -> bool:
    """The player closed the window with its title-bar button."""
    try:
        return cv2.getWindowProperty(WINDOW, cv2.WND_PROP_VISIBLE) < 1
    except cv2.error:
        return True
