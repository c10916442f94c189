//! A set of HTTP statuses written the way users write them: `408,425,429,500-599`.
use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct StatusSet(Vec<(u16, u16)>);

impl StatusSet {
    pub fn contains(&self, status: u16) -> bool {
        self.0.iter().any(|&(lo, hi)| (lo..=hi).contains(&status))
    }
}

impl TryFrom<String> for StatusSet {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

impl std::str::FromStr for StatusSet {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut ranges = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (lo, hi) = match part.split_once('-') {
                Some((a, b)) => (status(a)?, status(b)?),
                None => (status(part)?, status(part)?),
            };
            if lo > hi {
                return Err(format!("range '{part}' runs backwards"));
            }
            ranges.push((lo, hi));
        }
        Ok(StatusSet(ranges))
    }
}

fn status(s: &str) -> Result<u16, String> {
    match s.trim().parse::<u16>() {
        Ok(v) if (100..=599).contains(&v) => Ok(v),
        _ => Err(format!("'{}' is not an HTTP status (100-599)", s.trim())),
    }
}

impl fmt::Display for StatusSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> =
            self.0.iter().map(|&(lo, hi)| if lo == hi { lo.to_string() } else { format!("{lo}-{hi}") }).collect();
        f.write_str(&parts.join(","))
    }
}

impl From<StatusSet> for String {
    fn from(s: StatusSet) -> String {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        let s: StatusSet = "408, 425,429,500-599".parse().unwrap();
        assert!(s.contains(408) && s.contains(503) && s.contains(599));
        assert!(!s.contains(404) && !s.contains(422));
        assert_eq!(s.to_string(), "408,425,429,500-599");
    }

    #[test]
    fn rejects_nonsense() {
        for bad in ["abc", "700", "500-400", "4o4"] {
            assert!(bad.parse::<StatusSet>().is_err(), "{bad}");
        }
    }
}
