//! The fleet's concurrency in virtual time: the incident's 40 queue-mode workers x 10 slots, 3000
//! one-item executions, against a vendor with a concurrency limit (429 + Retry-After: 1 above K
//! calls in flight) and one whose latency grows beyond K. Three policies side by side, each the
//! engine's own code: a fixed concurrency (every slot calls), adaptive per process (one
//! `concurrency::Window` per worker, as Netflix's and Envoy's limiters learn per process), and
//! adaptive shared (the `fleet_limit` shares of one limit row, each worker a `Seat`; the store
//! answers at once). A call not answered within the node's 10 s deadline is a timeout (congestion,
//! retried after 1 s like a 429). Deterministic for a seed.
//!
//! `simulate_concurrency [--k 4] [--seed 7] [--json]`
use resilient_engine::limits::concurrency::{Admit, Signal, Window};
use resilient_engine::limits::fleet_limit::{self, Rules, Take, Taker};
use resilient_engine::limits::learned_limit::LimitRow;
use resilient_engine::limits::seat::Seat;
use resilient_engine::rng::Rng;
use std::collections::VecDeque;

mod common;
use common::Events;

const WORKERS: usize = 40;
const SLOTS: usize = 10;
const EXECUTIONS: u32 = 3000;
/// A served call's time at the vendor, within K (ms).
const SERVICE_MS: u64 = 250;
/// The breaker's threshold: where every window and the shared limit start.
const THRESHOLD: u32 = 5;
const RETRY_AFTER_MS: u64 = 1000;
/// The node's per-attempt deadline (its default): a call not answered by then is a timeout,
/// congestion as a 429 is, retried after the same wait.
const DEADLINE_MS: u64 = 10_000;
/// Where the run stops if the backlog has not drained (virtual time, ms).
const HORIZON_MS: u64 = 3_600_000;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Vendor {
    /// 429 + Retry-After: 1 above K in flight.
    Capped,
    /// No 429: the time per call grows with the calls in flight beyond K.
    Slowing,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Policy {
    Fixed,
    PerProcess,
    Shared,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    /// A worker slot looks for work or asks again for a slot of the limit.
    Try { worker: usize, item: u32 },
    /// A call's answer: `congested` (a 429), `ms` its time, `sent` when it went.
    Answer { worker: usize, item: u32, congested: bool, ms: u64, sent: u64, round: u32 },
}

struct Sim {
    k: u32,
    vendor: Vendor,
    policy: Policy,
    now: u64,
    events: Events<Ev>,
    rng: Rng,
    queue: VecDeque<u32>,
    in_flight: u32,
    peak: u32,
    requests: u64,
    r429: u64,
    timeouts: u64,
    done: u32,
    windows: Vec<Window>,
    seats: Vec<Seat>,
    row: LimitRow,
}

impl Sim {
    fn at(&mut self, t: u64, ev: Ev) {
        self.events.at(t, ev);
    }

    fn rules(&self) -> Rules {
        Rules {
            start: THRESHOLD,
            ceiling: u32::MAX,
            lease_ms: 20_000,
            renew_below_ms: 11_000,
            below_plateau: false,
            rank: 1,
        }
    }

    /// A worker's slot with `item` asks to call: granted (its window round), or it waits.
    fn admit(&mut self, worker: usize) -> Option<u32> {
        match self.policy {
            Policy::Fixed => Some(0),
            Policy::PerProcess => match self.windows[worker].admit() {
                Admit::Go { round } => Some(round),
                Admit::Wait => None,
                // Spent before a first success: the engine defers the item; it comes back to a
                // window started afresh (as a new execution's).
                Admit::Refuse => {
                    self.windows[worker] = Window::new(THRESHOLD, SLOTS as u32);
                    None
                }
            },
            Policy::Shared => {
                let rules = self.rules();
                self.seats[worker].read(&self.row, &worker.to_string(), self.now, rules, true);
                let seat = &self.seats[worker];
                let taker = Taker::new(worker.to_string(), true, seat.in_use, seat.served_full, None);
                let (go, grew) = match fleet_limit::take(&self.row, &taker, self.now, self.rules()) {
                    Take::Local => (true, false),
                    Take::Write { row, grew } => {
                        self.row = row;
                        (true, grew)
                    }
                    Take::Full { register, .. } => {
                        if let Some(row) = register {
                            self.row = row;
                        }
                        (false, false)
                    }
                };
                let rules = self.rules();
                let seat = &mut self.seats[worker];
                seat.read(&self.row, &worker.to_string(), self.now, rules, true);
                go.then(|| {
                    seat.sent(grew);
                    0
                })
            }
        }
    }

    fn call(&mut self, worker: usize, item: u32, round: u32) {
        self.requests += 1;
        let arriving = self.in_flight + 1;
        self.peak = self.peak.max(arriving);
        let (congested, ms) = match self.vendor {
            Vendor::Capped if arriving > self.k => (true, 1),
            Vendor::Capped => (false, SERVICE_MS),
            // Beyond K the vendor queues: each call takes as much longer as it is over K.
            Vendor::Slowing => (false, SERVICE_MS * u64::from(arriving.max(self.k)) / u64::from(self.k)),
        };
        self.r429 += congested as u64;
        self.in_flight += 1;
        let ms = ms + self.rng.between(0, ms / 10);
        let timed_out = ms > DEADLINE_MS;
        self.timeouts += timed_out as u64;
        let (congested, ms) = if timed_out { (true, DEADLINE_MS) } else { (congested, ms) };
        self.at(self.now + ms, Ev::Answer { worker, item, congested, ms, sent: self.now, round });
    }

    fn answer(&mut self, worker: usize, item: u32, congested: bool, ms: u64, sent: u64, round: u32) {
        self.in_flight -= 1;
        let signal =
            if congested { Signal::Congested { failure: false } } else { Signal::Served { first_byte_ms: Some(ms) } };
        match self.policy {
            Policy::Fixed => {}
            Policy::PerProcess => self.windows[worker].release(round, signal),
            Policy::Shared => {
                let seat = &mut self.seats[worker];
                let heard = seat.end(signal);
                let news = fleet_limit::Released::new(worker.to_string(), true, seat.in_use, congested, heard, sent);
                if let Some(row) = fleet_limit::release(&self.row, &news, self.now, self.rules()) {
                    self.row = row;
                }
            }
        }
        if congested {
            let wait = RETRY_AFTER_MS + self.rng.between(0, 200);
            self.at(self.now + wait, Ev::Try { worker, item });
        } else {
            self.done += 1;
            // Its execution ended: a seat with no call out gives its share back (the node's
            // `idle_seats`), as the engine's worker does after each execution.
            if self.policy == Policy::Shared && self.seats[worker].in_use == 0 {
                if let Some(row) = fleet_limit::leave(&self.row, &worker.to_string(), self.now) {
                    self.row = row;
                }
            }
            self.next(worker);
        }
    }

    /// The slot takes the next execution in the queue, if any.
    fn next(&mut self, worker: usize) {
        if let Some(item) = self.queue.pop_front() {
            self.at(self.now, Ev::Try { worker, item });
        }
    }

    fn run(mut self) -> Row {
        for w in 0..WORKERS {
            for _ in 0..SLOTS {
                self.next(w);
            }
        }
        while let Some((t, ev)) = self.events.next() {
            if t > HORIZON_MS {
                break;
            }
            self.now = t;
            match ev {
                Ev::Try { worker, item } => match self.admit(worker) {
                    Some(round) => self.call(worker, item, round),
                    // Waits in line: looks again shortly (the node's paced wait).
                    None => {
                        let again = 20 + self.rng.between(0, 50);
                        self.at(self.now + again, Ev::Try { worker, item });
                    }
                },
                Ev::Answer { worker, item, congested, ms, sent, round } => {
                    self.answer(worker, item, congested, ms, sent, round)
                }
            }
        }
        let drain_s = self.now as f64 / 1000.0;
        Row {
            requests: self.requests,
            r429: self.r429,
            timeouts: self.timeouts,
            peak: self.peak,
            drain_s,
            done: self.done,
        }
    }
}

struct Row {
    requests: u64,
    r429: u64,
    timeouts: u64,
    peak: u32,
    drain_s: f64,
    /// Executions served by the end (all of them, unless the horizon came first).
    done: u32,
}

fn simulate(k: u32, vendor: Vendor, policy: Policy, seed: u64) -> Row {
    Sim {
        k,
        vendor,
        policy,
        now: 0,
        events: Events::default(),
        rng: Rng::seeded(seed),
        queue: (0..EXECUTIONS).collect(),
        in_flight: 0,
        peak: 0,
        requests: 0,
        r429: 0,
        timeouts: 0,
        done: 0,
        windows: (0..WORKERS).map(|_| Window::new(THRESHOLD, SLOTS as u32)).collect(),
        seats: vec![Seat::default(); WORKERS],
        row: LimitRow::default(),
    }
    .run()
}

fn main() {
    let common::Args { k, seed, json } = common::args("simulate_concurrency");
    let names = [
        (Policy::Fixed, "fixed (every slot calls)"),
        (Policy::PerProcess, "adaptive per process"),
        (Policy::Shared, "adaptive shared (this product)"),
    ];
    let mut out = Vec::new();
    println!("{WORKERS} workers x {SLOTS} slots, {EXECUTIONS} one-item executions, K = {k}, {SERVICE_MS} ms per call within K, seed {seed}");
    for vendor in [Vendor::Capped, Vendor::Slowing] {
        let title = match vendor {
            Vendor::Capped => format!("vendor: 429 + Retry-After: 1 above {k} in flight"),
            Vendor::Slowing => format!("vendor: no 429, each call slower by the calls in flight beyond {k}"),
        };
        println!(
            "\n{title}\n    {:<32} {:>9} {:>7} {:>9} {:>14} {:>15} {:>6}",
            "policy", "requests", "429s", "timeouts", "peak in flight", "time to drain s", "served"
        );
        let rows: Vec<(Policy, Row)> = names.iter().map(|&(p, _)| (p, simulate(k, vendor, p, seed))).collect();
        for ((_, name), (_, r)) in names.iter().zip(&rows) {
            println!(
                "    {name:<32} {:>9} {:>7} {:>9} {:>14} {:>15} {:>6}",
                r.requests,
                r.r429,
                r.timeouts,
                r.peak,
                if r.done == EXECUTIONS { format!("{:.1}", r.drain_s) } else { "never".into() },
                r.done
            );
            out.push(format!(
                "{{\"vendor\":\"{vendor:?}\",\"policy\":\"{name}\",\"requests\":{},\"r429\":{},\"timeouts\":{},\"peak\":{},\"drain_s\":{:.1},\"served\":{}}}",
                r.requests, r.r429, r.timeouts, r.peak, r.drain_s, r.done
            ));
        }
        if vendor == Vendor::Capped {
            let (pp, sh) = (&rows[1].1, &rows[2].1);
            let fewer = pp.r429 as f64 / (sh.r429.max(1)) as f64;
            let drain = sh.drain_s / pp.drain_s;
            let ok = |b: bool| if b { "[ok]  " } else { "[MISS]" };
            println!("  {} shared: {fewer:.1}x fewer 429s than per process (goal >= 8x)", ok(fewer >= 8.0));
            println!(
                "  {} shared drains in {:.2}x the per-process time (goal 0.8 .. 1.2)",
                ok((0.8..=1.2).contains(&drain)),
                drain
            );
        }
    }
    if json {
        println!("[{}]", out.join(","));
    }
}
