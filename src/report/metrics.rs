//! The Prometheus text exposition format (version 0.0.4) for one scope of a chain: per provider,
//! the breaker's state gauge (0 closed, 1 half-open, 2 open, as `inspect` reads the rows at `now`)
//! and the fleet's counters as the store summed them. `# TYPE` once per family (its `# HELP` is put
//! before it by the node, from [`HELP`]); label values escaped (`\\`, `\"`, `\n`), so no provider or scope name can forge a line.
use crate::config::Chain;
use crate::error::EngineError;
use crate::json;
use crate::report::inspect::inspect;
use crate::rows::row_text::{self, ROW_KINDS};
use crate::verdict::answer_check::CHECK_NAMES;
use std::fmt::Write;

/// Counter families by their store counter's name: each is `resilient_provider_<name>_total`
/// (put together when rendered: the engine's WASM carries no table of the full names).
pub const COUNTERS: [&str; 11] = [
    "calls",
    "failures",
    "rejections",
    "transitions",
    "retries",
    "rate_limited_429",
    "give_ups",
    "deferrals",
    "retry_budget_exhausted",
    "hedges",
    "hedge_wins",
];

/// Every family's `# HELP` text, by its name after [`PREFIX`]. The engine renders `# TYPE` lines only; the node puts each help
/// line before its family's (`METRIC_HELP`, generated from this table by `engine-constants`), so
/// the texts are not carried by the WASM engine (2.4 KB of it).
pub const HELP: [(&str, &str); 24] = [
    (STATE, "Circuit breaker state: 0 closed, 1 half-open, 2 open."),
    (CONCURRENCY_LIMIT, "Calls at once the fleet learned the provider takes (0: none learned in the last 10 minutes)."),
    (
        CONCURRENCY,
        "Calls in flight to the provider across the fleet, at most: the slots of the limit the workers hold.",
    ),
    (WAITING, "Workers waiting at the provider's spent fleet limit now, by their calls' priority."),
    (LATENCY, "Answers' latency and streamed calls' time to first chunk (lane), p50 and p95 of the last samples."),
    ("calls_total", "Calls made to the provider."),
    ("failures_total", "Calls that counted against the provider's health."),
    ("rejections_total", "Calls not made because the breaker was open or its probes were taken."),
    ("transitions_total", "Breaker transitions (any from/to)."),
    ("retries_total", "Calls that were a retry of the same provider."),
    ("rate_limited_429_total", "Answers with status 429."),
    ("give_ups_total", "Items the chain gave up on (deferred or failed), counted on its first provider."),
    ("deferrals_total", "Items handed back on the deferred output, counted on the chain's first provider."),
    ("retry_budget_exhausted_total", "Retries not made because the provider's retry budget was spent."),
    ("hedges_total", "Hedged calls sent to the provider (a second call for a slow one)."),
    ("hedge_wins_total", "Hedged calls to the provider whose answer served the item."),
    (CHECK_FAILURES, "Answers that failed a check (required_path, empty, content_policy, cut, schema)."),
    (TOKENS, "Tokens the provider's answers reported, by direction (input, output)."),
    (TOKENS_ESTIMATED, "Tokens of calls that ended without usage (aborted, broken), counted at their estimate."),
    (SPEND, "What the provider's calls cost, in the currency unit of its prices."),
    (TOKEN_LIMITED, "Calls the provider's tokens per minute or spend cap turned away (moved on or deferred)."),
    (TOKEN_WAITS, "Waits in line for the provider's tokens per minute or spend cap (items that waited their turn)."),
    (STORE_UP, "Whether the shared state store answered (0: this process fell back to its memory)."),
    (STORE_FALLBACKS, "Times this process fell back to its memory because the shared store failed."),
];

/// Every family's name begins so; the names below are what follows (put together when rendered:
/// the engine's WASM carries the prefix once).
pub const PREFIX: &str = "resilient_provider_";

pub const STATE: &str = "state";

/// The calls at once the fleet learned the provider takes (0: none learned in 10 minutes).
pub const CONCURRENCY_LIMIT: &str = "concurrency_limit";
/// The calls in flight across the fleet, as the workers' shares of the limit bound them.
pub const CONCURRENCY: &str = "concurrency";
/// The workers waiting at the spent limit now, one sample per priority (`limits::priority`).
pub const WAITING: &str = "waiting";

/// Answers that failed a check, one sample per check (`answer_check::CHECK_NAMES`), read from
/// the store's `check_failures:<check>` counters.
pub const CHECK_FAILURES: &str = "check_failures_total";

