//! The window's commands: each parses its arguments, calls `codemode_api` and returns what it answers; failures
//! reach the UI as `{code, message}`. Decisions made here are recorded as `console`.

mod connecting;
mod deciding;
mod history;
mod pairing;
mod policy;
mod preferences;
mod programs;
mod window;

// Globs, so each command's hidden `__cmd__` macros come along for `generate_handler!`.
pub use connecting::*;
pub use deciding::*;
pub use history::*;
pub use pairing::*;
pub use policy::*;
pub use preferences::*;
pub use programs::*;
pub use window::*;
