"""The attribute model file is checked when it is loaded: each kind of damage is one ModelError
naming the file and the problem, and `--model` with a damaged file stops before any photo. A model
fitted on features made by other code than the installed one is refused: retrain it."""

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from setvision.cli import main
from setvision.solver import ATTRIBUTES
from setvision.vision.read.classify import (
    FEATURE_CODE,
    ModelError,
    feature_fingerprint,
    load_models,
)
from setvision.vision.read.features import FEATURE_GROUPS, FEATURE_NAMES, CardFeatures

SAMPLE = (
    Path(__file__).resolve().parent.parent / "sample_images" / "data__webcam__20170604_134005.jpg"
)


@pytest.fixture(scope="module")
def shipped_text() -> str:
    return (resources.files("setvision.vision") / "models" / "default.json").read_text()


def _first(model: dict, leaf: bool) -> int:
    """Index of the first leaf (or inner node) of a forest."""
    return next(i for i, f in enumerate(model["feature"]) if (f < 0) == leaf)


def _softmax(attribute: str) -> dict:
    """A valid (untrained) softmax model over the attribute's features."""
    n = len(FEATURE_GROUPS[attribute])
    return {
        "kind": "softmax",
        "features": list(FEATURE_GROUPS[attribute]),
        "mean": [0.0] * n,
        "scale": [1.0] * n,
        "coef": np.zeros((3, n)).tolist(),
        "intercept": [0.0, 0.0, 0.0],
    }


def _set(path: tuple, value) -> Callable[[dict], None]:
    """A damage that puts ``value`` at ``path`` (keys and indices) of the model's JSON."""

    def damage(model: dict) -> None:
        *parents, last = path
        for key in parents:
            model = model[key]
        model[last] = value(model) if callable(value) else value

    return damage


def _bad_child(model: dict) -> None:
    color = model["attributes"]["color"]
    color["left"][_first(color, leaf=False)] = len(color["feature"]) + 5


def _big_feature(model: dict) -> None:
    shape = model["attributes"]["shape"]
    shape["feature"][_first(shape, leaf=False)] = len(shape["features"])


def _leaf_with_child(model: dict) -> None:
    number = model["attributes"]["number"]
    number["right"][_first(number, leaf=True)] = 1


def _two_classes(model: dict) -> None:
    number = model["attributes"]["number"]
    number["value"] = [row[:2] for row in number["value"]]


def _nan_probability(model: dict) -> None:
    shading = model["attributes"]["shading"]
    shading["value"][_first(shading, leaf=True)][0] = float("nan")


def _renamed_feature(model: dict) -> None:
    model["attributes"]["color"]["features"][0] = "hue_of_the_moon"


def _bad_softmax(model: dict) -> None:
    model["attributes"]["color"] = _softmax("color")
    model["attributes"]["color"]["coef"] = np.zeros((3, 2)).tolist()


DAMAGES = {
    "bad child index": (_bad_child, "forest for color: child index out of range"),
    "leaf with a child": (_leaf_with_child, "forest for number: child index out of range"),
    "feature index too large": (_big_feature, "forest for shape: feature index out of range"),
    "wrong value shape": (_two_classes, "forest for number: value array of shape"),
    "NaN probability": (_nan_probability, "forest for shading: class probabilities not finite"),
    "probability above 1": (
        _set(("attributes", "color", "value", 3, 1), 1.5),
        "forest for color: class probabilities not finite or outside [0, 1]",
    ),
    "root out of range": (
        _set(("attributes", "shape", "roots", 2), -3),
        "forest for shape: root index out of range",
    ),
    "depth 0": (_set(("attributes", "color", "depth"), 0), "depth 0 outside 1..64"),
    "depth 65": (_set(("attributes", "color", "depth"), 65), "depth 65 outside 1..64"),
    "depth less than the trees": (
        _set(("attributes", "number", "depth"), 2),
        "forest for number: trees deeper than the stated depth 2",
    ),
    "floor 5": (
        _set(("tempering", "color", "floor"), 5),
        "tempering for color: floor 5.0 is outside [0, 0.5)",
    ),
    "temperature 0": (
        _set(("tempering", "shading", "temperature"), 0),
        "tempering for shading: temperature 0.0 is not above 0",
    ),
    "tempering of no attribute": (_set(("tempering", "size"), {}), "unknown attribute 'size'"),
    "a missing attribute": (lambda m: m["attributes"].pop("shape"), "no model for shape"),
    "a missing array": (lambda m: m["attributes"]["color"].pop("left"), "missing 'left'"),
    "strings for numbers": (
        _set(("attributes", "color", "threshold", 0), "high"),
        "forest for color: a field that is not a number",
    ),
    "unknown kind": (_set(("attributes", "color", "kind"), "svm"), "unknown kind 'svm'"),
    "features renamed": (_renamed_feature, "'hue_of_the_moon'] are not color features"),
    "softmax of the wrong shape": (_bad_softmax, "softmax for color: coef of shape (3, 2)"),
    "other values": (_set(("values", "color"), ["red", "blue", "green"]), "values of color"),
}


