//! A small strict JSON reader for the configuration, the stored rows and the counters: values as
//! text gives them, objects as a list of fields. The engine's own because a general reader (and
//! its map and float tables) costs the WASM engine far more than these inputs need; tests hold it
//! to serde_json's reading of the same texts.
use crate::facts::hint_parse::decimal_exp;

/// A JSON number as written: a whole number >= 0, a negative whole number, or anything else (a
/// fraction, an exponent, a whole number past 64 bits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    U64(u64),
    I64(i64),
    F64(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Object),
}

/// An object's fields in the order written; a name written twice keeps its last value.
#[derive(Debug, Clone, Default)]
pub struct Object(Vec<(String, Value)>);

/// Objects are equal with the same fields in any order, as JSON means them.
impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl Object {
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.0.iter().map(|(_, v)| v)
    }
}

/// Not JSON (where, or why, is not kept: each caller says which text it was).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotJson;

type Read<T> = Result<T, NotJson>;

/// Nesting deeper than this is refused rather than read (the reader recurses).
const MAX_DEPTH: u32 = 128;

pub fn from_str(text: &str) -> Read<Value> {
    let mut r = Reader { b: text.as_bytes(), at: 0 };
    let v = r.value(0)?;
    match r.next_token() {
        None => Ok(v),
        Some(_) => Err(NotJson),
    }
}

struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// The next byte after whitespace, not taken.
    fn next_token(&mut self) -> Option<u8> {
        while let Some(&c) = self.b.get(self.at) {
            if !matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
                return Some(c);
            }
            self.at += 1;
        }
        None
    }

    fn take(&mut self) -> Read<u8> {
        let c = *self.b.get(self.at).ok_or(NotJson)?;
        self.at += 1;
        Ok(c)
    }

    fn expect(&mut self, word: &[u8]) -> Read<()> {
        match self.b[self.at..].starts_with(word) {
            true => {
                self.at += word.len();
                Ok(())
            }
            false => Err(NotJson),
        }
    }

    fn value(&mut self, depth: u32) -> Read<Value> {
        if depth > MAX_DEPTH {
            return Err(NotJson);
        }
        Ok(match self.next_token().ok_or(NotJson)? {
            b'n' => self.expect(b"null").map(|_| Value::Null)?,
            b't' => self.expect(b"true").map(|_| Value::Bool(true))?,
            b'f' => self.expect(b"false").map(|_| Value::Bool(false))?,
            b'"' => Value::String(self.string()?),
            b'[' => {
                self.at += 1;
                let mut items = Vec::new();
                if self.next_token() == Some(b']') {
                    self.at += 1;
                } else {
                    loop {
                        items.push(self.value(depth + 1)?);
                        if self.list_ends(b']')? {
                            break;
                        }
                    }
                }
                Value::Array(items)
            }
            b'{' => {
                self.at += 1;
                let mut fields: Vec<(String, Value)> = Vec::new();
                if self.next_token() == Some(b'}') {
                    self.at += 1;
                } else {
                    loop {
                        if self.next_token() != Some(b'"') {
                            return Err(NotJson);
                        }
                        let name = self.string()?;
                        if self.next_token() != Some(b':') {
                            return Err(NotJson);
                        }
                        self.at += 1;
                        let v = self.value(depth + 1)?;
                        match fields.iter_mut().find(|(k, _)| *k == name) {
                            Some(field) => field.1 = v,
                            None => fields.push((name, v)),
                        }
                        if self.list_ends(b'}')? {
                            break;
                        }
                    }
                }
                Value::Object(Object(fields))
            }
            _ => Value::Number(self.number()?),
        })
    }

    /// After a list's item: `,` (more follow) or its `close` (it ends).
    fn list_ends(&mut self, close: u8) -> Read<bool> {
        let c = self.next_token().ok_or(NotJson)?;
        self.at += 1;
        match c {
            b',' => Ok(false),
            c if c == close => Ok(true),
            _ => Err(NotJson),
        }
    }

    /// A string, its opening quote next.
    fn string(&mut self) -> Read<String> {
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            match self.take()? {
                b'"' => break,
                b'\\' => {
                    let c = match self.take()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return Err(NotJson),
                    };
                    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                }
                0..=0x1f => return Err(NotJson),
                c => out.push(c),
            }
        }
        // Bytes of the text itself (valid UTF-8) and whole characters from escapes.
        String::from_utf8(out).map_err(|_| NotJson)
    }

    /// `\uXXXX` after its `\u`, a surrogate pair as one character.
    fn unicode_escape(&mut self) -> Read<char> {
        let high = self.hex4()?;
        let code = match high {
            0xD800..=0xDBFF => {
                self.expect(b"\\u")?;
                let low = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(NotJson);
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            _ => high,
        };
        char::from_u32(code).ok_or(NotJson)
    }

    fn hex4(&mut self) -> Read<u32> {
        let mut n = 0;
        for _ in 0..4 {
            let d = (self.take()? as char).to_digit(16).ok_or(NotJson)?;
            n = n * 16 + d;
        }
        Ok(n)
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Read<Number> {
        let negative = self.b.get(self.at) == Some(&b'-');
        self.at += usize::from(negative);
        let start = self.at;
        let int = self.digits();
        if int == 0 || (int > 1 && self.b[start] == b'0') {
            return Err(NotJson);
        }
        let whole = &self.b[start..self.at];
        if self.b.get(self.at) == Some(&b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(NotJson);
            }
        }
        let mantissa_end = self.at;
        let mut exp: i32 = 0;
        if matches!(self.b.get(self.at), Some(b'e' | b'E')) {
            self.at += 1;
            let sign = match self.b.get(self.at) {
                Some(b'-') => -1,
                Some(b'+') => 1,
                _ => 0,
            };
            self.at += usize::from(sign != 0);
            let from = self.at;
            if self.digits() == 0 {
                return Err(NotJson);
            }
            // Far past any f64 either way: held there (the value is 0 or infinite all the same).
            let e = self.b[from..self.at].iter().fold(0i32, |e, &d| (e * 10 + i32::from(d - b'0')).min(9_999));
            exp = if sign < 0 { -e } else { e };
        }
        if mantissa_end == self.at && mantissa_end == start + whole.len() {
            let n = whole.iter().try_fold(0u64, |n, &d| n.checked_mul(10)?.checked_add(u64::from(d - b'0')));
            match (n, negative) {
                (Some(n), false) => return Ok(Number::U64(n)),
                // `-0` is not a whole number below 0: serde_json reads it as the float -0.0.
                (Some(n), true) if n > 0 && n <= 1 << 63 => return Ok(Number::I64(0i64.wrapping_sub_unsigned(n))),
                _ => {}
            }
        }
        let x = decimal_exp(&self.b[start..mantissa_end], exp).filter(|x| x.is_finite()).ok_or(NotJson)?;
        Ok(Number::F64(if negative { -x } else { x }))
    }

    /// Digits from here, taken; how many.
    fn digits(&mut self) -> usize {
        let from = self.at;
        while self.b.get(self.at).is_some_and(u8::is_ascii_digit) {
            self.at += 1;
        }
        self.at - from
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde_json's reading of the same text, in this reader's terms.
    fn serde(text: &str) -> Option<Value> {
        fn of(v: serde_json::Value) -> Value {
            match v {
                serde_json::Value::Null => Value::Null,
                serde_json::Value::Bool(b) => Value::Bool(b),
                serde_json::Value::Number(n) => Value::Number(match (n.as_u64(), n.as_i64()) {
                    (Some(u), _) => Number::U64(u),
                    (None, Some(i)) => Number::I64(i),
                    _ => Number::F64(n.as_f64().unwrap()),
                }),
                serde_json::Value::String(s) => Value::String(s),
                serde_json::Value::Array(a) => Value::Array(a.into_iter().map(of).collect()),
                serde_json::Value::Object(o) => Value::Object(Object(o.into_iter().map(|(k, v)| (k, of(v))).collect())),
            }
        }
        serde_json::from_str(text).ok().map(of)
    }

    #[test]
    fn texts_read_as_serde_json_reads_them() {
        for text in [
            r#"{"a":1,"b":[true,false,null],"c":{"d":"e"}}"#,
            " [ 1 , -2 , 3.5 , -0.25 , 1e3 , 2E-2 , 0 , -0 ] ",
            r#""a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00 ünï""#,
            "18446744073709551615",
            "-9223372036854775808",
            "0.1",
            "123456.789e-3",
            "1e-7",
            "[]",
            "{}",
            r#"{"z":1,"a":2}"#,
            // Not JSON: each refused by both.
            "",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "[1,]",
            "{\"a\":1,}",
            "{a:1}",
            "tru",
            "nulll",
            "[1 2]",
            "\"\u{1}\"",
            r#""\ud800""#,
            r#""\ud800\u0041""#,
            r#""\x""#,
            "{\"a\" 1}",
            "1 2",
            "\"abc",
        ] {
            assert_eq!(from_str(text).ok(), serde(text), "{text}");
        }
    }

    #[test]
    fn a_name_written_twice_keeps_its_last_value() {
        let Ok(Value::Object(o)) = from_str(r#"{"a":1,"b":2,"a":3}"#) else { panic!() };
        assert_eq!(o.get("a"), Some(&Value::Number(Number::U64(3))));
        assert_eq!(o.keys().count(), 2);
    }

    #[test]
    fn whole_numbers_past_64_bits_read_as_numbers_not_failures() {
        let near =
            |text: &str, x: f64| matches!(from_str(text), Ok(Value::Number(Number::F64(y))) if (y - x).abs() < 1e5);
        assert!(near("18446744073709551616", 18446744073709551616.0));
        assert!(near("-9223372036854775809", -9223372036854775809.0));
        assert_eq!(from_str("1e400"), Err(NotJson), "past f64, as serde_json refuses it");
    }

    #[test]
    fn nesting_past_its_depth_is_refused_not_overflowed() {
        let deep = "[".repeat(100_000);
        assert_eq!(from_str(&deep), Err(NotJson));
        let fine = format!("{}{}", "[".repeat(100), "]".repeat(100));
        assert!(from_str(&fine).is_ok());
    }

    proptest::proptest! {
        #[test]
        fn any_number_text_reads_as_serde_json_reads_it(int in "-?(0|[1-9][0-9]{0,6})", frac in "(\\.[0-9]{1,8})?", exp in "([eE][+-]?[0-9])?") {
            let text = format!("{int}{frac}{exp}");
            proptest::prop_assert_eq!(from_str(&text).ok(), serde(&text), "{}", text);
        }

        #[test]
        fn any_string_reads_as_serde_json_reads_it(s in "\\PC*") {
            let text = serde_json::to_string(&s).unwrap();
            proptest::prop_assert_eq!(from_str(&text).ok(), Some(Value::String(s)));
        }
    }
}
