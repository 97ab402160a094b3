"""The card net's cards on every labelled photo, each by a net fitted without that photo.

The finder's decision to ask its slow previous maker depends on the net, so the levels behind
that decision are learned from held-out net cards, like every other finder figure. Training a
net takes an hour of CPU, so two held-out nets are kept (``vision/models/held_out/``), each
fitted without one half of the photos: ``HALF_A`` holds some capture sessions of the new source
and some older sources, half B the rest. A third, ``new``, is fitted without the new source at
all, for its unseen figure. The recipe is ``tools/train_card_net.py``.
"""

from __future__ import annotations

import hashlib
import inspect
import pickle
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from setvision.vision.find import card_net
from setvision.vision.find.card_net import (
    CardPaper,
    card_maps,
    card_paper,
    load_card_net,
    net_cards,
    net_path,
)
from setvision.vision.image import load, resize_long_side
from setvision.vision.learn.find_eval import FindTruth
from setvision.vision.learn.training import _parallel, cache_dir

#: Half A of the held-out nets' split: these capture sessions of the new source (its ``group``)
#: and these older sources. Chosen once so that both halves hold varied tables.
HALF_A = frozenset({
    "2025-06-08 18:34", "2025-06-15 13:04", "2025-06-09 20:12", "2025-06-15 17:03",
    "Webrewthebestbeer1/set-solver", "dbieber/setfinder", "tomwhite/set-game",
    "antingshen/Set-Solver", "jtclark2/card_shark", "olicht/set-solver",
})  # fmt: skip
#: The net fitted without any photo of the new source.
UNSEEN = "new"

#: One photo's net cards: for each interior level tried, the quads (work pixels).
NetCards = dict[float, list[np.ndarray]]


def half_of(source: str, group: str) -> str:
    """The held-out net that judges a photo of ``source`` and capture session ``group``."""
    return "A" if group in HALF_A or source in HALF_A else "B"


def _cache_key(files: list[str], nets: list[str], work_long_side: int, levels) -> str:
    """Changes with which net judges which photo, the nets' files, the settings and the code."""
    digest = hashlib.sha1(repr((sorted(zip(files, nets)), work_long_side, levels)).encode())
    digest.update(inspect.getsource(card_net).encode())
    for name in sorted(set(nets)):
        digest.update(net_path(name).read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class HeldOutNet:
    """One photo (its work copy) as a held-out net sees it: its cards by interior level, and
    its card map (where the previous finder may look, ``finder.on_card_of``)."""

    cards: NetCards
    paper: CardPaper


def _one_photo(
    item: tuple[FindTruth, str, int, tuple[float, ...]],
) -> tuple[str, HeldOutNet | None]:
    truth, name, work_long_side, levels = item
    try:
        small, _ = resize_long_side(load(truth.path).image, work_long_side)
    except Exception:  # an unreadable photo is left out, as it is of the finder's training
        return truth.file, None
    maps = card_maps(small, load_card_net(name))
    cards = {level: net_cards(maps, level) for level in levels}
    return truth.file, HeldOutNet(cards, card_paper(maps))


def held_out_net_cards(
    truths: list[FindTruth],
    work_long_side: int,
    levels: tuple[float, ...],
    unseen_source: str | None = None,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict[str, HeldOutNet]:
    """Each photo's net cards and card map by the half net fitted without it
    (``unseen_source``'s photos, if named, by the net fitted without that source); cached on
    disk."""
    chosen = [UNSEEN if t.source == unseen_source else half_of(t.source, t.group) for t in truths]
    key = _cache_key([t.file for t in truths], chosen, work_long_side, levels)
    path = cache_dir() / f"finder-net-{key}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    cards = {}
    items = [(t, name, work_long_side, levels) for t, name in zip(truths, chosen)]
    for file, found in _parallel(_one_photo, items, jobs):
        if found is not None:
            cards[file] = found
        if progress:
            progress(file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(cards))
    return cards
