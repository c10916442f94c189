//! A provider passed over by an item: which, why and until when.
use crate::verdict::reason::Reason;
use serde::{Deserialize, Serialize};

/// A provider passed over, why, and until when. `until_ms` leaves the engine only for a reason
/// that waits for something (a retryable one): a refusal or a failed check ends nothing later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct Skip {
    pub provider: usize,
    pub reason: Reason,
    #[serde(default)]
    pub until_ms: u64,
}

impl Serialize for Skip {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let waits = self.reason.is_retryable();
        let mut out = s.serialize_struct("Skip", 2 + usize::from(waits))?;
        out.serialize_field("provider", &self.provider)?;
        out.serialize_field("reason", &self.reason)?;
        if waits {
            out.serialize_field("until_ms", &self.until_ms)?;
        }
        out.end()
    }
}
