//! The hand-written cast macros (src/cast_macros.rs) against the header text, in both directions: every value
//! matches its `#define`, and every `#define cudaX ((type)value)` in the headers has a hand-written constant.

use std::collections::BTreeMap;

/// Every hand-written constant, as the integer the header spells.
fn hand_written() -> BTreeMap<&'static str, i64> {
    BTreeMap::from([
        ("cudaStreamLegacy", cuda_conformance_sys::cudaStreamLegacy as i64),
        ("cudaStreamPerThread", cuda_conformance_sys::cudaStreamPerThread as i64),
        ("cudaStreamTailLaunch", cuda_conformance_sys::cudaStreamTailLaunch as i64),
        ("cudaStreamFireAndForget", cuda_conformance_sys::cudaStreamFireAndForget as i64),
        ("cudaCpuDeviceId", cuda_conformance_sys::cudaCpuDeviceId as i64),
        ("cudaInvalidDeviceId", cuda_conformance_sys::cudaInvalidDeviceId as i64),
    ])
}

/// `#define cudaName ((type)value)` macros of every header in the toolkit's include folder.
fn header_cast_macros() -> BTreeMap<String, i64> {
    let mut found = BTreeMap::new();
    for entry in std::fs::read_dir(cuda_conformance_sys::BUILD_TOOLKIT_INCLUDE).expect("toolkit include folder") {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("h") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for line in text.lines() {
            if let Some((name, value)) = parse_cast_define(line) {
                found.insert(name, value);
            }
        }
    }
    found
}

/// Parses `#define cudaX ((some_type)VALUE)` with VALUE a decimal or hex integer, possibly negative.
fn parse_cast_define(line: &str) -> Option<(String, i64)> {
    let rest = line.trim_start().strip_prefix("#define")?.trim_start();
    let (name, body) = rest.split_once(char::is_whitespace)?;
    if !name.starts_with("cuda") {
        return None;
    }
    let body = body.trim_start().strip_prefix("((")?;
    let (_ty, value) = body.split_once(')')?;
    let value = value.trim_start();
    let value = &value[..value.find(')')?];
    let (neg, digits) = match value.trim().strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, value.trim()),
    };
    let v = match digits.strip_prefix("0x").or_else(|| digits.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok()?,
        None => digits.parse().ok()?,
    };
    Some((name.to_owned(), if neg { -v } else { v }))
}

#[test]
fn every_hand_written_constant_matches_its_define() {
    let headers = header_cast_macros();
    for (name, value) in hand_written() {
        assert_eq!(
            headers.get(name),
            Some(&value),
            "{name}: header says {:?}, cuda-sys says {value}",
            headers.get(name)
        );
    }
}

#[test]
fn every_cast_macro_in_the_headers_is_defined_by_hand() {
    let hand = hand_written();
    let missing: Vec<_> = header_cast_macros().into_keys().filter(|n| !hand.contains_key(n.as_str())).collect();
    assert!(missing.is_empty(), "cast macros in the headers without a constant in src/cast_macros.rs: {missing:?}");
}

#[test]
fn the_parser_reads_the_shapes_the_headers_use() {
    assert_eq!(
        parse_cast_define("#define cudaStreamLegacy   ((cudaStream_t)0x1)"),
        Some(("cudaStreamLegacy".into(), 1))
    );
    assert_eq!(
        parse_cast_define("#define cudaCpuDeviceId ((int)-1) /**< cpu */"),
        Some(("cudaCpuDeviceId".into(), -1))
    );
    assert_eq!(parse_cast_define("#define cudaHostAllocMapped 0x02"), None);
}
