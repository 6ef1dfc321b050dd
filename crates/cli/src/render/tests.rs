//! What the CLI prints for a waiting call and for a moment in time, checked to the character.

use super::visible;
use serde_json::json;

#[test]
fn pending_calls_print_the_apis_rendering_of_their_arguments() {
    let action: codemode::PendingAction = serde_json::from_value(json!({
        "executionId": "exec_1", "seq": 2, "connector": "files", "method": "write_file",
        "args": {"content": "x\u{200b}y", "path": "keep.txt"}, "digest": "-"
    }))
    .expect("a pending call");
    let shown = super::pending(&[action]);
    assert_eq!(
        shown,
        "exec_1  #2  files.write_file\n  path: \"keep.txt\"\n  content: \"x\\u{200b}y\""
    );
    assert_eq!(
        visible(&shown),
        shown,
        "nothing left for the last pass to mark"
    );
}

#[test]
fn dates_are_utc_calendar_dates() {
    assert_eq!(super::time(0), "1970-01-01 00:00:00");
    assert_eq!(super::time(1_796_220_894_897), "2026-12-02 14:14:54");
    assert_eq!(super::time(951_782_400_000), "2000-02-29 00:00:00");
}
