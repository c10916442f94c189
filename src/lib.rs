//! Policy engine of the Resilient Provider Call n8n node. Sans-IO: no clock, socket or store;
//! time (`now_ms`, the store's clock) and randomness come in, decisions and new rows come out.
//!
//! One module per decision: [`error_facts`] (what a call left behind, as an outcome), [`outcome`]
//! (retry? counts against health?), [`context_limit`] (input
//! too long for the model?), [`backoff`] (delay
//! schedule), [`retry_after`] (server hints), [`breaker`] (provider health), [`rate_gate`] and
//! [`in_flight`] (shared pacing), [`chain`] (which provider next), [`hedge`] (a second call
//! for a slow one), [`step`] (one item's steps),
//! [`record`] (an outcome's effect on shared rows), [`row_text`] (rows as stores hold them),
//! [`session`] (an item through the two-call boundary), [`stream`] (a streamed call's
//! commit and limits), [`answer_text`] (its commonest answer as
//! text), [`ticket`] (the guard's check and report), [`event`] (a transition as the fleet's alert
//! reads it), [`metrics`] (Prometheus text).
pub mod admit;
pub mod answer_body;
pub mod answer_check;
pub mod answer_text;
pub mod backoff;
pub mod breaker;
pub mod cas;
pub mod chain;
pub mod civil;
pub mod concurrency;
pub mod config;
pub mod config_decode;
pub mod congestion;
pub mod content_policy;
pub mod context_limit;
pub mod error;
pub mod error_facts;
pub mod event;
pub mod fleet_limit;
pub mod hedge;
pub mod hint_parse;
pub mod in_flight;
pub mod inspect;
pub mod latency;
pub mod learned_limit;
pub mod lease;
pub mod metrics;
#[cfg(not(target_arch = "wasm32"))]
pub mod node_constants;
pub mod outcome;
pub mod rate_gate;
pub mod read_ahead;
pub mod reason;
pub mod record;
pub mod retry_after;
pub mod retry_budget;
pub mod rng;
pub mod routing;
pub mod row_decode;
pub mod row_text;
pub mod rows;
pub mod seam;
pub mod session;
pub mod skip;
pub mod spend_hold;
pub mod status_set;
pub mod step;
pub mod store_failure;
pub mod stream;
pub mod ticket;
pub mod token_budget;
pub mod token_limit;

#[cfg(target_arch = "wasm32")]
mod wasm;
#[cfg(target_arch = "wasm32")]
mod wasm_input;

pub use config::{Chain, ChainConfig};
pub use error::EngineError;
