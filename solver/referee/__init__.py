"""Refereeing a game of SET as it is played: the table, claims, penalties, scores, prompts.

- ``events``: what the referee says, as dataclasses and JSON lines;
- ``referee``: one round followed from table readings and claims (``Referee``);
- ``opponent``: the computer player and its delays;
- ``summary``: the game summary as JSON and as a short table.
"""

from setvision.solver.referee.events import Event, event_record, event_text
from setvision.solver.referee.opponent import LEVELS, Opponent
from setvision.solver.referee.referee import (
    PENALTIES,
    TABLE,
    Referee,
    RefereeSettings,
    TableView,
)
from setvision.solver.referee.summary import GameSummary, summarise, summary_record, summary_table

__all__ = [
    "LEVELS",
    "PENALTIES",
    "TABLE",
    "Event",
    "GameSummary",
    "Opponent",
    "Referee",
    "RefereeSettings",
    "TableView",
    "event_record",
    "event_text",
    "summarise",
    "summary_record",
    "summary_table",
]
