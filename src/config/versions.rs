//! What each version of each node does where its user set nothing: n8n saves only the values a
//! user changed, so a new default comes with a new node version and a saved workflow keeps what
//! it did. One table per node, read by the node by its `typeVersion` (generated into
//! `engineConstants.ts`); docs/versions.md shows the same table and `tests/versions.rs` holds the
//! two together.
use serde::Serialize;

/// A node version's defaults: the engine's switches it turns on (`ChainConfig`'s fields of the
/// same names) and, for Call Chain, how its items run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct VersionDefaults {
    /// `ChainConfig::wait_in_line`: an item a provider can take soon waits its turn.
    pub wait_in_line: bool,
    /// `ChainConfig::wait_for_slot`: at a spent fleet limit, a short wait for a slot.
    pub wait_for_slot: bool,
    /// `ChainConfig::fleet_limit`: the fleet's learned limit on calls in flight.
    pub fleet_limit: bool,
    /// `ChainConfig::priority`: who takes a spent fleet limit's freed slots first.
    pub priority: &'static str,
    /// With no Fair Share Key, the node hands over `workflow:<id>` as `ChainConfig::fair_share_key`:
    /// a spent fleet limit is split between workflows (each worker a part of its own before).
    pub fair_share_by_workflow: bool,
    /// `ChainConfig::check_empty`: an answer with neither text nor a tool call fails.
    pub check_empty: bool,
    /// `ChainConfig::check_finish`: a cut, filtered or refused answer fails (*Fail Over on Cut,
    /// Filtered or Refused Answers*).
    pub check_finish: bool,
    /// `ChainConfig::continue_broken_streams`: *On a Broken Stream: Continue*.
    pub continue_broken_streams: bool,
    /// `ChainConfig::learn_stream_pace`: a committed stream's idle limit follows its own chunks.
    pub learn_stream_pace: bool,
    /// `ChainConfig::next_provider_when_input_too_long`: an input too long for a model goes to
    /// the next one (a larger context window).
    pub next_provider_when_input_too_long: bool,
    /// `ChainConfig::probe_interval_ms`: a broken provider is probed this often (0: the open
    /// window, growing per failed probe).
    pub probe_interval_ms: u64,
    /// Call Chain's *Item Concurrency*: `auto` (learned, up to `max_item_concurrency`) or
    /// `fixed` (one at a time unless set).
    pub item_concurrency: &'static str,
    pub max_item_concurrency: u32,
}

/// Every switch off: the engine's own where no node is named, and the panel's defaults.
pub const NONE: VersionDefaults = VersionDefaults {
    wait_in_line: false,
    wait_for_slot: false,
    fleet_limit: false,
    priority: "normal",
    fair_share_by_workflow: false,
    check_empty: false,
    check_finish: false,
    continue_broken_streams: false,
    learn_stream_pace: false,
    next_provider_when_input_too_long: false,
    probe_interval_ms: 0,
    item_concurrency: "fixed",
    max_item_concurrency: 256,
};

/// Resilient Provider Call's *Call Chain* operation, from each version on.
pub const CALL_CHAIN: &[(f64, VersionDefaults)] = &[
    (1.0, NONE),
    (2.0, NONE),
    (
        2.1,
        VersionDefaults {
            wait_in_line: true,
            fleet_limit: true,
            check_empty: true,
            check_finish: true,
            item_concurrency: "auto",
            ..NONE
        },
    ),
    (2.2, CALL_CHAIN_2_2),
];

/// Call Chain 2.2: 2.1's, a broken provider probed every 10 s (back in use within seconds of its
/// recovery), an input too long for a model sent on to the next, and up to 1024 items at once.
const CALL_CHAIN_2_2: VersionDefaults = VersionDefaults {
    wait_in_line: true,
    fleet_limit: true,
    check_empty: true,
    check_finish: true,
    item_concurrency: "auto",
    // 1000 items on a healthy vendor: 256 at once took 2.4-2.7x the HTTP Request node's time,
    // 1024 at once 1.16x (docs/concurrency.md); the window still learns what a vendor takes.
    max_item_concurrency: 1024,
    next_provider_when_input_too_long: true,
    probe_interval_ms: PROBE_INTERVAL_MS,
    fair_share_by_workflow: true,
    ..NONE
};

/// The probe interval from Call Chain 2.2 and the chat model 1.2: a probe per 10 s for the whole
/// fleet is one call, and a provider is back in use within about 10 s of its recovery.
pub const PROBE_INTERVAL_MS: u64 = 10_000;

/// Resilient Provider Call's *Check Provider* and *Report Outcome* (the guard): the check holds
/// a slot of the fleet's limit from 2.1; it never waits in line (it answers go or defer).
pub const GUARD: &[(f64, VersionDefaults)] = &[
    (2.0, NONE),
    (2.1, VersionDefaults { fleet_limit: true, ..NONE }),
    (
        2.2,
        VersionDefaults {
            fleet_limit: true,
            probe_interval_ms: PROBE_INTERVAL_MS,
            fair_share_by_workflow: true,
            ..NONE
        },
    ),
];

/// The Resilient Chat Model.
pub const CHAT_MODEL: &[(f64, VersionDefaults)] = &[
    (1.0, NONE),
    (
        1.1,
        VersionDefaults {
            fleet_limit: true,
            check_empty: true,
            check_finish: true,
            continue_broken_streams: true,
            ..NONE
        },
    ),
    (
        1.2,
        VersionDefaults {
            wait_for_slot: true,
            fleet_limit: true,
            // An interactive answer first: a batch on the same vendor gives it the next free slot.
            priority: "high",
            check_empty: true,
            check_finish: true,
            continue_broken_streams: true,
            learn_stream_pace: true,
            next_provider_when_input_too_long: true,
            probe_interval_ms: PROBE_INTERVAL_MS,
            fair_share_by_workflow: true,
            ..NONE
        },
    ),
];

/// The nodes by the names the node's TypeScript and the docs use.
pub const NODES: [(&str, &[(f64, VersionDefaults)]); 3] =
    [("callChain", CALL_CHAIN), ("guard", GUARD), ("chatModel", CHAT_MODEL)];

/// What `node` at `version` does where its user set nothing (`ChainConfig::node`); the engine's
/// own (every switch off) without a node.
pub fn of(node: &str, version: f64) -> Result<VersionDefaults, crate::EngineError> {
    if node.is_empty() {
        return Ok(NONE);
    }
    let names = "callChain, guard, chatModel";
    Ok(at(NODES[crate::error::one_of("node", "node", node, names)?].1, version))
}

/// `table`'s defaults at `version`: those of the newest version at or below it (the oldest's
/// below the first).
pub fn at(table: &[(f64, VersionDefaults)], version: f64) -> VersionDefaults {
    table.iter().rev().find(|(from, _)| *from <= version).unwrap_or(&table[0]).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_between_two_takes_the_older_ones_defaults() {
        assert!(!at(CALL_CHAIN, 2.0).wait_in_line);
        assert!(at(CALL_CHAIN, 2.1).wait_in_line);
        assert!(at(CALL_CHAIN, 2.5).wait_in_line, "a newer version keeps 2.1's until it says otherwise");
        assert_eq!(at(CHAT_MODEL, 0.5), NONE);
    }
}
