//! Known answers for the wording a failed pass is given.

use super::*;

#[test]
fn not_defined_is_a_whole_phrase() {
    assert!(mentions_not_defined(
        "Code execution failed: host is not defined"
    ));
    assert!(!mentions_not_defined("this is not definedness"));
}
