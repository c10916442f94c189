//! Decoding a stored row's JSON into its struct, field by field, as serde would with
//! `#[serde(default)]`: a missing field takes its default, an unknown one is ignored, a value of
//! the wrong type (or out of range) is corrupt state. Rows hold only integers, strings, arrays
//! and objects, so a small JSON reader ([`crate::json`]) is all the WASM engine needs for them.
use crate::choose::latency::LatencyRow;
use crate::error::EngineError;
use crate::json::{self, Number, Object, Value};
use crate::limits::breaker::{BreakerRow, Bucket, Phase};
use crate::limits::in_flight::InFlightRow;
use crate::limits::key_quota::QuotaRow;
use crate::limits::learned_limit::{LimitRow, Share};
use crate::limits::lease::Lease;
use crate::limits::rate_gate::GateRow;
use crate::limits::retry_budget::{BudgetRow, Second};
use crate::limits::spend_hold::SpendRow;
use crate::limits::token_budget::{Limits, Period, TokenRow};

type Result<T> = std::result::Result<T, EngineError>;

fn corrupt(kind: &str, what: &str) -> EngineError {
    bad_field(kind, "", what)
}

/// `<kind> row: <name> <what>`: one formatting site for every field's error (each `format!`
/// costs the WASM engine its own code).
fn bad_field(kind: &str, name: &str, what: &str) -> EngineError {
    let sep = if name.is_empty() { "" } else { " " };
    EngineError::CorruptState(format!("{kind} row: {name}{sep}{what}"))
}

struct Fields<'a> {
    kind: &'a str,
    obj: &'a Object,
}

impl<'a> Fields<'a> {
    fn of(kind: &'a str, v: &'a Value) -> Result<Self> {
        match v {
            Value::Object(obj) => Ok(Fields { kind, obj }),
            _ => Err(corrupt(kind, "not an object")),
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name).filter(|v| !matches!(v, Value::Null))
    }

    fn u64(&self, name: &str) -> Result<u64> {
        self.get(name).map_or(Ok(0), |v| unsigned(self.kind, name, v))
    }

    fn i64(&self, name: &str) -> Result<i64> {
        match self.get(name) {
            None => Ok(0),
            Some(Value::Number(Number::I64(n))) => Ok(*n),
            Some(v) => {
                i64::try_from(unsigned(self.kind, name, v)?).map_err(|_| bad_field(self.kind, name, "out of range"))
            }
        }
    }

    fn u32(&self, name: &str) -> Result<u32> {
        u32::try_from(self.u64(name)?).map_err(|_| bad_field(self.kind, name, "out of range"))
    }

    fn required_u64(&self, name: &str) -> Result<u64> {
        let v = self.get(name).ok_or_else(|| bad_field(self.kind, name, "is missing"))?;
        unsigned(self.kind, name, v)
    }

    fn flag(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad_field(self.kind, name, "is not true or false")),
        }
    }

    fn text(&self, name: &str) -> Result<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(bad_field(self.kind, name, "is not a string")),
        }
    }

    /// A list of whole numbers >= 0 (built once, where a `list` is built per closure).
    fn numbers(&self, name: &str) -> Result<Vec<u64>> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => {
                let mut out = Vec::with_capacity(a.len());
                for v in a.iter() {
                    out.push(unsigned(self.kind, name, v)?);
                }
                Ok(out)
            }
            Some(_) => Err(bad_field(self.kind, name, "is not an array")),
        }
    }

    fn list<T>(&self, name: &str, item: impl Fn(&Value) -> Result<T>) -> Result<Vec<T>> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => {
                // A plain loop: `collect` into a Result costs the WASM engine an adapter per type.
                let mut out = Vec::with_capacity(a.len());
                for v in a.iter() {
                    out.push(item(v)?);
                }
                Ok(out)
            }
            Some(_) => Err(bad_field(self.kind, name, "is not an array")),
        }
    }
}

fn unsigned(kind: &str, name: &str, v: &Value) -> Result<u64> {
    match v {
        Value::Number(Number::U64(n)) => Ok(*n),
        _ => Err(bad_field(kind, name, "is not a whole number >= 0")),
    }
}

fn parse(kind: &str, text: &str) -> Result<Value> {
    json::from_str(text).map_err(|_| corrupt(kind, "not JSON"))
}

fn lease(kind: &str, v: &Value) -> Result<Lease> {
    let f = Fields::of(kind, v)?;
    let holder = f.text("holder")?.ok_or_else(|| corrupt(kind, "a lease without holder"))?;
    Ok(Lease { holder, until_ms: f.required_u64("until_ms")? })
}

