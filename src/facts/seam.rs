//! Where a continued answer meets the part the caller already has (`continue_broken_streams`):
//! the continuing model may repeat the last words of that part, or start the answer over, before
//! it goes on. The node holds the continuation's first characters and asks here, until this says
//! how many of them repeat what the caller has: those are cut, so the caller reads one answer.
//! Lengths are UTF-16 code units, as the node's strings count them.

/// Characters of the continuation read before the seam is decided (unless it ends first).
pub const WINDOW: usize = 48;
/// The shortest repeat cut that is not whitespace: a shorter one may be the answer's own text.
pub const MIN_REPEAT: usize = 4;

/// `had`: the answer the caller has; `next`: the continuation so far; `ended`: it is all of it.
/// `None`: read on (it may still be the answer started over, or too short to tell); else how
/// many of `next`'s first units repeat `had`.
pub fn seam(had: &str, next: &str, ended: bool) -> Option<usize> {
    let had: Vec<u16> = had.encode_utf16().collect();
    let next: Vec<u16> = next.encode_utf16().collect();
    // Still the answer's own beginning (a restart, or a continuation that begins alike): read on
    // until it goes past it or differs.
    let restarting = !had.is_empty() && had.starts_with(&next);
    if !ended && (restarting || next.len() < WINDOW) {
        return None;
    }
    Some(repeated(&had, &next, ended))
}

fn repeated(had: &[u16], next: &[u16], ended: bool) -> usize {
    if had.is_empty() {
        return 0;
    }
    if next.starts_with(had) {
        return had.len(); // started over
    }
    if ended && had.starts_with(next) {
        return next.len(); // only repeated its beginning
    }
    (1..=had.len().min(next.len()))
        .rev()
        .find(|&k| {
            let overlap = &next[..k];
            (k >= MIN_REPEAT || whitespace(overlap)) && had.ends_with(overlap)
        })
        .unwrap_or(0)
}

/// Spaces, tabs and line breaks (and the no-break and ideographic spaces): what separates words.
fn whitespace(units: &[u16]) -> bool {
    units.iter().all(|u| matches!(u, 0x09..=0x0D | 0x20 | 0xA0 | 0x3000))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HAD: &str = "The quick brown fox jumps over ";

    #[test]
    fn the_last_words_repeated_an_answer_started_over_and_a_doubled_space_are_cut() {
        let next = "fox jumps over the lazy dog, and then it sleeps for a long while.";
        assert_eq!(seam(HAD, next, false), Some("fox jumps over ".len()));
        let over = "The quick brown fox jumps over the lazy dog and sleeps a long while now.";
        assert_eq!(seam(HAD, over, false), Some(HAD.len()));
        assert_eq!(seam("Hello there ", " world, it is a fine day to be streaming text.", true), Some(1));
        assert_eq!(seam("It is", " a sunny day; the forecast says so for the whole week.", true), Some(0));
    }

    #[test]
    fn it_reads_on_while_the_continuation_is_short_or_still_the_answers_beginning() {
        assert_eq!(seam(HAD, "fox jumps", false), None, "too short to tell");
        assert_eq!(seam(HAD, "The quick brown fox jumps over", false), None, "maybe started over");
        assert_eq!(seam(HAD, "The quick", true), Some(9), "ended: only its beginning again");
        assert_eq!(seam("so the ca", "cat sat", true), Some(0), "two letters may be the answer itself");
    }

    #[test]
    fn lengths_are_utf16_units_as_the_node_counts_them() {
        let had = "Tokyo 東京 is big 🗼 ";
        let next = "is big 🗼 and busy, with many people walking around all day long.";
        assert_eq!(seam(had, next, false), Some("is big 🗼 ".encode_utf16().count()));
    }
}
