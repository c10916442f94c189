//! `simulate`: what-if runs of the engine in virtual time. The same code as the node (the step
//! machine, `record`, the breaker, the rate gate) drives thousands of executions across a fleet
//! of workers against a scripted vendor, for several retry policies side by side, deterministic
//! for a seed. Prints a table per policy (or JSON) and can draw arrivals per second as an SVG.
mod agenda;
mod baseline;
mod checks;
mod engine_chain;
mod engine_item;
mod fields;
mod fleet;
mod ideal;
mod plot;
mod policy;
mod report;
mod routing;
mod run;
mod scenario;
mod tally;
mod target;
mod vendor;
mod world;

use report::Row;
use scenario::Scenario;
use serde_json::json;
use std::process::ExitCode;

const HELP: &str = r#"simulate: compare retry policies against a scripted vendor, in virtual time, with the engine's own code.

USAGE
    simulate <scenario.json> [--svg <out.svg>] [--json] [--seed <n>] [--plot-s <seconds>]

OPTIONS
    --svg <path>      write arrivals per second at the vendor over time, one line per policy
    --json            print the table (and the target checks) as JSON instead of text
    --seed <n>        override the scenario's seed (runs are deterministic for a seed)
    --plot-s <s>      length of the plot's time axis (default: the scenario's plot_s, else ~3x ideal)
    -h, --help        this text

POLICIES (compared side by side in one run)
    retry_on_fail         n8n's Retry On Fail: fixed wait, N tries per item in its worker, then the
                          execution fails (item lost), or its error output runs the fallback the same way
    sleep_loop            the blip's sleep loop: retry forever after a fixed sleep(1 s), primary only
    jitter_only           the engine, full jitter, breaker that never trips, no rate limit, rows per worker
    per_process_breakers  the engine at its defaults with every worker holding its own rows
                          (opossum/cockatiel style; a soft limit then applies per worker)
    shared_store          this product: the engine, one shared set of rows (the shared store), and a
                          shared soft rate limit at soft_limit x the vendor quota
    hedge_fixed           this product with hedged requests after a fixed delay (engine.hedge_delay_ms)
    hedge_p95             this product hedging after the provider's recent p95 from the shared latency
                          row, within engine.hedge_min_ms .. hedge_max_ms (max_hedges per item)
    route_weighted        this product routing between the vendor and the fallback at random by weight
                          (engine routing "weighted"; default weights: 1:1)
    route_latency         this product routing by latency (engine routing "latency": the lowest recent
                          median first, at random among those within 20 % of it, 5 % exploring)
    The hedging and routing ones run only when named in "policies"; a scenario naming one also
    prints the latency table (see below), a routing one the routing table (it needs a fallback).
    The others run with the scenario's engine.hedge (default off); shared_store routes as the
    scenario's engine.routing says (default "order": the vendor first, the fallback on failure).
    A worker slot stays busy while its item sleeps; a deferred item leaves its slot and is
    re-submitted to the queue at its retry_at, where any worker may take it.

