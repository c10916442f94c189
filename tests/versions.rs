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
