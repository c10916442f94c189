//! Rows as the stores hold them: text. A store hands each row over as it keeps it (Redis:
//! `<version>|<json>`; Postgres: `data::text`, the JSON alone) and writes back the text this
//! module returns, comparing versions only. No store and no TypeScript reads a row's fields.
use crate::choose::chain::{ProviderView, Writes};
use crate::choose::latency::LatencyRow;
use crate::error::EngineError;
use crate::facts::pace_row::PaceRow;
use crate::limits::breaker::BreakerRow;
use crate::limits::in_flight::InFlightRow;
use crate::limits::key_quota::QuotaRow;
use crate::limits::learned_limit::LimitRow;
use crate::limits::rate_gate::GateRow;
use crate::limits::retry_budget::BudgetRow;
use crate::limits::spend_hold::SpendRow;
use crate::limits::token_budget::TokenRow;
use crate::rows::row_decode;
use serde::Serialize;

/// The rows of a provider, in the order a store reads them. An empty text is a fresh row.
/// `quota` is a Fair Share Key's, read and written under the key's name (a provider's is never
/// written).
pub const ROW_KINDS: [&str; 10] =
    ["breaker", "gate", "in_flight", "latency", "budget", "limit", "tokens", "spend", "pace", "quota"];

/// Joins the row texts of one call into one string at the boundary (one string crossing instead
/// of two per row): ASCII record separator, which JSON text never holds raw (it escapes every
/// control character) and neither does a version prefix.
pub const SEPARATOR: char = '\u{1e}';

/// The row texts of a joined string.
pub fn split(joined: &str) -> Vec<&str> {
    let mut texts = Vec::with_capacity(2 * ROW_KINDS.len()); // two providers without growing
    texts.extend(joined.split(SEPARATOR));
    texts
}

/// One row to write: replace the stored row iff its version is still `expected`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowWrite {
    pub kind: &'static str,
    pub expected: u64,
    pub version: u64,
    /// The row as JSON text (its `version` inside equals `version`).
    pub json: String,
    /// The name the row is kept under where it is not its provider's: a Fair Share Key's quota
    /// row (`key_quota`), written in the same atomic step as the provider's rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// The rows to write for one provider, atomically.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RowWrites {
    pub provider: usize,
    pub rows: Vec<RowWrite>,
    /// The breaker transition these rows make, as the event text to store with them in the same
    /// atomic step (`event::writes`); `None` when they make none.
    pub event: Option<String>,
    /// What these rows add to their provider's counters once they commit (the transition they
    /// make): counted with the write, so a write that loses its race counts nothing. Left out
    /// of the text when the rows make no transition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counts: Option<WriteCounts>,
}

/// The counters a committed write adds (named as `metrics::COUNTERS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WriteCounts {
    pub transitions: u32,
}

fn decode<T: Default>(
    kind: &str,
    text: &str,
    read: fn(&str) -> Result<T, EngineError>,
    version: fn(&mut T, u64),
) -> Result<T, EngineError> {
    if text.is_empty() {
        return Ok(T::default());
    }
    let (prefix, json) = versioned(kind, text)?;
    let mut row = read(json)?;
    if let Some(v) = prefix {
        version(&mut row, v); // the store compares this one: it is the truth
    }
    Ok(row)
}

/// A row text's version prefix and JSON: `<version>|<json>` (Redis) or the JSON alone (Postgres,
/// memory). Apart from [`decode`], which is built once per row kind, so this is built once.
fn versioned<'a>(kind: &str, text: &'a str) -> Result<(Option<u64>, &'a str), EngineError> {
    match text.split_once('|') {
        Some((v, json)) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => {
            let v =
                v.parse().map_err(|_| EngineError::CorruptState(format!("{kind} row: version {v} out of range")))?;
            Ok((Some(v), json))
        }
        _ => Ok((None, text)),
    }
}

