//! Reading the boundary's small inputs (an outcome, a ticket, a reason) straight from JS values.
//! serde would buffer an internally tagged enum (`kind`) through its generic content type, about
//! 20 KB of the WASM engine for one small object; these readers are a few hundred bytes.
use crate::error::EngineError;
use crate::facts::error_facts::RawStatus;
use crate::facts::retry_after::HintHeaders;
use crate::verdict::answer_check::{AnswerFacts, SchemaError};
use crate::verdict::outcome::Outcome;
use wasm_bindgen::{JsCast, JsValue};

thread_local! {
    /// Field names as JS strings, each made once: making one per read (a UTF-8 decode in the
    /// glue each time) was most of the cost of reading an outcome.
    static NAMES: std::cell::RefCell<Vec<(String, JsValue)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn field(v: &JsValue, name: &str) -> JsValue {
    // `try_with`: the engine never reads after its thread ends, and no panic path ships for it.
    NAMES
        .try_with(|names| {
            let mut names = names.borrow_mut();
            let at = match names.iter().position(|(n, _)| n == name) {
                Some(at) => at,
                None => {
                    names.push((name.to_string(), JsValue::from_str(name)));
                    names.len() - 1
                }
            };
            js_sys::Reflect::get(v, &names[at].1).unwrap_or(JsValue::UNDEFINED)
        })
        .unwrap_or(JsValue::UNDEFINED)
}

fn bad(what: String) -> EngineError {
    EngineError::InvalidInput(what)
}

/// `<at><name> <what>`: one formatting site for the boundary's field errors (each `format!`
/// costs the WASM engine its own code).
fn bad_field(at: &str, name: &str, what: &str) -> String {
    format!("{at}{name} {what}")
}

/// A string field, absent (undefined or null) as `None`; anything else is refused.
fn text(v: &JsValue, name: &str) -> Result<Option<String>, EngineError> {
    let f = field(v, name);
    if f.is_undefined() || f.is_null() {
        return Ok(None);
    }
    f.as_string().map(Some).ok_or_else(|| bad(bad_field("outcome.", name, "must be a string")))
}

/// A list of strings (the cause chain's codes, messages, class names) as one text joined by
/// `ROW_SEPARATOR`, as row texts cross; absent as empty.
fn texts(joined: &Option<String>) -> Vec<&str> {
    joined.as_deref().map(|t| t.split(crate::rows::row_text::SEPARATOR).collect()).unwrap_or_default()
}

/// `{ kind: "facts", answered?, status?, codes?, messages?, names?, headers?, failed_check?,
/// body? }`: what a call left behind, unread ([`crate::facts::error_facts`]).
fn facts(v: &JsValue) -> Result<Outcome, EngineError> {
    let s = field(v, "status");
    let status = match s.as_f64() {
        Some(n) => Some(RawStatus::Number(n)),
        None if s.is_undefined() || s.is_null() => None,
        None => Some(RawStatus::Text(
            s.as_string().ok_or_else(|| bad("outcome.status must be a number or a string".into()))?,
        )),
    };
    let (codes, messages, names) = (text(v, "codes")?, text(v, "messages")?, text(v, "names")?);
    let facts = crate::facts::error_facts::Facts {
        answered: field(v, "answered").as_bool().unwrap_or(false),
        status,
        codes: texts(&codes),
        messages: texts(&messages),
        names: texts(&names),
        headers: hint_headers(v)?,
        failed_check: text(v, "failed_check")?,
        answer: answer(v)?,
    };
    let mut outcome = crate::facts::error_facts::outcome_of(facts);
    if let Outcome::Status { status, body, .. } = &mut outcome {
        if crate::facts::answer_body::reads_body(*status) {
            *body = text(v, "body")?;
        }
    }
    Ok(outcome)
}

/// `answer?: { empty?, finish?, refusal?, schema_checked?, schema_errors?: [{ path, message }] }`:
/// what the node saw of a success answer ([`crate::verdict::answer_check`]).
fn answer(v: &JsValue) -> Result<Option<AnswerFacts>, EngineError> {
    answer_facts(&field(v, "answer"))
}

/// An outcome's `answer` object on its own.
pub fn answer_facts(a: &JsValue) -> Result<Option<AnswerFacts>, EngineError> {
    let a = a.clone();
    if a.is_undefined() || a.is_null() {
        return Ok(None);
    }
    if !a.is_object() {
        return Err(bad("outcome.answer must be an object".into()));
    }
    let flag = |name| field(&a, name).as_bool().unwrap_or(false);
    let mut facts = AnswerFacts {
        empty: flag("empty"),
        finish: text(&a, "finish")?,
        refusal: flag("refusal"),
        schema_checked: flag("schema_checked"),
        schema_errors: Vec::new(),
    };
    let errors = field(&a, "schema_errors");
    if !errors.is_undefined() && !errors.is_null() {
        let list: js_sys::Array =
            errors.dyn_into().map_err(|_| bad("outcome.answer.schema_errors must be an array".into()))?;
        for e in list.iter() {
            facts.schema_errors.push(SchemaError {
                path: text(&e, "path")?.unwrap_or_default(),
                message: text(&e, "message")?.unwrap_or_default(),
            });
        }
    }
    Ok(Some(facts))
}

/// An outcome's `usage?: { input, output, cached_input?, reasoning?, cache_write? }`: the tokens its answer
/// reported, as the vendor counted them (`token_limit`).
pub fn usage(v: &JsValue) -> Result<Option<crate::limits::token_limit::Usage>, EngineError> {
    let u = field(v, "usage");
    if u.is_undefined() || u.is_null() {
        return Ok(None);
    }
    let count = |name: &str| -> Result<u64, EngineError> {
        let n = field(&u, name);
        if n.is_undefined() || n.is_null() {
            return Ok(0);
        }
        n.as_f64()
            .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= 9_007_199_254_740_991.0)
            .map(|n| n as u64)
            .ok_or_else(|| bad(bad_field("outcome.usage.", name, "must be a whole number >= 0")))
    };
    Ok(Some(crate::limits::token_limit::Usage {
        input: count("input")?,
        output: count("output")?,
        cached_input: count("cached_input")?,
        reasoning: count("reasoning")?,
        cache_write: count("cache_write")?,
    }))
}

