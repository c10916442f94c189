//! What the fleet simulators (`simulate_concurrency`, `simulate_priority`) share: their command
//! line and their queue of events in virtual time.
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// `--k 4 --seed 7 --json`: the vendor's calls at once, the seed, and a JSON line at the end.
pub struct Args {
    pub k: u32,
    pub seed: u64,
    pub json: bool,
}

/// The command line, or its usage and exit 2.
pub fn args(name: &str) -> Args {
    let mut args = std::env::args().skip(1);
    let mut a = Args { k: 4, seed: 7, json: false };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--k" => a.k = args.next().and_then(|v| v.parse().ok()).expect("--k needs a whole number"),
            "--seed" => a.seed = args.next().and_then(|v| v.parse().ok()).expect("--seed needs a whole number"),
            "--json" => a.json = true,
            _ => {
                eprintln!("{name} [--k 4] [--seed 7] [--json]");
                std::process::exit(2);
            }
        }
    }
    a
}

/// Events by time, ties in the order they were set.
pub struct Events<E: Ord> {
    heap: BinaryHeap<Reverse<(u64, u64, E)>>,
    seq: u64,
}

impl<E: Ord> Default for Events<E> {
    fn default() -> Self {
        Events { heap: BinaryHeap::new(), seq: 0 }
    }
}

impl<E: Ord> Events<E> {
    pub fn at(&mut self, t: u64, ev: E) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, ev)));
    }

    /// The next event and its time.
    pub fn next(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|Reverse((t, _, ev))| (t, ev))
    }
}
