//! The boundary's `StreamPace`: a committed stream's idle limit, asked at each chunk.
use super::{input, ms};
use wasm_bindgen::prelude::*;

/// One committed stream's idle limit, learned from its own chunks (`facts::stream::Pace`): made
/// from the attempt's stream step, told each chunk's time, it answers the limit from then.
#[wasm_bindgen(js_name = StreamPace)]
pub struct StreamPace {
    pace: crate::facts::stream::Pace,
}

#[wasm_bindgen(js_class = StreamPace)]
impl StreamPace {
    #[wasm_bindgen(constructor)]
    pub fn new(#[wasm_bindgen(unchecked_param_type = "StreamStep")] step: JsValue) -> StreamPace {
        StreamPace { pace: input::stream_pace(&step) }
    }

    /// A chunk arrived at `at_ms` (the node's clock, ms): the idle limit from now.
    pub fn chunk(&mut self, at_ms: f64) -> f64 {
        self.pace.chunk(ms(at_ms)) as f64
    }

    /// The stream's longest gap between chunks once it had enough to show its pace, for its
    /// outcome's `longest_gap_ms` (what the answer teaches its provider); else undefined.
    #[wasm_bindgen(js_name = learnedGap)]
    pub fn learned_gap(&self) -> Option<f64> {
        self.pace.learned_gap().map(|g| g as f64)
    }
}
