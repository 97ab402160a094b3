"""The machine-readable form of a Layout: one JSON object per image (see shared/contract)."""

from __future__ import annotations

from setvision.solver import ATTRIBUTES, VALUES
from setvision.vision.layout import Layout, verdict_message


def _point_list(corners) -> list[list[float]]:
    return [[round(float(x), 1), round(float(y), 1)] for x, y in corners]


def layout_record(layout: Layout, source: str, reveal: str = "all") -> dict:
    """The contract fields for one image, plus probabilities, doubts, ignored outlines, timings."""
    cards = []
    for card_id, reading in enumerate(layout.cards, 1):
        cards.append(
            {
                "id": card_id,
                "number": reading.card.number,
                "color": reading.card.color,
                "shading": reading.card.shading,
                "shape": reading.card.shape,
                "confidence": round(reading.confidence, 4),
                "corners": _point_list(reading.corners_xy),
                "text": str(reading.card),
                "probabilities": {
                    a: {v: round(float(p), 4) for v, p in zip(VALUES[a], reading.probabilities[a])}
                    for a in ATTRIBUTES
                },
            }
        )
    uncertain = []
    for card_id in layout.uncertain:
        doubts = layout.cards[card_id - 1].doubts()
        uncertain.append(
            {
                "id": card_id,
                "doubts": [
                    {"attribute": a, "read": v, "p": round(p, 3), "or": o, "p_or": round(q, 3)}
                    for a, v, p, o, q in doubts
                ],
            }
        )
    return {
        "source": source,
        "image_size": [int(layout.image_size[0]), int(layout.image_size[1])],
        "cards": cards,
        "sets": [list(s) for s in layout.sets],
        "verdict": layout.verdict,
        "message": verdict_message(layout, reveal),
        "uncertain": uncertain,
        "doubts": layout.layout_doubts,
        "ignored": [
            {"corners": _point_list(i.corners_xy), "reason": i.reason} for i in layout.ignored
        ],
        "possible_cards": [{"corners": _point_list(q)} for q in layout.possible],
        "warnings": list(layout.warnings),
        "timings_ms": {k: round(v, 2) for k, v in layout.timings_ms.items()},
    }


def error_record(source: str, message: str) -> dict:
    return {"source": source, "error": message}
