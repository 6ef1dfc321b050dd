//! The storage codec's rules on the host side: how recorded arguments compare, how big a durable value is,
//! and the reference's messages for values that cannot be recorded.

use serde_json::Value;
use serde_json::value::RawValue;

/// The envelope key for binary values (`Uint8Array`, `ArrayBuffer`, other views).
pub const BINARY_ENVELOPE: &str = "__codemode_binary_v1__";
/// The envelope key for `BigInt` values.
pub const BIGINT_ENVELOPE: &str = "__codemode_bigint_v1__";
/// The largest durable value, in UTF-16 code units of its serialisation.
pub const MAX_DURABLE_VALUE: usize = 1_000_000;

/// Whether a call's arguments match the recorded ones (docs/semantics.md §3.4): key order never matters.
/// Unlike the reference, "no arguments" and some arguments are different calls, and text that cannot be
/// read matches only itself — what a person approved is what runs (docs/design.md, "Replay compares every
/// call whole").
pub fn same_arguments(recorded: Option<&RawValue>, attempted: Option<&RawValue>) -> bool {
    match (recorded, attempted) {
        (None, None) => true,
        (Some(recorded), Some(attempted)) => {
            recorded.get() == attempted.get()
                || match (
                    serde_json::from_str::<Value>(recorded.get()),
                    serde_json::from_str::<Value>(attempted.get()),
                ) {
                    (Ok(a), Ok(b)) => a == b,
                    _ => false,
                }
        }
        _ => false,
    }
}

/// The SHA-256 of `bytes`, as lowercase hex (preview digests, `files` content hashes).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The length JavaScript would report for this text.
pub fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// `<what> is too large to record durably (…)` (docs/semantics.md §7.1).
pub fn too_large_message(what: &str, size: usize) -> String {
    format!(
        "{what} is too large to record durably ({size} bytes > {MAX_DURABLE_VALUE} byte limit). Write large data to a file or workspace instead and pass/return a small reference (such as a path)."
    )
}

/// `<what> could not be recorded durably (not serializable: …)` (docs/semantics.md §7.1).
pub fn not_serializable_message(what: &str, reason: &str) -> String {
    format!(
        "{what} could not be recorded durably (not serializable: {reason}). Only JSON-compatible values (plus binary and bigint) can cross a durable replay boundary."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("valid json")
    }

    #[test]
    fn key_order_never_matters() {
        assert!(same_arguments(
            Some(&raw(r#"{"a":1,"b":[1,{"c":2,"d":3}]}"#)),
            Some(&raw(r#"{"b":[1,{"d":3,"c":2}],"a":1}"#))
        ));
        assert!(!same_arguments(
            Some(&raw(r#"{"a":1}"#)),
            Some(&raw(r#"{"a":2}"#))
        ));
        assert!(!same_arguments(Some(&raw("[1,2]")), Some(&raw("[2,1]"))));
    }

    #[test]
    fn no_arguments_and_some_arguments_are_different_calls() {
        assert!(!same_arguments(None, Some(&raw("{}"))));
        assert!(!same_arguments(Some(&raw("{}")), None));
        assert!(same_arguments(None, None));
    }

    #[test]
    fn floats_survive_the_round_trip_exactly() {
        // Step values and results are stored as JSON and replayed: a value off by one unit in the last place
        // would make the replay diverge.
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let value = (x >> 11) as f64 / (1u64 << 53) as f64;
            let text = serde_json::to_string(&value).expect("finite");
            let back: f64 = serde_json::from_str(&text).expect("parses");
            assert_eq!(back.to_bits(), value.to_bits(), "{text}");
        }
    }

    #[test]
    fn sizes_count_utf16_units() {
        assert_eq!(utf16_len("a😀"), 3);
    }
}
