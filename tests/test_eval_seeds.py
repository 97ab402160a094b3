"""`eval --loso --seeds N`: the held-out attribute forests drawn with each seed, and board exact
per source reported with its mean and range (one run's figure moves with the draw alone)."""

import numpy as np
from setvision.cli import main
from setvision.solver import STANDARD
from setvision.vision.learn.evaluate import Summary, format_seed_table
from setvision.vision.learn.training import Sample, fit_without_source
from setvision.vision.read.features import FEATURE_NAMES


def _summary(boards: int, right: int, sets: int, exact: int, cards: int) -> Summary:
    return Summary(boards=boards, labelled=cards, found=cards, detections=cards, exact=exact,
                   boards_right=right, sets_right=sets)  # fmt: skip


def test_the_seed_table_gives_each_sources_board_exact_per_seed_its_mean_and_range():
    tables = {
        0: {"a": _summary(5, 5, 5, 60, 60), "b": _summary(4, 2, 3, 40, 48),
            "all": _summary(9, 7, 8, 100, 108)},
        1: {"a": _summary(5, 4, 5, 59, 60), "b": _summary(4, 3, 3, 46, 48),
            "all": _summary(9, 7, 8, 105, 108)},
    }  # fmt: skip
    lines = format_seed_table(tables).splitlines()
    row = {line.split()[0]: line.split()[1:] for line in lines[2:5]}
    assert row["a"] == ["1.000", "0.800", "0.900", "0.800", "1.000"]
    assert row["b"] == ["0.500", "0.750", "0.625", "0.500", "0.750"]
    assert row["all"] == ["0.778"] * 5
    assert "sets exact by seed: 0.8889 0.8889; mean 0.8889" in lines[5]
    assert lines[6].endswith("0.9259 0.9722; mean 0.9491")


def _samples(n: int = 240) -> list[Sample]:
    rng = np.random.default_rng(0)
    cards = [STANDARD.deck[i] for i in rng.integers(0, 81, n)]
    width = len(FEATURE_NAMES)
    return [
        Sample(rng.normal(size=width) + np.repeat(card.codes, 20)[:width], card,
               f"source{k % 4}", "crop", f"f{k}.jpg")
        for k, card in enumerate(cards)
    ]  # fmt: skip


def test_a_seed_reaches_the_forests_fitted_without_a_source():
    samples = _samples()
    shipped = fit_without_source(samples, "source0", None).to_json()
    assert fit_without_source(samples, "source0", None, {"random_state": 0}).to_json() == shipped
    assert fit_without_source(samples, "source0", None, {"random_state": 1}).to_json() != shipped


def test_seeds_are_refused_outside_loso_or_below_one(capsys):
    assert main(["eval", "--seeds", "3"]) == 2
    assert "use it with --loso alone" in capsys.readouterr().err
    assert main(["eval", "--loso", "--find", "--seeds", "2"]) == 2
    assert main(["eval", "--loso", "--seeds", "0"]) == 2
    assert "at least 1" in capsys.readouterr().err.splitlines()[-1]
