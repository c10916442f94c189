//! The commonest answer, a poll that says "call" with nothing to write, written by hand: it is
//! sent once per attempt, and serde_json's generic writer (built for size, `opt-level = "z"`)
//! took a quarter of a poll's time for these hundred bytes. Every other answer goes through
//! serde_json; a test holds this text to serde_json's, byte for byte.
use crate::item::session::Polled;
use crate::item::Step;
use crate::rows::read_ahead::ReadAhead;

/// The text of `p` when it is a bare call step, else `None` (then serialise it with serde_json).
pub fn bare_call(p: &Polled) -> Option<String> {
    let Polled { step, writes: None, transition: None, end: None, read_ahead, wake } = p else { return None };
    if !wake.is_empty() {
        return None;
    }
    let Step::Call {
        provider,
        name,
        attempt,
        deadline_ms,
        probe,
        idempotency_key,
        stream: None,
        hedging: None,
        repair: false,
        continuation: false,
    } = step
    else {
        return None;
    };
    let mut out = String::with_capacity(128 + name.len());
    out.push_str(r#"{"step":{"kind":"call","provider":"#);
    number(&mut out, *provider as u64);
    out.push_str(r#","name":"#);
    string(&mut out, name);
    out.push_str(r#","attempt":"#);
    number(&mut out, u64::from(*attempt));
    out.push_str(r#","deadline_ms":"#);
    number(&mut out, *deadline_ms);
    out.push_str(if *probe { r#","probe":true"# } else { r#","probe":false"# });
    if let Some(key) = idempotency_key {
        out.push_str(",\"idempotency_key\":");
        string(&mut out, key);
    }
    out.push('}');
    if let Some(ReadAhead { serves_ms, read_again_ms }) = read_ahead {
        out.push_str(r#","read_ahead":{"serves_ms":"#);
        number(&mut out, *serves_ms);
        out.push_str(r#","read_again_ms":"#);
        number(&mut out, *read_again_ms);
        out.push('}');
    }
    out.push('}');
    Some(out)
}

/// A whole number in decimal (core's formatting machinery is several times slower here).
fn number(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(d as char);
    }
}

/// A JSON string: plain text as is, anything to escape through serde_json.
fn string(out: &mut String, s: &str) {
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.push('"');
        out.push_str(s);
        out.push('"');
    } else {
        out.push_str(&serde_json::to_string(s).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::item::WaitCause;
    use crate::limits::breaker::{Phase, Transition};

    fn call(name: &str, key: Option<&str>) -> Step {
        Step::Call {
            provider: 3,
            name: name.into(),
            attempt: 2,
            deadline_ms: u64::MAX,
            probe: true,
            idempotency_key: key.map(String::from),
            stream: None,
            hedging: None,
            repair: false,
            continuation: false,
        }
    }

    #[test]
    fn writes_what_serde_json_writes() {
        let first = Step::Call {
            provider: 0,
            name: "openai".into(),
            attempt: 1,
            deadline_ms: 0,
            probe: false,
            idempotency_key: None,
            stream: None,
            hedging: None,
            repair: false,
            continuation: false,
        };
        for step in [first, call("a", None), call("é \"q\" \\ \n\u{1}", Some("k\u{1e}\"")), call("", Some(""))] {
            for read_ahead in [None, Some(ReadAhead { serves_ms: 100, read_again_ms: 50 })] {
                let p =
                    Polled { step: step.clone(), writes: None, transition: None, end: None, read_ahead, wake: vec![] };
                assert_eq!(bare_call(&p).as_deref(), Some(serde_json::to_string(&p).unwrap().as_str()));
            }
        }
    }

    #[test]
    fn leaves_every_other_answer_to_serde_json() {
        let t = Transition { from: Phase::Open, to: Phase::HalfOpen, at_ms: 1 };
        let with_transition = Polled {
            step: call("a", None),
            writes: None,
            transition: Some(t),
            end: None,
            read_ahead: None,
            wake: vec![],
        };
        let sleep = Polled {
            step: Step::Sleep { ms: 5, cause: WaitCause::Backoff },
            writes: None,
            transition: None,
            end: None,
            read_ahead: None,
            wake: vec![],
        };
        assert_eq!(bare_call(&with_transition), None);
        let limits = crate::facts::stream::StreamStep {
            first_chunk_ms: 1,
            idle_ms: 2,
            total_ms: 3,
            learn_pace: false,
            paced_idle_ms: 0,
        };
        let tag = crate::choose::hedge::CallTag { call: 0, hedge: false, hedge_after_ms: Some(5) };
        for (limits, tag) in [(Some(limits), None), (None, Some(tag))] {
            let mut step = call("a", None);
            if let Step::Call { stream, hedging, .. } = &mut step {
                (*stream, *hedging) = (limits, tag);
            }
            assert_eq!(
                bare_call(&Polled { step, writes: None, transition: None, end: None, read_ahead: None, wake: vec![] }),
                None
            );
        }
        assert_eq!(bare_call(&sleep), None);
    }
}
