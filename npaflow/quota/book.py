"""The pool's bookkeeping: who holds GPUs, who waits, and who is served next.

Waiting waves are served by priority (1 first), then weighted fair share (the
team's decayed GPU-hours divided by its weight, lowest first), then first come
first served. The head of that order is served first: a smaller wave behind it
does not jump ahead (no starvation of wide waves). Pure and deterministic: the
workflow passes its own clock in.
"""

from __future__ import annotations

from npaflow.quota.leases import LeaseId, LeaseMove, moved
from npaflow.quota.models import (
    Lease,
    LeaseAnswer,
    LeaseRequest,
    PoolCarry,
    PoolConfig,
    PoolStatus,
    SpentRelease,
    TeamUsage,
)

#: Fair share forgets: a team's GPU-hours halve every this many seconds.
HALF_LIFE_SECONDS = 3600.0


class PoolBook:
    """One pool's leases and fair-share ledger."""

    def __init__(self, carry: PoolCarry) -> None:
        self.config = carry.config
        self.holders = {lease.request.lease_id: lease for lease in carry.holders}
        self.waiting = {lease.request.lease_id: lease for lease in carry.waiting}
        self.used = dict(carry.used)
        self.used_at = carry.used_at
        self.order = carry.order

    @property
    def in_use(self) -> int:
        """GPUs granted now."""
        return sum(lease.gpus for lease in self.holders.values())

    def configure(self, config: PoolConfig) -> None:
        """New capacity or weights; holders keep their GPUs (a shrink only slows new grants)."""
        self.config = config

    def ask(self, request: LeaseRequest, now: float, *, serve: bool = True) -> LeaseAnswer:
        """Register a wave's ask (again: the same answer); with `serve`, grant what is next and fits.

        `serve` grants any waiter, not only this one, and the answer names only this
        one: pools from before `settle` asked with it (their histories replay so).
        """
        lease_id = request.lease_id
        gpus = request.gpus_for(self.config.accelerator)
        if gpus > self.config.gpus:
            refused = f"the wave needs {gpus} GPUs and the pool holds {self.config.gpus}"
            return LeaseAnswer(
                lease_id=lease_id,
                granted=False,
                in_use=self.in_use,
                capacity=self.config.gpus,
                refused=refused,
            )
        if gpus == 0:  # nothing this pool counts: no lease to hold
            return LeaseAnswer(lease_id=lease_id, granted=True, in_use=self.in_use, capacity=self.config.gpus)
        if lease_id not in self.holders and lease_id not in self.waiting:
            self.order += 1
            self.waiting[lease_id] = Lease(request=request, gpus=gpus, asked_at=now, order=self.order)
            if serve:
                self.grant(now)
        return self.answer(lease_id)

    def settle(
        self,
        releases: list[LeaseId],
        asks: list[LeaseRequest],
        now: float,
        spent: list[SpentRelease] | None = None,
    ) -> tuple[list[Lease], list[LeaseAnswer]]:
        """Releases, then asks, then one grant: the leases granted, and each asker's answer after it.

        Every lease granted is returned, so its wave is told: a grant its wave never
        hears of holds GPUs that no job uses until the wave asks again.
        """
        for lease_id in releases:
            self.release(lease_id, now)
        for release in spent or []:
            self.release(release.lease_id, now, release.gpu_hours)
        asked = [self.ask(request, now, serve=False) for request in asks]
        granted = self.grant(now)
        known = {lease.request.lease_id for lease in self.leases()}
        return granted, [self.answer(a.lease_id) if a.lease_id in known else a for a in asked]

    def answer(self, lease_id: LeaseId) -> LeaseAnswer:
        """Where a lease stands: granted, or its place in line."""
        if lease_id in self.holders:
            return LeaseAnswer(lease_id=lease_id, granted=True, in_use=self.in_use, capacity=self.config.gpus)
        line = [lease.request.lease_id for lease in self.queue()]
        position = line.index(lease_id) + 1 if lease_id in line else 0
        return LeaseAnswer(
            lease_id=lease_id, granted=False, position=position, in_use=self.in_use, capacity=self.config.gpus
        )

    def release(self, lease_id: LeaseId, now: float, spent_hours: float | None = None) -> Lease | None:
        """A wave is done (or no longer waits): its GPUs go back; the lease it was, if any.

        With `spent_hours` (what the wave's attempts spent, from their job records), the
        team is charged that instead of the time the lease was held: launches, output
        checks and a job that ended early cost no share.
        """
        self.charge(now)
        lease = self.holders.pop(lease_id, None)
        if lease is not None:
            moved(lease.state, LeaseMove.RELEASE)
        if lease is not None and spent_hours is not None:
            team = lease.request.team
            self.used[team] = max(0.0, self.used.get(team, 0.0) + spent_hours * 3600 - lease.charged)
        return lease or self.waiting.pop(lease_id, None)

    def drop_runs(self, run_ids: set[str], now: float, *, holders: bool = True) -> list[Lease]:
        """Reclaim the leases of runs that no longer exist (without `holders`: their waiting ones).

        A closed run's held GPUs come back only once its jobs are verified ended (the pool's
        reclaim asks): a wave that merely waited launched nothing, so its place goes at once.
        """
        gone = [
            lease
            for lease in [*(self.holders.values() if holders else ()), *self.waiting.values()]
            if lease.request.run_id in run_ids
        ]
        for lease in gone:
            self.release(lease.request.lease_id, now)
        return gone

    def charge(self, now: float) -> None:
        """Bring every team's decayed GPU-seconds up to `now`."""
        elapsed = max(0.0, now - self.used_at) if self.used_at else 0.0
        decay = 0.5 ** (elapsed / HALF_LIFE_SECONDS)
        self.used = {team: seconds * decay for team, seconds in self.used.items()}
        for lease_id, lease in list(self.holders.items()):
            team = lease.request.team
            self.used[team] = self.used.get(team, 0.0) + lease.gpus * elapsed
            if elapsed:  # what this lease added to its team's share, decayed alike
                charged = lease.charged * decay + lease.gpus * elapsed
                self.holders[lease_id] = lease.model_copy(update={"charged": charged})
        self.used_at = now

    def share(self, team: str) -> float:
        """The team's GPU-seconds per unit of weight: lower is served first."""
        return self.used.get(team, 0.0) / self.config.weight(team)

    def queue(self) -> list[Lease]:
        """Waiting leases in the order they are served."""
        return sorted(
            self.waiting.values(),
            key=lambda lease: (lease.request.priority, self.share(lease.request.team), lease.order),
        )

    def grant(self, now: float) -> list[Lease]:
        """Grant the head of the queue while it fits; the leases granted now."""
        self.charge(now)
        granted: list[Lease] = []
        for lease in self.queue():
            if self.in_use + lease.gpus > self.config.gpus:
                break
            moved(lease.state, LeaseMove.GRANT)
            held = lease.model_copy(update={"since": now})
            del self.waiting[lease.request.lease_id]
            self.holders[lease.request.lease_id] = held
            granted.append(held)
        return granted

    def leases(self) -> list[Lease]:
        """Every lease, held then waiting."""
        return [*self.holders.values(), *self.waiting.values()]

    def runs(self) -> set[str]:
        """Every run that holds or waits."""
        return {lease.request.run_id for lease in self.leases()}

    def status(self, pool: str, *, deleting: bool = False) -> PoolStatus:
        """What `quota status` shows."""
        teams = sorted(
            {lease.request.team for lease in [*self.holders.values(), *self.waiting.values()]}
            | set(self.used)
        )
        usage = [
            TeamUsage(
                team=team,
                in_use=sum(h.gpus for h in self.holders.values() if h.request.team == team),
                waiting=sum(w.gpus for w in self.waiting.values() if w.request.team == team),
                gpu_hours=round(self.used.get(team, 0.0) / 3600, 6),
                weight=self.config.weight(team),
            )
            for team in teams
        ]
        holders = sorted(self.holders.values(), key=lambda lease: lease.since)
        return PoolStatus(
            pool=pool,
            config=self.config,
            in_use=self.in_use,
            holders=holders,
            waiting=self.queue(),
            teams=usage,
            deleting=deleting,
        )

    def carry(self) -> PoolCarry:
        """The book as it continues as new."""
        return PoolCarry(
            config=self.config,
            holders=list(self.holders.values()),
            waiting=list(self.waiting.values()),
            used=self.used,
            used_at=self.used_at,
            order=self.order,
        )
