//! One execution's windows (Item Concurrency *Auto*, [`Window`]), one per provider of its chain,
//! each with its lines: the items waiting for a slot of the window, and those waiting their turn
//! at the fleet's spent limit. Sans-IO: the item machine asks and tells it at a call's hand-out
//! and its outcome; the node polls again the items it wakes.
use crate::limits::concurrency::{Admit, Signal, Window};
use crate::limits::learned_limit::{Advice, WindowNews};
use crate::limits::turns::Turns;

/// One execution's windows, one per provider of its chain, shared by its items, each with its
/// line: the items waiting for a slot, in the order they came. A freed slot is granted to the
/// first in line (kept for it until it polls), so a newcomer never overtakes the line, and only
/// as many items are woken as there are slots: no herd of polls (each one a store read).
#[derive(Debug, Clone, PartialEq)]
pub struct Pool {
    lanes: Vec<Lane>,
    members: u32,
    /// Items to poll again: slots were granted to them (or a window refuses all its line).
    woken: Vec<u32>,
}

#[derive(Debug, Clone, PartialEq)]
struct Lane {
    window: Window,
    line: Turns,
    /// Slots kept for items woken from the line, until they poll.
    granted: Vec<u32>,
    /// The items waiting at the fleet's spent limit, in turn (see [`Pool::fleet_turn`]), and
    /// since when the first of them is first or last asked.
    fleet: Turns,
    fleet_head_ms: u64,
}

/// The first in turn at the fleet's limit that has not asked for this long has gone (deferred,
/// failed over, cancelled): it is dropped (a waiter asks every 20-70 ms, and is woken when first).
pub const FLEET_TURN_STALE_MS: u64 = 1_000;

impl Pool {
    /// `ceiling`: Max Item Concurrency; a provider's Max In Flight, where set, caps its window too.
    pub fn new(chain: &crate::config::Chain, ceiling: u32) -> Pool {
        let lanes = chain
            .providers
            .iter()
            .map(|p| Lane {
                window: Window::new(p.breaker.threshold, p.max_in_flight.map_or(ceiling, |m| m.min(ceiling))),
                line: Turns::default(),
                granted: Vec::new(),
                fleet: Turns::default(),
                fleet_head_ms: 0,
            })
            .collect();
        Pool { lanes, members: 0, woken: Vec::new() }
    }

    /// A new item's number in the pool (what a wake names).
    pub fn join(&mut self) -> u32 {
        self.members += 1;
        self.members
    }

    /// Whether `provider`'s window refuses (see [`Window::refuses`]).
    pub fn refuses(&self, provider: usize) -> bool {
        self.lanes[provider].window.refuses()
    }

    /// Whether `provider`'s window refuses because its spent calls failed (see
    /// [`Window::refused_for_failures`]).
    pub fn refused_for_failures(&self, provider: usize) -> bool {
        self.lanes[provider].window.refused_for_failures()
    }

    /// The calls its windows count as out, over every provider (none once every call ended).
    pub fn calls_out(&self) -> u32 {
        self.lanes.iter().map(|l| l.window.in_flight()).sum()
    }

    /// Each provider's window now (its limit), for the run data.
    pub fn limits(&self) -> Vec<u32> {
        self.lanes.iter().map(|l| l.window.limit()).collect()
    }

