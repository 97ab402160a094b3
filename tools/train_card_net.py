"""The card net's training recipe: a small convolutional net that marks where cards lie.

setvision asks its slow previous finder only where this net sees a card the fast makers missed
(``vision/find/card_net.py``). The tool needs PyTorch and onnx, which setvision itself does not
(`pip install torch==2.13.0 onnx`). Run from the checkout, `../shared` beside it:

    python tools/train_card_net.py data                  # photos at 512 px and their outlines
    python tools/train_card_net.py train A                # 15 min on every photo outside A
    python tools/train_card_net.py train A --resume --minutes 40 --rate 2e-3 --seed 1
    python tools/train_card_net.py train B                # the same for half B
    python tools/train_card_net.py train B --resume --minutes 40 --rate 2e-3 --seed 1
    python tools/train_card_net.py train new              # without the new source (15 + 25 min)
    python tools/train_card_net.py train all              # the shipped net: every photo
    python tools/train_card_net.py train all --resume --minutes 40 --rate 2e-3 --seed 1
    python tools/train_card_net.py score                  # each photo by the net without it
    python tools/train_card_net.py export A               # ... B, new, all: ONNX into the package

The net sees the photo at a long side of 384 pixels and gives two maps at half that size: each
card's interior (the card shrunk about its centre by `SHRINK`) and the whole card. The halves
(``vision.learn.net_held_out.HALF_A``) split the new source by capture session and the older
sources by source, so no photo is judged by a net that saw its session or source; after
`export`, `setvision train-finder` learns from those held-out nets when to ask the previous
finder.
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
from setvision.vision.find.card_net import (
    INPUT_LONG_SIDE,
    STRIDE,
    CardMaps,
    net_cards,
    net_input,
    normalise,
)
from setvision.vision.learn.find_training import NEW_SOURCE, new_or_older
from setvision.vision.learn.net_held_out import UNSEEN, half_of

#: The interior target: each card shrunk about its centre by this factor.
SHRINK = 0.5
#: Photos are kept at this long side; training crops are cut from them at 0.3 to 1 times it.
DATA_LONG_SIDE = 512
#: Training crops (pixels, square) and crops per step.
CROP = 256
BATCH = 16
WORK = Path("/tmp/net_finder_probe")


def _conv(into: int, out: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(into, out, 3, stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(out),
        nn.ReLU(inplace=True),
    )


def _conv1(into: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(into, out, 1, bias=False), nn.BatchNorm2d(out), nn.ReLU(True))


class CardNet(nn.Module):
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
    start_from: CardNet | None = None,
    log=print,
) -> CardNet:
    """Fit for ``minutes`` (AdamW, its rate decayed from ``rate`` along a half cosine); the new
    source's photos drawn a third as often as the older sources' (many photos of few tables)."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = start_from or CardNet()
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


def card_maps(net: CardNet, image: np.ndarray) -> CardMaps:
    """The interior and card probabilities of ``image`` and the factor it was shrunk by."""
    blob, factor = net_input(image)
    with torch.no_grad():
        return CardMaps(torch.sigmoid(net(torch.from_numpy(blob)))[0].numpy(), factor)


def _result(row: dict, quads: list[np.ndarray]):
    """One photo's net cards scored against its labels."""
    from setvision.vision.learn.find_eval import FindResult, score_found

    truth = row["truth"]
    found, false = score_found(truth, quads)
    return FindResult(truth.file, row["source"], row["group"], truth.labelled, found, len(quads),
                      false, 0)  # fmt: skip


def _quads(row: dict, maps: CardMaps, interior: float) -> list[np.ndarray]:
    """The net's cards on ``row``'s photo, in the labels' pixels."""
    return [q * row["to_labels"] for q in net_cards(maps, interior)]


def score(rows: list[dict], nets: dict[str, CardNet]) -> None:
    """Each photo judged by the net fitted on the other half; the new source also by the net
    fitted without any of it (``net_new.pt``), where that has been trained."""
    _score_alone("the net alone", rows, lambda row: nets[half_of(row["source"], row["group"])])
    if UNSEEN in nets:
        new = [r for r in rows if r["source"] == NEW_SOURCE]
        _score_alone("the new source unseen", new, lambda row: nets[UNSEEN])


def _score_alone(title: str, rows: list[dict], net_for) -> None:
    from setvision.vision.learn.find_eval import format_find_table, summarise_finding

    maps = [card_maps(net_for(r), r["image"]) for r in rows]
    for interior in (0.5, 0.7, 0.85):
        results = [_result(r, _quads(r, m, interior)) for r, m in zip(rows, maps)]
        print(f"{title}, interior >= {interior} (sources pooled as the new one or older ones)")
        print(format_find_table(summarise_finding(new_or_older(results))))


def export(net: CardNet, half: str) -> Path:
    """The net as ONNX for OpenCV's ``dnn``, where setvision looks for it: the shipped net
    (``all``) or a held-out one (for ``setvision eval --find``), any input size."""
    from setvision.vision.find.card_net import net_path

    path = net_path(None if half == "all" else half)
    example = torch.zeros(1, 3, 216, INPUT_LONG_SIDE)
    torch.onnx.export(net, (example,), str(path), input_names=["image"], output_names=["maps"],
                      dynamic_axes={"image": {2: "height", 3: "width"}}, opset_version=17,
                      dynamo=False)  # fmt: skip
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
    return path


def _load(half: str) -> CardNet:
    net = CardNet()
    net.load_state_dict(torch.load(WORK / f"net_{half}.pt"))
    return net.eval()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["data", "train", "score", "export"])
    parser.add_argument(
        "half",
        nargs="?",
        choices=["A", "B", UNSEEN, "all"],
        help="train: the half (or source) held out; all: hold nothing out (the shipped net)",
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
            parser.error("train: name what to hold out: A, B, new (the new source) or all")
        if args.half == "all":
            training = rows
        elif args.half == UNSEEN:
            training = [r for r in rows if r["source"] != NEW_SOURCE]
        else:
            training = [r for r in rows if half_of(r["source"], r["group"]) != args.half]
        start_from = _load(args.half) if args.resume else None
        net = train(training, args.minutes, args.seed, args.rate, start_from,
                    log=lambda line: print(line, flush=True))  # fmt: skip
        torch.save(net.state_dict(), WORK / f"net_{args.half}.pt")
        return 0
    if args.step == "export":
        if args.half is None:
            parser.error("export: name the net: A, B, new or all")
        export(_load(args.half), args.half)
        return 0
    nets = {h: _load(h) for h in ("A", "B", UNSEEN) if (WORK / f"net_{h}.pt").is_file()}
    score(rows, nets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
