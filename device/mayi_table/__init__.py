"""May I? Table: a card-table referee and scoreboard for the contract rummy *May I?*."""

__version__ = "0.1.0"
