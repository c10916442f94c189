//! Policy engine of the Resilient Provider Call n8n node. Sans-IO: no clock, socket or store;
//! time (`now_ms`, the store's clock) and randomness come in, decisions and new rows come out.
//!
//! One module per decision, in folders by role, in the order a call meets them:
//! - [`config`]: the chain as the node describes it, decoded and checked;
//! - [`facts`]: what a call left behind (its error, hints, answer, stream);
//! - [`verdict`]: what an outcome means (retry? against the provider's health? why, how long);
//! - [`limits`]: each limit on a provider's calls, its rule and its row;
//! - [`admit`]: the one interface every limit implements, asked in one order;
//! - [`choose`]: which provider next (the chain's walk, the route, a hedge);
//! - [`item`]: one item's machine, its session, the guard's ticket, what an outcome writes;
//! - [`rows`]: the shared rows as the store holds them, and compare-and-set;
//! - [`report`]: events, metrics, a provider's state.
pub mod admit;
pub mod choose;
pub mod config;
pub mod error;
pub mod facts;
pub mod item;
pub mod json;
pub mod limits;
pub mod report;
pub mod rng;
pub mod rows;
pub mod verdict;

#[cfg(target_arch = "wasm32")]
mod wasm;

pub use config::{Chain, ChainConfig};
pub use error::EngineError;
