"""Probe, not shipped: a small convolutional net that marks where cards lie.

The recipe behind README "A small net to find cards (probe of 3 December, afternoon)". It needs
PyTorch and onnx, which setvision itself does not (`pip install torch==2.13.0 onnx`; on this
machine the CPU build is on disk). Run from the checkout, `../shared` beside it:

    python tools/net_finder_probe.py data                  # photos at 512 px and their outlines
    python tools/net_finder_probe.py train A                # 15 min on every photo outside A
    python tools/net_finder_probe.py train A --resume --minutes 40 --rate 2e-3 --seed 1
    python tools/net_finder_probe.py train B                # the same for half B
    python tools/net_finder_probe.py train B --resume --minutes 40 --rate 2e-3 --seed 1
    python tools/net_finder_probe.py score                  # each photo by the net without it
    python tools/net_finder_probe.py gate                   # beside the shipped finder, held out

The net sees the photo at a long side of 384 pixels and gives two maps at half that size: each
card's interior (the card shrunk about its centre by `SHRINK`) and the whole card. Interiors
stay apart where cards touch, so each interior blob is one card; its card is the card-map
pixels it wins (watershed). The two halves split the new source by capture session and the
older sources by source, so no photo is judged by a net that saw its session or source.
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

#: The interior target: each card shrunk about its centre by this factor.
SHRINK = 0.5
#: The maps' pixel, in input pixels.
STRIDE = 2
#: Photos are kept at this long side; training crops are cut from them at 0.3 to 1 times it.
DATA_LONG_SIDE = 512
#: The net's input long side (pixels).
INPUT_LONG_SIDE = 384
#: Training crops (pixels, square) and crops per step.
CROP = 256
BATCH = 16
#: An interior blob smaller than this (map pixels) is no card.
MIN_BLOB = 4
#: Half A of the split: these capture sessions of the new source and these older sources.
HALF_A = {
    "2025-06-08 18:34", "2025-06-15 13:04", "2025-06-09 20:12", "2025-06-15 17:03",
    "Webrewthebestbeer1/set-solver", "dbieber/setfinder", "tomwhite/set-game",
    "antingshen/Set-Solver", "jtclark2/card_shark", "olicht/set-solver",
}  # fmt: skip
NEW_SOURCE = "TheBananaBender/Set_vision_player"
WORK = Path("/tmp/net_finder_probe")


def in_half_a(row: dict) -> bool:
    return row["group"] in HALF_A or row["source"] in HALF_A


def _conv(into: int, out: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(into, out, 3, stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(out),
        nn.ReLU(inplace=True),
    )


def _conv1(into: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(into, out, 1, bias=False), nn.BatchNorm2d(out), nn.ReLU(True))


class CardMaps(nn.Module):
    """Thin at the output's resolution, wide at 1/8 and 1/16 where a whole card is in view."""

    def __init__(self, width: int = 16):
        super().__init__()
        w = width
        self.by2 = _conv(3, 12, 2)
        self.by4 = nn.Sequential(_conv(12, 2 * w, 2), _conv(2 * w, 2 * w))
        self.by8 = nn.Sequential(
            _conv(2 * w, 3 * w, 2), _conv(3 * w, 3 * w, dilation=2), _conv(3 * w, 3 * w, dilation=4)
        )
        self.by16 = nn.Sequential(
            _conv(3 * w, 3 * w, 2), _conv(3 * w, 3 * w, dilation=2), _conv1(3 * w, 2 * w)
        )
        self.up8 = _conv(5 * w, 2 * w)
        self.up4 = _conv(4 * w, w)
        self.up2 = _conv1(12 + w, 12)
        self.head = nn.Conv2d(12, 2, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.by2(x)
        b = self.by4(a)
        c = self.by8(b)
        d = self.by16(c)
        c = self.up8(torch.cat([c, _resized(d, c)], 1))
        b = self.up4(torch.cat([b, _resized(c, b)], 1))
        return self.head(self.up2(torch.cat([a, _resized(b, a)], 1)))


def _resized(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return F.interpolate(x, size=like.shape[2:], mode="bilinear", align_corners=False)


def normalise(image: np.ndarray) -> np.ndarray:
    """Each channel less its mean, over the image's spread: the same under any light level."""
    x = image.astype(np.float32)
    x -= x.reshape(-1, 3).mean(0)
    return x / (x.std() + 8.0)


def build_data(data_dir: Path) -> list[dict]:
    """Every photo the learned finder trains on, at ``DATA_LONG_SIDE``, with its outlines (the
    previous finder's outlines on the labelled centres where only centres are labelled)."""
    from setvision.vision.image import load, resize_long_side
    from setvision.vision.learn.find_training import _centre_outlines, finder_truths

    def placed(points, scale: float) -> list:
        return [np.asarray(p, np.float64) * scale for p in points]

    rows = []
    for truth in finder_truths(data_dir):
        photo = load(truth.path)
        small, factor = resize_long_side(photo.image, DATA_LONG_SIDE)
        to_small = factor / photo.scale
        polygons, unknown = placed(truth.polygons, to_small), placed(truth.ignore_centres, to_small)
        if truth.centres:  # the previous finder's outlines, on the full photo as in training
            to_photo = 1 / photo.scale
            in_photo = replace(
                truth,
                centres=placed(truth.centres, to_photo),
                ignore_centres=placed(truth.ignore_centres, to_photo),
            )
            found, missed = _centre_outlines(in_photo, photo.image)
            polygons, unknown = placed(found, factor), placed(missed, factor)
        rows.append({
            "file": truth.file, "source": truth.source, "group": truth.group, "truth": truth,
            "to_labels": 1 / to_small, "image": small, "polygons": polygons,
            "ignore": placed(truth.ignore_polygons, to_small),
            "unknown": [tuple(c) for c in unknown],
        })  # fmt: skip
    return rows


def _targets(size: int, row: dict, scale: float, shift: np.ndarray):
    """Interior, card and weight maps (weight 0: teaches nothing) of a crop."""
    cells = size // STRIDE
    inner, card = np.zeros((cells, cells), np.uint8), np.zeros((cells, cells), np.uint8)
    weight = np.ones((cells, cells), np.uint8)

    def placed(polygon) -> np.ndarray:
        return (np.asarray(polygon, np.float64) * scale + shift) / STRIDE

    def fill(mask: np.ndarray, polygon: np.ndarray, value: int) -> None:
        cv2.fillPoly(mask, [np.round(polygon * 4).astype(np.int32)], value, shift=2)

    sides = []
    for polygon in row["polygons"]:
        q = placed(polygon)
        centre = q.mean(0)
        fill(card, q, 1)
        fill(inner, (q - centre) * SHRINK + centre, 1)
        sides.append(math.sqrt(max(cv2.contourArea(q.astype(np.float32)), 1.0)))
    for polygon in row["ignore"]:
        fill(weight, placed(polygon), 0)
    radius = int((np.median(sides) if sides else 20.0) * 0.6)
    for x, y in row["unknown"]:
        cx, cy = (np.array([x, y]) * scale + shift) / STRIDE
        cv2.circle(weight, (int(cx), int(cy)), radius, 0, -1)
    return inner, card, weight


def _crop(row: dict, rng: np.random.Generator):
    """One training crop: a random size (a third of the time down to 0.3: distant cards), place,
    white balance, exposure, contrast, a hard shadow, blur, noise, quarter turn and mirror."""
    image = row["image"]
    height, width = image.shape[:2]
    scale = rng.uniform(0.3, 1.0) if rng.random() < 0.3 else rng.uniform(0.6, 1.0)
    scale *= DATA_LONG_SIDE / max(height, width)
    h, w = height * scale, width * scale
    ox = rng.uniform(min(0, w - CROP), max(0, w - CROP))
    oy = rng.uniform(min(0, h - CROP), max(0, h - CROP))
    matrix = np.array([[scale, 0, -ox], [0, scale, -oy]])
    crop = cv2.warpAffine(image, matrix, (CROP, CROP), flags=cv2.INTER_AREA,
                          borderMode=cv2.BORDER_REFLECT101)  # fmt: skip
    inner, card, weight = _targets(CROP, row, scale, np.array([-ox, -oy]))
    inside = np.zeros((CROP, CROP), np.uint8)  # mirrored cards beyond the photo teach nothing
    inside[int(max(0, -oy)) : int(min(CROP, h - oy)), int(max(0, -ox)) : int(min(CROP, w - ox))] = 1
    weight = weight * inside[::STRIDE, ::STRIDE]
    x = crop.astype(np.float32) * rng.uniform(0.75, 1.25, 3)
    x = 255 * (np.clip(x, 0, 255) / 255) ** rng.uniform(0.7, 1.4) * rng.uniform(0.6, 1.2)
    if rng.random() < 0.3:
        angle = rng.uniform(0, math.pi)
        nx, ny = math.cos(angle), math.sin(angle)
        yy, xx = np.mgrid[0:CROP, 0:CROP]
        x[(xx * nx + yy * ny) > rng.uniform(0.2, 0.8) * CROP * (abs(nx) + abs(ny))] *= rng.uniform(
            0.35, 0.7
        )
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.5, 1.5))
    x = np.clip(x + rng.normal(0, rng.uniform(0, 6), x.shape), 0, 255)
    turns, mirror = int(rng.integers(4)), rng.random() < 0.5

    def moved(m: np.ndarray) -> np.ndarray:
        m = np.rot90(m, turns)
        return np.ascontiguousarray(m[:, ::-1] if mirror else m)

    x, inner, card, weight = moved(x), moved(inner), moved(card), moved(weight)
    return normalise(x).transpose(2, 0, 1).copy(), np.stack([inner, card]), weight


