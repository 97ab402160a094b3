"""`setvision detect` and `setvision check IMAGE` end to end on real photos."""

import json
from pathlib import Path

import cv2
import jsonschema
import numpy as np
from setvision.cli import main
from setvision.solver import find_sets, parse_card

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
WEBCAM = SAMPLES / "data__webcam__20170604_134005.jpg"
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "shared" / "contract" / "detect.schema.json").read_text()
)


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_detect_json_follows_the_contract_and_the_labels(capsys, sample_labels):
    assert main(["detect", "--json", str(WEBCAM)]) == 0
    (record,) = _json_lines(capsys.readouterr().out)
    jsonschema.validate(record, SCHEMA)
    assert record["image_size"] == [960, 720]
    truth = {
        f"{c['number']}-{c['color']}-{c['shading']}-{c['shape']}"
        for c in sample_labels[WEBCAM.stem]["cards"]
    }
    assert {c["text"] for c in record["cards"]} == truth
    assert record["verdict"] == "sets" and record["sets"] == sorted(record["sets"])
    labelled = [parse_card(t) for t in sorted(truth)]  # the sets of the labels, not of the output
    true_sets = {frozenset(str(labelled[i]) for i in found) for found in find_sets(labelled)}
    texts = [c["text"] for c in record["cards"]]
    assert len(true_sets) == 5 and true_sets == {
        frozenset(texts[i - 1] for i in found) for found in record["sets"]
    }


def test_detect_writes_an_annotated_image_of_the_same_size(tmp_path, capsys):
    assert main(["detect", str(WEBCAM), "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    written = tmp_path / "data__webcam__20170604_134005.annotated.jpg"
    assert f"annotated: {written}" in out and "12 cards" in out
    original, drawn = cv2.imread(str(WEBCAM)), cv2.imread(str(written))
    assert drawn.shape == original.shape
    assert np.abs(drawn.astype(int) - original.astype(int)).mean() > 2


def test_bad_files_get_one_line_each_and_the_others_are_still_read(tmp_path, capsys):
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(WEBCAM.read_bytes()[:5000])
    text = tmp_path / "notes.png"
    text.write_text("hello")
    code = main(["detect", "--json", str(broken), str(WEBCAM), str(text), str(tmp_path / "no.jpg")])
    captured = capsys.readouterr()
    records = _json_lines(captured.out)
    assert code == 2
    assert [("error" in r) for r in records] == [True, False, True, True]
    for r in records:
        jsonschema.validate(r, SCHEMA)
    errors = captured.err.strip().splitlines()
    assert len(errors) == 3 and all(e.startswith("setvision: error: ") for e in errors)
    assert "Traceback" not in captured.err


def test_a_photo_without_cards_is_an_answer_not_an_error(tmp_path, capsys):
    table = np.zeros((480, 640, 3), np.uint8)
    table[:] = (40, 70, 110)  # brown wood, nothing on it
    path = tmp_path / "empty-table.png"
    cv2.imwrite(str(path), table)
    assert main(["detect", "--json", str(path)]) == 0
    (record,) = _json_lines(capsys.readouterr().out)
    assert record["verdict"] == "no_cards" and record["cards"] == []


def test_a_folder_expands_to_its_photos_in_order(capsys):
    assert main(["detect", "--json", str(SAMPLES)]) == 0
    sources = [r["source"] for r in _json_lines(capsys.readouterr().out)]
    assert sources == sorted(str(p) for p in SAMPLES.glob("*.jpg"))


def test_check_a_claim_on_a_photo(capsys):
    assert main(["detect", "--json", str(WEBCAM)]) == 0
    record = _json_lines(capsys.readouterr().out)[0]
    a, b, c = record["sets"][0]
    assert main(["check", str(WEBCAM), str(a), str(b), str(c)]) == 0
    assert "valid set" in capsys.readouterr().out
    sets = {tuple(s) for s in record["sets"]}
    not_a_set = next(t for t in ((1, 2, k) for k in range(3, 13)) if t not in sets)
    assert main(["check", str(WEBCAM), *map(str, not_a_set)]) == 1
    out = capsys.readouterr().out
    assert "not a set" in out and f"card {not_a_set[2]}:" in out
    assert main(["check", str(WEBCAM), "1", "2", "40"]) == 2
    assert "no card 40" in capsys.readouterr().err


def test_reveal_hides_the_sets_in_the_text_as_on_the_image(capsys):
    assert main(["detect", "--reveal", "none", str(WEBCAM)]) == 0
    hidden = capsys.readouterr().out
    assert "set:" not in hidden and "sets" not in hidden.splitlines()[0]
    assert main(["detect", "--reveal", "one", str(WEBCAM)]) == 0
    one = capsys.readouterr().out
    assert one.count("set:") == 1 and "more sets" in one
    assert main(["detect", "--json", "--reveal", "none", str(WEBCAM)]) == 0
    assert _json_lines(capsys.readouterr().out)[0]["sets"]  # machine output keeps every set
