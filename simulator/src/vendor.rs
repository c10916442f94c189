//! The scripted vendor: latency, outage windows, a quota answered with 429 + Retry-After above
//! it, and a ban rule (over the quota for N seconds in a row: every request refused for a while).
//! Order of checks per request: banned? -> in an outage? -> over the quota? -> served.
//! A served answer takes the fixed latency plus uniform jitter, or a log-normal draw (a median and
//! a p95), and a share of the calls may be slow (a long tail: they take a fixed, long time).
//! The latency may change over time (`latency_changes`: from a moment on, another latency).
use resilient_engine::facts::retry_after::HintHeaders;
use resilient_engine::rng::Rng;
use resilient_engine::verdict::outcome::Outcome;

/// How the vendor turns a request away.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    Status(u16),
    /// A network error code as Node reports it (`ECONNREFUSED`, `ECONNRESET`, ...).
    Error(String),
}

impl Refusal {
    pub fn label(&self) -> String {
        match self {
            Refusal::Status(s) => s.to_string(),
            Refusal::Error(e) => e.clone(),
        }
    }

    fn outcome(&self) -> Outcome {
        match self {
            Refusal::Status(status) => Outcome::status(*status, HintHeaders::default()),
            Refusal::Error(code) => Outcome::Error { code: code.clone() },
        }
    }
}

#[derive(Debug, Clone)]
pub struct Outage {
    pub from_ms: u64,
    pub to_ms: u64,
    pub refusal: Refusal,
    /// Latency of the refusals (a hanging vendor answers late); `None` = the vendor's latency.
    pub latency_ms: Option<u64>,
    /// The share of requests the outage refuses (1: all; 0.3: a storm of 30 %), at random.
    pub share: f64,
}

/// Fixed windows of `period_ms`; the `requests`-th + 1 request in a window gets a 429.
#[derive(Debug, Clone)]
pub struct Quota {
    pub requests: u32,
    pub period_ms: u64,
    /// Retry-After sent with the 429; `None` = the seconds left in the window (at least 1).
    pub retry_after_s: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Ban {
    /// Seconds in a row with at least one 429 that trigger the ban.
    pub over_quota_s: u32,
    pub for_ms: u64,
    pub refusal: Refusal,
    pub latency_ms: Option<u64>,
}

/// A log-normal latency given by its median and p95: `median x e^(sigma z)`, z standard normal,
/// sigma = ln(p95 / median) / 1.645 (the standard normal's 95th percentile).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogNormal {
    pub median_ms: f64,
    pub p95_ms: f64,
}

impl LogNormal {
    pub fn sigma(&self) -> f64 {
        (self.p95_ms / self.median_ms).ln() / 1.645
    }

    /// One draw (Box-Muller on two uniforms of the vendor's stream; the sine half is not kept).
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let u1 = 1.0 - rng.unit(); // (0, 1]: the logarithm stays finite
        let u2 = rng.unit();
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        (self.median_ms * (self.sigma() * z).exp()).round() as u64
    }

    pub fn mean_ms(&self) -> f64 {
        self.median_ms * (self.sigma() * self.sigma() / 2.0).exp()
    }
}

/// From `at_ms` on, the vendor's served calls take another latency: a fixed `latency_ms`, or
/// (a log-normal vendor) another median and p95. The same draws as before the change, scaled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyChange {
    pub at_ms: u64,
    pub latency: Latency,
}

/// A served call's usual latency (before jitter and the slow share).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Latency {
    Fixed(u64),
    LogNormal(LogNormal),
}

/// The long tail: this share of the calls takes `ms` instead of the usual latency.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slow {
    pub share: f64,
    pub ms: u64,
}

#[derive(Debug, Clone)]
pub struct VendorSpec {
    pub latency_ms: u64,
    pub latency_jitter_ms: u64,
    /// Instead of `latency_ms`: a log-normal latency (jitter is still added when given).
    pub lognormal: Option<LogNormal>,
    /// A share of the calls answered (served, or a 429) only after a long time.
    pub slow: Option<Slow>,
    pub outages: Vec<Outage>,
    /// Changes of the usual latency over time, in time order (none: the latency above throughout).
    pub latency_changes: Vec<LatencyChange>,
    pub quota: Option<Quota>,
    pub ban: Option<Ban>,
    /// Whether requests answered by an outage still count against the quota (an edge limiter in
    /// front of a broken backend). Default false: a 502 from the load balancer is not metered.
    pub limiter_during_outage: bool,
}

impl VendorSpec {
    pub fn outage_at(&self, now: u64) -> Option<&Outage> {
        self.outages.iter().find(|o| o.from_ms <= now && now < o.to_ms)
    }

