//! A breaker transition as the fleet's alert reads it: one JSON text, written by the store in the
//! same atomic step as the rows that make the transition (Redis: the compare-and-set script
//! appends it to the scope's stream; Postgres: the same transaction inserts it and NOTIFYs). It
//! travels inside the `RowWrites` that carry the transition, so a lost race drops it with them and
//! the re-record brings its own. The text is made here: TypeScript stores and forwards it.
use crate::choose::chain::Writes;
use crate::config::Chain;
use crate::item::record::SpendCapReached;
use crate::limits::breaker::{BreakerRow, Transition};
use crate::rows::row_text::{self, RowWrites, WriteCounts};
use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event<'a> {
    pub provider: &'a str,
    pub from: crate::limits::breaker::Phase,
    pub to: crate::limits::breaker::Phase,
    /// RFC 3339, UTC, milliseconds: the store's clock at the transition.
    pub at: String,
    pub at_ms: u64,
    pub last_failure: Option<&'a str>,
    /// How many times this breaker tripped, ever (the opening included).
    pub trips: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spend_cap: Option<SpendCap>,
}

/// A provider's spend cap reached (`token_limit`): the trigger's *Spend Cap Reached*. It rides
/// alone, or on the breaker transition the same write makes (one event per write).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpendCap {
    /// What was spent in the period and the cap, in the currency unit of the provider's prices.
    pub spent: String,
    pub cap: String,
    /// When the period ends and the provider takes calls again (RFC 3339, UTC).
    pub until: String,
}

impl SpendCap {
    fn of(r: &SpendCapReached) -> Self {
        SpendCap {
            spent: crate::report::metrics::units(r.spent_micros),
            cap: crate::report::metrics::units(r.cap_micros),
            until: rfc3339(r.period_ends_ms),
        }
    }
}

/// The texts to write for a set of new rows, with the event of `transition` when it is one and
/// the one `transitions` count it adds once the rows commit, and the spend cap they reach.
pub fn writes(
    chain: &Chain,
    w: &Writes,
    transition: Option<&Transition>,
    spend_cap: Option<&SpendCapReached>,
) -> RowWrites {
    let mut out = row_text::writes(w);
    // The key's quota row is kept under the key's name, written with the provider's rows.
    if let Some(q) = &chain.quotas {
        out.rows.iter_mut().filter(|r| r.kind == "quota").for_each(|r| r.key = Some(q.owner.clone()));
    }
    let provider = &chain.providers[w.provider].name;
    if let (Some(t), Some(b)) = (transition, &w.breaker) {
        out.event = Some(text(provider, t, b, spend_cap));
        out.counts = Some(WriteCounts { transitions: 1 });
    } else if let Some(r) = spend_cap {
        #[derive(Serialize)]
        struct Alone<'a> {
            provider: &'a str,
            at: String,
            at_ms: u64,
            spend_cap: SpendCap,
        }
        let e = Alone { provider, at: rfc3339(r.at_ms), at_ms: r.at_ms, spend_cap: SpendCap::of(r) };
        out.event = Some(serde_json::to_string(&e).unwrap_or_else(|_| unreachable!()));
    }
    out
}

/// The event of `t`, as of the breaker row it wrote (with the spend cap the same write reaches).
pub fn text(provider: &str, t: &Transition, row: &BreakerRow, spend_cap: Option<&SpendCapReached>) -> String {
    let e = Event {
        provider,
        from: t.from,
        to: t.to,
        at: rfc3339(t.at_ms),
        at_ms: t.at_ms,
        last_failure: row.last_failure.as_deref(),
        trips: row.trips,
        spend_cap: spend_cap.map(SpendCap::of),
    };
    // Strings, integers and unit enums: serialising cannot fail.
    serde_json::to_string(&e).unwrap_or_else(|_| unreachable!())
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` for milliseconds since the epoch (proleptic Gregorian, UTC):
/// Howard Hinnant's days-to-civil, so the engine needs no date crate.
pub fn rfc3339(ms: u64) -> String {
    let in_day = ms % 86_400_000;
    let (y, m, d) = crate::facts::civil::civil_from_days((ms / 86_400_000) as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1_000 % 60,
        in_day % 1_000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::breaker::Phase;

    #[test]
    fn dates_match_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_547_322_007), "2025-12-01T00:02:02.007Z");
        assert_eq!(rfc3339(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }

    #[test]
    fn the_event_carries_the_row_it_was_written_with_and_escapes_names() {
        let t = Transition { from: Phase::Closed, to: Phase::Open, at_ms: 1_000 };
        let row = BreakerRow { trips: 3, last_failure: Some("503".into()), ..Default::default() };
        let v: serde_json::Value = serde_json::from_str(&text("a\"b\n", &t, &row, None)).unwrap();
        assert_eq!(v["provider"], "a\"b\n");
        assert_eq!((v["from"].as_str(), v["to"].as_str()), (Some("closed"), Some("open")));
        assert_eq!((v["trips"].as_u64(), v["last_failure"].as_str()), (Some(3), Some("503")));
        assert_eq!(v["at"], "1970-01-01T00:00:01.000Z");
    }

    /// Seed 002's operator counts transitions from the store: the count rides on the write that
    /// makes the transition, so a write that loses its race (and is decided again) counts nothing.
    #[test]
    fn a_write_that_makes_a_transition_carries_its_one_count_and_others_none() {
        use crate::choose::chain::Writes;
        use crate::config::{ChainConfig, ProviderConfig};
        let chain = ChainConfig {
            providers: vec![ProviderConfig { name: "p".into(), ..Default::default() }],
            ..Default::default()
        }
        .validate()
        .unwrap();
        let w = Writes { provider: 0, breaker: Some(BreakerRow::default()), ..Default::default() };
        let t = Transition { from: Phase::Closed, to: Phase::Open, at_ms: 1 };
        let with = writes(&chain, &w, Some(&t), None);
        assert_eq!(with.counts, Some(WriteCounts { transitions: 1 }));
        let json = serde_json::to_value(&with).unwrap();
        assert_eq!(json["counts"]["transitions"], 1);
        let without = writes(&chain, &w, None, None);
        assert_eq!(without.counts, None);
        assert!(serde_json::to_value(&without).unwrap().get("counts").is_none(), "left out of the text");
    }
}