/// One provider's view from its row texts (`ROW_KINDS` order).
pub fn view(rows: &[impl AsRef<str>]) -> Result<ProviderView, EngineError> {
    if rows.len() != ROW_KINDS.len() {
        return Err(EngineError::InvalidInput(format!(
            "{} row texts for a provider of {}",
            rows.len(),
            ROW_KINDS.len()
        )));
    }
    Ok(ProviderView {
        breaker: decode("breaker", rows[0].as_ref(), row_decode::breaker, |r: &mut BreakerRow, v| r.version = v)?,
        gate: decode("gate", rows[1].as_ref(), row_decode::gate, |r: &mut GateRow, v| r.version = v)?,
        in_flight: decode("in_flight", rows[2].as_ref(), row_decode::in_flight, |r: &mut InFlightRow, v| {
            r.version = v
        })?,
        latency: decode("latency", rows[3].as_ref(), row_decode::latency, |r: &mut LatencyRow, v| r.version = v)?,
        budget: decode("budget", rows[4].as_ref(), row_decode::budget, |r: &mut BudgetRow, v| r.version = v)?,
        limit: decode("limit", rows[5].as_ref(), row_decode::limit, |r: &mut LimitRow, v| r.version = v)?,
        tokens: decode("tokens", rows[6].as_ref(), row_decode::tokens, |r: &mut TokenRow, v| r.version = v)?,
        spend: decode("spend", rows[7].as_ref(), row_decode::spend, |r: &mut SpendRow, v| r.version = v)?,
        pace: decode("pace", rows[8].as_ref(), row_decode::pace, |r: &mut PaceRow, v| r.version = v)?,
        quota: decode("quota", rows[9].as_ref(), row_decode::quota, |r: &mut QuotaRow, v| r.version = v)?,
    })
}

/// Every provider's view from the flat list a store read (`ROW_KINDS.len()` texts a provider).
pub fn views(rows: &[impl AsRef<str>], providers: usize) -> Result<Vec<ProviderView>, EngineError> {
    if rows.len() != providers * ROW_KINDS.len() {
        return Err(EngineError::InvalidInput(format!(
            "{} row texts for a chain of {providers} providers ({} each)",
            rows.len(),
            ROW_KINDS.len()
        )));
    }
    let mut out = Vec::with_capacity(providers);
    for chunk in rows.chunks(ROW_KINDS.len()) {
        out.push(view(chunk)?);
    }
    Ok(out)
}

/// The views as a poll uses them: where the store read the item's key's rows after the
/// providers' (`groups` = providers + 1: its chain has Key Quotas), each provider's view carries
/// the key's quota row, and the key's own view goes.
pub fn with_key_row(mut views: Vec<ProviderView>, providers: usize) -> Vec<ProviderView> {
    if views.len() > providers {
        if let Some(key) = views.pop() {
            for v in &mut views {
                v.quota.clone_from(&key.quota);
            }
        }
    }
    views
}

/// Decoded rows by their texts, kept across the items of one engine: in the steady state the
/// rows do not change between polls, and decoding a row's JSON is most of a poll's cost. Pure
/// memoisation (a view is a function of its texts), one entry per provider.
#[derive(Default)]
pub struct RowMemo {
    seen: Vec<Option<([String; ROW_KINDS.len()], ProviderView)>>,
}

impl RowMemo {
    /// As [`views`], reusing the view of a provider whose texts are those decoded last time.
    pub fn views(&mut self, rows: &[impl AsRef<str>], providers: usize) -> Result<Vec<ProviderView>, EngineError> {
        if rows.len() != providers * ROW_KINDS.len() {
            return views(rows, providers); // the error, worded once
        }
        self.seen.resize_with(providers, || None);
        let mut out = Vec::with_capacity(providers);
        for (chunk, seen) in rows.chunks(ROW_KINDS.len()).zip(self.seen.iter_mut()) {
            let same = |texts: &[String; ROW_KINDS.len()]| texts.iter().zip(chunk).all(|(a, b)| a == b.as_ref());
            match seen {
                Some((texts, view)) if same(texts) => out.push(view.clone()),
                _ => {
                    let view = view(chunk)?;
                    let texts = std::array::from_fn(|k| chunk[k].as_ref().to_string());
                    *seen = Some((texts, view.clone()));
                    out.push(view);
                }
            }
        }
        Ok(out)
    }
}

fn row<T: Serialize>(kind: &'static str, row: &T, version: u64) -> RowWrite {
    // Plain structs of integers and strings: serialising cannot fail. (No `expect`: its Debug of
    // the error would cost the WASM engine kilobytes.)
    let json = serde_json::to_string(row).unwrap_or_else(|_| unreachable!());
    RowWrite { kind, expected: version.wrapping_sub(1), version, json, key: None }
}

