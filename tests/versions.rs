//! docs/versions.md's table is the engine's version table (src/config/versions.rs), row by row:
//! what the docs say each node version does by default is what the node reads.
use resilient_engine::config::versions::{VersionDefaults, NODES};

/// The docs' name of each node of the engine's table.
fn node(docs_name: &str) -> &'static str {
    match docs_name {
        "Call Chain" => "callChain",
        "Check Provider, Report Outcome" => "guard",
        "Resilient Chat Model" => "chatModel",
        other => panic!("docs/versions.md names a node the engine's table does not: {other}"),
    }
}

fn yes(cell: &str) -> bool {
    match cell {
        "yes" => true,
        "no" => false,
        other => panic!("docs/versions.md: expected yes or no, got {other:?}"),
    }
}

#[test]
fn the_docs_table_is_the_engines_version_table() {
    let docs = std::fs::read_to_string(format!("{}/docs/versions.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let rows: Vec<(&str, f64, VersionDefaults)> = docs
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Node") && !l.starts_with("| ---"))
        .map(|l| {
            let c: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert_eq!(c.len(), 15, "{l}");
            let d = VersionDefaults {
                wait_in_line: yes(c[2]),
                wait_for_slot: yes(c[3]),
                fleet_limit: yes(c[4]),
                priority: match c[5] {
                    "low" => "low",
                    "normal" => "normal",
                    "high" => "high",
                    other => panic!("docs/versions.md: expected low, normal or high, got {other:?}"),
                },
                fair_share_by_workflow: yes(c[6]),
                check_empty: yes(c[7]),
                check_finish: yes(c[8]),
                continue_broken_streams: yes(c[9]),
                learn_stream_pace: yes(c[10]),
                next_provider_when_input_too_long: yes(c[11]),
                probe_interval_ms: c[12].parse().unwrap(),
                item_concurrency: if c[13] == "auto" { "auto" } else { "fixed" },
                max_item_concurrency: c[14].parse().unwrap(),
            };
            assert!(c[13] == "auto" || c[13] == "fixed", "{l}");
            (node(c[0]), c[1].parse().unwrap(), d)
        })
        .collect();
    let engine: Vec<(&str, f64, VersionDefaults)> =
        NODES.iter().flat_map(|(n, t)| t.iter().map(move |(v, d)| (*n, *v, *d))).collect();
    assert_eq!(rows, engine, "docs/versions.md and src/config/versions.rs differ");
}

/// The engine applies a node version's defaults itself (the node hands over its name, its
/// `typeVersion` and the workflow): a switch the user left unset is the version's, one the user
/// set is the user's, and without a node every switch is off.
#[test]
fn a_switch_left_unset_is_the_node_versions_and_one_set_is_the_users() {
    use resilient_engine::config::{ChainConfig, ProviderConfig};
    let chain = |node: &str, version: f64, set: fn(&mut ChainConfig)| {
        let mut c = ChainConfig {
            providers: vec![ProviderConfig { name: "a".into(), ..Default::default() }],
            node: node.into(),
            type_version: version,
            workflow_id: "wf-7".into(),
            ..Default::default()
        };
        set(&mut c);
        c.validate().unwrap()
    };
    let v22 = chain("callChain", 2.2, |_| {});
    assert!(v22.wait_in_line && v22.fleet_limit && v22.next_provider_when_input_too_long);
    assert_eq!(v22.providers[0].breaker.probe_interval_ms, 10_000);
    assert_eq!((v22.share_key.as_str(), v22.rank), ("workflow:wf-7", 1));
    let v20 = chain("callChain", 2.0, |_| {});
    assert!(!v20.wait_in_line && !v20.fleet_limit && v20.share_key.is_empty());
    let user = chain("callChain", 2.2, |c| {
        c.fleet_limit = Some(false);
        c.probe_interval_ms = Some(0);
        c.fair_share_key = "customer-1".into();
    });
    assert!(!user.fleet_limit && user.wait_in_line);
    assert_eq!((user.providers[0].breaker.probe_interval_ms, user.share_key.as_str()), (0, "customer-1"));
    let chat = chain("chatModel", 1.2, |_| {});
    assert!(chat.slot_wait_ms > 0 && chat.continue_broken_streams && chat.rank == 2);
    let none = chain("", 0.0, |_| {});
    assert!(!none.wait_in_line && !none.fleet_limit && none.share_key.is_empty() && none.rank == 1);
    let mut bad = ChainConfig { node: "callChian".into(), ..ChainConfig::default() };
    bad.providers.push(ProviderConfig { name: "a".into(), ..Default::default() });
    assert_eq!(bad.validate().unwrap_err().field(), Some("node"));
}
