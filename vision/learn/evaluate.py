"""Measure the reader on labelled photos: detection, attributes, whole cards, boards, sets.

Cards are paired with labels by position where the labels have one, else by identity. A
detection on a card labelled "partial" (cut off or covered) counts neither way.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
from setvision.solver import ATTRIBUTES, find_sets
from setvision.vision.geometry import contains_point
from setvision.vision.image import load
from setvision.vision.layout import Layout
from setvision.vision.learn.dataset import Board
from setvision.vision.learn.matching import match_by_identity, match_by_position


@dataclass
class BoardResult:
    file: str
    source: str
    labelled: int
    found: int
    detections: int
    false_detections: int
    attributes_right: dict[str, int]
    exact: int
    sets_right: bool
    verdict: str
    truth_has_set: bool
    uncertain_wrong: int = 0  # misread cards that the reader flagged as uncertain
    confident_wrong: int = 0  # misread cards that the reader was sure of
    seconds: float = 0.0
    error: str | None = None

    @property
    def board_right(self) -> bool:
        return (
            self.error is None
            and self.exact == self.labelled
            and self.false_detections == 0
            and self.found == self.labelled
        )

    @property
    def false_no_set(self) -> bool:
        return self.verdict == "no_set" and self.truth_has_set


def score_board(board: Board, layout: Layout) -> BoardResult:
    """Compare one layout with its labels."""
    truth = [c.card for c in board.cards]
    predicted = [r.card for r in layout.cards]
    quads = [r.corners_xy for r in layout.cards]
    if board.has_positions:
        pairs = match_by_position(quads, [c.centre for c in board.cards])
    else:
        pairs = match_by_identity(predicted, truth)
    matched = {j for _, j in pairs}
    on_partial = {
        j
        for j, quad in enumerate(quads)
        if j not in matched and any(contains_point(quad, p) for p in board.partial)
    }
    false = len(quads) - len(matched) - len(on_partial)
    right = {a: 0 for a in ATTRIBUTES}
    exact = uncertain_wrong = confident_wrong = 0
    for i, j in pairs:
        for attribute in ATTRIBUTES:
            right[attribute] += truth[i].value(attribute) == predicted[j].value(attribute)
        if truth[i] == predicted[j]:
            exact += 1
        elif layout.cards[j].confident:
            confident_wrong += 1
        else:
            uncertain_wrong += 1
    true_sets = {frozenset(truth[k] for k in s) for s in find_sets(truth)}
    kept = [j for j in range(len(predicted)) if j not in on_partial]
    read_sets = {
        frozenset(predicted[kept[k]] for k in s) for s in find_sets([predicted[j] for j in kept])
    }
    return BoardResult(
        board.file, board.source, len(truth), len(pairs), len(quads), false, right, exact,
        true_sets == read_sets, layout.verdict, bool(true_sets), uncertain_wrong, confident_wrong,
    )  # fmt: skip


def evaluate(
    boards: Iterable[Board], read: Callable[[object], Layout], progress=None
) -> list[BoardResult]:
    """Read every board with ``read(photo)`` and score it; unreadable photos are recorded."""
    import time

    results = []
    for board in boards:
        start = time.perf_counter()
        try:
            layout = read(load(board.path))
        except Exception as error:  # noqa: BLE001 - a failure is a result to report
            results.append(BoardResult(board.file, board.source, len(board.cards), 0, 0, 0,
                                       {a: 0 for a in ATTRIBUTES}, 0, False, "error",
                                       bool(find_sets([c.card for c in board.cards])),
                                       error=f"{type(error).__name__}: {error}"))  # fmt: skip
        else:
            result = score_board(board, layout)
            result.seconds = time.perf_counter() - start
            results.append(result)
        if progress:
            progress(board.file)
    return results


@dataclass
class Summary:
    boards: int = 0
    labelled: int = 0
    found: int = 0
    detections: int = 0
    false_detections: int = 0
    attributes_right: dict[str, int] = field(default_factory=lambda: {a: 0 for a in ATTRIBUTES})
    exact: int = 0
    boards_right: int = 0
    sets_right: int = 0
    false_no_set: int = 0
    no_set_truths: int = 0
    confident_wrong: int = 0
    errors: int = 0

    def add(self, r: BoardResult) -> None:
        self.boards += 1
        self.labelled += r.labelled
        self.found += r.found
        self.detections += r.detections
        self.false_detections += r.false_detections
        for a in ATTRIBUTES:
            self.attributes_right[a] += r.attributes_right[a]
        self.exact += r.exact
        self.boards_right += r.board_right
        self.sets_right += r.sets_right
        self.false_no_set += r.false_no_set
        self.no_set_truths += not r.truth_has_set
        self.confident_wrong += r.confident_wrong
        self.errors += r.error is not None

    def row(self) -> dict[str, float]:
        found = max(self.found, 1)
        return {
            "boards": self.boards,
            "cards": self.labelled,
            "recall": self.found / max(self.labelled, 1),
            "precision": (self.detections - self.false_detections) / max(self.detections, 1),
            **{a: self.attributes_right[a] / found for a in ATTRIBUTES},
            "card_exact": self.exact / max(self.labelled, 1),
            "board_exact": self.boards_right / max(self.boards, 1),
            "sets_exact": self.sets_right / max(self.boards, 1),
            "false_no_set": self.false_no_set,
            "sure_but_wrong": self.confident_wrong,
        }


def summarise(results: list[BoardResult]) -> dict[str, Summary]:
    """Per source, and overall under the key ``"all"``."""
    table: dict[str, Summary] = defaultdict(Summary)
    for r in results:
        table[r.source].add(r)
        table["all"].add(r)
    return dict(sorted(table.items(), key=lambda kv: (kv[0] == "all", kv[0])))


COLUMNS = ("boards", "cards", "recall", "precision", *ATTRIBUTES, "card_exact", "board_exact",
           "sets_exact", "false_no_set", "sure_but_wrong")  # fmt: skip


def format_table(table: dict[str, Summary]) -> str:
    """A fixed-width table, one row per source and a last row for all."""
    heads = ("source", *COLUMNS)
    widths = [max(36, max(len(s) for s in table))] + [max(6, len(h)) for h in COLUMNS]
    lines = [
        " ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(heads, widths)))
    ]
    for source, summary in table.items():
        row = summary.row()
        cells = [source.ljust(widths[0])]
        for name, width in zip(COLUMNS, widths[1:]):
            value = row[name]
            text = f"{value:.3f}" if isinstance(value, float) else str(value)
            cells.append(text.rjust(width))
        lines.append(" ".join(cells))
    return "\n".join(lines)


def format_seed_table(tables: dict[int, dict[str, Summary]]) -> str:
    """Board exact per source under each seed of the attribute forests (``summarise`` tables
    by seed), with its mean and range, and a last line of every seed's sets and card exact:
    how far the forests' draw alone moves the held-out figures."""
    seeds = sorted(tables)
    sources = list(next(iter(tables.values())))
    width = max(36, *(len(s) for s in sources))
    heads = [*(f"seed {s}" for s in seeds), "mean", "low", "high"]
    lines = ["board exact by seed of the attribute forests",
             " ".join(["source".ljust(width), *(h.rjust(7) for h in heads)])]  # fmt: skip
    for source in sources:
        values = [tables[s][source].row()["board_exact"] for s in seeds]
        cells = [*values, float(np.mean(values)), min(values), max(values)]
        lines.append(" ".join([source.ljust(width), *(f"{v:.3f}".rjust(7) for v in cells)]))
    for column in ("sets_exact", "card_exact", "false_no_set", "sure_but_wrong"):
        values = [tables[s]["all"].row()[column] for s in seeds]
        if column.endswith("exact"):
            shown = " ".join(f"{v:.4f}" for v in values) + f"; mean {np.mean(values):.4f}"
        else:
            shown = " ".join(str(v) for v in values)
        lines.append(f"all, {column.replace('_', ' ')} by seed: {shown}")
    return "\n".join(lines)
