//! What the engine says of the fleet: transitions as events, Prometheus text, a provider's
//! state as Get Provider State shows it.
pub mod event;
pub mod inspect;
pub mod metrics;
