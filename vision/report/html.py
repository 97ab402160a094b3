"""Render a Review as a self-contained HTML page, a CSV table and JSON Lines.

The page has its CSS inline, links the annotated images by relative path (they sit beside it
in the report folder) and escapes every piece of text that comes from a file or a reading.
The ``render_*`` functions return strings; ``write_report`` alone touches the disk.
"""

from __future__ import annotations

import csv
import io
import json
import os
from html import escape
from urllib.parse import quote

from setvision.solver.errors import SetvisionError
from setvision.solver.replay import Finding, Level, Replay, Step
from setvision.vision.report.files import SHOWN
from setvision.vision.report.review import PhotoResult, Review, Summary

#: A cell starting with one of these is a formula to a spreadsheet (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")

VERDICT_WORDS = {
    "sets": "sets",
    "no_set": "no set: add three",
    "uncertain": "uncertain",
    "no_cards": "no card read",
    "error": "could not be read",
}

CSS = """
:root { --ink: #1d1d1f; --muted: #6b6b70; --line: #dedee3; --bg: #f6f6f8; --warn: #b3261e;
  --warnbg: #fdecea; --ok: #1b7f3b; --okbg: #e7f5ec; --note: #5b5b66; --notebg: #eeeef2;
  --unsure: #8a5a00; --unsurebg: #fff4d6; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--ink); background: var(--bg); }
header.top { background: #202024; color: #fff; padding: 20px 28px; }
header.top h1 { margin: 0 0 4px; font-size: 22px; }
header.top p { margin: 0; color: #c8c8d0; font-size: 13px; }
main { padding: 20px 28px 40px; max-width: 1400px; }
.summary { display: flex; flex-wrap: wrap; gap: 12px; margin: 0 0 20px; }
.stat { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 16px;
  min-width: 150px; }
.stat dt { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.stat dd { margin: 2px 0 0; font-size: 28px; font-weight: 650; }
.stat.warn dd { color: var(--warn); }
section, article { background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 14px 18px; margin: 0 0 18px; }
h2 { font-size: 18px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 14px 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 12px; color: var(--muted); font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
a { color: #2a5bd7; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-size: 12px;
  font-weight: 600; vertical-align: middle; background: var(--notebg); color: var(--note); }
.badge.v-sets, .badge.ok { background: var(--okbg); color: var(--ok); }
.badge.v-no_set { background: #e6efff; color: #1e4fb8; }
.badge.v-uncertain, .badge.unsure { background: var(--unsurebg); color: var(--unsure); }
.badge.v-no_cards, .badge.v-error, .badge.mistake { background: var(--warnbg); color: var(--warn); }
.look-flag { color: var(--unsure); font-weight: 600; font-size: 13px; margin-left: 6px; }
article header { display: flex; align-items: baseline; gap: 10px; flex-wrap: wrap; }
article header h2 { margin: 0; }
article .file { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 15px; }
article .path { color: var(--muted); font-size: 12px; word-break: break-all; margin: 2px 0 8px; }
.body { display: grid; grid-template-columns: minmax(0, 3fr) minmax(280px, 2fr); gap: 18px; }
.body img { max-width: 100%; max-height: 760px; height: auto; border-radius: 6px;
  display: block; background: #eee; }
.message { font-weight: 600; margin: 0 0 6px; }
.error { color: var(--warn); font-weight: 600; }
tr.uncertain td { background: var(--unsurebg); }
tr.uncertain td:first-child { font-weight: 700; color: var(--unsure); }
.doubt { font-size: 12px; color: var(--unsure); }
.card { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px;
  white-space: nowrap; }
.red { color: #c62828; } .green { color: #1b7f3b; } .purple { color: #6a1b9a; }
ol.sets { margin: 0; padding-left: 22px; font-size: 13px; }
ol.sets li small { color: var(--muted); }
ul.findings { list-style: none; margin: 4px 0 0; padding: 0; }
ul.findings li { margin: 3px 0; }
ol.steps { padding-left: 22px; margin: 6px 0; }
ol.steps > li { margin: 0 0 10px; padding: 6px 10px; border-left: 4px solid var(--line); }
ol.steps > li.mistake { border-color: var(--warn); background: var(--warnbg); }
ol.steps > li.unsure { border-color: #e0a800; background: var(--unsurebg); }
ol.steps > li.ok { border-color: var(--ok); }
.moves { font-size: 13px; color: var(--muted); }
.basis { font-size: 13px; color: var(--muted); }
@media (max-width: 900px) { .body { grid-template-columns: 1fr; } }
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _card(text: str) -> str:
    colour = next((c for c in ("red", "green", "purple") if f"-{c}-" in text), "")
    return f'<span class="card {colour}">{_e(text)}</span>'


def _verdict(result: PhotoResult) -> str:
    verdict = result.verdict
    words = VERDICT_WORDS.get(verdict, verdict)
    if verdict == "sets":
        count = len(result.sets)
        words = f"{count} set{'s' if count != 1 else ''}"
    return f'<span class="badge v-{_e(verdict)}">{_e(words)}</span>'


def _summary(summary: Summary, game: Replay | None) -> str:
    stats = [
        ("photos", "photos", summary.photos, False),
        ("cards", "cards read", summary.cards, False),
        ("sets", "sets found", summary.sets, False),
        ("look", "photos needing a look", summary.needs_look, summary.needs_look > 0),
    ]
    if summary.unreadable:
        stats.append(("unreadable", "could not be read", summary.unreadable, True))
    if game is not None:
        mistakes = game.count(Level.MISTAKE)
        stats.append(("mistakes", "mistakes in play", mistakes, mistakes > 0))
        stats.append(("unsure", "steps in doubt", game.count(Level.UNSURE), False))
    items = "".join(
        f'<div class="stat{" warn" if warn else ""}"><dt>{_e(label)}</dt>'
        f'<dd data-stat="{key}">{value}</dd></div>'
        for key, label, value, warn in stats
    )
    return f'<dl class="summary">{items}</dl>'


def _contents(results: tuple[PhotoResult, ...]) -> str:
    rows = "".join(
        f'<tr><td class="n">{r.index}</td>'
        f'<td><a href="#photo-{r.index}">{_e(_name(r))}</a></td>'
        f'<td class="n">{len(r.cards)}</td><td class="n">{len(r.sets)}</td>'
        f"<td>{_verdict(r)}"
        + ('<span class="look-flag">needs a look</span>' if r.needs_look else "")
        + "</td></tr>"
        for r in results
    )
    return (
        '<section id="contents"><h2>Photos</h2><table><thead><tr><th>#</th><th>file</th>'
        "<th>cards</th><th>sets</th><th>verdict</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _name(result: PhotoResult) -> str:
    return result.source.replace("\\", "/").rsplit("/", 1)[-1]


def _doubt_text(doubts: list[dict]) -> str:
    return "; ".join(
        f"{d['attribute']}: {d['read']} {d['p']:.0%} / {d['or']} {d['p_or']:.0%}" for d in doubts
    )


def _cards_table(result: PhotoResult) -> str:
    doubts = {u["id"]: u["doubts"] for u in result.record.get("uncertain", [])}
    rows = []
    for card in result.cards:
        uncertain = card["id"] in doubts
        note = (
            f'<div class="doubt">not sure: {_e(_doubt_text(doubts[card["id"]]))}</div>'
            if uncertain and doubts[card["id"]]
            else ('<div class="doubt">not sure</div>' if uncertain else "")
        )
        rows.append(
            f'<tr class="{"uncertain" if uncertain else "confident"}">'
            f'<td class="n">{card["id"]}{"?" if uncertain else ""}</td>'
            f"<td>{_card(card['text'])}{note}</td>"
            f'<td class="n">{float(card["confidence"]):.0%}</td></tr>'
        )
    return (
        "<table class='cards'><thead><tr><th>#</th><th>card</th><th>sure</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


def _sets_list(result: PhotoResult) -> str:
    if not result.sets:
        return ""
    texts = {c["id"]: c["text"] for c in result.cards}
    items = "".join(
        f"<li>{' · '.join(str(i) for i in found)} "
        f"<small>({_e(', '.join(texts[i] for i in found))})</small></li>"
        for found in result.sets
    )
    return f"<h3>sets ({len(result.sets)})</h3><ol class='sets'>{items}</ol>"


def _entry(result: PhotoResult) -> str:
    classes = "photo" + (" look" if result.needs_look else "") + (
        " failed" if result.error else ""
    )  # fmt: skip
    head = (
        f'<header><h2>{result.index}. <span class="file">{_e(_name(result))}</span></h2>'
        f"{_verdict(result)}"
        + ('<span class="look-flag">needs a look</span>' if result.needs_look else "")
        + f'</header><p class="path">{_e(result.source)}</p>'
    )
    if result.error:
        body = f'<p class="error">{_e(result.error)}</p>'
        return f'<article class="{classes}" id="photo-{result.index}">{head}{body}</article>'
    image = ""
    if result.image:
        src = _e(quote(result.image))
        image = (
            f'<a href="{src}"><img src="{src}" loading="lazy" '
            f'alt="{_e(_name(result))}, annotated"></a>'
        )
    extra = "".join(
        f'<p class="doubt">{_e(text)}</p>' for text in result.record.get("doubts", [])
    ) + "".join(
        f'<p class="doubt">ignored one outline: {_e(i["reason"])}</p>'
        for i in result.record.get("ignored", [])
    )
    info = f'<p class="message">{_e(result.record.get("message", ""))}</p>{extra}'
    if result.cards:
        info += f"<h3>cards ({len(result.cards)})</h3>{_cards_table(result)}{_sets_list(result)}"
    body = f'<div class="body"><div>{image}</div><div class="info">{info}</div></div>'
    return f'<article class="{classes}" id="photo-{result.index}">{head}{body}</article>'


def _finding(finding: Finding) -> str:
    return (
        f'<li class="finding {finding.level.value}"><span class="badge {finding.level.value}">'
        f"{_e(finding.level.value)}</span> {_e(finding.text)}</li>"
    )


def _step(step: Step, results: tuple[PhotoResult, ...]) -> str:
    first, second = (results[i] for i in step.positions)
    moves = (
        f"{len(step.removed)} left"
        + (f" ({_e(', '.join(str(c) for c in step.removed))})" if step.removed else "")
        + f" · {len(step.added)} added"
        + (f" ({_e(', '.join(str(c) for c in step.added))})" if step.added else "")
    )
    findings = "".join(_finding(f) for f in step.findings)
    return (
        f'<li class="step {step.level.value}"><div><a href="#photo-{first.index}">'
        f'{_e(step.before)}</a> → <a href="#photo-{second.index}">{_e(step.after)}</a></div>'
        f'<div class="moves">{moves}</div><ul class="findings">{findings}</ul></li>'
    )


def _replay(game: Replay, results: tuple[PhotoResult, ...]) -> str:
    steps = "".join(_step(s, results) for s in game.steps)
    unread = (
        f"<p class='basis'>not in the replay (could not be read): {_e(', '.join(game.unread))}</p>"
        if game.unread
        else ""
    )
    ending = "".join(_finding(f) for f in game.ending)
    return (
        f'<section id="replay"><h2>Game replay</h2>{unread}'
        f'<ol class="steps">{steps}</ol><h3>end of the sequence</h3>'
        f'<ul class="findings">{ending}</ul><p class="basis">{_e(game.stock_basis)}</p></section>'
    )


def render_html(review: Review, title: str = "setvision review") -> str:
    """The whole report page: summary, replay (if any), contents, one entry per photo."""
    results = review.results
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}: {review.summary.photos} photos</title>",
        f"<style>{CSS}</style></head><body>",
        f'<header class="top"><h1>{_e(title)}</h1>'
        f"<p>{review.summary.photos} photos, {_e(review.order)}</p></header><main>",
        _summary(review.summary, review.replay),
    ]
    if review.replay is not None:
        parts.append(_replay(review.replay, results))
    parts.append(_contents(results))
    parts.extend(_entry(r) for r in results)
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text: a leading formula character gets a quote."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def render_csv(results: tuple[PhotoResult, ...]) -> str:
    """One row per photo: file, cards, sets, verdict, uncertain cards, message, image."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")  # RFC 4180: a name holding \r is quoted
    writer.writerow(["file", "cards", "sets", "verdict", "uncertain_cards", "message", "annotated"])
    for r in results:
        texts = {c["id"]: c["text"] for c in r.cards}
        uncertain = "; ".join(f"#{i} {texts[i]}" for i in r.uncertain_ids)
        message = r.error or r.record.get("message", "")
        row = [r.source, len(r.cards), len(r.sets), r.verdict, uncertain, message, r.image or ""]
        writer.writerow([_cell(value) for value in row])
    return out.getvalue()


def render_jsonl(results: tuple[PhotoResult, ...]) -> str:
    """The contract lines (shared/contract), one per photo in report order."""
    return "".join(json.dumps(r.record) + "\n" for r in results)


REPORT_FILES = ("index.html", "results.jsonl", "results.csv")


def write_report(review: Review, out_dir: str) -> str:
    """Write index.html, results.jsonl and results.csv into ``out_dir``; the page's path."""
    texts = (render_html(review), render_jsonl(review.results), render_csv(review.results))
    for name, text in zip(REPORT_FILES, texts):
        path = os.path.join(out_dir, name)
        try:
            with open(path, "w", encoding="utf-8", errors=SHOWN, newline="") as handle:
                handle.write(text)
        except OSError as error:
            raise SetvisionError(f"{path}: cannot write the report ({error.strerror})") from None
    return os.path.join(out_dir, REPORT_FILES[0])
