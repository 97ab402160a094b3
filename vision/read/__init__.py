"""Reading a card: a card warped upright goes in, features and attribute probabilities come out."""
