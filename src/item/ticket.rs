//! The guard's two entries, around a call this engine does not make (another n8n node's):
//! `check` decides which provider may be called now, without calling, and hands out a ticket;
//! `report` records that call's outcome with the same decision as a chain and frees its leases.
//! The ticket is plain data that can travel in an n8n item; it names its chain and scope so a
//! ticket from elsewhere is refused rather than counted.
use crate::choose::chain::Skip;
use crate::config::Chain;
use crate::error::EngineError;
use crate::item::record::record;
use crate::item::CallEnd;
use crate::item::{AttemptLog, Counters, ItemMachine, Step};
use crate::limits::breaker::Transition;
use crate::limits::token_limit::{Reservation, Usage};
use crate::report::event;
use crate::rng::Rng;
use crate::rows::row_text::{self, RowWrites};
use crate::verdict::outcome::Outcome;
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ticket {
    pub provider: usize,
    pub name: String,
    /// The call is the half-open probe: its outcome decides the breaker.
    pub probe: bool,
    /// The lease id: the holder named in the probe and in-flight leases.
    pub lease: String,
    pub scope: String,
    pub issued_ms: u64,
    /// The leases end then; a later report is refused (the slot may be someone else's).
    pub expires_ms: u64,
    /// Its call's estimated cost held against the provider's spend cap (`spend_hold`, 0 for
    /// none): its report releases the hold.
    #[serde(default)]
    pub held_micros: u64,
    /// What its call reserved of the provider's tokens per minute (total, input, output; 0 for
    /// none) and the estimate (input, output) they came from: its report settles them at the
    /// usage the answer reported.
    #[serde(default)]
    pub reserved_tokens: u64,
    #[serde(default)]
    pub reserved_input: u64,
    #[serde(default)]
    pub reserved_output: u64,
    #[serde(default)]
    pub estimate_input: u64,
    #[serde(default)]
    pub estimate_output: u64,
}