pub fn breaker(text: &str) -> Result<BreakerRow> {
    const K: &str = "breaker";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    let phase = match f.text("phase")?.as_deref() {
        None | Some("closed") => Phase::Closed,
        Some("half_open") => Phase::HalfOpen,
        Some("open") => Phase::Open,
        Some(other) => return Err(corrupt(K, &format!("unknown phase \"{other}\""))),
    };
    Ok(BreakerRow {
        phase,
        failures: f.numbers("failures")?,
        buckets: f.list("buckets", |v| {
            let b = Fields::of(K, v)?;
            let count =
                |name| u32::try_from(b.required_u64(name)?).map_err(|_| corrupt(K, "bucket count out of range"));
            Ok(Bucket { start_ms: b.required_u64("start_ms")?, calls: count("calls")?, failures: count("failures")? })
        })?,
        open_until_ms: f.u64("open_until_ms")?,
        streak: f.u32("streak")?,
        trips: f.u64("trips")?,
        probes: f.list("probes", |v| lease(K, v))?,
        successes: f.u32("successes")?,
        last_failure: f.text("last_failure")?,
        version: f.u64("version")?,
    })
}

pub fn gate(text: &str) -> Result<GateRow> {
    let v = parse("gate", text)?;
    let f = Fields::of("gate", &v)?;
    Ok(GateRow { tat_us: f.u64("tat_us")?, closed_until_ms: f.u64("closed_until_ms")?, version: f.u64("version")? })
}

pub fn in_flight(text: &str) -> Result<InFlightRow> {
    let v = parse("in_flight", text)?;
    let f = Fields::of("in_flight", &v)?;
    Ok(InFlightRow { leases: f.list("leases", |v| lease("in_flight", v))?, version: f.u64("version")? })
}

pub fn latency(text: &str) -> Result<LatencyRow> {
    const K: &str = "latency";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    Ok(LatencyRow { w: f.numbers("w")?, t: f.numbers("t")?, at_ms: f.u64("at_ms")?, version: f.u64("version")? })
}

pub fn pace(text: &str) -> Result<crate::facts::pace_row::PaceRow> {
    const K: &str = "pace";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    Ok(crate::facts::pace_row::PaceRow {
        ms: f.numbers("ms")?,
        at_ms: f.numbers("at_ms")?,
        cut_ms: f.u64("cut_ms")?,
        cut_at_ms: f.u64("cut_at_ms")?,
        gap_ms: f.numbers("gap_ms")?,
        gap_at_ms: f.numbers("gap_at_ms")?,
        version: f.u64("version")?,
    })
}

pub fn limit(text: &str) -> Result<LimitRow> {
    const K: &str = "limit";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    Ok(LimitRow {
        limit: f.u32("limit")?,
        congested_at_ms: f.u64("congested_at_ms")?,
        updated_ms: f.u64("updated_ms")?,
        version: f.u64("version")?,
        plateau: f.u32("plateau")?,
        suspect_ms: f.u64("suspect_ms")?,
        accrued_ms: f.u64("accrued_ms")?,
        shares: f.list("shares", |v| {
            let s = Fields::of(K, v)?;
            Ok(Share {
                holder: s.text("holder")?.ok_or_else(|| corrupt(K, "a share without holder"))?,
                slots: s.u32("slots")?,
                until_ms: s.required_u64("until_ms")?,
                wants: s.flag("wants")?,
                // Written only where it is not normal (a row of an older worker has none).
                rank: match s.get("rank") {
                    Some(_) => s.u32("rank")?.min(255) as u8,
                    None => crate::limits::learned_limit::NORMAL,
                },
                waits_until_ms: s.u64("waits_until_ms")?,
                weight: match s.get("weight") {
                    Some(_) => s.u32("weight")?.max(1),
                    None => 1,
                },
                owed: s.i64("owed")?,
            })
        })?,
    })
}

pub fn budget(text: &str) -> Result<BudgetRow> {
    const K: &str = "budget";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    let seconds = f.list("seconds", |v| {
        let b = Fields::of(K, v)?;
        Ok(Second { s: b.required_u64("s")?, calls: b.u32("calls")?, retries: b.u32("retries")? })
    })?;
    Ok(BudgetRow { seconds, version: f.u64("version")? })
}

/// A list of [a, b] pairs of whole numbers (a window's buckets, a row's holds).
fn pairs(f: &Fields, kind: &str, name: &str) -> Result<Vec<(u64, u64)>> {
    f.list(name, |v| match v {
        Value::Array(pair) if pair.len() == 2 => Ok((unsigned(kind, name, &pair[0])?, unsigned(kind, name, &pair[1])?)),
        _ => Err(bad_field(kind, name, "holds an entry that is not a pair of numbers")),
    })
}

