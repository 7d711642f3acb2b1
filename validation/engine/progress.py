"""Throttled progress lines on stderr for long sweeps."""
from __future__ import annotations

import sys
import time

from validation._docparams import fill_doc

__all__ = ["Progress", "format_seconds"]


@fill_doc
def format_seconds(s):
    """Format a duration short and human, e.g. ``75.2 -> '1m15s'``.

    Parameters
    ----------
    s : float
        Seconds (NaN or infinity give ``"?"``).

    Returns
    -------
    str
        ``"4.2s"`` below 10 s, then ``"37s"``, ``"1m15s"``, ``"2h05m"``.

    See Also
    --------
    validation.engine.progress.Progress : The progress lines that use it.

    %(ref_local_sweep)s
    """
    if s != s or s == float("inf"):
        return "?"
    s = max(0.0, s)
    if s < 10:
        return f"{s:.1f}s"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{sec:02d}s"
    return f"{sec}s"


@fill_doc
class Progress:
    """Progress of a sweep: ``label: done/total (pct) rate ETA``.

    Parameters
    ----------
    total : int
        Number of trials to compute in this run (store hits excluded).
    label : str
        Prefix of every line.
    enabled : bool
        Print nothing when False.
    stream : file, optional
        Default ``sys.stderr``.
    interval : float, optional
        Minimum seconds between two updates: 0.5 on a terminal (the line is
        rewritten in place), 5 otherwise (one full line per update, so logs
        of long sweeps stay short).
    skipped : int, optional
        Trials found in the store, reported in the final summary.
    clock : callable, optional
        Time source in seconds (default ``time.monotonic``; tests pass a fake).

    See Also
    --------
    validation.engine.progress.format_seconds : The duration format of its lines.

    %(ref_local_sweep)s
    """

    def __init__(self, total, *, label="sweep", enabled=True, stream=None, interval=None,
                 skipped=0, clock=time.monotonic):
        self.total = total
        self.label = label
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", lambda: False)()
        self.tty = bool(isatty)
        self.interval = (0.5 if self.tty else 5.0) if interval is None else interval
        self.skipped = skipped
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.failed = 0
        self._last = -float("inf")
        self._dirty = False  # a \r line is on screen

    def line(self):
        """Return the progress line ``label: done/total (pct) rate, elapsed, ETA``.

        Returns
        -------
        str
            The line (with the number of failed trials, if any).
        """
        elapsed = self.clock() - self.start
        rate = self.done / elapsed if elapsed > 0 else float("nan")
        left = self.total - self.done
        eta = left / rate if rate and rate == rate and rate > 0 else float("nan")
        pct = 100.0 * self.done / self.total if self.total else 100.0
        txt = (f"{self.label}: {self.done}/{self.total} ({pct:.0f}%) "
               f"{rate:.3g} trials/s, elapsed {format_seconds(elapsed)}, ETA {format_seconds(eta)}")
        if self.failed:
            txt += f", {self.failed} failed"
        return txt

    def update(self, failed=False):
        """Count one finished trial; print if the throttle interval passed.

        Parameters
        ----------
        failed : bool, optional
            Whether the trial failed.
        """
        self.done += 1
        self.failed += bool(failed)
        if not self.enabled:
            return
        now = self.clock()
        if now - self._last >= self.interval and self.done < self.total:
            self._last = now
            self._emit(self.line())

    def _emit(self, txt):
        if self.tty:
            self.stream.write("\r" + txt + "\x1b[K")
            self._dirty = True
        else:
            self.stream.write(txt + "\n")
        self.stream.flush()

    @fill_doc
    def summary_line(self, *, n_params, n_unique):
        """Return the final summary line of the sweep.

        Parameters
        ----------
        %(n_params)s %(n_unique)s

        Returns
        -------
        str
            Counts of computed, stored and failed trials, wall time and rate.
        """
        wall = self.clock() - self.start
        rate = self.done / wall if wall > 0 else float("nan")
        dup = n_params - n_unique
        txt = (f"{self.label}: finished {n_params} trials"
               + (f" ({dup} duplicates)" if dup else "")
               + f": {self.done - self.failed} computed ok, {self.skipped} from store, "
               f"{self.failed} failed; wall {format_seconds(wall)}"
               + (f" ({rate:.3g} trials/s)" if self.done else ""))
        return txt

    @fill_doc
    def finish(self, *, n_params, n_unique, extra=""):
        """Print the summary line (always, when enabled).

        Parameters
        ----------
        %(n_params)s %(n_unique)s
        extra : str, optional
            Text appended to the line.
        """
        if not self.enabled:
            return
        if self._dirty:
            self.stream.write("\r\x1b[K")
        self.stream.write(self.summary_line(n_params=n_params, n_unique=n_unique) + extra + "\n")
        self.stream.flush()
