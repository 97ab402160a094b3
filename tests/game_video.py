"""A video of a scripted game (``game_script``) made from real card crops on a table.

Each card is a crop from ``../shared/data/cards``, chosen by running the reader: crops of
one source are laid out as a board the way the video lays them, and a card's crop is one
that board read right and confidently; as at a real table one deck is used (the source whose
boards read most cards right), others only filling in. Frames are 800x528 at 10 frames/s, a
still camera over a grained wooden table: 3 rows of 7 places; a hand (a skin-coloured blot)
rests on cards for a moment before they are taken, leaving the table's own grain.
"""

from __future__ import annotations

import csv
from pathlib import Path

import cv2
import numpy as np
from game_script import SLOTS, Step
from setvision.solver import Card, find_sets, parse_card

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
CARD_W, CARD_H, GAP_X, GAP_Y = 96, 144, 16, 24
COLUMNS = 7
SIZE = (COLUMNS * (CARD_W + GAP_X) + GAP_X, 3 * (CARD_H + GAP_Y) + GAP_Y)  # (800, 528)
FPS = 10
SOURCES = ("antingshen/Set-Solver", "Webrewthebestbeer1/set-solver", "tomwhite/set-game")
#: A crop is used when its card is read right this surely on a board of its source: a margin
#: over the reader's own "confident", since beside other cards a reading moves a little.
CHOSEN_CONFIDENCE = 0.97
HOLD, QUIET, HAND = 5, 16, 2  # frames per table, per table that must be read as "no set", hand


def table_texture(seed: int = 0) -> np.ndarray:
    """A brown wooden table with a grain: (528, 800, 3) uint8 BGR."""
    rng = np.random.default_rng(seed)
    width, height = SIZE
    grain = cv2.GaussianBlur(
        rng.normal(0, 1, (height, width)).astype(np.float32), (0, 0), 9, sigmaY=1
    )
    grain = grain / max(float(np.abs(grain).max()), 1e-6)
    base = np.array([40, 55, 78], np.float32) + 18 * grain[..., None]
    return np.clip(base, 0, 255).astype(np.uint8)


def _crop(path: Path) -> np.ndarray:
    image = cv2.imread(str(path))
    if image.shape[1] > image.shape[0]:
        image = cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    return cv2.resize(image, (CARD_W, CARD_H), interpolation=cv2.INTER_AREA)


