//! The one error every front end receives: a stable code to branch on and a message to show. The app hands it
//! to the UI as `{"code", "message"}`, the CLI prints it (`--json`: `{"error", "code"}`), the MCP server turns
//! misuse into `isError` results.

use codemode::RuntimeError;
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
    /// `connectors.json` is broken: mutating operations are refused until it is fixed.
    Config,
    /// Another live process holds the run (a pass or a rollback); nothing was changed.
    Conflict,
    /// Approved for another host of a shared store, which has not resumed the run yet: the decision stands
    /// and `wait` returns the outcome (docs/shared-store.md).
    Handed,
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
            ErrorCode::Conflict => "conflict",
            ErrorCode::Handed => "handed",
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

    pub fn invalid_args(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::InvalidArgs, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::Internal, message)
    }

    /// The error for an execution id that names nothing: the same words on every surface.
    pub fn no_execution(id: &str) -> Self {
        ApiError::not_found(format!("No execution \"{id}\""))
    }
}

impl From<RuntimeError> for ApiError {
    fn from(error: RuntimeError) -> Self {
        let code = match &error {
            RuntimeError::NotFound(_) => ErrorCode::NotFound,
            RuntimeError::Stale(_) => ErrorCode::Stale,
            RuntimeError::InvalidArgs(_) => ErrorCode::InvalidArgs,
            RuntimeError::Busy(_) => ErrorCode::Conflict,
            RuntimeError::Handed(_) => ErrorCode::Handed,
            RuntimeError::Configuration(_) => ErrorCode::Config,
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
            (RuntimeError::NotFound("x".into()), "not_found"),
            (RuntimeError::Busy("x".into()), "conflict"),
            (RuntimeError::Handed("x".into()), "handed"),
            (RuntimeError::Configuration("x".into()), "config"),
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
            ErrorCode::Conflict,
            ErrorCode::Internal,
        ] {
            assert_eq!(
                serde_json::to_value(code).ok(),
                Some(serde_json::Value::from(code.as_str()))
            );
        }
    }
}