    /// The mean latency of a served call (the ideal's figure).
    pub fn mean_latency_ms(&self) -> f64 {
        let usual =
            self.lognormal.map_or(self.latency_ms as f64, |l| l.mean_ms()) + self.latency_jitter_ms as f64 / 2.0;
        match self.slow {
            Some(s) => (1.0 - s.share) * usual + s.share * s.ms as f64,
            None => usual,
        }
    }

    /// The median latency of a served call without the slow tail.
    pub fn tail_free_median_ms(&self) -> f64 {
        self.lognormal.map_or(self.latency_ms as f64, |l| l.median_ms) + self.latency_jitter_ms as f64 / 2.0
    }

    /// The usual latency of a call served at `now` (the last change at or before it, if any).
    pub fn latency_at(&self, now: u64) -> Latency {
        match self.latency_changes.iter().rev().find(|c| c.at_ms <= now) {
            Some(c) => c.latency,
            None => match self.lognormal {
                Some(l) => Latency::LogNormal(l),
                None => Latency::Fixed(self.latency_ms),
            },
        }
    }

    /// The tail-free median from `now` on (`tail_free_median_ms` after the changes up to `now`).
    pub fn median_at_ms(&self, now: u64) -> f64 {
        let usual = match self.latency_at(now) {
            Latency::Fixed(ms) => ms as f64,
            Latency::LogNormal(l) => l.median_ms,
        };
        usual + self.latency_jitter_ms as f64 / 2.0
    }

    /// When the last outage ends: the vendor has recovered from then on.
    pub fn recovered_ms(&self) -> Option<u64> {
        self.outages.iter().map(|o| o.to_ms).max()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    Served,
    Outage,
    OverQuota,
    Banned,
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub outcome: Outcome,
    pub latency_ms: u64,
    pub kind: ReplyKind,
}

/// A vendor's running state during one simulation.
pub struct Vendor<'s> {
    pub spec: &'s VendorSpec,
    window: u64,
    used: u32,
    last_over_s: Option<u64>,
    streak: u32,
    banned_until: u64,
    /// Every ban as (from, until) in ms.
    pub bans: Vec<(u64, u64)>,
    rng: Rng,
}

impl<'s> Vendor<'s> {
    pub fn new(spec: &'s VendorSpec, rng: Rng) -> Self {
        Vendor { spec, window: u64::MAX, used: 0, last_over_s: None, streak: 0, banned_until: 0, bans: Vec::new(), rng }
    }

    /// An answer's latency: `fixed` for a refusal that has its own, else the vendor's (drawn).
    /// The log-normal and the slow share draw only when the scenario has them, so a scenario
    /// without them draws exactly what it always did.
    /// A latency change at `now` draws the same way, with its own figures.
    fn latency(&mut self, fixed: Option<u64>, now: u64) -> u64 {
        if let Some(ms) = fixed {
            return ms + self.rng.between(0, self.spec.latency_jitter_ms);
        }
        let usual = match self.spec.latency_at(now) {
            Latency::LogNormal(l) => l.draw(&mut self.rng),
            Latency::Fixed(ms) => ms,
        } + self.rng.between(0, self.spec.latency_jitter_ms);
        match self.spec.slow {
            Some(s) if self.rng.unit() < s.share => s.ms,
            _ => usual,
        }
    }

    /// A request arrives at `now`: the answer and how long it takes.
    pub fn answer(&mut self, now: u64) -> Reply {
        if now < self.banned_until {
            let ban = self.spec.ban.as_ref().expect("banned only with a ban rule");
            let latency_ms = self.latency(ban.latency_ms, now);
            return Reply { outcome: ban.refusal.outcome(), latency_ms, kind: ReplyKind::Banned };
        }
        // A storm (share < 1) refuses only its share of the requests; the others are served.
        let outage = self.spec.outage_at(now).cloned().filter(|o| o.share >= 1.0 || self.rng.unit() < o.share);
        if outage.is_none() || self.spec.limiter_during_outage {
            if let Some(reply) = self.meter(now) {
                return reply;
            }
        }
        if let Some(o) = outage {
            let latency_ms = self.latency(o.latency_ms, now);
            return Reply { outcome: o.refusal.outcome(), latency_ms, kind: ReplyKind::Outage };
        }
        let latency_ms = self.latency(None, now);
        Reply { outcome: Outcome::status(200, HintHeaders::default()), latency_ms, kind: ReplyKind::Served }
    }

