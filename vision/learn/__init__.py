"""Training and evaluation: labelled photos go in, fitted models and accuracy tables come out."""