/// A broken stream's `delivered_chars`: the characters of the answer the caller had.
/// A streamed attempt's idle limit and whether it learns, from the step the engine gave it.
pub fn stream_pace(v: &JsValue) -> crate::facts::stream::Pace {
    let whole = |name| field(v, name).as_f64().map_or(0, |n| n as u64);
    crate::facts::stream::Pace::new(
        whole("idle_ms"),
        field(v, "learn_pace").as_bool().unwrap_or(false),
        whole("paced_idle_ms"),
    )
}

pub fn delivered_chars(v: &JsValue) -> Option<u64> {
    whole_field(v, "delivered_chars")
}

/// A streamed answer's `longest_gap_ms`, as its `StreamPace` gave it (`learnedGap`).
pub fn longest_gap_ms(v: &JsValue) -> Option<u64> {
    whole_field(v, "longest_gap_ms")
}

fn whole_field(v: &JsValue, name: &str) -> Option<u64> {
    field(v, name).as_f64().filter(|n| n.is_finite() && *n >= 0.0).map(|n| n as u64)
}

fn hint_headers(v: &JsValue) -> Result<HintHeaders, EngineError> {
    let h = field(v, "headers");
    Ok(if h.is_object() {
        // Exactly the names of HINT_HEADER_NAMES, in its order.
        HintHeaders::read(|name| text(&h, name))?
    } else {
        HintHeaders::default()
    })
}

/// `{ kind: "status", status, headers?, failed_check?, body? }`, `{ kind: "error", code }`,
/// `{ kind: "broken", code }` (a streamed answer that failed after its first chunk) or
/// `{ kind: "facts", … }` (see [`facts`]).
pub fn outcome(v: &JsValue) -> Result<Outcome, EngineError> {
    if !v.is_object() {
        return Err(bad("outcome must be an object".into()));
    }
    match text(v, "kind")?.as_deref() {
        Some("facts") => facts(v),
        Some("status") => {
            let status = field(v, "status").as_f64().filter(|s| s.fract() == 0.0 && (0.0..=999.0).contains(s));
            let status = status.ok_or_else(|| bad("outcome.status must be a whole number from 0 to 999".into()))?;
            let headers = hint_headers(v)?;
            let status = status as u16;
            // Read only when a rule needs it: the node may hand it over lazily (a getter).
            let body = if crate::facts::answer_body::reads_body(status) { text(v, "body")? } else { None };
            Ok(Outcome::Status { status, headers, failed_check: text(v, "failed_check")?, answer: answer(v)?, body })
        }
        Some("error") => {
            Ok(Outcome::Error { code: text(v, "code")?.ok_or_else(|| bad("outcome.code must be a string".into()))? })
        }
        Some("broken") => Ok(Outcome::Broken {
            code: match text(v, "code")? {
                Some(code) => code,
                // Broken by an error handed over as facts: the code they make.
                None => crate::facts::error_facts::broken_code(&facts(v)?),
            },
        }),
        other => Err(bad(format!(
            "outcome.kind must be status, error, broken or facts, got \"{}\"",
            other.unwrap_or_default()
        ))),
    }
}

fn whole(v: &JsValue, name: &str) -> Result<u64, EngineError> {
    field(v, name)
        .as_f64()
        .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= 9_007_199_254_740_991.0)
        .map(|n| n as u64)
        .ok_or_else(|| EngineError::InvalidTicket(bad_field("ticket.", name, "must be a whole number")))
}

/// A guard's ticket as it travelled in an n8n item.
pub fn ticket(v: &JsValue) -> Result<crate::item::ticket::Ticket, EngineError> {
    if !v.is_object() {
        return Err(EngineError::InvalidTicket("the ticket must be an object".into()));
    }
    let s = |name: &str| {
        field(v, name)
            .as_string()
            .ok_or_else(|| EngineError::InvalidTicket(bad_field("ticket.", name, "must be a string")))
    };
    let probe = field(v, "probe")
        .as_bool()
        .ok_or_else(|| EngineError::InvalidTicket("ticket.probe must be true or false".into()))?;
    Ok(crate::item::ticket::Ticket {
        provider: whole(v, "provider")? as usize,
        name: s("name")?,
        probe,
        lease: s("lease")?,
        scope: s("scope")?,
        issued_ms: whole(v, "issued_ms")?,
        expires_ms: whole(v, "expires_ms")?,
        held_micros: optional(v, "held_micros")?,
        reserved_tokens: optional(v, "reserved_tokens")?,
        reserved_input: optional(v, "reserved_input")?,
        reserved_output: optional(v, "reserved_output")?,
        estimate_input: optional(v, "estimate_input")?,
        estimate_output: optional(v, "estimate_output")?,
    })
}

/// A whole number a ticket from an older worker may leave out (0 then).
fn optional(v: &JsValue, name: &str) -> Result<u64, EngineError> {
    match field(v, name) {
        h if h.is_undefined() => Ok(0),
        _ => whole(v, name),
    }
}

/// A reason code, by its name.
pub fn reason(v: &JsValue) -> Result<crate::verdict::reason::Reason, EngineError> {
    v.as_string()
        .and_then(|s| crate::verdict::reason::Reason::parse(&s))
        .ok_or_else(|| bad("reason must be one of the reason codes".into()))
}