def train(
    rows: list[dict],
    minutes: float,
    seed: int = 0,
    rate: float = 3e-3,
    start_from: CardMaps | None = None,
    log=print,
) -> CardMaps:
    """Fit for ``minutes`` (AdamW, its rate decayed from ``rate`` along a half cosine); the new
    source's photos drawn a third as often as the older sources' (many photos of few tables)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = start_from or CardMaps()
    net.train()
    optimiser = torch.optim.AdamW(net.parameters(), rate, weight_decay=1e-4)
    odds = np.array([0.5 if r["source"] == NEW_SOURCE else 1.5 for r in rows])
    odds /= odds.sum()
    start, steps, losses = time.time(), 0, []
    while (elapsed := time.time() - start) < minutes * 60:
        for group in optimiser.param_groups:
            group["lr"] = rate * 0.5 * (1 + math.cos(math.pi * elapsed / (minutes * 60)))
        crops = [_crop(rows[i], rng) for i in rng.choice(len(rows), BATCH, p=odds)]
        x, y, w = (torch.from_numpy(np.stack(c).astype(np.float32)) for c in zip(*crops))
        loss = F.binary_cross_entropy_with_logits(net(x), y, reduction="none") * w[:, None]
        loss = loss.sum() / (2 * w.sum() + 1)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        steps += 1
        losses.append(loss.item())
        if steps % 100 == 0:
            log(f"step {steps}, {elapsed:.0f} s, loss {np.mean(losses[-100:]):.4f}")
    return net.eval()


def card_maps(net: CardMaps, image: np.ndarray) -> tuple[np.ndarray, float]:
    """The interior and card probabilities of ``image`` and the factor it was shrunk by."""
    height, width = image.shape[:2]
    factor = INPUT_LONG_SIDE / max(height, width)
    small = cv2.resize(image, (round(width * factor), round(height * factor)),
                       interpolation=cv2.INTER_AREA)  # fmt: skip
    with torch.no_grad():
        x = torch.from_numpy(normalise(small).transpose(2, 0, 1)[None].copy())
        return torch.sigmoid(net(x))[0].numpy(), factor


def cards_from_maps(maps: np.ndarray, factor: float, interior: float = 0.5) -> list[np.ndarray]:
    """One quad per interior blob: the rectangle around the card-map pixels it wins."""
    blobs = (maps[0] > interior).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(blobs, connectivity=8)
    if count < 2:
        return []
    card = maps[1] > 0.5
    markers = labels.astype(np.int32)
    markers[~card] = count  # the table: grown into by no card
    markers[card & (labels == 0)] = 0
    cv2.watershed(cv2.cvtColor((255 - maps[1] * 255).astype(np.uint8), cv2.COLOR_GRAY2BGR), markers)
    quads = []
    for k in range(1, count):
        if stats[k, cv2.CC_STAT_AREA] < MIN_BLOB:
            continue
        contours, _ = cv2.findContours((markers == k).astype(np.uint8), cv2.RETR_EXTERNAL,
                                       cv2.CHAIN_APPROX_NONE)  # fmt: skip
        if not contours:
            continue
        points = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float32)
        centre, (w, h), angle = cv2.minAreaRect(points)
        box = cv2.boxPoints((centre, (w + 1, h + 1), angle))
        quads.append((box * STRIDE + (STRIDE - 1) / 2) / factor)
    return quads


def _counts(truth, quads: list[np.ndarray], sent: bool) -> tuple[int, int, int, int, bool]:
    from setvision.vision.learn.find_eval import score_found

    found, false = score_found(truth, quads)
    return truth.labelled, found, false, len(quads), sent


def _print_counts(name: str, rows: list[dict], counts: list[tuple]) -> None:
    parts = []
    for part in ("the new source", "older sources", "all"):
        mine = [
            c
            for r, c in zip(rows, counts)
            if part == "all" or (r["source"] == NEW_SOURCE) == (part == "the new source")
        ]
        if not mine:
            continue
        labelled, found, false, taken = (sum(c[i] for c in mine) for i in range(4))
        complete = np.mean([c[0] == c[1] and c[2] == 0 for c in mine])
        parts.append(f"{part} {found / labelled:.4f} {(taken - false) / max(taken, 1):.4f} "
                     f"{complete:.3f} (missed {labelled - found}, false {false})")  # fmt: skip
    sent = np.mean([c[4] for c in counts])
    print(f"{name}: " + "; ".join(parts) + f"; sent {sent:.1%}")


def _quads(row: dict, maps: tuple[np.ndarray, float], interior: float) -> list[np.ndarray]:
    """The net's cards on ``row``'s photo, in the labels' pixels."""
    return [q * row["to_labels"] for q in cards_from_maps(*maps, interior)]


