//! The what-if simulator, through its binary: exact figures of the shipped scenarios (seed 001's
//! dead provider, the probe storm), determinism, and errors that name the bad field.
use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios").join(name)
}

fn simulate(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_simulate")).args(args).output().expect("the simulate binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn json_of(file: &str) -> Value {
    let path = scenario(file);
    let (ok, stdout, stderr) = simulate(&[path.to_str().unwrap(), "--json"]);
    assert!(ok, "simulate {file} failed: {stderr}");
    serde_json::from_str(&stdout).expect("--json prints JSON")
}

fn policy<'a>(report: &'a Value, key: &str) -> &'a Value {
    report["policies"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["policy"] == key)
        .unwrap_or_else(|| panic!("no policy {key}"))
}

#[test]
fn seed001_dead_primary_costs_this_product_3_requests_and_retry_on_fail_50() {
    let r = json_of("dead-llm-provider.json");
    let ours = policy(&r, "shared_store");
    let rof = policy(&r, "retry_on_fail");
    assert_eq!(ours["requests"], 3, "threshold 3, then the primary is cooled down for every later job");
    assert_eq!(rof["requests"], 50, "10 jobs x 5 tries, no memory across jobs");
    assert_eq!(ours["fallback_requests"], 10);
    assert_eq!(
        (ours["done"].as_u64(), ours["done_by_fallback"].as_u64(), ours["lost"].as_u64()),
        (Some(10), Some(10), Some(0))
    );
    assert_eq!(ours["probes"], 0, "K = 0: no probe request 'just to check'");
    assert_eq!(policy(&r, "per_process_breakers")["requests"], 3, "one worker: per-process rows are the shared rows");
    assert_eq!(policy(&r, "jitter_only")["requests"], 30, "3 attempts per job without a breaker");
    let looped = policy(&r, "sleep_loop");
    assert_eq!(looped["done"], 0, "the sleep(1) loop never leaves the dead primary");
    assert!(looped["requests"].as_u64().unwrap() > 500);
}

#[test]
fn seed001_across_40_concurrent_workers_costs_at_most_threshold_plus_the_in_flight_cap() {
    let r = json_of("dead-provider-fleet.json");
    let ours = policy(&r, "shared_store")["requests"].as_u64().unwrap();
    assert!((3..=3 + 5).contains(&ours), "threshold 3 + Max In Flight 5 bound the racing first calls: {ours}");
    assert_eq!(
        policy(&r, "per_process_breakers")["requests"],
        40 * 3,
        "each of 40 workers learns the outage on its own"
    );
    assert_eq!(policy(&r, "retry_on_fail")["requests"], 400 * 5);
    assert_eq!(
        (policy(&r, "shared_store")["done"].as_u64(), policy(&r, "shared_store")["lost"].as_u64()),
        (Some(400), Some(0))
    );

    // The control: without the cap all 40 first calls race past a breaker that has seen nothing yet.
    let mut file: Value =
        serde_json::from_str(&std::fs::read_to_string(scenario("dead-provider-fleet.json")).unwrap()).unwrap();
    file.as_object_mut().unwrap().remove("in_flight_cap");
    let path = std::env::temp_dir().join(format!("dead-provider-fleet-nocap-{}.json", std::process::id()));
    std::fs::write(&path, file.to_string()).unwrap();
    let (ok, stdout, stderr) = simulate(&[path.to_str().unwrap(), "--json"]);
    assert!(ok, "{stderr}");
    let uncapped: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(policy(&uncapped, "shared_store")["requests"], 40, "40 concurrent first calls without the cap");
}

#[test]
fn probe_storm_k_probes_fleet_wide_against_one_per_worker() {
    let r = json_of("probe-storm.json");
    assert_eq!(policy(&r, "shared_store")["probes"], 1, "K = 1 probe for the whole fleet when the window ends");
    assert_eq!(policy(&r, "per_process_breakers")["probes"], 40, "one probe per worker: 40 workers");
    for key in ["retry_on_fail", "sleep_loop", "jitter_only"] {
        assert_eq!(policy(&r, key)["probes"], 0, "{key} has no breaker");
    }
    let ours = policy(&r, "shared_store");
    assert_eq!((ours["done"].as_u64(), ours["lost"].as_u64()), (Some(2000), Some(0)));
}

#[test]
fn a_provider_down_ten_minutes_is_probed_at_most_once_per_10_s_and_back_in_use_within_30_s() {
    let r = json_of("recovery-probes.json");
    let ours = policy(&r, "shared_store");
    let probes = ours["probes"].as_u64().unwrap();
    assert!(ours["most_probes_in_10_s"].as_u64().unwrap() <= 1, "one probe per 10 s for the fleet: {ours}");
    // 600 s down: about one probe per 10 s for 5 minutes, then one per 30 s at most.
    assert!((15..=61).contains(&probes), "{probes} probes");
    let back = ours["back_in_use_s_after_recovery"].as_f64().expect("the primary served again");
    assert!(back <= 30.0, "back in use {back} s after its recovery");
    assert_eq!(ours["lost"], 0);
    // Per-process breakers probe once per worker.
    assert!(policy(&r, "per_process_breakers")["most_probes_in_10_s"].as_u64().unwrap() > 1);
}

