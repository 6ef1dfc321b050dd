//! People and permissions on a shared store (docs/shared-store.md, "People and permissions"): the SQL that
//! gives a PostgreSQL login one of the roles, printed for an administrator or run on the store.

use crate::{Api, ApiError};
use codemode::StoreRole;
use serde::Serialize;

/// What `codemode store grant` did: the SQL, and whether it was run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Grant {
    pub role: &'static str,
    pub user: String,
    pub sql: String,
    pub applied: bool,
}

impl Api {
    /// The SQL that makes `user` an `agent`, `approver` or `admin` of the shared store; run on the store when
    /// `apply` (this data directory's connection must own the tables).
    pub fn store_grant(&self, role: &str, user: &str, apply: bool) -> Result<Grant, ApiError> {
        let parsed = StoreRole::parse(role).ok_or_else(|| {
            ApiError::invalid_args(format!(
                "\"{}\" is not a role: agent (runs programs, never decides), approver (decides) or admin \
                 (rules and retention too)",
                crate::display::visible(role)
            ))
        })?;
        let sql = codemode::grant_sql(parsed, user).map_err(ApiError::invalid_args)?;
        if apply {
            self.home.runtime.grant(parsed, user)?;
        }
        Ok(Grant {
            role: parsed.role_name(),
            user: user.to_owned(),
            sql,
            applied: apply,
        })
    }
}