def score(rows: list[dict], nets: dict[str, CardMaps]) -> None:
    """Each photo judged by the net fitted on the other half; the new source also by the net
    fitted without any of it (``net_new.pt``), where that has been trained."""
    _score_alone("the net alone", rows, lambda row: nets[_half(row)])
    if "new" in nets:
        new = [r for r in rows if r["source"] == NEW_SOURCE]
        _score_alone("the new source unseen", new, lambda row: nets["new"])


def _score_alone(title: str, rows: list[dict], net_for) -> None:
    maps = [card_maps(net_for(r), r["image"]) for r in rows]
    for interior in (0.5, 0.7, 0.85):
        counts = [_counts(r["truth"], _quads(r, m, interior), False) for r, m in zip(rows, maps)]
        _print_counts(f"{title}, interior >= {interior}", rows, counts)


def _half(row: dict) -> str:
    return "A" if in_half_a(row) else "B"


def gate(rows: list[dict], nets: dict[str, CardMaps], data_dir: Path) -> None:
    """The shipped finder held out (each source, each session of the new source, left out of
    its forests), against: the previous finder asked only where the net sees a card that the
    fast makers' cards leave unexplained; and the fast makers' cards with the net's added.
    Then the same for the new source judged by forests and a net fitted without any of it."""
    from setvision.vision.learn import find_training as ft

    truths = ft.finder_truths(data_dir)
    samples = ft.all_samples(truths, 2)
    folds = ft.source_folds(samples, ft.NEW_SOURCE)
    first = ft.held_out_first_looks(samples, folds)
    held = ft.held_out_second_looks(samples, folds, first)
    judged = ft.judge_held_out(truths, held, ft._levels())
    levels, _ = ft.choose_recheck(judged, ft._levels())
    _compare(rows, judged, levels, lambda row: nets[_half(row)], "")
    if "new" in nets:
        unseen = ft._without_source(samples, ft.NEW_SOURCE, None)
        new = [r for r in rows if r["source"] == NEW_SOURCE]
        judged = ft.judge_held_out(truths, unseen, levels)
        _compare(new, judged, levels, lambda row: nets["new"], "the new source unseen: ")


