"""The scoreboard web app: TV page, host tablet, JSON API and live updates (server-sent events)."""

from .app import HostAuth, create_app
from .server import WebServer, WebServerError

__all__ = ["HostAuth", "WebServer", "WebServerError", "create_app"]
