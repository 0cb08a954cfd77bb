# SPDX-License-Identifier: MIT
"""order_window_ms: samples of every ring delivered in time order, each held
back until it is older than the window (CLOCK_MONOTONIC, the samples' clock),
so that a ring read later cannot still hold an older one."""
from operator import attrgetter

_by_time = attrgetter("time")


class Orderer:
    def __init__(self, window_ms):
        self.window_ns = int(window_ms * 1000000)
        self.held = []

    def add(self, batch):
        self.held.extend(batch)

    def take(self, now, everything=False):
        """The held samples of time <= now - W, now read before any ring (all
        of them at the end), in time order."""
        if not self.held:
            return []
        self.held.sort(key=_by_time)  # stable: equal times keep their ring order
        if everything:
            out, self.held = self.held, []
            return out
        limit = now - self.window_ns
        lo, hi = 0, len(self.held)
        while lo < hi:  # the first held sample younger than the limit
            mid = (lo + hi) // 2
            if self.held[mid].time <= limit:
                lo = mid + 1
            else:
                hi = mid
        out, self.held = self.held[:lo], self.held[lo:]
        return out
