//! Tokens per minute in virtual time: 40 workers x 10 slots and a backlog of LLM calls against a
//! vendor that enforces 100k tokens per minute as OpenAI and Anthropic do (a call is admitted when
//! its input and its maximum output fit in the last minute's count, then billed at its real
//! usage; above, 429 with the time until it fits), answering its remaining count on every call.
//! Prompts of 500-8000 tokens (a fifth in CJK text), whose true count differs from the
//! character-based approximation by up to 25 % either way; outputs below their 1000-token maximum.
//! Two policies, each the engine's own code: requests-only limiting (today's Rate Limit, set to the
//! vendor's limit over the mean call, and a 429's reset closing the gate for every worker) and
//! token-aware limiting (`token_limit`, as the node runs it: reserve the estimate, settle at the
//! usage, correct by the remaining count). Deterministic for a seed.
//!
//! `simulate_tokens [--calls 2000] [--seed 7]`
use resilient_engine::limits::rate_gate::{self, GateRow, RateLimit, Take};
use resilient_engine::limits::spend_hold::SpendRow;
use resilient_engine::limits::token_budget::{self, Estimate, Limits, TokenRow, MINUTE_MS};
use resilient_engine::limits::token_limit::{
    self, Period, Prices, Remaining, Reservation, Settle, TokenRules, Used, VendorCount,
};
use resilient_engine::rng::Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

const WORKERS: usize = 40;
const SLOTS: usize = 10;
const TPM: u64 = 100_000;
const MAX_OUTPUT: u64 = 1_000;
/// The provider's Tokens per Minute as the node hands it to the engine.
const RULES: TokenRules = TokenRules {
    limits: Limits {
        per_minute: Some(TPM),
        input_per_minute: None,
        output_per_minute: None,
        spend_cap_micros: None,
        period: Period::Day,
    },
    output_reserve: MAX_OUTPUT,
    prices: Prices { input: 0.0, output: 0.0, cached_input: 0.0, reasoning: 0.0, cache_write: 0.0 },
};

