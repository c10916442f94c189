//! Priority at the fleet's limit in virtual time, through `simulate_priority` (issue 59): beside
//! a 40-worker batch at Normal on a vendor taking 4 calls at once, a chat at High waits about one
//! batch call for its slot (at Normal, as before priority, tens of seconds), the batch drains as
//! fast, and a worker at Low is never starved (a call at least every 10 s and a bit); with the
//! batch's workers keyed by 8 customers (one at weight 3), the chat at High still waits one batch
//! call, and each customer's share of the batch's calls is near its max-min fair one.
use serde_json::Value;
use std::process::Command;

#[test]
fn a_chat_at_high_waits_one_batch_call_the_batch_drains_as_fast_low_is_never_starved_keys_share_fairly() {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate_priority"))
        .args(["--json"])
        .output()
        .expect("the simulate_priority binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let rows: Value = serde_json::from_str(stdout.lines().last().unwrap()).expect("--json prints JSON last");
    let [normal, high, low, keyed] = [&rows[0], &rows[1], &rows[2], &rows[3]];
    let n = |v: &Value, k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"));
    assert!(n(high, "wait_p95_ms") <= 350.0, "{high}");
    assert!(n(normal, "wait_p95_ms") > 10.0 * n(high, "wait_p95_ms"), "{normal}");
    assert_eq!(n(high, "guest_429"), 0.0, "the chat meets no 429 of the batch's probing: {high}");
    assert!(n(high, "drain_s") <= 1.05 * n(normal, "drain_s"), "{high} {normal}");
    assert!(n(low, "gap_max_ms") <= 11_000.0 && n(low, "guest_calls") > 0.0, "{low}");
    assert!(n(keyed, "wait_p95_ms") <= 350.0, "{keyed}");
    // Each customer within 0.03 of its max-min fair share (APF's margin): the heavy one's part of
    // a fraction of a call per worker is served over time (what a key is owed, signed).
    assert!(n(keyed, "key_dev") <= 0.03, "{keyed}");
    assert!(!stdout.contains("[MISS]"), "{stdout}");
}