/// The texts to write for a set of new rows.
pub fn writes(w: &Writes) -> RowWrites {
    let mut rows = Vec::with_capacity(3);
    if let Some(b) = &w.breaker {
        rows.push(row(ROW_KINDS[0], b, b.version));
    }
    if let Some(g) = &w.gate {
        rows.push(row(ROW_KINDS[1], g, g.version));
    }
    if let Some(f) = &w.in_flight {
        rows.push(row(ROW_KINDS[2], f, f.version));
    }
    if let Some(l) = &w.latency {
        rows.push(row(ROW_KINDS[3], l, l.version));
    }
    if let Some(b) = &w.budget {
        rows.push(row(ROW_KINDS[4], b, b.version));
    }
    if let Some(l) = &w.limit {
        rows.push(row(ROW_KINDS[5], l, l.version));
    }
    if let Some(t) = &w.tokens {
        rows.push(row(ROW_KINDS[6], t, t.version));
    }
    if let Some(s) = &w.spend {
        rows.push(row(ROW_KINDS[7], s, s.version));
    }
    if let Some(p) = &w.pace {
        rows.push(row(ROW_KINDS[8], p, p.version));
    }
    if let Some(q) = &w.quota {
        rows.push(row(ROW_KINDS[9], q, q.version));
    }
    RowWrites { provider: w.provider, rows, event: None, counts: None }
}

/// Apply new rows to a view, as the store will once it accepts them.
pub fn apply(view: &mut ProviderView, w: &Writes) {
    if let Some(b) = &w.breaker {
        view.breaker = b.clone();
    }
    if let Some(g) = &w.gate {
        view.gate = g.clone();
    }
    if let Some(f) = &w.in_flight {
        view.in_flight = f.clone();
    }
    if let Some(l) = &w.latency {
        view.latency = l.clone();
    }
    if let Some(b) = &w.budget {
        view.budget = b.clone();
    }
    if let Some(l) = &w.limit {
        view.limit = l.clone();
    }
    if let Some(t) = &w.tokens {
        view.tokens = t.clone();
    }
    if let Some(s) = &w.spend {
        view.spend = s.clone();
    }
    if let Some(p) = &w.pace {
        view.pace = p.clone();
    }
    if let Some(q) = &w.quota {
        view.quota = q.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::breaker::Phase;

    /// One provider's texts: `first` as its breaker row, the rest not written yet.
    fn one(first: &str) -> Vec<&str> {
        let mut v = vec![""; ROW_KINDS.len()];
        v[0] = first;
        v
    }

    /// Two providers' texts with these breaker rows.
    fn two<'a>(a: &'a str, b: &'a str) -> Vec<&'a str> {
        let mut v = one(a);
        v.extend(one(b));
        v
    }

    #[test]
    fn both_store_forms_decode_and_the_prefix_version_wins() {
        let json = r#"{"phase":"open","open_until_ms":5,"version":3}"#;
        let redis = format!("7|{json}");
        let v = view(&one(&redis)).unwrap();
        assert_eq!((v.breaker.phase, v.breaker.version), (Phase::Open, 7));
        let v = view(&one(json)).unwrap();
        assert_eq!(v.breaker.version, 3);
        assert_eq!(view(&one("")).unwrap(), ProviderView::default());
    }

    #[test]
    fn garbage_is_corrupt_state_not_a_panic() {
        for bad in ["{", "x|{}", "99999999999999999999999|{}", r#"{"phase":"sideways"}"#] {
            let e = view(&one(bad)).unwrap_err();
            assert_eq!(e.code(), "corrupt_state", "{bad}");
        }
        assert_eq!(views(&["", ""], 1).unwrap_err().code(), "invalid_input");
    }

    #[test]
    fn the_memo_answers_as_decoding_does() {
        let mut memo = RowMemo::default();
        let a = r#"{"phase":"open","open_until_ms":5,"version":3}"#;
        let b = "4|{\"phase\":\"half_open\"}";
        for rows in [two(a, ""), two(a, ""), two(b, a), two(b, "")] {
            assert_eq!(memo.views(&rows, 2).unwrap(), views(&rows, 2).unwrap());
        }
        assert_eq!(memo.views(&two("{", ""), 2).unwrap_err().code(), "corrupt_state");
        assert_eq!(memo.views(&["", ""], 1).unwrap_err().code(), "invalid_input");
    }

    #[test]
    fn a_write_round_trips_and_expects_the_version_before_it() {
        let b = BreakerRow { phase: Phase::Open, version: 4, ..Default::default() };
        let w = writes(&Writes { provider: 1, breaker: Some(b.clone()), ..Default::default() });
        assert_eq!((w.provider, w.rows.len(), w.rows[0].expected, w.rows[0].version), (1, 1, 3, 4));
        let text = format!("{}|{}", w.rows[0].version, w.rows[0].json);
        assert_eq!(view(&one(&text)).unwrap().breaker, b);
    }
}