def _compare(rows: list[dict], judged: list, levels, net_for, title: str) -> None:
    from setvision.vision.geometry import convex_iou

    by_file = {j.fast_outlines.file: j for j in judged}
    shipped = [by_file[r["file"]] for r in rows]
    maps = [card_maps(net_for(r), r["image"]) for r in rows]
    _print_counts(f"{title}shipped", rows, [
        _counts(r["truth"], list(j.outlines(levels).quads), j.sent(levels))
        for r, j in zip(rows, shipped)
    ])  # fmt: skip
    _print_counts(f"{title}fast makers alone", rows, [
        _counts(r["truth"], list(j.fast_outlines.quads), False) for r, j in zip(rows, shipped)
    ])  # fmt: skip
    for interior in (0.5, 0.7, 0.85):
        asked, added = [], []
        for row, j, m in zip(rows, shipped, maps):
            net = _quads(row, m, interior)
            fast = list(j.fast_outlines.quads)
            extra = [q for q in net if max((convex_iou(q, f) for f in fast), default=0) < 0.2]
            chosen = j.both_outlines if extra else j.fast_outlines
            asked.append(_counts(row["truth"], list(chosen.quads), bool(extra)))
            added.append(_counts(row["truth"], fast + extra, False))
        _print_counts(f"{title}previous finder only where the net (>= {interior}) sees more",
                      rows, asked)  # fmt: skip
        _print_counts(f"{title}fast makers' cards and the net's (>= {interior})", rows, added)