@pytest.mark.parametrize("kind", DAMAGES)
def test_each_kind_of_damage_is_one_error_naming_the_file(kind, shipped_text, tmp_path):
    damage, problem = DAMAGES[kind]
    model = json.loads(shipped_text)
    damage(model)
    path = tmp_path / "default.json"
    path.write_text(json.dumps(model))
    with pytest.raises(ModelError) as error:
        load_models(path)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and problem in message, message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not a valid setvision model (not JSON"),
        ("[1, 2]", "not a setvision model: a JSON list, not an object"),
        ('"model"', "a JSON str, not an object"),
        ('{"format": 99}', "model format 99 is not supported"),
        ('{"format": 1}', "no 'attributes' and 'values' objects"),
    ],
)
def test_files_that_are_no_model_are_refused(text, problem, tmp_path):
    path = tmp_path / "model.json"
    path.write_text(text)
    with pytest.raises(ModelError, match=r"model\.json: ") as error:
        load_models(path)
    assert problem in str(error.value)


def test_a_binary_file_is_refused_as_no_model(tmp_path):
    path = tmp_path / "model.json"
    path.write_bytes(b"\xff\xfe\x00binary")
    with pytest.raises(ModelError, match=r"model\.json: not a valid setvision model"):
        load_models(path)


def test_the_shipped_model_loads_and_passes_its_checks(shipped_text, tmp_path):
    shipped = load_models()
    copy = tmp_path / "copy.json"
    copy.write_text(shipped_text)
    again = load_models(copy)
    rng = np.random.default_rng(0)
    features = [CardFeatures(dict(zip(FEATURE_NAMES, rng.normal(size=len(FEATURE_NAMES)))))
                for _ in range(4)]  # fmt: skip
    predicted = shipped.predict(features)
    assert tuple(predicted) == ATTRIBUTES
    for attribute, p in predicted.items():
        assert p.shape == (4, 3) and np.isfinite(p).all()
        assert np.allclose(p, again.predict(features)[attribute])


def test_a_valid_softmax_model_loads(shipped_text, tmp_path):
    model = json.loads(shipped_text)
    model["attributes"]["color"] = _softmax("color")
    path = tmp_path / "softmax.json"
    path.write_text(json.dumps(model))
    assert load_models(path).models["color"].coef.shape == (3, len(FEATURE_GROUPS["color"]))


def test_detect_with_a_damaged_model_stops_with_one_line(shipped_text, tmp_path, capsys):
    model = json.loads(shipped_text)
    _bad_child(model)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(model))
    assert main(["detect", "--model", str(bad), str(SAMPLE)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused at load time: no photo was read
    (line,) = captured.err.strip().splitlines()
    assert line == f"setvision: error: {bad}: forest for color: child index out of range"


# ---------------------------------------------------------------- the feature code's fingerprint


def test_the_shipped_model_records_the_installed_feature_code(shipped_text):
    stamp = json.loads(shipped_text)["feature_fingerprint"]
    assert len(stamp) == 64 and stamp == feature_fingerprint()
    assert load_models().to_json() == shipped_text  # as `setvision train` would write it
    assert FEATURE_CODE == ("setvision.vision.read.rectify", "setvision.vision.read.features")


@pytest.mark.parametrize(
    ("stamp", "says"),
    [
        ("0" * 64, "made for other feature code (000000000000, this code's "),
        (None, "records no feature code fingerprint (this code's "),
    ],
)
def test_a_model_of_other_feature_code_is_refused_with_one_line(
    stamp, says, shipped_text, tmp_path, capsys
):
    model = json.loads(shipped_text)
    if stamp is None:
        del model["feature_fingerprint"]
    else:
        model["feature_fingerprint"] = stamp
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps(model))
    with pytest.raises(ModelError) as error:
        load_models(stale)
    expected = f"{stale}: {says}{feature_fingerprint()[:12]}): retrain with `setvision train`"
    assert str(error.value) == expected
    assert main(["detect", "--model", str(stale), str(SAMPLE)]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line == f"setvision: error: {expected}" and captured.out == ""


def test_the_fingerprint_follows_the_source_of_the_feature_code(monkeypatch):
    from setvision.vision import fingerprint

    shipped = fingerprint.code_fingerprint(FEATURE_CODE)
    assert shipped == feature_fingerprint()
    real = fingerprint.module_source

    def edited(module: str) -> bytes:
        source = real(module)
        return source + b"\n# a change\n" if module.endswith(".features") else source

    monkeypatch.setattr(fingerprint, "module_source", edited)
    assert fingerprint.code_fingerprint(FEATURE_CODE) != shipped
