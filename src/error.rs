//! Errors with a stable `code` so the node can map them without parsing messages.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum EngineError {
    /// A configuration value is out of range; `field` names it (e.g. `providers[1].threshold`).
    #[error("invalid configuration: {field}: {message}")]
    InvalidConfig { field: String, message: String },
    /// A stored state row could not be decoded or breaks an invariant.
    #[error("corrupt state: {0}")]
    CorruptState(String),
    /// A call into the engine that does not fit its current step (e.g. an outcome with no call).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// A guard's ticket that does not belong to this chain and scope, or has expired.
    #[error("invalid ticket: {0}")]
    InvalidTicket(String),
}

impl EngineError {
    pub fn code(&self) -> &'static str {
        match self {
            EngineError::InvalidConfig { .. } => "invalid_config",
            EngineError::CorruptState(_) => "corrupt_state",
            EngineError::InvalidInput(_) => "invalid_input",
            EngineError::InvalidTicket(_) => "invalid_ticket",
        }
    }

    pub fn field(&self) -> Option<&str> {
        match self {
            EngineError::InvalidConfig { field, .. } => Some(field),
            _ => None,
        }
    }

    pub(crate) fn config(field: impl Into<String>, message: impl Into<String>) -> Self {
        EngineError::InvalidConfig { field: field.into(), message: message.into() }
    }
}

/// `v`'s place in `names` (listed as `a, b, c`), else an error naming `field`: one message for
/// every named choice (each `format!` of its own costs the engine's WASM its own code).
pub fn one_of(field: &str, what: &str, v: &str, names: &str) -> Result<usize, EngineError> {
    // A char pattern: a string one brings in the substring searcher (8 KB of WASM).
    names
        .split(',')
        .position(|n| n.strip_prefix(' ').unwrap_or(n) == v)
        .ok_or_else(|| EngineError::config(field, format!("unknown {what} '{v}' ({names})")))
}