pub fn tokens(text: &str) -> Result<TokenRow> {
    const K: &str = "tokens";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    Ok(TokenRow {
        buckets: pairs(&f, K, "buckets")?,
        input_buckets: pairs(&f, K, "input_buckets")?,
        output_buckets: pairs(&f, K, "output_buckets")?,
        period_start_ms: f.u64("period_start_ms")?,
        spent_micros: f.u64("spent_micros")?,
        limits: f.get("limits").map(limits).transpose()?,
        version: f.u64("version")?,
    })
}

pub fn spend(text: &str) -> Result<SpendRow> {
    let v = parse("spend", text)?;
    let f = Fields::of("spend", &v)?;
    Ok(SpendRow { held: pairs(&f, "spend", "held")?, version: f.u64("version")? })
}

/// A Fair Share Key's quota row (`key_quota`): its counts and holds, three numbers each.
pub fn quota(text: &str) -> Result<QuotaRow> {
    const K: &str = "quota";
    let v = parse(K, text)?;
    let f = Fields::of(K, &v)?;
    let (counts, held) = (f.numbers("counts")?, f.numbers("held")?);
    if counts.len() % 3 + held.len() % 3 != 0 {
        return Err(corrupt(K, "counts or held is not in threes"));
    }
    Ok(QuotaRow { counts, held, version: f.u64("version")? })
}

fn limits(v: &Value) -> Result<Limits> {
    const K: &str = "tokens";
    let f = Fields::of(K, v)?;
    let opt = |name: &str| f.get(name).map(|v| unsigned(K, name, v)).transpose();
    Ok(Limits {
        per_minute: opt("per_minute")?,
        input_per_minute: opt("input_per_minute")?,
        output_per_minute: opt("output_per_minute")?,
        spend_cap_micros: opt("spend_cap_micros")?,
        period: match f.text("period")?.as_deref() {
            None | Some("day") => Period::Day,
            Some("month") => Period::Month,
            Some(_) => return Err(corrupt(K, "limits.period is not day or month")),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row serde writes reads back the same, and so does serde's reading of odd rows.
    #[test]
    fn reads_what_serde_writes_and_agrees_with_serde_on_odd_rows() {
        let b = BreakerRow {
            phase: Phase::HalfOpen,
            failures: vec![1, u64::MAX],
            buckets: vec![Bucket { start_ms: 5, calls: 3, failures: 2 }],
            open_until_ms: 9,
            streak: 2,
            trips: 7,
            probes: vec![Lease { holder: "x:\"é\\\n".into(), until_ms: 11 }],
            successes: 1,
            last_failure: Some("check_failed:a.b".into()),
            version: 12,
        };
        assert_eq!(breaker(&serde_json::to_string(&b).unwrap()).unwrap(), b);
        for text in [
            "{}",
            r#"{"phase":"open","extra":[1,{"a":2}]}"#,
            r#"{"last_failure":null,"version":3}"#,
            r#"{"streak":4294967296}"#,
            r#"{"failures":[-1]}"#,
            r#"{"failures":[1.5]}"#,
            r#"{"phase":"sideways"}"#,
            r#"{"probes":[{"until_ms":1}]}"#,
            "{",
        ] {
            let ours = breaker(text).ok();
            let serdes = serde_json::from_str::<BreakerRow>(text).ok();
            assert_eq!(ours, serdes, "{text}");
        }
        assert!(breaker("[]").is_err(), "serde would read an array as a struct; a row is an object");
        let g = GateRow { tat_us: 1, closed_until_ms: 2, version: 3 };
        assert_eq!(gate(&serde_json::to_string(&g).unwrap()).unwrap(), g);
        let i = InFlightRow { leases: vec![Lease { holder: "h".into(), until_ms: 4 }], version: 5 };
        assert_eq!(in_flight(&serde_json::to_string(&i).unwrap()).unwrap(), i);
        let t = TokenRow {
            buckets: vec![(5_000, 12), (10_000, 7)],
            input_buckets: vec![(5_000, 10)],
            limits: Some(Limits {
                per_minute: Some(9),
                spend_cap_micros: Some(3),
                period: Period::Month,
                ..Default::default()
            }),
            period_start_ms: 3,
            spent_micros: 9,
            version: 4,
            ..Default::default()
        };
        assert_eq!(tokens(&serde_json::to_string(&t).unwrap()).unwrap(), t);
        assert!(tokens(r#"{"buckets":[[1]]}"#).is_err());
    }
}
