"""Labelled photos for training and measuring: boards.jsonl, our added labels and fixes.

Positions are brought into the pixel grid of the photo as loaded (EXIF orientation applied).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import numpy as np
from setvision.solver import Card
from setvision.solver.errors import SetvisionError
from setvision.vision.exif import orientation as exif_orientation
from setvision.vision.image import header_size, orient_points


@dataclass(frozen=True)
class LabelledCard:
    card: Card
    centre: tuple[float, float] | None = None
    corners: np.ndarray | None = None  # (4, 2) when the labels give them


@dataclass
class Board:
    """One labelled photo: its cards, the cards to ignore, and how the labels were made."""

    path: str
    file: str
    source: str
    kind: str  # "eye", "source" or "noisy"
    cards: list[LabelledCard]
    partial: list[tuple[float, float]] = field(default_factory=list)

    @property
    def has_positions(self) -> bool:
        return bool(self.cards) and all(c.centre is not None for c in self.cards)


def default_data_dir() -> Path:
    """``$SETVISION_DATA``, else ``../shared/data`` beside the working folder."""
    if os.environ.get("SETVISION_DATA"):
        return Path(os.environ["SETVISION_DATA"])
    candidate = Path.cwd().parent / "shared" / "data"
    if candidate.is_dir():
        return candidate
    raise SetvisionError(
        "cannot find the photo data: put shared/data beside the checkout or set SETVISION_DATA"
    )


#: Labels we added and corrections to published ones: data shipped with the package (a package
#: resource, wherever the package is installed).
LABELS_DIR = Path(str(files("setvision.vision.learn") / "labels"))


def sample_dir() -> Path:
    """The bundled sample photos (a package resource)."""
    return Path(str(files("setvision") / "sample_images"))


def _kind(text: str) -> str:
    text = text.lower()
    if text.startswith("noisy"):
        return "noisy"
    return "eye" if "checked by eye" in text else "source"


def _board(entry: dict, path: Path) -> Board:
    orientation, stored = 1, None
    cards = []
    needs_orientation = any("corners_xy" in c for c in entry["cards"])
    if needs_orientation and path.is_file():
        data = path.read_bytes()
        orientation, stored = exif_orientation(data), header_size(data)
    for c in entry["cards"]:
        card = Card(int(c["number"]), c["color"], c["shading"], c["shape"])
        centre, corners = None, None
        if "center" in c:
            centre = (float(c["center"][0]), float(c["center"][1]))
        elif "box_xyxy" in c:
            x0, y0, x1, y1 = c["box_xyxy"]
            centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        elif "corners_xy" in c:
            corners = np.asarray(c["corners_xy"], dtype=np.float64)
            if stored is not None:
                corners = orient_points(corners, orientation, stored)
            centre = tuple(corners.mean(axis=0))
        cards.append(LabelledCard(card, centre, corners))
    partial = [tuple(map(float, p["center"])) for p in entry.get("partial", []) if "center" in p]
    return Board(str(path), entry["file"], entry["source"], _kind(entry.get("labels", "")),
                 cards, partial)  # fmt: skip


def apply_fixes(entries: dict[str, dict], fixes: list[dict]) -> None:
    """Corrections kept as data (labels/label_fixes.json), applied in order.

    ``{"file", "card": i, "now": "2-red-open-oval"}`` changes card i's reading,
    ``{"file", "card": i, "remove": true}`` drops it, ``{"file", "add": {...}}`` adds a card,
    ``{"file", "board": {...}}`` replaces board fields (e.g. after every card was checked).
    """
    for fix in fixes:
        entry = entries.get(fix["file"])
        if entry is None:
            continue
        if "board" in fix:
            entries[fix["file"]] = {**entry, **fix["board"]}
            continue
        if "add" in fix:
            entry["cards"].append(fix["add"])
            continue
        index = fix["card"]
        if fix.get("remove"):
            entry["cards"][index] = None
            continue
        number, color, shading, shape = fix["now"].split("-")
        entry["cards"][index] = {**entry["cards"][index], "number": int(number), "color": color,
                                 "shading": shading, "shape": shape}  # fmt: skip
    for entry in entries.values():
        entry["cards"] = [c for c in entry["cards"] if c is not None]


def load_boards(
    label_files: list[Path] | None = None,
    data_dir: Path | None = None,
    fixes_file: Path | None = None,
    include_samples: bool = True,
) -> list[Board]:
    """Every labelled board; later files override earlier ones for the same photo."""
    data_dir = data_dir or default_data_dir()
    if label_files is None:
        label_files = [data_dir / "boards.jsonl", LABELS_DIR / "labels_added.jsonl"]
    fixes_file = fixes_file if fixes_file is not None else LABELS_DIR / "label_fixes.json"
    entries: dict[str, dict] = {}
    for label_file in label_files:
        if not Path(label_file).is_file():
            raise SetvisionError(f"{label_file}: no such label file")
        for number, line in enumerate(Path(label_file).read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                entries[entry["file"]] = entry
            except (json.JSONDecodeError, KeyError):
                raise SetvisionError(f"{label_file}:{number}: not a label line") from None
    if fixes_file.is_file():
        apply_fixes(entries, json.loads(fixes_file.read_text()))
    boards = [_board(e, data_dir / e["file"]) for e in entries.values()]
    if include_samples:
        samples = sample_dir()
        for label in sorted(samples.glob("*.json")):
            entry = json.loads(label.read_text())
            if entry.get("original") in entries:
                continue  # a copy of a photo that is measured already
            image = label.with_suffix(".jpg")
            entry["file"] = f"sample_images/{image.name}"
            board = _board(entry, image)
            board.source = f"{entry['source']} (sample)"
            boards.append(board)
    return boards
