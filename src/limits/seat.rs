//! A worker's seat at a provider's fleet limit: its share as last read, its calls out, what its
//! served calls earned towards growth, and the first bytes it measured (the gradient). Kept by the
//! engine across a worker's items and executions, so a call within the share costs no store
//! write ([`crate::limits::fleet_limit`] reads and writes the row).
use crate::limits::concurrency::{tolerance, FirstByte, FirstByteTrend, Signal};
use crate::limits::fleet_limit::{allowance, limit, live, Rules, Taker};
use crate::limits::learned_limit::{self, LimitRow, STALE_MS};

/// A worker's seats at the limits of one chain's providers (one per provider), kept by the
/// engine across its items and executions: its calls within its shares cost no store write.
#[derive(Debug, Clone, PartialEq)]
pub struct Seats {
    pub holder: String,
    pub seats: Vec<Seat>,
    /// Its chain's fair-share weight (`Chain::share_weight`).
    pub weight: u32,
}

impl Seats {
    pub fn new(holder: String, providers: usize) -> Seats {
        Seats { holder, seats: vec![Seat::default(); providers], weight: 1 }
    }

    /// Its parts counted under `key` (in its holder's name) at `weight` in the fair split; an
    /// empty key: a key of its own.
    pub fn keyed(self, key: &str, weight: u32) -> Seats {
        Seats { holder: learned_limit::keyed(self.holder, key), weight: weight.max(1), ..self }
    }

    /// Who takes provider `i`'s next slot; `on_memory`: it keeps to its safe share (`start`: none).
    pub fn taker(&self, i: usize, on_memory: bool, start: u32) -> Taker {
        let s = &self.seats[i];
        Taker {
            holder: self.holder.clone(),
            keeps: true,
            in_use: s.in_use,
            served_full: s.served_full,
            held_since: s.held_since,
            weight: self.weight,
            safe: on_memory.then(|| s.safe.unwrap_or(start)),
        }
    }
}

/// A worker's seat at one provider's limit, kept by the engine across its items and executions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Seat {
    pub in_use: u32,
    pub served_full: u32,
    /// Its share as last read (whether a served call was sent at the full share).
    pub slots: u32,
    /// Its calls filled its share since it last grew: every call served since counts to growth
    /// (a round's calls come back one by one, the first alone at the full share).
    pub filled: bool,
    trend: FirstByteTrend,
    /// The last cut of the limit it heard of: served calls before it do not count to growth.
    heard_ms: u64,
    /// The limit as last read has met no congestion yet (its gradient's tolerance).
    slow_start: bool,
    /// Since when it waits at the spent limit, unserved (its registered wait in the row).
    held_since: Option<u64>,
    /// Its calls at once if the store fails (Doorman's safe capacity): the more of its share as
    /// last read from the fleet's row and the limit split between the holders it saw there.
    pub safe: Option<u32>,
}

impl Seat {
    /// The row as read now: its share there, and any cut since the last one it heard of (a cut
    /// anywhere starts its count of served calls again, so the fleet does not grow back at once).
    /// `shared`: the row is the fleet's (not this process's memory), so it says the safe share.
    pub fn read(&mut self, row: &LimitRow, holder: &str, now: u64, rules: Rules, shared: bool) {
        self.slots = allowance(row, holder, now, rules);
        if shared && row.limit > 0 && now.saturating_sub(row.updated_ms) < STALE_MS {
            let others = live(row, now).filter(|s| s.holder != holder).count() as u32;
            self.safe = Some(self.slots.max(limit(row, now, rules) / (others + 1)).max(1));
        }
        self.slow_start = row.plateau == 0;
        let waits = live(row, now).any(|s| s.holder == holder && s.wants);
        self.held_since = waits.then(|| self.held_since.unwrap_or(now));
        if row.congested_at_ms > self.heard_ms {
            self.heard_ms = row.congested_at_ms;
            self.served_full = 0;
        }
    }

    /// A call of this seat was sent; `grew`: taking it grew the limit (the next growth needs a
    /// round at the grown share).
    pub fn sent(&mut self, grew: bool) {
        self.in_use += 1;
        // Served: its next wait is a wait of its own.
        self.held_since = None;
        if grew {
            self.served_full = 0;
            self.filled = false;
        }
        self.filled |= self.in_use >= self.slots.max(1);
    }

    /// A call of this seat ended with `signal`: what its first byte told (for the fleet's row).
    pub fn end(&mut self, signal: Signal) -> FirstByte {
        let full = self.filled || self.in_use >= self.slots;
        self.in_use = self.in_use.saturating_sub(1);
        match signal {
            Signal::Served { first_byte_ms } => {
                let calls = f64::from(self.slots.max(1));
                let ms = first_byte_ms.map(|ms| ms as f64);
                // A first byte far above the provider's own baseline: it queues, do not grow.
                let queued = ms.is_some_and(|ms| self.trend.slower(ms, calls, tolerance(self.slow_start)));
                if full && !queued {
                    self.served_full += 1;
                }
                return self.trend.first_byte(ms);
            }
            Signal::Congested { .. } => self.served_full = 0,
            Signal::Failed | Signal::Neutral => {}
        }
        FirstByte::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::fleet_limit::tests::{seat, RULES};
    use crate::limits::fleet_limit::{take, Take};
    use crate::limits::learned_limit::Share;

    /// Calls one worker has out after `tries` takes on its memory's fresh row, none ending.
    fn calls_on_memory(safe: Option<u32>, tries: u64) -> u32 {
        let (mut row, mut in_use) = (LimitRow::default(), 0);
        for t in 0..tries {
            match take(&row, &Taker { safe, ..seat("a", in_use, 100) }, 2_000 + t, RULES) {
                Take::Local => in_use += 1,
                Take::Write { row: next, .. } => (row, in_use) = (next, in_use + 1),
                Take::Full { .. } => {}
            }
        }
        in_use
    }

    #[test]
    fn on_its_memory_a_worker_keeps_to_the_safe_share_it_last_knew_not_the_whole_limit() {
        // The fleet's row: a limit of 8, four workers holding 2 each.
        let shares =
            ["a", "b", "c", "d"].map(|h| Share { holder: h.into(), slots: 2, until_ms: 20_000, ..Default::default() });
        let fleet = LimitRow { limit: 8, plateau: 9, shares: shares.to_vec(), ..Default::default() };
        let mut mine = Seat::default();
        mine.read(&fleet, "a", 1_000, RULES, true);
        assert_eq!(mine.safe, Some(2));
        // A worker that held nothing yet counts itself among the holders: 8 / 5.
        let mut new = Seat::default();
        new.read(&fleet, "e", 1_000, RULES, true);
        assert_eq!(new.safe, Some(1));
        // The store fails: its memory's row is fresh, and this worker alone there.
        assert_eq!(calls_on_memory(Some(2), 50), 2);
        assert!(calls_on_memory(None, 50) > 8, "its memory alone would grow past the fleet's limit");
        // Its memory's row says nothing of the fleet: the safe share stays what the fleet said.
        mine.read(&LimitRow { limit: 40, ..Default::default() }, "a", 1_000, RULES, false);
        assert_eq!(mine.safe, Some(2));
        // One that never read a fresh limit keeps to the breaker's threshold (the limit's start).
        let taker = Seats::new("w".into(), 1).taker(0, true, RULES.start);
        assert_eq!(taker.safe, Some(5));
    }
}
