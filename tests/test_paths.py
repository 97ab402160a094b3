"""Where data, samples and models come from: package resources and options, never the checkout.

Run against an installed (non-editable) copy, these check what the user installs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import setvision
from setvision.app.paths import checkout_model_path, sample_photos
from setvision.cli import main
from setvision.solver.errors import SetvisionError
from setvision.vision import fingerprint
from setvision.vision.learn.dataset import LABELS_DIR
from setvision.vision.learn.find_training import _fingerprint

PACKAGE = Path(setvision.__file__).resolve().parent
CHECKOUT = Path(__file__).resolve().parent.parent
SAMPLE_NAMES = {
    "data__ad-hoc__DSC_4870",
    "data__nine-cards-mixed-20161230_192740",
    "data__webcam__20170604_134005",
    "src__test__resources__data__purple-1-overlap-20161231_113757",
}


def test_labels_samples_and_models_come_with_the_imported_package():
    assert LABELS_DIR.resolve() == PACKAGE / "vision" / "learn" / "labels"
    assert sorted(p.name for p in LABELS_DIR.iterdir() if p.is_file()) == [
        "card_free.jsonl",
        "label_fixes.json",
        "labels_added.jsonl",
        "outline_fixes.jsonl",
    ]
    samples = Path(sample_photos())
    assert samples.resolve() == PACKAGE / "sample_images"
    assert {p.stem for p in samples.glob("*.jpg")} == SAMPLE_NAMES
    assert {p.stem for p in samples.glob("*.json")} == SAMPLE_NAMES
    models = sorted(p.name for p in (PACKAGE / "vision" / "models").glob("*.json"))
    assert models == ["default.json", "finder.json"]


def _checkout_packages(folder: Path, name: str) -> list[str]:
    """``name`` and every package below ``folder`` (folders with an ``__init__.py``)."""
    found = [name]
    for child in sorted(folder.iterdir()):
        if child.is_dir() and (child / "__init__.py").is_file():
            found += _checkout_packages(child, f"{name}.{child.name}")
    return found


def test_every_package_of_the_checkout_is_installed():
    """``pyproject.toml`` lists the packages one by one (the checkout's root is the package):
    one left out is importable from the checkout but missing from every install."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert config["package-dir"] == {"setvision": "."}
    assert sorted(config["packages"]) == sorted(_checkout_packages(CHECKOUT, "setvision"))


def test_bench_without_paths_times_the_bundled_samples(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the checkout: the samples are found as a resource
    assert main(["bench", "--repeat", "1", "--limit", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 photo(s) letterboxed into 1280x720")
    assert "data__ad-hoc__DSC_4870.jpg" in out


@pytest.mark.parametrize("command", ["train", "train-finder"])
def test_training_outside_a_checkout_asks_for_out(command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main([command, "--data", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line == (
        "setvision: error: training writes vision/models/ of a checkout: "
        "run it from the checkout, or give --out"
    )
    assert captured.out == "" and list(tmp_path.iterdir()) == []


def test_training_writes_into_the_checkout_it_runs_from_or_to_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert checkout_model_path("elsewhere/model.json", "default.json") == "elsewhere/model.json"
    (tmp_path / "vision" / "models").mkdir(parents=True)
    with pytest.raises(SetvisionError, match="give --out"):
        checkout_model_path(None, "default.json")  # no pyproject.toml: not a checkout
    (tmp_path / "pyproject.toml").write_text("")
    assert checkout_model_path(None, "finder.json") == str(Path("vision/models/finder.json"))


@pytest.mark.parametrize(
    ("edited", "changes"),
    [("candidates", True), ("outlines", True), ("finder", False), ("cardness", False)],
)
def test_the_finder_sample_cache_key_follows_the_candidate_code(edited, changes, monkeypatch):
    before = _fingerprint()
    real = fingerprint.module_source

    def edit(module: str) -> bytes:
        source = real(module)
        return source + b"\n# a change\n" if module.endswith(f".find.{edited}") else source

    monkeypatch.setattr(fingerprint, "module_source", edit)
    assert (_fingerprint() != before) is changes
