//! Virtual time: a queue of wake-ups ordered by time, then by the order they were set, so a run
//! jumps from one event to the next instead of ticking every millisecond.
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// Execution `n` enters the queue for the first time.
    Arrive(u32),
    /// Deferred execution `n` is due again (its `retry_at`).
    Resubmit(u32),
    /// The item in slot `n` wakes from a sleep.
    Wake(u32),
    /// The answer to call `c` (world-unique) of the item in slot `n` arrives; ignored if that
    /// call is no longer out (aborted, its item ended, the slot taken by another item since).
    Answer(u32, u64),
    /// The hedge timer `t` (world-unique) of the item in slot `n` is due; ignored if stale.
    Hedge(u32, u64),
}

#[derive(Default)]
pub struct Agenda {
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    seq: u64,
}

impl Agenda {
    pub fn at(&mut self, t_ms: u64, e: Event) {
        self.seq += 1;
        self.heap.push(Reverse((t_ms, self.seq, e)));
    }

    pub fn next(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_time_then_by_order_set() {
        let mut a = Agenda::default();
        a.at(5, Event::Wake(1));
        a.at(3, Event::Answer(9, 1));
        a.at(5, Event::Arrive(0));
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| a.next()).collect();
        assert_eq!(order, [(3, Event::Answer(9, 1)), (5, Event::Wake(1)), (5, Event::Arrive(0))]);
    }
}