def _load(half: str) -> CardMaps:
    net = CardMaps()
    net.load_state_dict(torch.load(WORK / f"net_{half}.pt"))
    return net.eval()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["data", "train", "score", "gate"])
    parser.add_argument(
        "half", nargs="?", choices=["A", "B", "new"], help="train: the half (or source) held out"
    )
    parser.add_argument("--minutes", type=float, default=15.0)
    parser.add_argument("--rate", type=float, default=3e-3, help="train: the starting rate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resume", action="store_true", help="train: go on from the half's net")
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    WORK.mkdir(exist_ok=True)
    if args.step == "data":
        (WORK / "data.pkl").write_bytes(pickle.dumps(build_data(args.data)))
        return 0
    rows = pickle.loads((WORK / "data.pkl").read_bytes())
    if args.step == "train":
        if args.half is None:
            parser.error("train: name what to hold out: A, B or new (the new source)")
        if args.half == "new":
            training = [r for r in rows if r["source"] != NEW_SOURCE]
        else:
            training = [r for r in rows if in_half_a(r) != (args.half == "A")]
        start_from = _load(args.half) if args.resume else None
        net = train(training, args.minutes, args.seed, args.rate, start_from,
                    log=lambda line: print(line, flush=True))  # fmt: skip
        torch.save(net.state_dict(), WORK / f"net_{args.half}.pt")
        return 0
    nets = {h: _load(h) for h in ("A", "B", "new") if (WORK / f"net_{h}.pt").is_file()}
    if args.step == "gate":
        gate(rows, nets, args.data)
    else:
        score(rows, nets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
