"""What ties the referee to the Raspberry Pi it runs on: systemd notifications (``notify``).

Nothing in this package imports a Pi-only library at import time; camera and GPIO libraries are
looked up inside functions, so the package imports on any machine.
"""

from .notify import Notifier, Watchdog, notify, watchdog_interval

__all__ = ["Notifier", "Watchdog", "notify", "watchdog_interval"]
