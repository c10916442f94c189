//! The fleet: n8n queue mode, one shared queue of executions; a worker takes the next one while
//! it has a free slot (its concurrency). A slot stays busy while its item sleeps, as in n8n.
use std::collections::VecDeque;

pub struct Fleet {
    free: Vec<u32>,
    total_free: u64,
    next: usize,
    pub queue: VecDeque<u32>,
}

impl Fleet {
    pub fn new(workers: usize, concurrency: u32) -> Self {
        Fleet {
            free: vec![concurrency; workers],
            total_free: workers as u64 * concurrency as u64,
            next: 0,
            queue: VecDeque::new(),
        }
    }

    /// A worker with a free slot, taken in turn (round robin), or `None` when all are busy.
    pub fn take_slot(&mut self) -> Option<usize> {
        if self.total_free == 0 {
            return None;
        }
        let n = self.free.len();
        let w = (0..n).map(|i| (self.next + i) % n).find(|&w| self.free[w] > 0)?;
        self.free[w] -= 1;
        self.total_free -= 1;
        self.next = (w + 1) % n;
        Some(w)
    }

    pub fn release(&mut self, worker: usize) {
        self.free[worker] += 1;
        self.total_free += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_go_round_robin_and_run_out() {
        let mut f = Fleet::new(3, 2);
        let taken: Vec<usize> = std::iter::from_fn(|| f.take_slot()).collect();
        assert_eq!(taken, [0, 1, 2, 0, 1, 2]);
        f.release(1);
        assert_eq!(f.take_slot(), Some(1));
    }
}