def _place(slot: int) -> tuple[int, int]:
    """Top-left corner (x, y) of a place on the table."""
    return GAP_X + (slot % COLUMNS) * (CARD_W + GAP_X), GAP_Y + (slot // COLUMNS) * (CARD_H + GAP_Y)


def compose(background: np.ndarray, slots, crops: dict) -> np.ndarray:
    """The table with each card's crop in its place (``slots``: a card or None per place)."""
    image = background.copy()
    for slot, card in enumerate(slots):
        if card is not None:
            x, y = _place(slot)
            image[y : y + CARD_H, x : x + CARD_W] = crops[card]
    return image


def choose_crops(reader) -> dict[Card, np.ndarray]:
    """A crop per card that live analysis reads right and confidently laid out as in the video
    (a board of one source held still for a few frames).

    As a real game is played with one deck, the crops come from one source (the one whose
    boards read most cards right); other sources fill in only cards it lacks. Crops of several
    sources mixed on one table read worse than on their own boards: the reader's per-photo
    calibration sees a table of two decks under two lights."""
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import Frame

    with open(DATA / "cards.csv") as handle:
        rows = list(csv.DictReader(handle))
    background = table_texture()
    by_source: dict[str, dict[Card, np.ndarray]] = {}
    for source in SOURCES:
        todo, chosen = {}, {}
        for row in rows:
            card = parse_card(f"{row['number']}-{row['color']}-{row['shading']}-{row['shape']}")
            if row["source"] == source and card not in todo:
                todo[card] = _crop(DATA / row["file"])
        cards = list(todo)
        for start in range(0, len(cards), SLOTS):
            batch = cards[start : start + SLOTS]
            # read as the video stores it: MJPG frames are JPEG pictures
            image = _as_stored(compose(background, batch, todo))
            centres = np.array([_place(i) for i in range(len(batch))]) + (CARD_W / 2, CARD_H / 2)
            analyser = LiveAnalyser(reader)
            for k in range(6):
                result = analyser.analyse(Frame(k, k / FPS, image))
            for reading in result.layout.cards:
                slot = int(np.argmin(np.linalg.norm(centres - reading.centre, axis=1)))
                if reading.card == batch[slot] and reading.confidence >= CHOSEN_CONFIDENCE:
                    chosen[batch[slot]] = todo[batch[slot]]
        by_source[source] = chosen
    crops: dict[Card, np.ndarray] = {}
    for chosen in sorted(by_source.values(), key=len, reverse=True):
        crops.update((card, crop) for card, crop in chosen.items() if card not in crops)
    return crops


def _as_stored(image: np.ndarray) -> np.ndarray:
    """The picture after JPEG coding, as an MJPG video holds it (OpenCV's default quality)."""
    return cv2.imdecode(cv2.imencode(".jpg", image)[1], cv2.IMREAD_COLOR)


def hand_over(image: np.ndarray, slots, cards) -> np.ndarray:
    """Fingers on the cards about to be taken: a skin-coloured blot on each."""
    picture = image.copy()
    for slot, card in enumerate(slots):
        if card in cards:
            x, y = _place(slot)
            centre = (x + CARD_W // 2, y + CARD_H // 2)
            cv2.ellipse(picture, centre, (CARD_W // 3, CARD_H // 3), 0, 0, 360, (120, 150, 205), -1)
    return picture


def write_game_video(path: Path, steps: list[Step], crops: dict) -> float:
    """Write the game; returns its length in seconds."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, SIZE)
    if not writer.isOpened():
        raise RuntimeError(f"cannot write {path}")
    background = table_texture()
    frames = 0
    slots: tuple = (None,) * SLOTS

    def hold(image: np.ndarray, count: int) -> None:
        nonlocal frames
        for _ in range(count):
            writer.write(image)
            frames += 1

    hold(background, HOLD)
    for step in steps:
        if step.action in ("take", "wrong"):
            hold(hand_over(compose(background, slots, crops), slots, step.cards), HAND)
        slots = step.slots
        table = [c for c in slots if c is not None]
        hold(compose(background, slots, crops), HOLD if find_sets(table) else QUIET)
    writer.release()
    return frames / FPS


def window_picture(video: Path, seconds: float, reader) -> np.ndarray:
    """The window as it shows the refereed game ``seconds`` into ``video`` (``window.draw``)."""
    from setvision.app.refereeing import GameOptions, make_game
    from setvision.vision.live.session import LiveAnalyser
    from setvision.vision.live.source import open_video
    from setvision.vision.live.window import Controls, draw

    game = make_game(GameOptions("Ann,Bob,Eve", "lose-set"))
    analyser = LiveAnalyser(reader)
    with open_video(str(video)) as source:
        for frame in source:
            result = analyser.analyse(frame)
            game.update(result)
            if frame.t >= seconds:
                break
    clear = (game.overlay_box(frame.image.shape),)
    return draw(frame, result, Controls(), "10.0 analysed/s", game.overlay, clear)


if __name__ == "__main__":  # python tests/game_video.py docs/game-night.png
    import sys
    import tempfile

    from game_script import scripted_game
    from setvision.calibration.profiles import reader_for

    reader = reader_for()
    with tempfile.TemporaryDirectory() as folder:
        clip = Path(folder) / "game.avi"
        write_game_video(clip, scripted_game(), choose_crops(reader))
        cv2.imwrite(sys.argv[1], window_picture(clip, 4.3, reader))
