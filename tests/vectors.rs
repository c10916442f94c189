//! Shared test vectors: the same data files drive these native tests and the Node tests against
//! the compiled pkg/, and both must produce identical outputs.
use resilient_engine::config::ChainConfig;
use resilient_engine::facts::retry_after::{hint_with_body, HintHeaders};
use resilient_engine::item::session::Session;
use resilient_engine::item::CallEnd;
use resilient_engine::item::Step;
use resilient_engine::rng::Rng;
use resilient_engine::rows::row_text::{RowWrites, ROW_KINDS};
use resilient_engine::verdict::outcome::Outcome;
use serde_json::{json, Value};
use std::sync::Arc;

fn load(name: &str) -> Value {
    let path = format!("{}/tests/vectors/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(&path).expect(&path)).expect(&path)
}

#[test]
fn hints() {
    let v = load("hints.json");
    let now = v["now_ms"].as_u64().unwrap();
    for case in v["cases"].as_array().unwrap() {
        let headers: HintHeaders = serde_json::from_value(case["headers"].clone()).unwrap();
        let status = Some(case["status"].as_u64().unwrap() as u16);
        let got = serde_json::to_value(hint_with_body(status, &headers, case["body"].as_str(), now)).unwrap();
        assert_eq!(got, case["expect"], "{case}");
    }
}

#[test]
fn ceilings() {
    for case in load("ceilings.json")["cases"].as_array().unwrap() {
        let cfg: ChainConfig = serde_json::from_value(json!({
            "providers": [{ "name": "x" }], "strategy": case["strategy"], "base_ms": case["base_ms"], "cap_ms": case["cap_ms"]
        }))
        .unwrap();
        let chain = cfg.validate().unwrap();
        let got: Vec<u64> = (0..7).map(|n| chain.backoff.delay(n, 0, &mut Rng::seeded(0))).collect();
        assert_eq!(json!(got), case["expect"]);
    }
}

/// Row texts as Redis keeps them (`<version>|<json>`), written only if versions still match.
struct TextStore {
    rows: Vec<String>,
}

impl TextStore {
    fn write(&mut self, w: &Option<RowWrites>) {
        let Some(w) = w else { return };
        for r in &w.rows {
            let k = ROW_KINDS.iter().position(|k| *k == r.kind).unwrap();
            let slot = &mut self.rows[w.provider * ROW_KINDS.len() + k];
            let stored: u64 = slot.split_once('|').map_or(0, |(v, _)| v.parse().unwrap());
            assert_eq!(stored, r.expected, "a write expects the stored version");
            assert_eq!(r.version, r.expected + 1, "version rises by one");
            *slot = format!("{}|{}", r.version, r.json);
        }
    }
}

/// Runs one scenario exactly as tests/engine-wasm/vectors.test.mjs does, through the session's
/// two calls (poll, outcome) on row texts.
fn run_scenario(case: &Value) -> Value {
    let cfg: ChainConfig = serde_json::from_value(case["config"].clone()).unwrap();
    let chain = Arc::new(cfg.validate().unwrap());
    let answers: Vec<Vec<Outcome>> = serde_json::from_value(case["answers"].clone()).unwrap();
    let mut process = Rng::seeded(case["seed"].as_u64().unwrap());
    let mut store = TextStore { rows: vec![String::new(); chain.providers.len() * ROW_KINDS.len()] };
    let mut turn = vec![0usize; answers.len()];
    let mut now = case["start_ms"].as_u64().unwrap();
    let call_ms = case["call_ms"].as_u64().unwrap();
    let mut jobs = Vec::new();
    for job in 0..case["jobs"].as_u64().unwrap() {
        let mut s = Session::new(chain.clone(), now, format!("job{job}"), vec![], Rng::seeded(process.next_u64()));
        let mut trace = Vec::new();
        let end = loop {
            let poll = s.poll(now, &store.rows).unwrap();
            store.write(&poll.writes);
            trace.push(json!({ "t": now, "poll": poll }));
            if let Some(end) = poll.end {
                break end;
            }
            match poll.step {
                Step::Call { provider, .. } => {
                    let outcome = answers[provider][turn[provider] % answers[provider].len()].clone();
                    turn[provider] += 1;
                    now += call_ms;
                    let rec = s.outcome(now, &outcome, None, CallEnd::default()).unwrap();
                    store.write(&rec.writes);
                    trace.push(json!({ "t": now, "recorded": rec }));
                    if let Some(end) = rec.end {
                        break end;
                    }
                    now += rec.sleep_ms;
                }
                Step::Sleep { ms, .. } => now += ms,
                other => panic!("a final step without an end: {other:?}"),
            }
        };
        jobs.push(json!({ "trace": trace, "end": end }));
        now += case["gap_ms"].as_u64().unwrap_or(0);
    }
    json!({ "name": case["name"], "jobs": jobs, "rows": store.rows })
}

#[test]
fn scenarios() {
    let cases = load("scenarios.in.json");
    let got: Vec<Value> = cases["cases"].as_array().unwrap().iter().map(run_scenario).collect();
    let path = format!("{}/tests/vectors/scenarios.expected.json", env!("CARGO_MANIFEST_DIR"));
    if std::env::var("UPDATE_VECTORS").is_ok() {
        std::fs::write(&path, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
    }
    let expected: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("run with UPDATE_VECTORS=1 once")).unwrap();
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e, "scenario {}", e["name"]);
    }
}
