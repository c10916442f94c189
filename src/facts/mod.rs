//! What a call left behind, read as facts: its error, its hints, its answer's body and text, a
//! stream's limits and seam, whether the vendor refused or the input was too long, a provider's
//! pace to its first chunk.
pub mod answer_body;
pub mod answer_text;
pub mod civil;
pub mod content_policy;
pub mod context_limit;
pub mod error_facts;
pub mod hint_parse;
pub mod pace_row;
pub mod retry_after;
pub mod seam;
pub mod status_set;
pub mod stream;
