"""Finding cards: a BGR image goes in, card ``Outline``s (corners in its pixels) come out."""