    /// Count the request against the quota; a 429 when it is over (and maybe the start of a ban).
    fn meter(&mut self, now: u64) -> Option<Reply> {
        let quota = self.spec.quota.as_ref()?;
        let window = now / quota.period_ms;
        if window != self.window {
            self.window = window;
            self.used = 0;
        }
        self.used += 1;
        if self.used <= quota.requests {
            return None;
        }
        let second = now / 1000;
        match self.last_over_s {
            Some(s) if s == second => {}
            Some(s) if s + 1 == second => self.streak += 1,
            _ => self.streak = 1,
        }
        self.last_over_s = Some(second);
        if let Some(ban) = &self.spec.ban {
            if self.streak >= ban.over_quota_s {
                self.banned_until = now + ban.for_ms;
                self.bans.push((now, self.banned_until));
                self.streak = 0;
                self.last_over_s = None;
            }
        }
        let left_ms = (window + 1) * quota.period_ms - now;
        let seconds = quota.retry_after_s.unwrap_or(left_ms.div_ceil(1000).max(1));
        let headers = HintHeaders::default().with("retry-after", seconds.to_string());
        let latency_ms = self.latency(None, now);
        Some(Reply { outcome: Outcome::status(429, headers), latency_ms, kind: ReplyKind::OverQuota })
    }

    /// Time banned, clipped to `end_ms`.
    pub fn banned_ms(&self, end_ms: u64) -> u64 {
        self.bans.iter().map(|&(from, until)| until.min(end_ms).saturating_sub(from)).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> VendorSpec {
        VendorSpec {
            latency_ms: 100,
            latency_jitter_ms: 0,
            outages: vec![Outage {
                from_ms: 1000,
                to_ms: 2000,
                refusal: Refusal::Status(502),
                latency_ms: None,
                share: 1.0,
            }],
            quota: Some(Quota { requests: 2, period_ms: 1000, retry_after_s: None }),
            ban: Some(Ban { over_quota_s: 3, for_ms: 60_000, refusal: Refusal::Status(403), latency_ms: None }),
            limiter_during_outage: false,
            lognormal: None,
            slow: None,
            latency_changes: vec![],
        }
    }

    #[test]
    fn a_lognormal_latency_has_its_median_and_p95_and_the_slow_share_its_tail() {
        let s = VendorSpec {
            outages: vec![],
            quota: None,
            ban: None,
            lognormal: Some(LogNormal { median_ms: 100.0, p95_ms: 150.0 }),
            slow: Some(Slow { share: 0.05, ms: 3000 }),
            ..spec()
        };
        let mut v = Vendor::new(&s, Rng::seeded(3));
        let mut ms: Vec<u64> = (0..100_000).map(|t| v.answer(t).latency_ms).collect();
        let slow = ms.iter().filter(|&&m| m == 3000).count() as f64 / ms.len() as f64;
        assert!((0.045..0.055).contains(&slow), "5 % slow: {slow}");
        ms.retain(|&m| m != 3000);
        ms.sort_unstable();
        let q = |p: f64| ms[(p * ms.len() as f64) as usize];
        assert!((98..=102).contains(&q(0.5)), "median {}", q(0.5));
        assert!((146..=154).contains(&q(0.95)), "p95 {}", q(0.95));
    }

    #[test]
    fn a_latency_change_applies_from_its_moment_on() {
        let l = |median_ms: f64| LogNormal { median_ms, p95_ms: 1.5 * median_ms };
        let s = VendorSpec {
            outages: vec![],
            quota: None,
            ban: None,
            lognormal: Some(l(100.0)),
            latency_changes: vec![LatencyChange { at_ms: 1_000, latency: Latency::LogNormal(l(500.0)) }],
            ..spec()
        };
        assert_eq!((s.median_at_ms(999), s.median_at_ms(1_000)), (100.0, 500.0));
        let mut v = Vendor::new(&s, Rng::seeded(5));
        let median = |v: &mut Vendor, at: u64| {
            let mut ms: Vec<u64> = (0..10_001).map(|_| v.answer(at).latency_ms).collect();
            ms.sort_unstable();
            ms[5_000]
        };
        assert!((97..=103).contains(&median(&mut v, 0)));
        assert!((485..=515).contains(&median(&mut v, 1_000)));
    }

    #[test]
    fn quota_outage_and_ban() {
        use ReplyKind::*;
        let s = spec();
        let mut v = Vendor::new(&s, Rng::seeded(1));
        let kinds: Vec<ReplyKind> = [0, 10, 20, 1500, 1600, 1700].iter().map(|&t| v.answer(t).kind).collect();
        assert_eq!(kinds, [Served, Served, OverQuota, Outage, Outage, Outage], "outage answers are not metered");
        // Over the quota in seconds 2, 3 and 4: the third second's first 429 starts the ban.
        for t in [2000, 2001, 2002, 3000, 3001, 3002, 4000, 4001] {
            v.answer(t);
        }
        let r = v.answer(4002);
        assert_eq!(r.kind, OverQuota);
        assert!(
            matches!(r.outcome, Outcome::Status { status: 429, ref headers, .. } if headers.get("retry-after") == Some("1"))
        );
        assert_eq!(v.bans, [(4002, 64_002)]);
        assert_eq!(v.answer(4003).kind, Banned);
        assert_eq!(v.answer(64_002).kind, Served, "a fresh window after the ban");
        assert_eq!(v.banned_ms(10_000), 5_998);
    }
}
