//! Key Quotas as the node hands them over (`ChainConfig::key_quotas`), and as checked
//! (`validate::key_quotas`): what one Fair Share Key may use of the chain per period
//! (`src/limits/key_quota.rs`).
use crate::limits::key_quota::Quota;
use serde::{Deserialize, Serialize};

/// One quota: at most `limit` `measure` (requests, tokens, spend in the currency unit of the
/// providers' prices) per `per` (minute, day, month; UTC).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct KeyQuotaConfig {
    pub measure: String,
    pub per: String,
    pub limit: f64,
}

/// A key's quotas, and the name its row is kept under in the store: `key:<Fair Share Key>`
/// (a provider's rows of that name never hold a `quota` row).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyQuotas {
    pub owner: String,
    pub list: Vec<Quota>,
}
