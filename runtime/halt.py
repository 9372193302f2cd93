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

A second signal (half a second or more after the first: `DUPLICATE_SECONDS`) stops at once,
as before: SIGINT raises KeyboardInterrupt ("lrc: interrupted",
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
import time
from typing import Callable

SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: A second signal this soon after the first is the same one: a terminal's Ctrl-C reaches every
#: process of the group at once, and a forked child that still holds the loop's wakeup fd would
#: report its copy there. A person pressing Ctrl-C again takes longer than this.
DUPLICATE_SECONDS = 0.5


#: Is a Halt installed in this process now? (Read in a forked child: `_forked_child`.)
_installed_here = False


def _forked_child() -> None:
    """In a child forked while a Halt is installed (a recalculation worker of a task run): the
    terminal's Ctrl-C, and a SIGTERM to the process group, reach the child too. It ignores both,
    so the work in flight finishes (the parent decides what stops; the child's own limits still
    bound it), and it drops the event loop's wakeup fd it inherited: a signal it received would
    otherwise be written there and reach the parent's loop as a second signal of the parent's own.
    (A subprocess started with exec runs no fork hooks and starts with default handlers.)"""
    if not _installed_here:
        return
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    except (ValueError, OSError):  # pragma: no cover - not the child's main thread: nothing to drop
        pass


os.register_at_fork(after_in_child=_forked_child)


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
        self._first = 0.0  # when the first signal came (time.monotonic)
        self.abort_reason: str | None = None  # a configuration problem stopped the execute (`abort`)

    @property
    def requested(self) -> bool:
        """A signal asked for the stop (the execute ends with 128 + its number)."""
        return self.signum is not None

    @property
    def stopping(self) -> bool:
        """A stop of either kind: a signal, or a configuration problem (`abort`)."""
        return self.signum is not None or self.abort_reason is not None

    def abort(self, reason: str) -> None:
        """Stop for a problem no retry fixes (a rejected key, usage that cannot be priced): no new
        call starts, and the calls in flight come back and are journaled, as on a signal.

        Why: a configuration problem had ended the execute at once, cancelling every call in
        flight: each was sent (the provider bills it), none was journaled, and the resume sent them
        all again (found 2026-12-07: 4 requests on the server, none journaled, all 4 sent again).
        The first reason is the one reported; the execute then ends with it (exit 1)."""
        if self.stopping:
            return
        self.abort_reason = reason
        if self.event is not None:
            self.event.set()

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum is not None else ""

    def check(self) -> None:
        """Halted if a stop was requested (called before anything that would send a call)."""
        if self.signum is not None:
            raise Halted(f"stopped on {self.name}")
        if self.abort_reason is not None:
            raise Halted("stopped: a configuration problem")

    def install(self) -> None:
        """Take SIGINT and SIGTERM in the running loop (where that is possible: the main thread)."""
        global _installed_here
        self._loop = asyncio.get_running_loop()
        self.event = asyncio.Event()
        for sig in SIGNALS:
            try:
                self._loop.add_signal_handler(sig, self._on_signal, sig)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread, or no signals here
                continue
            self._installed.append(sig)
        _installed_here = bool(self._installed)

    def uninstall(self) -> None:
        """Give the signals back to their defaults (SIGINT: KeyboardInterrupt)."""
        global _installed_here
        loop, self._installed = self._loop, []
        _installed_here = False
        if loop is None or loop.is_closed():
            return
        for sig in SIGNALS:
            try:
                loop.remove_signal_handler(sig)
            except (ValueError, RuntimeError):
                pass

    def _on_signal(self, sig: int) -> None:
        now = time.monotonic()
        if self.signum is not None and now - self._first < DUPLICATE_SECONDS:
            return  # the same Ctrl-C, seen again (a forked child's copy of the loop's wakeup fd)
        if self.signum is None and self.abort_reason is None:
            self.signum = sig
            self._first = now
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
