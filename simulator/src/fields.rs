//! Reading a scenario file field by field, so that every error names its path
//! (`vendor.outages[1].to_s: ...`) and a misspelt field is an error, never a silent default.
use serde_json::{Map, Value};
use std::cell::RefCell;

pub struct Fields<'a> {
    path: String,
    map: &'a Map<String, Value>,
    seen: RefCell<Vec<&'static str>>,
}

impl<'a> Fields<'a> {
    pub fn new(path: impl Into<String>, v: &'a Value) -> Result<Self, String> {
        let path = path.into();
        match v {
            Value::Object(map) => Ok(Fields { path, map, seen: RefCell::new(Vec::new()) }),
            other => Err(format!("{}: expected an object {{...}}, got {}", shown(&path), brief(other))),
        }
    }

    /// The path of a field of this object.
    pub fn at(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub fn path(&self) -> &str {
        shown(&self.path)
    }

    /// The raw value; `null` counts as absent.
    pub fn raw(&self, key: &'static str) -> Option<&'a Value> {
        self.seen.borrow_mut().push(key);
        self.map.get(key).filter(|v| !v.is_null())
    }

    pub fn opt_u64(&self, key: &'static str) -> Result<Option<u64>, String> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("{}: expected a whole number >= 0, got {}", self.at(key), brief(v))),
        }
    }

    pub fn u64_or(&self, key: &'static str, default: u64) -> Result<u64, String> {
        Ok(self.opt_u64(key)?.unwrap_or(default))
    }

    pub fn need_u64(&self, key: &'static str) -> Result<u64, String> {
        self.opt_u64(key)?.ok_or_else(|| format!("{}: missing (a whole number)", self.at(key)))
    }

    pub fn opt_f64(&self, key: &'static str) -> Result<Option<f64>, String> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite())
                .map(Some)
                .ok_or_else(|| format!("{}: expected a number, got {}", self.at(key), brief(v))),
        }
    }

    pub fn f64_or(&self, key: &'static str, default: f64) -> Result<f64, String> {
        Ok(self.opt_f64(key)?.unwrap_or(default))
    }

    pub fn opt_str(&self, key: &'static str) -> Result<Option<&'a str>, String> {
        match self.raw(key) {
            None => Ok(None),
            Some(v) => {
                v.as_str().map(Some).ok_or_else(|| format!("{}: expected a string, got {}", self.at(key), brief(v)))
            }
        }
    }

    pub fn bool_or(&self, key: &'static str, default: bool) -> Result<bool, String> {
        match self.raw(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| format!("{}: expected true or false, got {}", self.at(key), brief(v))),
        }
    }

    pub fn opt_obj(&self, key: &'static str) -> Result<Option<Fields<'a>>, String> {
        self.raw(key).map(|v| Fields::new(self.at(key), v)).transpose()
    }

    pub fn need_obj(&self, key: &'static str) -> Result<Fields<'a>, String> {
        self.opt_obj(key)?.ok_or_else(|| format!("{}: missing (an object {{...}})", self.at(key)))
    }

    /// The elements of a list with their paths (`key[i]`); absent = empty.
    pub fn list(&self, key: &'static str) -> Result<Vec<(String, &'a Value)>, String> {
        match self.raw(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => {
                Ok(items.iter().enumerate().map(|(i, v)| (format!("{}[{i}]", self.at(key)), v)).collect())
            }
            Some(v) => Err(format!("{}: expected a list [...], got {}", self.at(key), brief(v))),
        }
    }

    /// Call after reading every field: any other key is a mistake worth an error.
    pub fn done(&self) -> Result<(), String> {
        let seen = self.seen.borrow();
        if let Some(k) = self.map.keys().find(|k| !seen.contains(&k.as_str())) {
            return Err(format!("{}: unknown field `{k}` (fields here: {})", self.at(k), seen.join(", ")));
        }
        Ok(())
    }
}

pub fn check(ok: bool, path: String, message: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("{path}: {}", message()))
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() {
        "the scenario"
    } else {
        path
    }
}

/// A short rendering of a value for an error message.
pub fn brief(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(40).collect::<String>())
    } else {
        s
    }
}