#[test]
fn a_run_is_deterministic_for_its_seed() {
    let path = scenario("probe-storm.json");
    let a = simulate(&[path.to_str().unwrap(), "--json", "--seed", "11"]).1;
    let b = simulate(&[path.to_str().unwrap(), "--json", "--seed", "11"]).1;
    assert_eq!(a, b);
}

#[test]
fn a_bad_scenario_file_names_the_field() {
    let dir = std::env::temp_dir().join(format!("simulate-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"outages": [{"from_s": 0, "status": "502"}]}}"#,
            "vendor.outages[0].status",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {}, "engine": {"threshold": "3"}}"#,
            "engine.threshold",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {}, "engine": {"threshold": 0}}"#,
            "engine.threshold",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"quota": {"requests": 5, "perod_ms": 10}}}"#,
            "vendor.quota.perod_ms",
        ),
        (r#"{"workers": 1, "executions": {"queued": 1}, "vendor": {}}"#, "concurrency"),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"ban": {"status": 403}}}"#,
            "vendor.ban",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {}, "policies": ["shared_store", "yolo"]}"#,
            "policies[1]",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"latency_ms": 100, "lognormal": {"median_ms": 100, "p95_ms": 150}}}"#,
            "vendor.latency_ms",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"lognormal": {"median_ms": 100, "p95_ms": 90}}}"#,
            "vendor.lognormal.p95_ms",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"slow": {"share": 1.5, "ms": 3000}}}"#,
            "vendor.slow.share",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {}, "engine": {"hedge_min_ms": 900, "hedge_max_ms": 100}, "policies": ["hedge_p95"]}"#,
            "engine.hedge_max_ms",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"lognormal": {"median_ms": 100, "p95_ms": 150}, "latency_changes": [{"at_s": 5, "latency_ms": 500}]}}"#,
            "vendor.latency_changes[0].latency_ms",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {"latency_changes": [{"at_s": 5, "latency_ms": 500}, {"at_s": 2, "latency_ms": 100}]}}"#,
            "vendor.latency_changes[1].at_s",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {}, "fallback": {"latency_changes": [{"latency_ms": 500}]}}"#,
            "fallback.latency_changes[0].at_s",
        ),
        (
            r#"{"workers": 1, "concurrency": 1, "executions": {"queued": 1}, "vendor": {}, "policies": ["shared_store", "route_latency"]}"#,
            "policies",
        ),
    ];
    for (i, (text, field)) in cases.iter().enumerate() {
        let file = dir.join(format!("bad{i}.json"));
        std::fs::write(&file, text).unwrap();
        let (ok, _, stderr) = simulate(&[file.to_str().unwrap()]);
        assert!(!ok, "case {i} should be rejected");
        assert!(stderr.contains(field), "case {i}: expected the error to name {field}, got: {stderr}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_thirty_percent_storm_the_retry_budget_holds_back_by_deferring_and_loses_nothing() {
    // The same storm with the budget (on by default) and without it: the budget defers the jobs
    // whose retries it refuses; they come back at retry_at and are all done.
    let with = json_of("retry-storm.json");
    let without = json_of("retry-storm-no-budget.json");
    let (w, wo) = (policy(&with, "shared_store"), policy(&without, "shared_store"));
    println!(
        "30 % storm, 12000 jobs: with the budget {} requests, {} deferrals, last done {} s; without {} requests, {} deferrals, last done {} s",
        w["requests"], w["deferrals"], w["last_done_s"], wo["requests"], wo["deferrals"], wo["last_done_s"]
    );
    // Without it, only jobs whose attempts or item budget ran out are deferred.
    let (dw, dwo) = (w["deferrals"].as_u64().unwrap(), wo["deferrals"].as_u64().unwrap());
    assert!(dw > 10 * dwo.max(1), "the budget held retries back: {dw} deferrals against {dwo}");
    for p in [w, wo] {
        assert_eq!((p["done"].as_u64(), p["lost"].as_u64()), (Some(12_000), Some(0)));
    }
}

#[test]
fn the_herds_requests_during_the_blip_split_before_and_after_the_breaker_opened() {
    // The 90-second blip behind 40 workers x 10 slots: the shared breaker lets the herd find the
    // outage out, then only its probes; per-process breakers each find it out.
    let r = json_of("vendor-blip-40-workers.json");
    let (ours, per) = (policy(&r, "shared_store"), policy(&r, "per_process_breakers"));
    let split = |p: &Value| {
        let (all, before) = (p["requests_in_outage"].as_u64().unwrap(), p["in_outage_before_open"].as_u64().unwrap());
        (before, all - before)
    };
    let (ours_before, ours_after) = split(ours);
    let (per_before, per_after) = split(per);
    println!(
        "90 s blip: shared store {ours_before} before the breaker opened, {ours_after} after; per-process {per_before} before, {per_after} after"
    );
    assert!(ours_after <= ours["probes"].as_u64().unwrap(), "after it opened, only probes reach the vendor");
    assert!(ours_before + ours_after < per_before + per_after, "fewer than per-process breakers");
}

#[test]
fn hedging_a_long_tail_cuts_the_p99_for_a_few_more_requests_and_serves_every_item_once() {
    // Issue 30: 20 000 calls, log-normal fast calls (median 100 ms, p95 150 ms), 5 % take 3 s;
    // no hedging, a fixed delay, the p95 delay. The facts that hold whatever the tuning.
    let path = scenario("hedging-tail.json");
    let (ok, text, stderr) = simulate(&[path.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    println!("{text}");
    let r = json_of("hedging-tail.json");
    let items = r["executions"].as_u64().unwrap();
    let n = |p: &Value, k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k} of {}", p["policy"]));
    let plain = policy(&r, "shared_store");
    for p in r["policies"].as_array().unwrap() {
        assert_eq!((n(p, "done"), n(p, "lost")), (items, 0), "{}: every item done", p["policy"]);
        assert_eq!((n(p, "deferred_at_end"), n(p, "unfinished")), (0, 0), "{}: none left", p["policy"]);
        assert_eq!(n(p, "served_twice"), 0, "{}: no item served twice", p["policy"]);
        // Nothing fails here: every request is an item's one call or a hedge.
        assert_eq!(n(p, "requests"), items + n(p, "hedges"), "{}", p["policy"]);
    }
    assert_eq!((n(plain, "requests"), n(plain, "hedges")), (items, 0), "no hedging: one call per item");
    for key in ["hedge_fixed", "hedge_p95"] {
        let h = policy(&r, key);
        let requests = n(h, "requests");
        assert!(requests > n(plain, "requests") && requests < 2 * items, "{key}: {requests} requests");
        assert_eq!(n(h, "abandoned"), n(h, "hedges"), "{key}: every hedged item aborted its other call");
        assert!(
            n(h, "latency_p99_ms") < n(plain, "latency_p99_ms"),
            "{key}: p99 {} against {} without hedging",
            h["latency_p99_ms"],
            plain["latency_p99_ms"]
        );
    }
}

#[test]
fn latency_routing_prefers_the_faster_provider_and_moves_to_the_other_after_it_slows_down() {
    // Issue 29: 5000 calls, A (the vendor) median 100 ms, B (the fallback) 300 ms; A goes to
    // 500 ms at 25 s. In order, weighted 1:1 and latency routing: the facts that hold whatever
    // the tuning of the latency routing (its goal, >= 85 % and within 10 s, is the scenario's target).
    let path = scenario("routing-latency.json");
    let (ok, text, stderr) = simulate(&[path.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    println!("{text}");
    let r = json_of("routing-latency.json");
    let items = r["executions"].as_u64().unwrap();
    let n = |p: &Value, k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k} of {}", p["policy"]));
    let f = |p: &Value, k: &str| p["routing"][k].as_f64().unwrap_or_else(|| panic!("routing.{k} of {}", p["policy"]));
    for p in r["policies"].as_array().unwrap() {
        assert_eq!((n(p, "done"), n(p, "lost")), (items, 0), "{}: every item done", p["policy"]);
        assert_eq!((n(p, "deferred_at_end"), n(p, "unfinished")), (0, 0), "{}: none left", p["policy"]);
        // Both providers are healthy: one call per item, wherever it goes.
        assert_eq!(n(p, "requests") + n(p, "fallback_requests"), items, "{}", p["policy"]);
        assert_eq!(p["routing"]["faster_before"], "vendor");
        assert_eq!(p["routing"]["faster_after"], "fallback");
    }
    let order = policy(&r, "shared_store");
    assert!(f(order, "faster_before_pct") >= 99.0, "in order, A first: {}", order["routing"]);
    assert_eq!(order["routing"]["moved"], false, "in order, calls never move to B");
    let weighted = policy(&r, "route_weighted");
    let share = f(weighted, "vendor_share_pct");
    assert!((45.0..=55.0).contains(&share), "weighted 1:1: {share} % at A");
    assert_eq!(weighted["routing"]["moved"], false, "1:1 whatever the latency: no lasting majority at B");
    let latency = policy(&r, "route_latency");
    assert!(f(latency, "faster_before_pct") > 80.0, "latency routing prefers A: {}", latency["routing"]);
    let moved = f(latency, "moved_after_s");
    assert!(moved > 0.0 && moved < 20.0, "most calls went to B some seconds after the change: {moved} s");
    assert!(f(latency, "faster_after_pct") > 50.0, "then most stay at B: {}", latency["routing"]);
    assert!(
        n(latency, "latency_p95_ms") < n(order, "latency_p95_ms"),
        "following the faster provider lowers the p95: {} against {} in order",
        latency["latency_p95_ms"],
        order["latency_p95_ms"]
    );
}