SCENARIO FILE (JSON; unknown fields are errors; times in s unless named _ms)
{
  "name": "a 90 s vendor blip",                title of the table and the plot
  "about": "...",                              free text, ignored
  "seed": 7,                                   default 1
  "horizon_s": 14400,                          stop simulating here (default 3600)
  "plot_s": 600,                               optional
  "workers": 40, "concurrency": 10,            queue-mode workers and slots per worker (required)
  "executions": { "queued": 0,                 waiting at t = 0
                  "count": 3000, "per_s": 25,  then count more, evenly spaced at per_s
                  "start_s": 0 },
  "vendor": {                                  the primary provider
    "latency_ms": 200, "latency_jitter_ms": 0, latency = latency_ms + U(0, jitter)
    "lognormal": { "median_ms": 100,           optional, instead of latency_ms: log-normal with
                   "p95_ms": 150 },            this median and p95 (+ jitter if given)
    "slow": { "share": 0.05, "ms": 3000 },     optional: this share of the calls takes ms instead
    "latency_changes": [ { "at_s": 25,         optional: from at_s on (in time order) another latency:
                   "median_ms": 500,           a log-normal vendor's median (and "p95_ms", default
                   "p95_ms": 750 } ],          the same spread), or "latency_ms" for a fixed one
    "outages": [ { "from_s": 30, "to_s": 120,  to_s omitted = never recovers
                   "status": 502,              or "error": "ECONNREFUSED" (exactly one)
                   "latency_ms": 200,          optional, latency of the refusals
                   "share": 1 } ],             optional, the share of requests refused (0.3:
                                               a storm of 30 %), at random
    "quota": { "requests": 50, "period_ms": 1000,   fixed windows; above: 429 + Retry-After
               "retry_after_s": 1 },           optional; default the seconds left in the window
    "ban": { "over_quota_s": 3,                seconds in a row with a 429 ...
             "for_s": 600, "status": 403 },    ... then every request refused (or "error")
    "limiter_during_outage": false },          do outage answers count against the quota?
  "fallback": { same fields as vendor },       optional second provider of the chain
  "engine": { "threshold": 3, ... },           the node's settings (engine ChainConfig fields:
                                               strategy, base_ms, cap_ms, max_attempts, deadline_ms,
                                               budget_ms, retry_after_cap_ms, defer_spread_ms,
                                               threshold, window_ms, open_ms, open_growth,
                                               open_max_ms, half_open_probes, ...); defaults = the node's
  "soft_limit": 0.8,                           shared rate limit as a fraction of the vendor quota
  "in_flight_cap": 5,                          optional: the node's Max In Flight on the primary
  "retry_on_fail": { "tries": 5, "wait_ms": 1000 },
  "sleep_loop": { "wait_ms": 1000 },
  "policies": ["retry_on_fail", "sleep_loop", "jitter_only", "per_process_breakers", "shared_store"]
}

TABLE
    requests      requests arriving at the primary       fallback   requests at the fallback
    in outage     of those, during an outage window      probes     half-open probes admitted
    peak/s after  most arrivals in one second after the last outage ended
    429s          over-quota answers                     banned s   time the vendor banned the fleet
    last done s   when the last execution succeeded      done/lost  executions that succeeded/failed
    deferred      executions waiting for their retry_at at the end (horizon)
    unfinished    executions queued or in a slot at the horizon

LATENCY TABLE (when a hedging policy runs)
    p50/p95/p99 ms  item latency, from the execution's arrival to its end (done items)
    requests/item   requests at every provider per item that ended (done or lost)
    extra %         requests beyond one per item, in % of the items (hedges, retries)
    hedges          calls sent while another call of the item was still out
    target hedge_tail: p99 <= 3 x the vendor's tail-free median and extra <= 6 %