/// Tokens the answers reported, one sample per direction (input, output), from the store's
/// `tokens:<direction>` counters; calls that ended without usage count apart, at their estimate.
pub const TOKENS: &str = "tokens_total";
pub const TOKENS_ESTIMATED: &str = "tokens_estimated_total";
/// What the calls cost, in the user's currency unit (the store counts millionths).
pub const SPEND: &str = "spend_total";
/// Calls a token limit or spend cap turned away from the provider.
pub const TOKEN_LIMITED: &str = "token_limited_total";
pub const TOKEN_WAITS: &str = "token_waits_total";
/// Answers' latency and streamed calls' time to their first chunk, from the latency row (recorded
/// under latency routing or p95 hedging), by lane and quantile.
pub const LATENCY: &str = "latency_seconds";
/// Whether the shared store answered this scrape (0: the process fell back to its memory).
pub const STORE_UP: &str = "store_up";
/// This process's falls back to its memory when the shared store failed (counted in memory).
pub const STORE_FALLBACKS: &str = "store_fallbacks_total";

/// Milliseconds as seconds, in integer digits ("0.042").
fn seconds(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// The store's families for `scope`: whether the shared store answered (`up`) and this process's
/// fall-backs to memory. Rendered alone when the store is down: Get Metrics still answers, and
/// says so, with nothing of this process's memory passed off as the fleet's.
pub fn store_families(scope: &str, up: bool, fallbacks: u64) -> String {
    let l = format!("{{scope=\"{}\"}}", escape(scope));
    let mut out = String::new();
    family(&mut out, STORE_UP, "gauge");
    let _ = writeln!(out, "resilient_provider_{STORE_UP}{l} {}", up as u8);
    family(&mut out, STORE_FALLBACKS, "counter");
    let _ = writeln!(out, "resilient_provider_{STORE_FALLBACKS}{l} {fallbacks}");
    out
}

/// A family's `# TYPE` line (pushed, not formatted: the engine's WASM is smaller); its `# HELP`
/// is the node's ([`HELP`]).
fn family(out: &mut String, name: &str, kind: &str) {
    for part in ["# TYPE resilient_provider_", name, " ", kind, "\n"] {
        out.push_str(part);
    }
}

/// Millionths as a decimal number of units ("1.5" for 1500000): integer digits only, so the
/// WASM engine carries no float formatting.
pub fn units(micros: u64) -> String {
    let (whole, frac) = (micros / 1_000_000, micros % 1_000_000);
    match frac {
        0 => whole.to_string(),
        f => format!("{whole}.{}", format!("{f:06}").trim_end_matches('0')),
    }
}

/// A label value as the exposition format needs it.
pub fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// The counters' text as JSON objects, each value checked to be a whole number >= 0. Read as
/// the rows are (objects of JSON values): a map of its own type would cost the engine's WASM its
/// own copy of the tree's code.
fn tallies(text: &str) -> Option<Vec<json::Object>> {
    let json::Value::Array(list) = json::from_str(text).ok()? else { return None };
    let whole = |v: &json::Value| matches!(v, json::Value::Number(json::Number::U64(_)));
    list.into_iter()
        .map(|v| match v {
            json::Value::Object(o) if o.values().all(whole) => Some(o),
            _ => None,
        })
        .collect()
}

/// Counter `key` of one provider (0 where the store has none).
fn count(c: &json::Object, key: &str) -> u64 {
    match c.get(key) {
        Some(json::Value::Number(json::Number::U64(n))) => *n,
        _ => 0,
    }
}

/// `rows`: `ROW_KINDS.len()` texts per provider of the chain; `counters`: a JSON array, one
/// object of counter name → value per provider (missing names read 0).
pub fn render(
    chain: &Chain,
    scope: &str,
    now: u64,
    rows: &[impl AsRef<str>],
    counters: &str,
) -> Result<String, EngineError> {
    let n = chain.providers.len();
    let views = row_text::views(rows, n)?;
    let counters = tallies(counters).ok_or_else(|| {
        EngineError::InvalidInput("counters: not a JSON array of objects of non-negative integers".into())
    })?;
    if counters.len() != n {
        return Err(EngineError::InvalidInput(format!("counters for {} providers, the chain has {n}", counters.len())));
    }
    let labels: Vec<String> = chain
        .providers
        .iter()
        .map(|p| format!("{{scope=\"{}\",provider=\"{}\"}}", escape(scope), escape(&p.name)))
        .collect();
    let mut out = String::new();
    // Writing to a String cannot fail.
    let states: Vec<_> = views.iter().map(|v| inspect(v, now)).collect();
    type Gauge = fn(&crate::report::inspect::ProviderState) -> u32;
    let gauges: [(&str, Gauge); 3] = [
        (STATE, |s| u32::from(s.state_gauge)),
        (CONCURRENCY_LIMIT, |s| s.concurrency.unwrap_or(0)),
        (CONCURRENCY, |s| s.concurrency_in_flight),
    ];
    for (name, value) in gauges {
        family(&mut out, name, "gauge");
        for (s, l) in states.iter().zip(&labels) {
            let _ = writeln!(out, "resilient_provider_{name}{l} {}", value(s));
        }
    }
    family(&mut out, WAITING, "gauge");
    for (s, l) in states.iter().zip(&labels) {
        let open = l.strip_suffix('}').unwrap_or(l);
        let w = s.waiting;
        for (priority, n) in [("high", w.high), ("normal", w.normal), ("low", w.low)] {
            let _ = writeln!(out, "resilient_provider_{WAITING}{open},priority=\"{priority}\"}} {n}");
        }
    }
    family(&mut out, LATENCY, "gauge");
    for (st, l) in states.iter().zip(&labels) {
        let open = l.strip_suffix('}').unwrap_or(l);
        let lanes = [
            ("answer", st.latency_p50_ms, st.latency_p95_ms),
            ("first_chunk", st.first_chunk_p50_ms, st.first_chunk_p95_ms),
        ];
        for (lane, p50, p95) in lanes {
            for (q, v) in [("0.5", p50), ("0.95", p95)] {
                if let Some(ms) = v {
                    let _ = writeln!(
                        out,
                        "resilient_provider_{LATENCY}{open},lane=\"{lane}\",quantile=\"{q}\"}} {}",
                        seconds(ms)
                    );
                }
            }
        }
    }
    for key in COUNTERS {
        let name = format!("{key}_total");
        family(&mut out, &name, "counter");
        for (c, l) in counters.iter().zip(&labels) {
            let _ = writeln!(out, "resilient_provider_{name}{l} {}", count(c, key));
        }
    }
    family(&mut out, CHECK_FAILURES, "counter");
    for (c, p) in counters.iter().zip(&chain.providers) {
        for check in CHECK_NAMES {
            let value = count(c, &format!("check_failures:{check}"));
            let (scope, provider) = (escape(scope), escape(&p.name));
            let _ = writeln!(
                out,
                "resilient_provider_{CHECK_FAILURES}{{scope=\"{scope}\",provider=\"{provider}\",check=\"{check}\"}} {value}"
            );
        }
    }
    family(&mut out, TOKENS, "counter");
    for (c, l) in counters.iter().zip(&labels) {
        for direction in ["input", "output"] {
            let value = count(c, &format!("tokens:{direction}"));
            let open = l.strip_suffix('}').unwrap_or(l);
            let l = format!("{open},direction=\"{direction}\"}}");
            let _ = writeln!(out, "resilient_provider_{TOKENS}{l} {value}");
        }
    }
    let families: [(&str, &str, bool); 4] = [
        (TOKENS_ESTIMATED, "tokens:estimated", false),
        (SPEND, "spend_micros", true),
        (TOKEN_LIMITED, "token_limited", false),
        (TOKEN_WAITS, "token_waits", false),
    ];
    for (name, key, micros) in families {
        family(&mut out, name, "counter");
        for (c, l) in counters.iter().zip(&labels) {
            let v = count(c, key);
            let _ = match micros {
                true => writeln!(out, "resilient_provider_{name}{l} {}", units(v)),
                false => writeln!(out, "resilient_provider_{name}{l} {v}"),
            };
        }
    }
    debug_assert_eq!(rows.len(), n * ROW_KINDS.len());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChainConfig, ProviderConfig};

    /// `providers` providers' row texts, the first one's breaker row `first`.
    fn blank(providers: usize, first: &str) -> Vec<&str> {
        let mut v = vec![""; providers * ROW_KINDS.len()];
        v[0] = first;
        v
    }

    fn chain(names: &[&str]) -> Chain {
        ChainConfig {
            providers: names.iter().map(|n| ProviderConfig { name: n.to_string(), ..Default::default() }).collect(),
            ..Default::default()
        }
        .validate()
        .unwrap()
    }

    #[test]
    fn every_family_has_a_type_a_help_text_and_one_sample_per_provider() {
        let open = r#"{"phase":"open","open_until_ms":5000,"trips":1,"version":2}"#;
        let counters =
            r#"[{"calls":7,"failures":5,"check_failures:schema":3,"tokens:output":40,"spend_micros":1500000},{}]"#;
        let text = render(&chain(&["a", "b"]), "wf", 1000, &blank(2, open), counters).unwrap();
        assert!(
            text.contains("resilient_provider_check_failures_total{scope=\"wf\",provider=\"a\",check=\"schema\"} 3\n"),
            "{text}"
        );
        assert!(
            text.contains("resilient_provider_check_failures_total{scope=\"wf\",provider=\"b\",check=\"empty\"} 0\n")
        );
        assert!(text.contains("resilient_provider_state{scope=\"wf\",provider=\"a\"} 2\n"), "{text}");
        assert!(text.contains("resilient_provider_tokens_total{scope=\"wf\",provider=\"a\",direction=\"output\"} 40\n"));
        assert!(text.contains("resilient_provider_spend_total{scope=\"wf\",provider=\"a\"} 1.5\n"), "{text}");
        assert!(text.contains("resilient_provider_spend_total{scope=\"wf\",provider=\"b\"} 0\n"));
        assert!(text.contains("resilient_provider_state{scope=\"wf\",provider=\"b\"} 0\n"));
        assert!(text.contains("resilient_provider_calls_total{scope=\"wf\",provider=\"a\"} 7\n"));
        assert!(text.contains("resilient_provider_deferrals_total{scope=\"wf\",provider=\"b\"} 0\n"));
        assert!(text.contains("resilient_provider_waiting{scope=\"wf\",provider=\"b\",priority=\"high\"} 0\n"));
        assert!(!text.contains("# HELP "), "the node's to add");
        let text = text + &store_families("wf", true, 0);
        let types: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.split(' ').next()).collect();
        assert_eq!(types.len(), COUNTERS.len() + 13);
        // One help text for each family rendered, and none for a family that is not.
        let mut helped: Vec<String> = HELP.iter().map(|(name, _)| format!("{PREFIX}{name}")).collect();
        helped.sort_unstable();
        let mut rendered = types.clone();
        rendered.sort_unstable();
        assert_eq!(helped, rendered);
        assert!(text.contains("# TYPE resilient_provider_spend_total counter\n"));
        // After the open window the gauge reads half-open, as a call would meet it.
        let later = render(&chain(&["a", "b"]), "wf", 5000, &blank(2, open), "[{},{}]").unwrap();
        assert!(later.contains("resilient_provider_state{scope=\"wf\",provider=\"a\"} 1\n"));
    }

    #[test]
    fn hostile_names_cannot_forge_a_sample_or_a_label() {
        let name = "x\"} 1\nresilient_provider_state{provider=\"y\\";
        let text = render(&chain(&[name]), "s\"\n\\", 0, &blank(1, ""), "[{}]").unwrap();
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            assert!(line.starts_with("resilient_provider_"), "{line}");
            assert_eq!(line.matches("scope=").count(), 1, "{line}");
        }
        assert!(
            text.contains(r#"{scope="s\"\n\\",provider="x\"} 1\nresilient_provider_state{provider=\"y\\"} 0"#),
            "{text}"
        );
        let families = COUNTERS.len() + 11;
        assert_eq!(
            text.lines().count(),
            2 * families + CHECK_NAMES.len() - 1 + 1 - 1 + 2,
            "TYPE and one sample per family (per check for the checks', per direction for \
             the tokens', per priority for the waiting workers', none for a latency not sampled)"
        );
    }

    #[test]
    fn latency_reads_in_seconds_by_lane_and_quantile_and_the_store_says_whether_it_answered() {
        let mut v = crate::choose::chain::ProviderView::default();
        for _ in 0..20 {
            v.latency = crate::choose::latency::record(&v.latency, 42, 1_000);
        }
        let rows = crate::rows::row_text::writes(&crate::choose::chain::Writes {
            provider: 0,
            latency: Some(v.latency.clone()),
            ..Default::default()
        });
        let mut texts = vec![String::new(); ROW_KINDS.len()];
        texts[3] = rows.rows[0].json.clone();
        let text = render(&chain(&["a"]), "s", 1_000, &texts, "[{}]").unwrap();
        assert!(
            text.contains("resilient_provider_latency_seconds{scope=\"s\",provider=\"a\",lane=\"answer\",quantile=\"0.95\"} 0.057\n"),
            "{text}"
        );
        assert!(!text.contains("lane=\"first_chunk\""), "no samples, no series");
        let down = store_families("s", false, 3);
        assert!(down.contains("resilient_provider_store_up{scope=\"s\"} 0\n"));
        assert!(down.contains("resilient_provider_store_fallbacks_total{scope=\"s\"} 3\n"));
    }

    #[test]
    fn spend_reads_in_units() {
        assert_eq!(
            (units(0), units(1_500_000), units(12), units(3_000_000)),
            ("0".into(), "1.5".into(), "0.000012".into(), "3".into())
        );
    }

    #[test]
    fn bad_counters_name_the_input() {
        let c = chain(&["a"]);
        assert_eq!(render(&c, "s", 0, &blank(1, ""), "{").unwrap_err().code(), "invalid_input");
        assert_eq!(render(&c, "s", 0, &blank(1, ""), "[{},{}]").unwrap_err().code(), "invalid_input");
        assert_eq!(render(&c, "s", 0, &blank(1, ""), r#"[{"calls":-1}]"#).unwrap_err().code(), "invalid_input");
    }
}
