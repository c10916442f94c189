//! `engine-demo`: the engine alone, no n8n. Prints seed 003's delay schedule and seed 001's ten
//! jobs against an always-500 provider, with and without a cooldown.
use resilient_engine::choose::chain::ProviderView;
use resilient_engine::config::{ChainConfig, ProviderConfig};
use resilient_engine::item::record::record;
use resilient_engine::item::CallEnd;
use resilient_engine::item::{ItemMachine, Step};
use resilient_engine::rng::Rng;
use resilient_engine::verdict::backoff::{Backoff, Strategy};
use resilient_engine::verdict::outcome::Outcome;
use std::sync::Arc;

fn main() {
    if std::env::args().any(|a| a == "--help" || a == "-h") {
        println!(
            "engine-demo: prints seed 003's delay schedule and seed 001's dead-provider count.\nUsage: engine-demo"
        );
        return;
    }
    let mut rng = Rng::from_entropy();
    println!("Seed 003 delay schedule (base 300 ms, cap 8000 ms), one draw per strategy:");
    println!("{:>7} {:>9} {:>12} {:>12} {:>13}", "retry", "ceiling", "full_jitter", "equal_jitter", "decorrelated");
    let mk = |strategy| Backoff { strategy, base_ms: 300, cap_ms: 8000 };
    let mut prev = 0;
    for n in 0..6 {
        let d = mk(Strategy::Decorrelated).delay(n, prev, &mut rng);
        println!(
            "{:>7} {:>9} {:>12} {:>12} {:>13}",
            n + 1,
            mk(Strategy::None).ceiling(n),
            mk(Strategy::FullJitter).delay(n, 0, &mut rng),
            mk(Strategy::EqualJitter).delay(n, 0, &mut rng),
            d
        );
        prev = d;
    }
    println!("\nSeed 001: always-500 primary, healthy fallback, 10 jobs, requests counted at the primary:");
    for (label, cooldown) in [("5 tries per job, no shared memory", false), ("threshold 3, cooldown 10 min", true)] {
        println!("  {label:<36} {:>3} requests", dead_provider_requests(cooldown));
    }
}

fn dead_provider_requests(cooldown: bool) -> usize {
    let cfg = ChainConfig {
        providers: vec![
            ProviderConfig { name: "primary".into(), ..Default::default() },
            ProviderConfig { name: "fallback".into(), ..Default::default() },
        ],
        max_attempts: if cooldown { 3 } else { 5 },
        threshold: if cooldown { 3 } else { 10_000 },
        open_ms: 600_000,
        half_open_probes: 0,
        ..Default::default()
    };
    let chain = Arc::new(cfg.validate().expect("valid"));
    let mut views = vec![ProviderView::default(); 2];
    let (mut now, mut hits) = (0u64, 0);
    for job in 0..10 {
        let mut m = ItemMachine::new(chain.clone(), now, format!("job{job}"), vec![], Rng::from_entropy());
        loop {
            let poll = m.poll(now, &views).expect("views match the chain");
            if let Some(w) = poll.writes {
                apply(&mut views, w);
            }
            match poll.step {
                Step::Call { provider, .. } => {
                    hits += (provider == 0) as usize;
                    let status = if provider == 0 { 500 } else { 200 };
                    now += 50;
                    let effect = m
                        .on_outcome(now, &Outcome::status(status, Default::default()), &views, None, CallEnd::default())
                        .expect("pending call");
                    if let Some(w) = record(&chain, &views[provider], &effect, now).writes {
                        apply(&mut views, w);
                    }
                }
                Step::Sleep { ms, .. } => now += ms,
                _ => break,
            }
        }
    }
    hits
}

fn apply(views: &mut [ProviderView], w: resilient_engine::choose::chain::Writes) {
    let v = &mut views[w.provider];
    if let Some(b) = w.breaker {
        v.breaker = b;
    }
    if let Some(g) = w.gate {
        v.gate = g;
    }
    if let Some(f) = w.in_flight {
        v.in_flight = f;
    }
}
