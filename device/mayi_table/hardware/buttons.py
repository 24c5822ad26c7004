"""The seats' "May I?" buttons and LEDs through gpiozero.

Only translation happens here: a button going down becomes ``on_press(seat, t)`` with `t` from the
monotonic clock, a button held `long_press_s` becomes ``on_long_press(seat, t)`` ("I went out, the
round is over"), and ``light(seat)`` switches that seat's LED on and every other off. Debounce,
claim windows and priority are the referee's pure code (table.claims: its Debouncer drops contact
bounce), so gpiozero's own bounce_time stays None: filtering twice would hide presses the
referee should see and report.

Buttons are wired between the pin and ground, with the pin pulled up (pressed reads low). A long
press also reports the press that began it, at once: claims are decided by time, so a press cannot
wait to learn whether it will become a long one.

gpiozero calls back from its own threads (the pin library's, and a hold thread for long presses):
wrap the callbacks with :func:`threadsafe` to hand them to an asyncio loop. Tests use gpiozero's
MockFactory (``Device.pin_factory = MockFactory()``) and drive pins low and high.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any, Callable, Sequence

from ..config import SeatConfig

log = logging.getLogger(__name__)

SeatCallback = Callable[[str, float], None]
DEFAULT_LONG_PRESS_S = 2.0


class ButtonsError(RuntimeError):
    """A seat's pin that gpiozero cannot use; the message names the seat and the pin."""


def threadsafe(loop: asyncio.AbstractEventLoop, callback: SeatCallback) -> SeatCallback:
    """`callback` run on `loop`'s thread (gpiozero calls from its own threads)."""

    def post(seat: str, t: float) -> None:
        loop.call_soon_threadsafe(callback, seat, t)

    return post


class SeatPanel:
    """The buttons and LEDs of `seats` (from the config). Use as a context manager, or close().

    `pin_factory`: a gpiozero pin factory (None: gpiozero's default, or ``Device.pin_factory``).
    `clock`: the time passed to the callbacks (time.monotonic; the referee's clock).
    """

    def __init__(
        self,
        seats: Sequence[SeatConfig],
        on_press: SeatCallback,
        on_long_press: SeatCallback | None = None,
        long_press_s: float = DEFAULT_LONG_PRESS_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        pin_factory: Any = None,
    ) -> None:
        from gpiozero import LED, Button, GPIOZeroError

        if long_press_s <= 0:
            raise ValueError(f"long_press_s must be > 0, not {long_press_s}")
        names = [s.name for s in seats]
        if len(set(names)) != len(names):
            raise ValueError(f"seat names must differ: {', '.join(names)}")
        self.on_press = on_press
        self.on_long_press = on_long_press
        self.clock = clock
        self._buttons: dict[str, Any] = {}
        self._leds: dict[str, Any] = {}
        self._lit: str | None = None
        try:
            for i, seat in enumerate(seats):
                for role, pin in (("button", seat.button), ("led", seat.led)):
                    try:
                        if role == "button":
                            device = Button(
                                pin, pull_up=True, bounce_time=None, hold_time=long_press_s, pin_factory=pin_factory
                            )
                            device.when_pressed = self._pressed(seat.name)
                            device.when_held = self._held(seat.name)
                            self._buttons[seat.name] = device
                        else:
                            self._leds[seat.name] = LED(pin, initial_value=False, pin_factory=pin_factory)
                    except GPIOZeroError as exc:
                        raise ButtonsError(f"seats[{i}] ({seat.name}) {role} GPIO{pin}: {exc}") from None
        except BaseException:
            self.close()
            raise

    @property
    def seats(self) -> list[str]:
        return list(self._buttons)

    def _pressed(self, seat: str) -> Callable[[], None]:
        def pressed() -> None:
            self._call(self.on_press, seat)

        return pressed

    def _held(self, seat: str) -> Callable[[], None]:
        def held() -> None:
            if self.on_long_press is not None:
                self._call(self.on_long_press, seat)

        return held

    def _call(self, callback: SeatCallback, seat: str) -> None:
        t = self.clock()
        try:
            callback(seat, t)
        except Exception:
            # an exception here would end gpiozero's event thread and with it every later press
            log.exception("seat button callback failed for %s", seat)

    def is_pressed(self, seat: str) -> bool:
        return bool(self._device(self._buttons, seat).is_pressed)

    # ----- LEDs --------------------------------------------------------------------------
    @property
    def lit(self) -> str | None:
        """The seat whose LED is on, or None."""
        return self._lit

    def light(self, seat: str | None) -> None:
        """Light `seat`'s LED and put every other out; None puts them all out."""
        if seat is not None:
            self._device(self._leds, seat)
        for name, led in self._leds.items():
            if name != seat:
                led.off()
        if seat is not None:
            self._leds[seat].on()
        self._lit = seat

    def _device(self, devices: dict[str, Any], seat: str) -> Any:
        try:
            return devices[seat]
        except KeyError:
            raise KeyError(f"no seat {seat!r}; the seats are {', '.join(devices) or 'none'}") from None

    # ----- lifetime ----------------------------------------------------------------------
    def close(self) -> None:
        """Release every pin (LEDs go out)."""
        for device in list(self._buttons.values()) + list(self._leds.values()):
            try:
                device.close()
            except Exception as exc:
                log.warning("closing %s failed: %s", device, exc)
        self._buttons.clear()
        self._leds.clear()
        self._lit = None

    def __enter__(self) -> SeatPanel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
