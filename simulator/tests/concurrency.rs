//! The fleet's limit against the incident's 40 workers x 10 slots in virtual time, through
//! `simulate_concurrency` (issue 56): at a vendor taking K = 4 at once and answering 429 above
//! it, the shared limit meets a handful of 429s where a limit per process meets tens of
//! thousands, and drains as fast; at a vendor that answers ever later instead (no 429), slow
//! start ends at the first first-byte that queues, so the shared limit drains it with no
//! timeout, where a fixed concurrency never drains and a limit per process times out hundreds
//! of calls.
use serde_json::Value;
use std::process::Command;

fn rows() -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate_concurrency"))
        .args(["--json"])
        .output()
        .expect("the simulate_concurrency binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("[MISS]"), "{stdout}");
    serde_json::from_str::<Vec<Value>>(stdout.lines().last().unwrap()).expect("--json prints JSON last")
}

fn row<'a>(rows: &'a [Value], vendor: &str, policy: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["vendor"] == vendor && r["policy"].as_str().unwrap().starts_with(policy))
        .unwrap_or_else(|| panic!("{vendor} {policy} in {rows:?}"))
}

fn n(v: &Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or_else(|| panic!("{k} in {v}"))
}

#[test]
fn the_shared_limit_holds_at_a_vendor_that_429s_and_at_one_that_slows_down() {
    let rows = rows();
    let (per_process, shared) = (row(&rows, "Capped", "adaptive per"), row(&rows, "Capped", "adaptive shared"));
    assert!(n(per_process, "r429") >= 8.0 * n(shared, "r429").max(1.0), "{per_process} {shared}");
    assert_eq!(n(shared, "served"), 3000.0, "{shared}");

    let fixed = row(&rows, "Slowing", "fixed");
    let (per_process, shared) = (row(&rows, "Slowing", "adaptive per"), row(&rows, "Slowing", "adaptive shared"));
    assert!(n(fixed, "served") < 3000.0, "a fixed concurrency never drains it: {fixed}");
    assert_eq!(n(shared, "served"), 3000.0, "{shared}");
    assert!(n(shared, "timeouts") < n(per_process, "timeouts") / 4.0, "{shared} {per_process}");
    assert!(n(shared, "requests") <= 1.05 * 3000.0, "{shared}");
    assert!(n(shared, "drain_s") <= 1.1 * n(per_process, "drain_s"), "{shared} {per_process}");
}
