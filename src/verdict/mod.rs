//! What an outcome means: retry or not, against the provider's health or not, why (a reason),
//! after how long (backoff), and whether an answer passes its checks.
pub mod answer_check;
pub mod backoff;
pub mod finish_word;
pub mod outcome;
pub mod reason;
