"""Seat buttons and LEDs on gpiozero's mock pins: presses, long presses, one LED at a time."""

from __future__ import annotations

import asyncio
import threading
from typing import Iterator

import pytest
from gpiozero import LED, Device
from gpiozero.pins.mock import MockFactory

from mayi_table.config import SeatConfig
from mayi_table.hardware.buttons import ButtonsError, SeatPanel, threadsafe
from mayi_table.table.claims import Debouncer, Press

SEATS = [
    SeatConfig(name="Anna", button=5, led=17),
    SeatConfig(name="Ben", button=6, led=27),
    SeatConfig(name="Cleo", button=13, led=22),
]


@pytest.fixture
def factory() -> Iterator[MockFactory]:
    old = Device.pin_factory
    Device.pin_factory = MockFactory()
    try:
        yield Device.pin_factory
    finally:
        Device.pin_factory.reset()
        Device.pin_factory = old


class Clock:
    def __init__(self) -> None:
        self.now = 10.0

    def __call__(self) -> float:
        return self.now


def test_a_press_calls_back_with_the_seat_and_the_time(factory: MockFactory) -> None:
    clock = Clock()
    presses: list[tuple[str, float]] = []
    with SeatPanel(SEATS, lambda s, t: presses.append((s, t)), clock=clock) as panel:
        pin = factory.pin(6)
        assert pin.pull == "up" and not panel.is_pressed("Ben")  # wired to ground, pulled up: idle is high
        pin.drive_low()
        assert panel.is_pressed("Ben")
        pin.drive_high()
        clock.now = 11.5
        factory.pin(13).drive_low()
        factory.pin(13).drive_high()
    assert presses == [("Ben", 10.0), ("Cleo", 11.5)]


def test_bounce_reaches_the_referee_and_its_debouncer_drops_it(factory: MockFactory) -> None:
    clock = Clock()
    presses: list[Press] = []
    with SeatPanel(SEATS, lambda s, t: presses.append(Press(s, t)), clock=clock):
        pin = factory.pin(5)
        for t in (10.0, 10.01, 10.02, 12.0):  # a contact chattering, then a real second press
            clock.now = t
            pin.drive_low()
            pin.drive_high()
    assert [p.t for p in presses] == [10.0, 10.01, 10.02, 12.0]  # no filtering here (bounce_time None)
    debouncer = Debouncer(0.05)
    assert [p.t for p in presses if debouncer.accept(p)] == [10.0, 12.0]


def test_a_long_press_calls_the_other_callback(factory: MockFactory) -> None:
    held = threading.Event()
    presses: list[str] = []
    longs: list[str] = []

    def on_long(seat: str, t: float) -> None:
        longs.append(seat)
        held.set()

    with SeatPanel(SEATS, lambda s, t: presses.append(s), on_long, long_press_s=0.05) as panel:
        factory.pin(13).drive_low()
        assert held.wait(5), "no long press reported"
        factory.pin(13).drive_high()
        # a short press is a press only
        factory.pin(5).drive_low()
        factory.pin(5).drive_high()
        assert not panel.is_pressed("Anna")
    assert longs == ["Cleo"]
    assert presses == ["Cleo", "Anna"]  # the long press was reported as a press at once, too


def test_one_led_at_a_time(factory: MockFactory) -> None:
    with SeatPanel(SEATS, lambda s, t: None) as panel:
        leds = {name: factory.pin(pin) for name, pin in (("Anna", 17), ("Ben", 27), ("Cleo", 22))}
        assert not any(p.state for p in leds.values()) and panel.lit is None
        panel.light("Ben")
        assert {n: bool(p.state) for n, p in leds.items()} == {"Anna": False, "Ben": True, "Cleo": False}
        panel.light("Cleo")
        assert {n: bool(p.state) for n, p in leds.items()} == {"Anna": False, "Ben": False, "Cleo": True}
        assert panel.lit == "Cleo"
        with pytest.raises(KeyError, match="no seat 'Dora'; the seats are Anna, Ben, Cleo"):
            panel.light("Dora")
        assert panel.lit == "Cleo" and leds["Cleo"].state
        panel.light(None)
        assert not any(p.state for p in leds.values()) and panel.lit is None


def test_a_failing_callback_does_not_stop_later_presses(factory: MockFactory, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []

    def flaky(seat: str, t: float) -> None:
        calls.append(seat)
        if len(calls) == 1:
            raise RuntimeError("referee busy")

    with SeatPanel(SEATS, flaky):
        for _ in range(2):
            factory.pin(5).drive_low()
            factory.pin(5).drive_high()
    assert calls == ["Anna", "Anna"]
    assert "seat button callback failed for Anna" in caplog.text


def test_a_pin_in_use_names_the_seat_and_releases_the_others(factory: MockFactory) -> None:
    squatter = LED(22)  # Cleo's LED pin, taken by something else
    with pytest.raises(ButtonsError, match=r"seats\[2\] \(Cleo\) led GPIO22"):
        SeatPanel(SEATS, lambda s, t: None)
    squatter.close()
    with SeatPanel(SEATS, lambda s, t: None) as panel:  # the pins of the failed panel were released
        assert panel.seats == ["Anna", "Ben", "Cleo"]


def test_threadsafe_posts_presses_to_the_event_loop(factory: MockFactory) -> None:
    async def main() -> list[tuple[str, int]]:
        loop = asyncio.get_running_loop()
        got: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
        with SeatPanel(SEATS, threadsafe(loop, lambda s, t: got.put_nowait((s, threading.get_ident())))):
            worker = threading.Thread(target=lambda: (factory.pin(6).drive_low(), factory.pin(6).drive_high()))
            worker.start()
            worker.join()
            return [await asyncio.wait_for(got.get(), 5)]

    ((seat, thread),) = asyncio.run(main())
    assert seat == "Ben" and thread == threading.get_ident()  # run on the loop's thread