ROUTING TABLE (when a routing policy runs, or a provider's latency changes, with a fallback)
    vendor %, fallback %  each provider's share of the calls (as they arrive, retries included)
    faster % before       share at the faster provider (lower median) before the first latency change
    faster % after        share at the provider faster after it, from 10 s after the change on
    moved after s         when most calls had moved to the provider that became the faster: the end of
                          the first 1 s window after the change from which every 1 s window to the last
                          call sent > 50 % there (held >= 10 s; else "never")
    p95 before/after      item latency p95 of the items that arrived before the change / from it on
    target latency_routing: route_latency sends >= 85 % to the faster provider before the change and
                          moves most calls within 10 s of it
"#;

struct Args {
    scenario: String,
    svg: Option<String>,
    json: bool,
    seed: Option<u64>,
    plot_s: Option<u64>,
}

fn parse_args() -> Result<Option<Args>, String> {
    let mut args = std::env::args().skip(1);
    let (mut scenario, mut svg, mut json, mut seed, mut plot_s) = (None, None, false, None, None);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--svg" => svg = Some(value("--svg")?),
            "--json" => json = true,
            "--seed" => seed = Some(value("--seed")?.parse().map_err(|_| "--seed needs a whole number".to_string())?),
            "--plot-s" => {
                plot_s = Some(
                    value("--plot-s")?.parse().map_err(|_| "--plot-s needs a whole number of seconds".to_string())?,
                )
            }
            s if s.starts_with('-') => return Err(format!("unknown option {s} (see --help)")),
            s if scenario.is_none() => scenario = Some(s.to_string()),
            s => return Err(format!("one scenario file at a time (got a second: {s})")),
        }
    }
    let scenario = scenario.ok_or("give a scenario file (see --help)")?;
    Ok(Some(Args { scenario, svg, json, seed, plot_s }))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("simulate: {e}");
            return ExitCode::from(2);
        }
    };
    let mut sc = match Scenario::load(&args.scenario) {
        Ok(sc) => sc,
        Err(e) => {
            eprintln!("simulate: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(seed) = args.seed {
        sc.seed = seed;
    }
    let started = std::time::Instant::now();
    // Policies are independent worlds: run them in parallel, report in the scenario's order.
    let runs: Vec<run::Run> = std::thread::scope(|s| {
        let handles: Vec<_> = sc
            .policies
            .iter()
            .map(|&p| {
                s.spawn({
                    let sc = &sc;
                    move || run::run(sc, p)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a policy's run panicked")).collect()
    });
    let rows: Vec<Row> = runs.iter().map(|r| Row::of(&sc, r)).collect();
    let ideal_ms = ideal::last_done_ms(&sc);
    let checks = checks::all(&sc, &runs, &rows, ideal_ms);
    let wall = started.elapsed();

    if let Some(path) = &args.svg {
        let plot_s = args.plot_s.or(sc.plot_s).unwrap_or_else(|| default_plot_s(&sc, &rows, ideal_ms));
        if let Err(e) = std::fs::write(path, plot::svg(&sc, &runs, &rows, plot_s)) {
            eprintln!("simulate: cannot write {path}: {e}");
            return ExitCode::from(1);
        }
        eprintln!("simulate: wrote {path} ({plot_s} s of arrivals per second)");
    }
    if args.json {
        let out = json!({
            "scenario": sc.name,
            "file": args.scenario,
            "seed": sc.seed,
            "executions": sc.executions.total(),
            "ideal_last_done_s": ideal_ms.is_finite().then_some(ideal_ms / 1000.0),
            "policies": rows.iter().map(Row::json).collect::<Vec<_>>(),
            "targets": checks.iter().map(checks::Check::json).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out).expect("plain JSON"));
    } else {
        println!("{}\n", report::describe(&sc));
        print!("{}", report::table(&rows));
        if sc.policies.iter().any(|p| p.hedge_mode().is_some() || p.routing().is_some()) {
            println!("\nitem latency (arrival to done) and requests per item, side by side:");
            print!("{}", report::latency_table(&rows));
        }
        if routing::applies(&sc) {
            println!("\nshare of the calls per provider, side by side:");
            print!("{}{}", report::routing_table(&rows), report::routing_note(&sc));
        }
        // The breaker's policies' outage requests, split: the herd before it opened, its probes,
        // and the rest (what a breaker per process lets through).
        let breakers = ["per_process_breakers", "shared_store"];
        for r in rows.iter().filter(|r| r.in_outage > 0 && breakers.contains(&r.key)) {
            println!(
                "in outage, {}: {} before the breaker opened, {} after it (half-open probes in the whole run: {})",
                r.label,
                r.in_outage_before_open,
                r.in_outage - r.in_outage_before_open,
                r.probes
            );
        }
        let ideal = if ideal_ms.is_finite() {
            format!("{:.1} s", ideal_ms / 1000.0)
        } else {
            "never (the vendor never recovers)".into()
        };
        println!(
            "\nideal last done (never calls into an outage, sends at the quota): {ideal}; simulated in {:.2} s",
            wall.as_secs_f64()
        );
        if !checks.is_empty() {
            println!("targets for this product (shared store):");
            for c in &checks {
                println!("{}", c.line());
            }
        }
    }
    ExitCode::SUCCESS
}

/// Long enough to show this product's whole run and the others' recovery, at most the horizon.
fn default_plot_s(sc: &Scenario, rows: &[Row], ideal_ms: f64) -> u64 {
    let product =
        rows.iter().find(|r| r.key == policy::Policy::SharedStore.key()).and_then(|r| r.last_done_s).unwrap_or(0.0);
    let ideal = if ideal_ms.is_finite() { ideal_ms / 1000.0 } else { 0.0 };
    let s = (3.0 * ideal).max(1.3 * product).max(60.0).ceil() as u64;
    s.min(sc.horizon_ms / 1000).max(1)
}
