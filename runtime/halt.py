"""Ctrl-C (SIGINT) or SIGTERM while `lrc execute` makes its runs: stop starting calls, and let
the calls in flight come back and be journaled before the execute ends.

Without this, an interrupt abandoned every call in flight: each had been sent (the provider
bills it), none of their answers was journaled, and the resume sent them all again -- up to
each model's `max_concurrency` calls paid twice, on every interrupt. Now the first signal:

- starts no new call: a run that has not started does not start; a run between two calls
  (an agentic loop, a task) stops before its next one, unjournaled, and its journaled calls
  are replayed on resume like those of any stopped run; a call waiting for a concurrency slot,
  a retry (its backoff is cut short) or a budget reservation does not go out;
- lets every call already sent finish (each within its request timeout), journals it, and
  journals the run records it completes (a single-shot run whose answer came back is done);
- then the execute ends without rewriting the outputs, saying what is journaled, with exit
  code 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). The same command resumes.

A second signal stops at once, as before: SIGINT raises KeyboardInterrupt ("lrc: interrupted",
exit 130), SIGTERM ends the process by its default action. What was acknowledged in the journal
survives either way (journal.py, "Durability"); only the calls still in flight are paid again.

Signals are taken only while the runs are being made (between `install` and `uninstall`), in
the main thread's event loop; anywhere else they act as Python's defaults do.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Callable

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Halted(Exception):
    """The execute was asked to stop: this call does not start, and its run stops unjournaled."""


class Halt:
    """The stop request of one execute, and the calls in flight it waits for."""

    def __init__(self, say: Callable[[str], None] | None = None):
        self.signum: int | None = None
        self.in_flight = 0  # calls sent and not yet journaled
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))  # the execute sets where it is said
        self._loop: asyncio.AbstractEventLoop | None = None
        self._installed: list[int] = []
        self.event: asyncio.Event | None = None  # set by the first signal: a retry's backoff wakes on it

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def check(self) -> None:
        """Halted if a stop was requested (called before anything that would send a call)."""
        if self.signum is not None:
            raise Halted(f"stopped on {self.name}")

    def install(self) -> None:
        """Take SIGINT and SIGTERM in the running loop (where that is possible: the main thread)."""
        self._loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        for sig in SIGNALS:
            try:
                self._loop.add_signal_handler(sig, self._on_signal, sig)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals here
                continue
            self._installed.append(sig)

    def uninstall(self) -> None:
        """Give the signals back to their defaults (SIGINT: KeyboardInterrupt)."""
        loop, self._installed = self._loop, []
        if loop is None or loop.is_closed():
            return
        for sig in SIGNALS:
            try:
                loop.remove_signal_handler(sig)
            except (ValueError, RuntimeError):
                pass

    def _on_signal(self, sig: int) -> None:
        if self.signum is None:
            self.signum = sig
            if self.event is not None:
                self.event.set()
            again = "Ctrl-C again" if sig == signal.SIGINT else f"{self.name} again"
            self.say(f"lrc execute: {self.name} received: stopping. No new call starts; waiting for the {self.in_flight} "
                      f"call(s) in flight to come back and be journaled (each within its request timeout). {again} "
                      f"stops at once, and those calls would be paid again when the run resumes.")
            return
        # The second signal: at once, as Python's defaults would have done with the first.
        self.uninstall()
        if sig == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
