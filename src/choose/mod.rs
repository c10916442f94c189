//! Choosing a provider: the chain's walk through the limits, the route's order (routing and
//! latency), a skipped provider, a hedge for a slow call.
pub mod chain;
pub mod hedge;
pub mod latency;
pub mod routing;
pub mod skip;