    /// The items to poll again since this was last asked (their slots were granted, or a window
    /// refuses its whole line).
    pub fn take_woken(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.woken)
    }

    /// Item `id` asks for a slot of `provider`: its grant, or a free slot when nobody is in line;
    /// else it joins the line, a `retry` (its budget runs: it met a 429, a failure) after the
    /// retries already in line and before every first call (it does not wait its budget out
    /// behind the whole batch again). Items to wake join the pool's list.
    pub fn admit(&mut self, provider: usize, id: u32, retry: bool) -> Admit {
        let (lane, woken) = (&mut self.lanes[provider], &mut self.woken);
        let admit = if let Some(k) = lane.granted.iter().position(|&g| g == id) {
            lane.granted.swap_remove(k);
            // Its slot was kept for it; had the window shrunk since, it waits among the retries.
            let admit = lane.window.admit();
            if admit == Admit::Wait {
                lane.line.enter(id, true);
            }
            admit
        } else if lane.window.room() > lane.granted.len() as u32 && lane.line.is_empty() {
            lane.window.admit()
        } else if lane.granted.is_empty() && lane.window.refuses() {
            Admit::Refuse
        } else {
            lane.line.enter(id, retry);
            Admit::Wait
        };
        if admit == Admit::Refuse {
            lane.line.wake_all(woken);
        }
        admit
    }

    /// Whether item `id` takes a slot of the fleet's limit on `provider` now, where the limit
    /// has `room` for it: it does when nobody of this execution waits for one or it is first in
    /// turn (then it leaves the turn, and the next asks now: the limit may have room for more).
    /// Else it waits its turn (it asks again, and is woken as a call of this execution ends): a
    /// `retry` after the retries already waiting and before every first call (an item that met a
    /// 429 does not wait behind the whole batch again, its budget running). A waiter that stopped
    /// asking is dropped when its turn comes.
    pub fn fleet_turn(&mut self, provider: usize, id: u32, retry: bool, now: u64, room: bool) -> bool {
        let (lane, woken) = (&mut self.lanes[provider], &mut self.woken);
        let fleet = &mut lane.fleet;
        if fleet.first().is_some_and(|f| f != id) && lane.fleet_head_ms + FLEET_TURN_STALE_MS <= now {
            fleet.take_first();
            lane.fleet_head_ms = now;
        }
        let first = fleet.first();
        if room && first.is_none_or(|f| f == id) {
            if first.is_some() {
                fleet.take_first();
                // The next in turn asks now: the limit may have room for more (it grew, or
                // several calls ended), and a turn taken one look at a time costs round trips.
                woken.extend(fleet.first());
            }
        } else {
            fleet.enter(id, retry);
        }
        if fleet.first() != first || first == Some(id) {
            lane.fleet_head_ms = now;
        }
        room && first.is_none_or(|f| f == id)
    }

    /// Item `id` polled and did not take the slot kept for it (or left the line another way: it
    /// moved on, or its wait ran out): the slot goes to the next in line.
    pub fn leave(&mut self, provider: usize, id: u32) {
        let (lane, woken) = (&mut self.lanes[provider], &mut self.woken);
        lane.line.leave(id);
        lane.fleet.leave(id);
        if let Some(k) = lane.granted.iter().position(|&g| g == id) {
            lane.granted.swap_remove(k);
        }
        lane.grant(woken);
    }

    /// The fleet's learned limits at a poll (`None` where a provider has none fresh).
    pub fn share(&mut self, fleet: impl Iterator<Item = Option<Advice>>) {
        for (lane, advice) in self.lanes.iter_mut().zip(fleet) {
            if let Some(a) = advice {
                lane.window.share(a);
            }
        }
    }

    /// A call admitted in `round` ended with `signal`: its slot, and any the window grew by, go
    /// to the first in line. Returns what it taught the window, for the fleet's row.
    pub fn release(&mut self, provider: usize, round: u32, signal: Signal) -> WindowNews {
        let (lane, woken) = (&mut self.lanes[provider], &mut self.woken);
        let before = lane.window.round;
        lane.window.release(round, signal);
        // Only the vendor's own word (a 429, a hinted 503, a timeout) is the fleet's news: a first
        // byte that slowed is as often this process's load as the vendor's queue (measured: one
        // n8n process answering 256 calls at once cut its window, and the next execution heard it).
        let news = lane.window.news(lane.window.round > before && matches!(signal, Signal::Congested { .. }));
        if lane.window.refuses() && lane.granted.is_empty() {
            // Nothing will free a slot before a success: everyone in line moves on.
            lane.line.wake_all(woken);
        }
        lane.grant(woken);
        news
    }
}

impl Lane {
    fn grant(&mut self, woken: &mut Vec<u32>) {
        while self.window.room() > self.granted.len() as u32 {
            let Some(id) = self.line.take_first() else { break };
            self.granted.push(id);
            woken.push(id);
        }
        // A call of this execution ended: the fleet's slot it held may be free, first in turn
        // asks now rather than at its next look.
        woken.extend(self.fleet.first());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Pool {
        use crate::config::{ChainConfig, ProviderConfig};
        let providers = vec![ProviderConfig { name: "vendor".into(), ..Default::default() }];
        Pool::new(&ChainConfig { providers, ..Default::default() }.validate().unwrap(), 256)
    }

    #[test]
    fn at_the_fleets_limit_a_retry_takes_its_turn_before_first_calls_and_one_gone_holds_nobody() {
        let mut p = pool();
        for (id, retry) in [(1, false), (2, false), (3, true), (4, true)] {
            assert!(!p.fleet_turn(0, id, retry, 0, false), "the limit is spent: it waits its turn");
        }
        assert!(!p.fleet_turn(0, 1, false, 10, true), "a retry waits ahead of it");
        assert!(p.fleet_turn(0, 3, true, 10, true), "the first retry in turn");
        assert_eq!(p.take_woken(), vec![4], "the next in turn asks now");
        // 4, first since 10, never asks (deferred, gone elsewhere): a second on, it holds
        // nobody's turn.
        assert!(!p.fleet_turn(0, 1, false, FLEET_TURN_STALE_MS + 9, true));
        assert!(p.fleet_turn(0, 1, false, FLEET_TURN_STALE_MS + 10, true));
        assert!(!p.fleet_turn(0, 5, false, FLEET_TURN_STALE_MS + 11, true), "a newcomer waits behind 2");
        assert!(p.fleet_turn(0, 2, false, FLEET_TURN_STALE_MS + 12, true));
    }

    #[test]
    fn in_the_windows_line_a_retry_waits_before_first_calls_in_the_order_retries_came() {
        let mut p = pool();
        let mut out = Vec::new();
        while let Admit::Go { round } = p.admit(0, 0, false) {
            out.push(round);
        }
        p.leave(0, 0);
        for (id, retry) in [(1, false), (2, false), (3, true), (4, true)] {
            assert_eq!(p.admit(0, id, retry), Admit::Wait);
        }
        let mut woken = Vec::new();
        for round in out.drain(..).take(4) {
            p.release(0, round, Signal::Served { first_byte_ms: Some(100) });
            woken.extend(p.take_woken());
        }
        assert_eq!(woken, vec![3, 4, 1, 2]);
    }
}
