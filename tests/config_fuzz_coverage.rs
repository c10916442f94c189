//! The config fuzz target sees every field the engine's decoder knows: each one
//! (`decode::fields()`: `base_ms`, `providers[].tier`, `providers[].token_limit.spend_cap`)
//! appears as a key at its nesting in at least one seed of `fuzz/corpus/config/`, and its name
//! in `fuzz/dict/config.dict`. A field added to the decoder without a seed fails here.
use resilient_engine::config::decode;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/corpus/config");
const DICT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/dict/config.dict");

/// The keys of `v` as dotted paths, a list's elements as `[]`: `providers[].rate_limit.burst`.
fn keys(v: &Value, at: &str, into: &mut BTreeSet<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                let path = if at.is_empty() { k.clone() } else { format!("{at}.{k}") };
                keys(v, &path, into);
                into.insert(path);
            }
        }
        Value::Array(list) => list.iter().for_each(|v| keys(v, &format!("{at}[]"), into)),
        _ => {}
    }
}

/// The paths of every key of every JSON seed (the fuzzer's own inputs that are not JSON are skipped).
fn corpus_keys(dir: &Path) -> (BTreeSet<String>, usize) {
    let (mut all, mut seeds) = (BTreeSet::new(), 0);
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            keys(&v, "", &mut all);
            seeds += 1;
        }
    }
    (all, seeds)
}

/// The dictionary's entries, unescaped (`"\"tier\":"` is `"tier":`).
fn dict_entries(text: &str) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        // `name="value"` or `"value"`.
        let quoted = &line[line.find('"').unwrap_or_else(|| panic!("not an entry: {line}"))..];
        let inner = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"')).unwrap_or_else(|| panic!("{line}"));
        let (mut out, mut chars) = (Vec::new(), inner.chars());
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('x') => {
                        let hex: String = chars.by_ref().take(2).collect();
                        out.push(u8::from_str_radix(&hex, 16).unwrap_or_else(|_| panic!("{line}")));
                    }
                    Some(c) => out.extend(c.to_string().bytes()),
                    None => panic!("{line}"),
                },
                c => out.extend(c.to_string().bytes()),
            }
        }
        all.insert(String::from_utf8_lossy(&out).into_owned());
    }
    all
}

#[test]
fn the_decoder_lists_every_field_once_at_its_nesting() {
    let fields = decode::fields();
    let unique: BTreeSet<&String> = fields.iter().collect();
    assert_eq!(unique.len(), fields.len(), "a field listed twice: {fields:?}");
    for f in [
        "providers",
        "base_ms",
        "providers[].tier",
        "providers[].rate_limit.burst",
        "providers[].token_limit.spend_cap",
    ] {
        assert!(fields.iter().any(|k| k == f), "{f} missing from {fields:?}");
    }
    // Every level's list, nested ones included.
    let levels = [decode::CHAIN, decode::PROVIDER, decode::RATE_LIMIT, decode::TOKEN_LIMIT, decode::KEY_QUOTA];
    assert_eq!(fields.len(), levels.iter().map(|l| l.len()).sum::<usize>(), "{fields:?}");
}

#[test]
fn every_field_the_decoder_knows_is_in_the_config_fuzz_corpus() {
    let (seen, seeds) = corpus_keys(Path::new(CORPUS));
    assert!(seeds > 0, "no JSON seed in {CORPUS}");
    let missing: Vec<String> = decode::fields().into_iter().filter(|f| !seen.contains(f)).collect();
    assert!(
        missing.is_empty(),
        "no seed of fuzz/corpus/config/ sets {missing:?}: add one (a configuration the node hands over) that does"
    );
}

#[test]
fn every_field_name_is_in_the_config_fuzz_dictionary() {
    let entries = dict_entries(&std::fs::read_to_string(DICT).unwrap());
    let names: BTreeSet<String> =
        decode::fields().iter().map(|f| f.rsplit('.').next().unwrap().trim_end_matches("[]").to_string()).collect();
    let missing: Vec<&String> = names.iter().filter(|n| !entries.contains(&format!("\"{n}\":"))).collect();
    assert!(missing.is_empty(), "fuzz/dict/config.dict lacks {missing:?} (as \"\\\"name\\\":\")");
}

#[test]
fn the_coverage_check_sees_a_field_missing() {
    let mut seen = BTreeSet::new();
    let seed = r#"{"providers":[{"name":"a","token_limit":{"spend_cap":1}}],"tier":2}"#;
    keys(&serde_json::from_str(seed).unwrap(), "", &mut seen);
    assert!(seen.contains("providers[].token_limit.spend_cap") && seen.contains("providers[].name"));
    // `tier` at the top level is not a provider's tier.
    assert!(seen.contains("tier") && !seen.contains("providers[].tier"));
    let entries = dict_entries("# c\n\"\\\"tier\\\":\"\nkw=\"a\\x22\"\n");
    assert_eq!(entries, BTreeSet::from(["\"tier\":".to_string(), "a\"".to_string()]));
}
