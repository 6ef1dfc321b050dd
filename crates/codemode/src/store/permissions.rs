//! People's permissions on a shared store, held by PostgreSQL itself (docs/shared-store.md, "People and
//! permissions"): the roles `codemode_agent`, `codemode_approver` and `codemode_admin`, the grants each
//! holds, and the switch that makes the server refuse a decision from anyone who is not an approver.

use super::sql::DbError;
use super::transactions::Database;
use super::{Store, StoreError};

/// What a person (or a host's login) may do on a shared store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreRole {
    /// Runs programs and records their calls; never decides.
    Agent,
    /// Decides waiting calls (and runs programs).
    Approver,
    /// Everything, rules and retention included.
    Admin,
}

impl StoreRole {
    pub fn parse(text: &str) -> Option<StoreRole> {
        match text {
            "agent" | "codemode_agent" => Some(StoreRole::Agent),
            "approver" | "codemode_approver" => Some(StoreRole::Approver),
            "admin" | "codemode_admin" => Some(StoreRole::Admin),
            _ => None,
        }
    }

    /// The PostgreSQL role.
    pub fn role_name(self) -> &'static str {
        match self {
            StoreRole::Agent => "codemode_agent",
            StoreRole::Approver => "codemode_approver",
            StoreRole::Admin => "codemode_admin",
        }
    }
}

/// The SQL that makes `user` (an existing PostgreSQL login) a `role` on this database, creating the three
/// roles and their grants the first time and turning on the server's check that only approvers decide. Run
/// by the tables' owner; running it again changes nothing more.
pub fn grant_sql(role: StoreRole, user: &str) -> Result<String, String> {
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '@');
    if user.is_empty() || user.len() > 63 || !user.chars().all(fine) {
        return Err(format!(
            "\"{user}\" is not a PostgreSQL login this command can name (letters, digits, _ - . @; at most 63)"
        ));
    }
    let role_name = role.role_name();
    Ok(format!(
        r#"-- Codemode Console: "{user}" as {role_name} (docs/shared-store.md, "People and permissions").
-- Run as the owner of the cm_ tables (who opened the store first).
DO $roles$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'codemode_agent') THEN CREATE ROLE codemode_agent NOLOGIN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'codemode_approver') THEN CREATE ROLE codemode_approver NOLOGIN; END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'codemode_admin') THEN CREATE ROLE codemode_admin NOLOGIN; END IF;
END $roles$;
GRANT USAGE ON SCHEMA public TO codemode_agent, codemode_approver, codemode_admin;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO codemode_agent, codemode_approver, codemode_admin;
-- Rules and the permission switch are the admins' alone; so is retention, deleting runs and their calls.
REVOKE INSERT, UPDATE, DELETE ON cm_rules, cm_rules_version, cm_permissions FROM codemode_agent, codemode_approver;
REVOKE DELETE ON cm_executions, cm_log, cm_approvals FROM codemode_agent, codemode_approver;
-- From now on the server refuses a decision from anyone who is not a member of codemode_approver.
INSERT INTO cm_permissions (enforced) SELECT true WHERE NOT EXISTS (SELECT 1 FROM cm_permissions WHERE enforced);
GRANT {role_name} TO "{user}";
"#
    ))
}

impl Store {
    /// Runs an administrator's SQL (from [`grant_sql`]) on the shared store, in one transaction.
    pub fn administer(&self, sql: &str) -> Result<(), StoreError> {
        match &self.database {
            Database::Postgres(postgres) => Ok(postgres.transaction(&[], &self.runtime, |c| c.batch(sql))?),
            Database::Sqlite(_) => Err(StoreError::Database(DbError::Pool(
                "roles and grants are PostgreSQL's: this data directory's store is an SQLite file, whose \
                 permissions are the file's"
                    .to_owned(),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_that_could_break_out_of_its_quotes_is_refused() {
        assert!(
            grant_sql(StoreRole::Approver, "alice")
                .unwrap()
                .contains("GRANT codemode_approver TO \"alice\";")
        );
        for bad in ["", "a\"; DROP TABLE cm_log; --", "x y", &"a".repeat(64)] {
            assert!(grant_sql(StoreRole::Agent, bad).is_err(), "{bad}");
        }
    }
}