#[derive(Clone, Copy, Debug)]
struct Job {
    /// The prompt's true tokens (the vendor's count) and what the approximation reads.
    true_input: u64,
    latin_chars: u64,
    cjk_chars: u64,
    output: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Policy {
    RequestsOnly,
    TokenAware,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Ev {
    Try(usize),
    /// A gate slot reserved for it comes due: it calls without taking another.
    Reserved(usize),
    Done {
        job: usize,
        reserved_at: u64,
        reserved: u64,
        estimate: (u64, u64),
    },
}

struct Vendor {
    /// (time, tokens) charged within the last minute.
    log: VecDeque<(u64, u64)>,
}

impl Vendor {
    fn used(&mut self, now: u64) -> u64 {
        while self.log.front().is_some_and(|&(t, _)| t + MINUTE_MS <= now) {
            self.log.pop_front();
        }
        self.log.iter().map(|&(_, n)| n).sum()
    }

    /// When a call needing `need` fits, were nothing else added.
    fn fits_at(&mut self, now: u64, need: u64) -> u64 {
        let mut used = self.used(now);
        for &(t, n) in &self.log {
            if used + need <= TPM {
                break;
            }
            used -= n;
            if used + need <= TPM {
                return t + MINUTE_MS;
            }
        }
        now
    }
}

struct Sim {
    policy: Policy,
    now: u64,
    seq: u64,
    events: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    rng: Rng,
    jobs: Vec<Job>,
    queue: VecDeque<usize>,
    vendor: Vendor,
    gate: GateRow,
    tokens: TokenRow,
    requests: u64,
    r429: u64,
    billed: u64,
    done: usize,
    first_ms: u64,
}

impl Sim {
    fn at(&mut self, t: u64, ev: Ev) {
        self.seq += 1;
        self.events.push(Reverse((t, self.seq, ev)));
    }

    fn estimate(job: &Job) -> Estimate {
        Estimate { input: token_budget::input_tokens(None, job.latin_chars, job.cjk_chars), max_output: MAX_OUTPUT }
    }

    /// No spend cap here: nothing is held.
    fn held(&self) -> token_limit::SpendHolds<'static> {
        static NONE: SpendRow = SpendRow { held: Vec::new(), version: 0 };
        token_limit::SpendHolds { row: &NONE, lease_ms: 0 }
    }

    fn try_call(&mut self, job: usize, slot_held: bool) {
        let j = self.jobs[job];
        let est = Self::estimate(&j);
        let mut reservation = Reservation {
            at_ms: self.now,
            tokens: 0,
            input: 0,
            output: 0,
            estimate: (est.input, est.max_output),
            held_micros: 0,
            quota: Default::default(),
        };
        match self.policy {
            Policy::RequestsOnly if slot_held && self.now >= self.gate.closed_until_ms => {}
            Policy::RequestsOnly => {
                // The user's Rate Limit: the vendor's tokens over the mean call's.
                let mean = (500 + 8_000) / 2 + MAX_OUTPUT;
                let limit = RateLimit { requests: (TPM / mean) as u32, period_ms: MINUTE_MS, burst: 1 };
                match rate_gate::take(&self.gate, Some(&limit), self.now, 3_600_000) {
                    Take::Now { row } => self.gate = row.unwrap_or_else(|| self.gate.clone()),
                    Take::Reserved { at_ms, row } => {
                        self.gate = row;
                        return self.at(at_ms, Ev::Reserved(job)); // its slot, taken then
                    }
                    Take::Wait { until_ms, .. } => {
                        let jitter = self.rng.between(0, 1_000);
                        return self.at(until_ms + jitter, Ev::Try(job));
                    }
                }
            }
            Policy::TokenAware => match token_limit::take(&self.tokens, &RULES, est, self.held(), self.now) {
                token_limit::Take::Granted { row, reservation: r, .. } => {
                    self.tokens = row.unwrap_or_else(|| self.tokens.clone());
                    reservation = r;
                }
                token_limit::Take::Full { until_ms, .. } => {
                    let jitter = self.rng.between(0, 1_000);
                    return self.at(until_ms + jitter, Ev::Try(job));
                }
            },
        }
        self.requests += 1;
        self.first_ms = self.first_ms.min(self.now);
        let need = j.true_input + MAX_OUTPUT;
        if self.vendor.used(self.now) + need > TPM {
            self.r429 += 1;
            let reset = self.vendor.fits_at(self.now, need);
            match self.policy {
                // Today's rule: a 429's reset closes the gate for every worker.
                Policy::RequestsOnly => {
                    if let Some(row) = rate_gate::close(&self.gate, reset) {
                        self.gate = row;
                    }
                }
                Policy::TokenAware => {
                    // Refused: nothing used; the vendor's remaining count corrects the minute.
                    let used = token_limit::used(&RULES, &reservation, None, true);
                    let s = Settle { reservation, used, remaining: self.vendor_says() };
                    if let Some(row) = token_limit::settle(&self.tokens, &RULES, &s, self.now) {
                        self.tokens = row;
                    }
                }
            }
            let jitter = self.rng.between(0, 1_000);
            return self.at(reset.max(self.now) + jitter, Ev::Try(job));
        }
        // Admitted: charged its input and maximum output now, billed its usage at the end.
        self.vendor.log.push_back((self.now, need));
        let ms = 1_000 + j.output * 20; // 50 tokens a second
        let (reserved_at, reserved, estimate) = (reservation.at_ms, reservation.tokens, reservation.estimate);
        self.at(self.now + ms, Ev::Done { job, reserved_at, reserved, estimate });
    }

    /// The vendor's remaining count on an answer, as its headers say it (no reset told).
    fn vendor_says(&mut self) -> Remaining {
        let left = TPM.saturating_sub(self.vendor.used(self.now));
        Remaining { total: Some(VendorCount { left, full_at_ms: None }), ..Default::default() }
    }

    fn done(&mut self, job: usize, reserved_at: u64, reserved: u64, estimate: (u64, u64)) {
        let j = self.jobs[job];
        let usage = j.true_input + j.output;
        // The vendor's charge becomes the usage (its log entry of this call).
        if let Some(e) = self.vendor.log.iter_mut().find(|(t, n)| *t == reserved_at && *n == j.true_input + MAX_OUTPUT)
        {
            e.1 = usage;
        }
        self.billed += usage;
        if self.policy == Policy::TokenAware {
            let reservation = Reservation {
                at_ms: reserved_at,
                tokens: reserved,
                input: 0,
                output: 0,
                estimate,
                held_micros: 0,
                quota: Default::default(),
            };
            let used = Used { input: j.true_input, output: j.output, estimated: false, cost_micros: 0 };
            let s = Settle { reservation, used, remaining: self.vendor_says() };
            if let Some(row) = token_limit::settle(&self.tokens, &RULES, &s, self.now) {
                self.tokens = row;
            }
        }
        self.done += 1;
        if let Some(next) = self.queue.pop_front() {
            self.at(self.now, Ev::Try(next));
        }
    }

    fn run(mut self) -> (u64, u64, f64, f64) {
        for _ in 0..WORKERS * SLOTS {
            if let Some(job) = self.queue.pop_front() {
                self.at(0, Ev::Try(job));
            }
        }
        while let Some(Reverse((t, _, ev))) = self.events.pop() {
            self.now = t;
            match ev {
                Ev::Try(job) => self.try_call(job, false),
                Ev::Reserved(job) => self.try_call(job, true),
                Ev::Done { job, reserved_at, reserved, estimate } => self.done(job, reserved_at, reserved, estimate),
            }
        }
        assert_eq!(self.done, self.jobs.len(), "every call served");
        let minutes = (self.now - self.first_ms) as f64 / MINUTE_MS as f64;
        let per_minute = self.billed as f64 / minutes;
        (self.requests, self.r429, per_minute / TPM as f64, self.now as f64 / 1000.0)
    }
}

fn jobs(n: usize, seed: u64) -> Vec<Job> {
    let mut rng = Rng::seeded(seed);
    (0..n)
        .map(|_| {
            let approx = rng.between(500, 8_000);
            // The true count is within 25 % of the approximation, either way.
            let true_input = approx * rng.between(75, 125) / 100;
            let cjk = rng.between(0, 4) == 0;
            Job {
                true_input,
                latin_chars: if cjk { 0 } else { approx * 4 },
                cjk_chars: if cjk { approx } else { 0 },
                output: rng.between(200, MAX_OUTPUT),
            }
        })
        .collect()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut calls, mut seed) = (2000usize, 7u64);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--calls" => calls = args.next().and_then(|v| v.parse().ok()).expect("--calls needs a whole number"),
            "--seed" => seed = args.next().and_then(|v| v.parse().ok()).expect("--seed needs a whole number"),
            _ => {
                eprintln!("simulate_tokens [--calls 2000] [--seed 7]");
                std::process::exit(2);
            }
        }
    }
    let work = jobs(calls, seed);
    println!(
        "{WORKERS} workers x {SLOTS} slots, {calls} calls, a {TPM}-token-per-minute vendor, prompts of 500-8000 tokens (a fifth CJK, true count within 25 % of the approximation), outputs of 200-{MAX_OUTPUT}, seed {seed}"
    );
    println!("    {:<36} {:>9} {:>7} {:>22} {:>9}", "policy", "requests", "429s", "tokens accepted / min", "drain s");
    let mut rows = Vec::new();
    for (policy, name) in [
        (Policy::RequestsOnly, "requests only (Rate Limit, today)"),
        (Policy::TokenAware, "token-aware (this product)"),
    ] {
        let sim = Sim {
            policy,
            now: 0,
            seq: 0,
            events: BinaryHeap::new(),
            rng: Rng::seeded(seed ^ 0x5eed),
            jobs: work.clone(),
            queue: (0..work.len()).collect(),
            vendor: Vendor { log: VecDeque::new() },
            gate: GateRow::default(),
            tokens: TokenRow::default(),
            requests: 0,
            r429: 0,
            billed: 0,
            done: 0,
            first_ms: u64::MAX,
        };
        let (requests, r429, share, drain) = sim.run();
        println!("    {name:<36} {requests:>9} {r429:>7} {:>21.1}% {drain:>9.1}", share * 100.0);
        rows.push((r429, share));
    }
    let (r429, share) = rows[1];
    let ok = |b: bool| if b { "[ok]  " } else { "[MISS]" };
    println!("  {} token-aware: {r429} answered 429 (goal 0)", ok(r429 == 0));
    println!(
        "  {} token-aware: the vendor accepted {:.1} % of its limit a minute (goal >= 85 %)",
        ok(share >= 0.85),
        share * 100.0
    );
}