impl Ticket {
    /// What its call reserved, as the item machine carries it (none where it reserved nothing).
    pub fn reservation(&self) -> Option<Reservation> {
        let r = Reservation {
            at_ms: self.issued_ms,
            tokens: self.reserved_tokens,
            input: self.reserved_input,
            output: self.reserved_output,
            estimate: (self.estimate_input, self.estimate_output),
            held_micros: self.held_micros,
            // A guard's ticket carries no key quota: Check counts none (Call Chain's own).
            quota: Default::default(),
        };
        let any = r.tokens + r.input + r.output + r.estimate.0 + r.estimate.1 + r.held_micros > 0;
        any.then_some(r)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decision {
    /// `ticket_ttl_ms`: how long the store keeps the ticket (its leases' life), so the node
    /// computes nothing from the ticket's fields.
    Go {
        provider: usize,
        name: String,
        ticket: Ticket,
        ticket_ttl_ms: u64,
    },
    Defer {
        retry_at_ms: u64,
        reason: Reason,
    },
    Fail {
        reason: Reason,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checked {
    pub decision: Decision,
    /// Write these first (probe lease, gate slot, in-flight lease); on a lost race, check again.
    pub writes: Option<RowWrites>,
    pub transition: Option<Transition>,
    pub skipped: Vec<Skip>,
    /// This check's share of each provider's counters (index = provider): rejections of the
    /// providers it skipped, and a give-up (and deferral) on the first when it admitted none.
    pub counters: Vec<Counters>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reported {
    pub writes: Option<RowWrites>,
    pub transition: Option<Transition>,
    pub attempt: AttemptLog,
    /// The reported call's share of its provider's counters, by the rule Call Chain's attempts
    /// are counted by.
    pub counters: Counters,
    /// The engine read the outcome as a success: the item goes on (Report Outcome's `success`
    /// output). Anything else (a 503 the guarded node passed on its main output, a 429, a 404)
    /// did not serve it, whatever output of the guarded node it came from.
    pub served: bool,
}

/// Which provider may be called now, from the chain's row texts read at `now`.
pub fn check(
    chain: &Arc<Chain>,
    now: u64,
    rows: &[impl AsRef<str>],
    lease: String,
    scope: String,
    rng: Rng,
) -> Result<Checked, EngineError> {
    let views = row_text::views(rows, chain.providers.len())?;
    let mut m = ItemMachine::new(chain.clone(), now, lease.clone(), Vec::new(), rng);
    let poll = m.poll(now, &views)?;
    let skipped = m.report().skipped.clone();
    let mut counters = m.counters();
    let (decision, writes) = match poll.step {
        Step::Call { provider, name, probe, .. } => {
            // Its leases' life: the guarded call is made by another node, within a call's lease.
            let ticket_ttl_ms = chain.call_lease_ms(provider);
            let expires_ms = now.saturating_add(ticket_ttl_ms);
            let r = m.reserved(provider);
            let ticket = Ticket {
                provider,
                name: name.clone(),
                probe,
                lease,
                scope,
                issued_ms: now,
                expires_ms,
                held_micros: r.map_or(0, |r| r.held_micros),
                reserved_tokens: r.map_or(0, |r| r.tokens),
                reserved_input: r.map_or(0, |r| r.input),
                reserved_output: r.map_or(0, |r| r.output),
                estimate_input: r.map_or(0, |r| r.estimate.0),
                estimate_output: r.map_or(0, |r| r.estimate.1),
            };
            (Decision::Go { provider, name, ticket, ticket_ttl_ms }, poll.writes)
        }
        // A gate slot further off: the caller cannot sleep towards it, so it is not taken.
        Step::Sleep { ms, .. } => {
            // Handed back like a deferred item, which the machine (still waiting) has not counted.
            counters[0].give_ups += 1;
            counters[0].deferrals += 1;
            (Decision::Defer { retry_at_ms: now + ms, reason: Reason::RateLimited }, None)
        }
        Step::Defer { retry_at_ms, reason } => (Decision::Defer { retry_at_ms, reason }, None),
        Step::Fail { reason } => (Decision::Fail { reason }, None),
        // A check joins no pool (its call is made elsewhere): no window to wait in line for.
        Step::Done { .. } | Step::Await { .. } | Step::Queue { .. } => unreachable!("nothing was called"),
    };
    Ok(Checked {
        decision,
        writes: writes.as_ref().map(|w| event::writes(chain, w, poll.transition.as_ref(), None)),
        transition: poll.transition,
        skipped,
        counters,
    })
}

/// Record the outcome of a call a ticket admitted, on the provider's row texts read at `now`;
/// `usage`: the tokens its answer reported, which settle what its check reserved. Pure: after a
/// lost race, report again on fresh rows.
pub fn report(
    chain: &Arc<Chain>,
    ticket: &Ticket,
    scope: &str,
    now: u64,
    outcome: &Outcome,
    usage: Option<Usage>,
    rows: &[impl AsRef<str>],
) -> Result<Reported, EngineError> {
    let belongs = chain.providers.get(ticket.provider).is_some_and(|p| p.name == ticket.name);
    if !belongs || ticket.scope != scope {
        return Err(EngineError::InvalidTicket(format!(
            "provider '{}' in scope '{}' is not provider {} of this chain in scope '{scope}'",
            ticket.name, ticket.scope, ticket.provider
        )));
    }
    if now > ticket.expires_ms {
        return Err(EngineError::InvalidTicket(format!(
            "expired {} ms ago: its leases have ended",
            now - ticket.expires_ms
        )));
    }
    let view = row_text::view(rows)?;
    let mut m = ItemMachine::admitted(
        chain.clone(),
        now,
        ticket.issued_ms,
        ticket.lease.clone(),
        ticket.provider,
        ticket.probe,
        Rng::seeded(now),
    );
    m.holding(ticket.reservation());
    let effect = m.on_outcome(now, outcome, &[], None, CallEnd::used(usage))?;
    let rec = record(chain, &view, &effect, now);
    let attempt = m.report().attempts.last().cloned().expect("an outcome logs its attempt");
    let mut counters = Counters::default();
    counters.count(&attempt);
    Ok(Reported {
        served: m.served(),
        writes: rec.writes.as_ref().map(|w| event::writes(chain, w, rec.transition.as_ref(), rec.spend_cap.as_ref())),
        transition: rec.transition,
        attempt,
        counters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChainConfig, ProviderConfig};

    fn chain(threshold: i64) -> Arc<Chain> {
        let cfg = ChainConfig {
            providers: vec![
                ProviderConfig { name: "a".into(), max_in_flight: Some(2), ..Default::default() },
                ProviderConfig { name: "b".into(), ..Default::default() },
            ],
            threshold,
            ..Default::default()
        };
        Arc::new(cfg.validate().unwrap())
    }

    /// A store of row texts, as Redis holds them.
    fn store_rows(rows: &mut [String], w: &Option<RowWrites>) {
        if let Some(w) = w {
            for r in &w.rows {
                let k = row_text::ROW_KINDS.iter().position(|k| *k == r.kind).unwrap();
                rows[w.provider * row_text::ROW_KINDS.len() + k] = format!("{}|{}", r.version, r.json);
            }
        }
    }

    #[test]
    fn a_dead_provider_reported_through_tickets_opens_and_the_next_check_goes_to_the_fallback() {
        let chain = chain(2);
        let mut rows = vec![String::new(); 2 * row_text::ROW_KINDS.len()];
        for t in 0..2 {
            let c = check(&chain, 1000 + t, &rows, format!("lease{t}"), "global".into(), Rng::seeded(t)).unwrap();
            let Decision::Go { provider: 0, ticket, .. } = c.decision else { panic!("{c:?}") };
            store_rows(&mut rows, &c.writes);
            assert_eq!(c.counters, vec![Counters::default(); 2], "an admitted check counts nothing yet");
            let r = report(
                &chain,
                &ticket,
                "global",
                1001 + t,
                &Outcome::status(500, Default::default()),
                None,
                &rows[0..row_text::ROW_KINDS.len()],
            )
            .unwrap();
            assert_eq!(r.counters, Counters { calls: 1, failures: 1, ..Default::default() }, "Call Chain's rule");
            assert!(r.writes.as_ref().unwrap().rows.iter().any(|w| w.kind == "in_flight"), "the lease is released");
            store_rows(
                &mut rows,
                &r.writes.map(|mut w| {
                    w.provider = 0;
                    w
                }),
            );
        }
        let c = check(&chain, 1010, &rows, "lease3".into(), "global".into(), Rng::seeded(3)).unwrap();
        assert!(matches!(c.decision, Decision::Go { provider: 1, .. }), "{c:?}");
        assert_eq!(c.skipped[0].reason, Reason::CircuitOpen);
        assert_eq!(c.counters[0], Counters { rejections: 1, ..Default::default() }, "the open breaker's rejection");
        let busy = Outcome::status(429, Default::default());
        let Decision::Go { ticket, .. } = c.decision else { unreachable!() };
        let r = report(&chain, &ticket, "global", 1011, &busy, None, &rows[row_text::ROW_KINDS.len()..]).unwrap();
        assert_eq!(r.counters, Counters { calls: 1, rate_limited_429: 1, ..Default::default() });
    }

    #[test]
    fn a_checked_call_holds_its_cost_against_the_spend_cap_and_its_report_releases_the_hold() {
        use crate::config::TokenLimitConfig;
        let priced = TokenLimitConfig { spend_cap: 0.001, price_input: 5.0, price_output: 5.0, ..Default::default() };
        let cfg = ChainConfig {
            providers: vec![ProviderConfig { name: "a".into(), token_limit: Some(priced), ..Default::default() }],
            ..Default::default()
        };
        let chain = Arc::new(cfg.validate().unwrap());
        let n = row_text::ROW_KINDS.len();
        let mut rows = vec![String::new(); n];
        let c = check(&chain, 10, &rows, "l1".into(), "global".into(), Rng::seeded(1)).unwrap();
        let Decision::Go { ticket, .. } = c.decision else { panic!("{c:?}") };
        assert_eq!(ticket.held_micros, 5_000, "the output reserve (1000 tokens) at 5 per million");
        store_rows(&mut rows, &c.writes);
        // The cap is held by the checked call: a second check is turned away meanwhile.
        let second = check(&chain, 11, &rows, "l2".into(), "global".into(), Rng::seeded(2)).unwrap();
        assert!(matches!(second.decision, Decision::Defer { reason: Reason::SpendCap, .. }), "{second:?}");
        let travelled: Ticket = serde_json::from_str(&serde_json::to_string(&ticket).unwrap()).unwrap();
        let ok = Outcome::status(200, Default::default());
        // Its answer reported 20 tokens (100 millionths): what it spent, its hold released.
        let used = Usage { input: 10, output: 10, ..Default::default() };
        let r = report(&chain, &travelled, "global", 20, &ok, Some(used), &rows).unwrap();
        let kinds: Vec<&str> = r.writes.as_ref().unwrap().rows.iter().map(|w| w.kind).collect();
        assert!(kinds.contains(&"spend"), "released: {kinds:?}");
        store_rows(&mut rows, &r.writes);
        assert!(rows[7].contains(r#""held":[]"#), "{}", rows[7]);
        let third = check(&chain, 21, &rows, "l3".into(), "global".into(), Rng::seeded(3)).unwrap();
        assert!(matches!(third.decision, Decision::Go { .. }), "the cap is free again: {third:?}");
    }

    #[test]
    fn a_reported_call_settles_its_tokens_and_spend_at_the_usage_its_answer_reported() {
        use crate::config::TokenLimitConfig;
        let limits = TokenLimitConfig {
            tokens_per_minute: 100_000,
            spend_cap: 1.0,
            price_input: 5.0,
            price_output: 5.0,
            ..Default::default()
        };
        let cfg = ChainConfig {
            providers: vec![ProviderConfig { name: "a".into(), token_limit: Some(limits), ..Default::default() }],
            ..Default::default()
        };
        let chain = Arc::new(cfg.validate().unwrap());
        let n = row_text::ROW_KINDS.len();
        let tokens = row_text::ROW_KINDS.iter().position(|k| *k == "tokens").unwrap();
        let mut rows = vec![String::new(); n];
        let c = check(&chain, 10, &rows, "l1".into(), "global".into(), Rng::seeded(1)).unwrap();
        let Decision::Go { ticket, .. } = c.decision else { panic!("{c:?}") };
        assert!(ticket.reserved_tokens >= 1_000, "the output reserve at least: {ticket:?}");
        store_rows(&mut rows, &c.writes);
        let travelled: Ticket = serde_json::from_str(&serde_json::to_string(&ticket).unwrap()).unwrap();
        let ok = Outcome::status(200, Default::default());
        let usage = Usage { input: 100, output: 50, ..Default::default() };
        let r = report(&chain, &travelled, "global", 20, &ok, Some(usage), &rows).unwrap();
        store_rows(&mut rows, &r.writes);
        let row: serde_json::Value = serde_json::from_str(rows[tokens].split_once('|').unwrap().1).unwrap();
        assert_eq!(row["spent_micros"], 750, "150 tokens at 5 per million, not the 1,000-token estimate: {row}");
        let in_minute: u64 = row["buckets"].as_array().unwrap().iter().map(|b| b[1].as_u64().unwrap()).sum();
        assert_eq!(in_minute, 150, "the minute holds what the call used: {row}");
    }

    #[test]
    fn a_foreign_or_expired_ticket_is_refused_and_counts_nothing() {
        let chain = chain(5);
        let rows = vec![String::new(); 2 * row_text::ROW_KINDS.len()];
        let c = check(&chain, 7, &rows, "l".into(), "global".into(), Rng::seeded(1)).unwrap();
        let Decision::Go { ticket, ticket_ttl_ms, .. } = c.decision else { panic!() };
        assert_eq!(ticket_ttl_ms, ticket.expires_ms - ticket.issued_ms, "the store keeps it as long as its leases");
        assert!(ticket_ttl_ms > 0);
        let ok = Outcome::status(200, Default::default());
        let e = report(&chain, &ticket, "wf:7", 1, &ok, None, &rows[0..row_text::ROW_KINDS.len()]).unwrap_err();
        assert_eq!(e.code(), "invalid_ticket");
        let other = Ticket { name: "zzz".into(), ..ticket.clone() };
        assert_eq!(
            report(&chain, &other, "global", 1, &ok, None, &rows[0..row_text::ROW_KINDS.len()]).unwrap_err().code(),
            "invalid_ticket"
        );
        let late = ticket.expires_ms + 1;
        assert_eq!(
            report(&chain, &ticket, "global", late, &ok, None, &rows[0..row_text::ROW_KINDS.len()]).unwrap_err().code(),
            "invalid_ticket"
        );
        let json = serde_json::to_string(&ticket).unwrap();
        assert_eq!(serde_json::from_str::<Ticket>(&json).unwrap(), ticket, "a ticket travels as plain data");
    }

    #[test]
    fn a_report_serves_the_item_only_when_the_engine_reads_a_success() {
        // The guarded node's output says nothing here: an HTTP Request node that never errors
        // puts a 503 on its main output, and that item did not get what it asked for.
        let chain = chain(100);
        let rows = vec![String::new(); 2 * row_text::ROW_KINDS.len()];
        let cases: Vec<(Outcome, bool)> = vec![
            (Outcome::status(200, Default::default()), true),
            (Outcome::status(204, Default::default()), true),
            (Outcome::status(503, Default::default()), false),
            (Outcome::status(429, Default::default()), false),
            (Outcome::status(404, Default::default()), false),
            (Outcome::status(401, Default::default()), false),
            (Outcome::check_failed(200, "required_path"), false),
            (Outcome::Class { class: 5 }, false),
            (Outcome::Error { code: "ECONNRESET".into() }, false),
        ];
        for (t, (outcome, served)) in cases.into_iter().enumerate() {
            let t = t as u64;
            let c = check(&chain, 10 + t, &rows, format!("l{t}"), "global".into(), Rng::seeded(t)).unwrap();
            let Decision::Go { ticket, .. } = c.decision else { panic!("{c:?}") };
            let r =
                report(&chain, &ticket, "global", 11 + t, &outcome, None, &rows[0..row_text::ROW_KINDS.len()]).unwrap();
            assert_eq!(r.served, served, "{outcome:?}");
        }
    }
}
