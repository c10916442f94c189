//! A claim that frees itself: half-open probes and in-flight slots are held as leases so a
//! worker that dies mid-call cannot keep a provider stuck.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub holder: String,
    pub until_ms: u64,
}

pub fn live(leases: &[Lease], now_ms: u64) -> Vec<Lease> {
    leases.iter().filter(|l| l.until_ms > now_ms).cloned().collect()
}

pub(crate) fn earliest_end(leases: &[Lease]) -> u64 {
    leases.iter().map(|l| l.until_ms).min().unwrap_or(0)
}
