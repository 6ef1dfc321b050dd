//! The one error every front end receives: a stable code to branch on and a message to show. The app hands it
//! to the UI as `{"code", "message"}`, the CLI prints it (`--json`: `{"error", "code"}`), the MCP server turns
//! misuse into `isError` results.

use codemode::{Operation, Refusal, RefusalKind, RuntimeError};
use serde::Serialize;

/// What kind of failure: the UI and scripts branch on this, never on the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// No execution (or snippet) by that id or name.
    NotFound,
    /// The run is no longer in the state the request assumed: already decided, not paused, being rolled back.
    Stale,
    /// The request itself is wrong: a bad duration, status, setting or argument.
    InvalidArgs,
    /// `connectors.json` is broken, or lacks what a run needs: mutating operations are refused until it is
    /// fixed.
    Config,
    /// A connector's server could not be started or reached, or would not list its tools: nothing was
    /// changed; the same request can succeed once the server answers.
    Unavailable,
    /// Another live process holds the run (a pass or a rollback); nothing was changed.
    Conflict,
    /// Approved for another host of a shared store, which has not resumed the run yet: the decision stands
    /// and `wait` returns the outcome (docs/shared-store.md).
    Handed,
    /// The phone page's request does not come from a paired device (no token, a revoked one, another
    /// data directory's), or names a pairing code or signed link that is unknown, used, expired or altered;
    /// or the device may not decide this call (`confirmInApp`). Nothing was changed (docs/phone.md).
    Unauthorized,
    /// Anything else: the database, the sandbox, the file system.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "not_found",
            ErrorCode::Stale => "stale",
            ErrorCode::InvalidArgs => "invalid_args",
            ErrorCode::Config => "config",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Conflict => "conflict",
            ErrorCode::Handed => "handed",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed operation. Program failures are not errors: they are error *outcomes* (`Outcome::Error`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error, ts_rs::TS)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::NotFound, message)
    }

    pub fn stale(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Stale, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Unauthorized, message)
    }

    pub fn invalid_args(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::InvalidArgs, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Internal, message)
    }

    /// An operation refused with nothing changed, in the words the runtime uses for it.
    pub fn refused(refusal: Refusal) -> Self {
        RuntimeError::from(refusal).into()
    }

    /// The error for an execution id that names nothing: the same words on every surface.
    pub fn no_execution(id: &str) -> Self {
        ApiError::refused(Refusal::NoRun {
            run: id.to_owned(),
            op: Operation::Read,
        })
    }

    pub fn no_connector(name: &str) -> Self {
        ApiError::refused(Refusal::NoConnector {
            connector: name.to_owned(),
        })
    }
}

impl From<RuntimeError> for ApiError {
    fn from(error: RuntimeError) -> Self {
        let code = match &error {
            RuntimeError::Refused(refusal) => match refusal.kind() {
                RefusalKind::NotFound => ErrorCode::NotFound,
                RefusalKind::Stale => ErrorCode::Stale,
                RefusalKind::Busy => ErrorCode::Conflict,
                RefusalKind::Handed => ErrorCode::Handed,
            },
            RuntimeError::InvalidArgs(_) => ErrorCode::InvalidArgs,
            RuntimeError::Configuration(_) => ErrorCode::Config,
            RuntimeError::Unavailable(_) => ErrorCode::Unavailable,
            // The shared store's server refused the role connected (a decision by a non-approver).
            RuntimeError::Store(store) if store.is_permission_denied() => ErrorCode::Unauthorized,
            RuntimeError::Store(_) | RuntimeError::Executor(_) | RuntimeError::Interrupted(_) => {
                ErrorCode::Internal
            }
        };
        ApiError::new(code, error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_as_code_and_message() {
        let error = ApiError::no_execution("exec_x");
        assert_eq!(
            serde_json::to_value(&error).ok(),
            Some(serde_json::json!({"code": "not_found", "message": "No execution \"exec_x\""}))
        );
        assert_eq!(error.to_string(), "No execution \"exec_x\"");
    }

    #[test]
    fn runtime_errors_map_to_their_codes() {
        let cases = [
            (no_rule(), "not_found"),
            (
                Refusal::NotPaused {
                    run: "x".into(),
                    status: codemode::ExecutionStatus::Completed,
                    op: Operation::Approve,
                }
                .into(),
                "stale",
            ),
            (
                Refusal::Running {
                    run: "x".into(),
                    pid: 1,
                    op: Operation::Delete,
                }
                .into(),
                "conflict",
            ),
            (
                Refusal::StillResuming {
                    run: "x".into(),
                    host: "h".into(),
                }
                .into(),
                "handed",
            ),
            (RuntimeError::Configuration("x".into()), "config"),
            (RuntimeError::Unavailable("x".into()), "unavailable"),
            (RuntimeError::Interrupted("x".into()), "internal"),
        ];
        for (error, code) in cases {
            assert_eq!(ApiError::from(error).code.as_str(), code);
        }
        for code in [
            ErrorCode::NotFound,
            ErrorCode::Stale,
            ErrorCode::InvalidArgs,
            ErrorCode::Config,
            ErrorCode::Unavailable,
            ErrorCode::Conflict,
            ErrorCode::Handed,
            ErrorCode::Internal,
        ] {
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(serde_json::Value::from(code.as_str()))
            );
        }
    }

    fn no_rule() -> RuntimeError {
        Refusal::NoRule { rule: "r".into() }.into()
    }
}
