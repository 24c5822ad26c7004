"""The synthetic table renderer: card faces, game scenes, exact labels."""
