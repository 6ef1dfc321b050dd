//! The schema of both databases, version by version: SQLite's steps and PostgreSQL's side by side, so that
//! a change to one is made to the other in the same place.

use super::sql::{Sql, args};
use super::{Result, StoreError};
use rusqlite::TransactionBehavior;
use std::path::Path;

/// The schema version this build writes; older files are migrated forward on open.
pub const SCHEMA_VERSION: i64 = 17;

const MIGRATIONS: &[&str] = &[
    // 1: executions, the per-call log, snippets.
    "CREATE TABLE cm_executions (
        id TEXT PRIMARY KEY,
        runtime TEXT NOT NULL,
        code TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        logs TEXT,
        connectors TEXT NOT NULL,
        source TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE INDEX cm_executions_by_status ON cm_executions (runtime, status, created_at DESC, id DESC);
    CREATE INDEX cm_executions_by_time ON cm_executions (runtime, created_at DESC, id DESC);
    CREATE TABLE cm_log (
        execution_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        connector TEXT NOT NULL,
        method TEXT NOT NULL,
        args TEXT,
        result TEXT,
        requires_approval INTEGER NOT NULL,
        ephemeral INTEGER NOT NULL,
        state TEXT NOT NULL,
        decided_by TEXT,
        decided_at INTEGER,
        interrupted INTEGER NOT NULL DEFAULT 0,
        divergence TEXT,
        PRIMARY KEY (execution_id, seq)
    ) WITHOUT ROWID;
    CREATE TABLE cm_snippets (
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT NOT NULL,
        code TEXT NOT NULL,
        saved_at INTEGER NOT NULL,
        input_schema TEXT,
        connectors TEXT NOT NULL,
        PRIMARY KEY (runtime, name)
    );",
    // 2: the process that owns a running pass, to tell an interrupted run from a live one.
    "ALTER TABLE cm_executions ADD COLUMN owner_pid INTEGER;
     ALTER TABLE cm_executions ADD COLUMN owner_started INTEGER;",
    // 3: the process rolling a run back, so that no approval or recovery applies anything meanwhile and two
    // rollbacks never revert the same call twice.
    "ALTER TABLE cm_executions ADD COLUMN rollback_pid INTEGER;
     ALTER TABLE cm_executions ADD COLUMN rollback_started INTEGER;",
    // 4: when a rollback reverted a call, so that a call which may have been applied before a crash (and was
    // then rejected) is told apart from one a rollback already undid.
    "ALTER TABLE cm_log ADD COLUMN reverted_at INTEGER;",
    // 5: the error a connector answered a call with, so that replay gives the program the same error instead
    // of running the call again (docs/design.md, "A call's outcome is recorded, errors included").
    "ALTER TABLE cm_log ADD COLUMN error TEXT;",
    // 6: what was decided about a call, by whom and why (docs/design.md, "Decisions"). Calls decided before
    // get the decision their state, `decided_by` and their run imply: a reverted call of a run rejected for it
    // was rejected; a call still pending when its run expired, expired; any other decided call, approved.
    "ALTER TABLE cm_log ADD COLUMN decision TEXT;
     UPDATE cm_log SET decision = json_object('kind', 'rejected', 'by', decided_by, 'at', decided_at)
      WHERE decided_by IS NOT NULL AND state = 'reverted' AND reverted_at IS NULL
        AND EXISTS (SELECT 1 FROM cm_executions e WHERE e.id = cm_log.execution_id
                    AND e.error LIKE 'Action ' || cm_log.connector || '.' || cm_log.method || ' rejected by user%');
     UPDATE cm_log SET decision = json_object('kind', 'approved', 'by', decided_by, 'at', decided_at)
      WHERE decided_by IS NOT NULL AND decision IS NULL;
     UPDATE cm_log SET decided_by = 'expiry',
            decided_at = (SELECT e.updated_at FROM cm_executions e WHERE e.id = cm_log.execution_id),
            decision = json_object('kind', 'expired', 'by', 'expiry', 'at',
                         (SELECT e.updated_at FROM cm_executions e WHERE e.id = cm_log.execution_id))
      WHERE decided_by IS NULL AND requires_approval = 1 AND state = 'reverted' AND reverted_at IS NULL
        AND EXISTS (SELECT 1 FROM cm_executions e WHERE e.id = cm_log.execution_id
                    AND e.error = 'Expired awaiting approval');",
    // 7: policy rules (docs/design.md, "Rules"), in creation order, with who added each and how often it
    // decided; the version moves on every change so every process reloads them within a second.
    "CREATE TABLE cm_rules (
        runtime TEXT NOT NULL,
        id TEXT NOT NULL,
        rule TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        hits INTEGER NOT NULL DEFAULT 0,
        last_hit INTEGER,
        PRIMARY KEY (runtime, id)
    );
    CREATE TABLE cm_rules_version (runtime TEXT PRIMARY KEY, version INTEGER NOT NULL);",
    // 8: the preview last computed for display of a pending call; the decision keeps it as what the person
    // was shown (docs/design.md, "Previews").
    "ALTER TABLE cm_log ADD COLUMN shown TEXT;",
    // 9: the rules' creation order as a column, which PostgreSQL (with no rowid) keeps too.
    "ALTER TABLE cm_rules ADD COLUMN position INTEGER;
     UPDATE cm_rules SET position = rowid;",
    // 10: the hosts sharing a store, the host that owns each run and each rollback, and the decision handed
    // to a run's host by another (docs/shared-store.md, "Hosts"); NULL on a store only one machine uses.
    "CREATE TABLE cm_hosts (
        id TEXT PRIMARY KEY,
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        connectors TEXT NOT NULL,
        machine TEXT NOT NULL,
        pid INTEGER NOT NULL,
        began_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
    );
    ALTER TABLE cm_executions ADD COLUMN owner_host TEXT;
    ALTER TABLE cm_executions ADD COLUMN rollback_host TEXT;
    ALTER TABLE cm_executions ADD COLUMN handed TEXT;",
    // 11: the arguments as the connector reads them, where that differs from what the program sent
    // (docs/design.md, "What a call means").
    "ALTER TABLE cm_log ADD COLUMN canonical TEXT;",
    // 12: the rule that asked for a call, and whether it wants the call decided in the window, so a surface
    // showing the call later reads it rather than judging the call again (docs/design.md, "Rules").
    "ALTER TABLE cm_log ADD COLUMN asked_by TEXT;
     ALTER TABLE cm_log ADD COLUMN confirm_in_app INTEGER NOT NULL DEFAULT 0;",
    // 13: whether a waiting call is asked in the agent's client too, and how long it may wait for a person
    // (with the deadline that follows), recorded when it paused (docs/design.md, "Asking in the client",
    // "Deciding in time"); and the waiting calls indexed apart, so the queue, the tray and the deadline sweep
    // find them without walking every paused run's log (docs/performance.md, "Lean reads").
    "ALTER TABLE cm_log ADD COLUMN ask_in_client INTEGER NOT NULL DEFAULT 0;
     ALTER TABLE cm_log ADD COLUMN decide_within INTEGER;
     ALTER TABLE cm_log ADD COLUMN decide_by INTEGER;
     CREATE INDEX cm_log_waiting ON cm_log (execution_id, seq) WHERE state = 'pending';",
    // 14: phones paired to approve from (a hash of each device's token, never the token), the one-time
    // pairing codes (hashed too), and the signed links already followed, each usable once (docs/phone.md);
    // the webhook announcements; why the run's host refused a decision handed to it; and, on PostgreSQL
    // only, the triggers that name who decided and let only approvers decide.
    "CREATE TABLE cm_devices (
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        token_hash TEXT NOT NULL,
        paired_at INTEGER NOT NULL,
        last_used_at INTEGER,
        revoked_at INTEGER,
        PRIMARY KEY (runtime, name)
     );
     CREATE UNIQUE INDEX cm_devices_token ON cm_devices (token_hash);
     CREATE TABLE cm_pairings (
        code_hash TEXT PRIMARY KEY,
        runtime TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
     );
     CREATE TABLE cm_links (
        nonce TEXT PRIMARY KEY,
        runtime TEXT NOT NULL,
        used_at INTEGER NOT NULL
     );
     CREATE TABLE cm_announcements (
        runtime TEXT NOT NULL,
        execution_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        url TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL,
        next_at INTEGER NOT NULL,
        sent_at INTEGER,
        last_error TEXT,
        PRIMARY KEY (runtime, execution_id, seq, url)
     );
     ALTER TABLE cm_executions ADD COLUMN handed_refused TEXT;",
    // 15: four eyes (docs/design.md, "Four eyes"): how many people a waiting call needs, and each approval
    // given to it, bound to the arguments shown; one per person and call.
    "ALTER TABLE cm_log ADD COLUMN quorum INTEGER;
     CREATE TABLE cm_approvals (
        execution_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        digest TEXT NOT NULL,
        person TEXT NOT NULL,
        decision TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (execution_id, seq, digest, person)
     );",
    // 16: timings (docs/history.md, "Timings"): when a call was asked about, began to run, and had its
    // outcome recorded.
    // And which call a decision handed to a run's host was given for, so the host copies it onto that call
    // only (docs/shared-store.md, "People and permissions").
    "ALTER TABLE cm_log ADD COLUMN asked_at INTEGER;
     ALTER TABLE cm_log ADD COLUMN started_at INTEGER;
     ALTER TABLE cm_log ADD COLUMN finished_at INTEGER;
     ALTER TABLE cm_executions ADD COLUMN handed_seq INTEGER;",
    // 17: reruns (docs/history.md, "Rerun from a step"): the run and call a run was rerun from, where its
    // program left the old run's calls (and why), and which calls were served from the old run's record.
    "ALTER TABLE cm_executions ADD COLUMN forked_from TEXT;
     ALTER TABLE cm_executions ADD COLUMN forked_seq INTEGER;
     ALTER TABLE cm_executions ADD COLUMN diverged_at INTEGER;
     ALTER TABLE cm_executions ADD COLUMN diverged TEXT;
     ALTER TABLE cm_log ADD COLUMN inherited INTEGER NOT NULL DEFAULT 0;
     CREATE INDEX cm_executions_forked ON cm_executions (forked_from) WHERE forked_from IS NOT NULL;",
];

/// The same schema on PostgreSQL, each step with the version it reaches: a new database starts at the
/// version the first step reaches (no PostgreSQL store predates it); later steps follow SQLite's one for one.
/// Integers are BIGINT (times are epoch milliseconds); text compares byte-wise (`COLLATE "C"`), as SQLite's
/// does, so ids and names sort the same on both.
pub(super) const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[
    (
        9,
        r#"CREATE TABLE cm_executions (
        id TEXT COLLATE "C" PRIMARY KEY,
        runtime TEXT COLLATE "C" NOT NULL,
        code TEXT NOT NULL,
        status TEXT NOT NULL,
        result TEXT,
        error TEXT,
        logs TEXT,
        connectors TEXT NOT NULL,
        source TEXT,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        owner_pid BIGINT,
        owner_started BIGINT,
        rollback_pid BIGINT,
        rollback_started BIGINT
    );
    CREATE INDEX cm_executions_by_status ON cm_executions (runtime, status, created_at DESC, id DESC);
    CREATE INDEX cm_executions_by_time ON cm_executions (runtime, created_at DESC, id DESC);
    CREATE TABLE cm_log (
        execution_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT NOT NULL,
        connector TEXT NOT NULL,
        method TEXT NOT NULL,
        args TEXT,
        result TEXT,
        requires_approval BIGINT NOT NULL,
        ephemeral BIGINT NOT NULL,
        state TEXT NOT NULL,
        decided_by TEXT,
        decided_at BIGINT,
        interrupted BIGINT NOT NULL DEFAULT 0,
        divergence TEXT,
        reverted_at BIGINT,
        error TEXT,
        decision TEXT,
        shown TEXT,
        PRIMARY KEY (execution_id, seq)
    );
    CREATE TABLE cm_snippets (
        runtime TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        description TEXT NOT NULL,
        code TEXT NOT NULL,
        saved_at BIGINT NOT NULL,
        input_schema TEXT,
        connectors TEXT NOT NULL,
        PRIMARY KEY (runtime, name)
    );
    CREATE TABLE cm_rules (
        runtime TEXT COLLATE "C" NOT NULL,
        id TEXT COLLATE "C" NOT NULL,
        rule TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        hits BIGINT NOT NULL DEFAULT 0,
        last_hit BIGINT,
        position BIGINT,
        PRIMARY KEY (runtime, id)
    );
    CREATE TABLE cm_rules_version (runtime TEXT COLLATE "C" PRIMARY KEY, version BIGINT NOT NULL);"#,
    ),
    (
        10,
        r#"CREATE TABLE cm_hosts (
        id TEXT COLLATE "C" PRIMARY KEY,
        runtime TEXT COLLATE "C" NOT NULL,
        name TEXT NOT NULL,
        connectors TEXT NOT NULL,
        machine TEXT NOT NULL,
        pid BIGINT NOT NULL,
        began_at BIGINT NOT NULL,
        heartbeat_at BIGINT NOT NULL
    );
    ALTER TABLE cm_executions ADD COLUMN owner_host TEXT COLLATE "C";
    ALTER TABLE cm_executions ADD COLUMN rollback_host TEXT COLLATE "C";
    ALTER TABLE cm_executions ADD COLUMN handed TEXT;"#,
    ),
    (11, "ALTER TABLE cm_log ADD COLUMN canonical TEXT;"),
    (
        12,
        "ALTER TABLE cm_log ADD COLUMN asked_by TEXT;
         ALTER TABLE cm_log ADD COLUMN confirm_in_app BIGINT NOT NULL DEFAULT 0;",
    ),
    (
        13,
        "ALTER TABLE cm_log ADD COLUMN ask_in_client BIGINT NOT NULL DEFAULT 0;
         ALTER TABLE cm_log ADD COLUMN decide_within BIGINT;
         ALTER TABLE cm_log ADD COLUMN decide_by BIGINT;
         CREATE INDEX cm_log_waiting ON cm_log (execution_id, seq) WHERE state = 'pending';",
    ),
    (
        14,
        r#"CREATE TABLE cm_devices (
            runtime TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            token_hash TEXT COLLATE "C" NOT NULL,
            paired_at BIGINT NOT NULL,
            last_used_at BIGINT,
            revoked_at BIGINT,
            PRIMARY KEY (runtime, name)
         );
         CREATE UNIQUE INDEX cm_devices_token ON cm_devices (token_hash);
         CREATE TABLE cm_pairings (
            code_hash TEXT COLLATE "C" PRIMARY KEY,
            runtime TEXT COLLATE "C" NOT NULL,
            name TEXT COLLATE "C" NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT NOT NULL,
            used_at BIGINT
         );
         CREATE TABLE cm_links (
            nonce TEXT COLLATE "C" PRIMARY KEY,
            runtime TEXT COLLATE "C" NOT NULL,
            used_at BIGINT NOT NULL
         );
         CREATE TABLE cm_announcements (
            runtime TEXT COLLATE "C" NOT NULL,
            execution_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            url TEXT COLLATE "C" NOT NULL,
            created_at BIGINT NOT NULL,
            attempts BIGINT NOT NULL,
            next_at BIGINT NOT NULL,
            sent_at BIGINT,
            last_error TEXT,
            PRIMARY KEY (runtime, execution_id, seq, url)
         );
         -- Who decided is the role the server authenticated (docs/design.md, "Who decided"): a person's
         -- decision, written by any connection, gets `person` = session_user, whatever the client sent. The
         -- one exception is a handed decision copied into the log by the run's own host: it keeps the person
         -- the approver's connection wrote into cm_executions.handed.
         CREATE FUNCTION cm_person_decision(decision TEXT, person TEXT) RETURNS TEXT
           LANGUAGE sql IMMUTABLE AS $fn$
             SELECT CASE WHEN decision IS NULL
                           OR (decision::jsonb ->> 'by') NOT IN ('console', 'cli', 'api', 'notification', 'client', 'device')
                         THEN decision
                         ELSE (decision::jsonb || jsonb_build_object('person', person))::text END
           $fn$;
         -- Permissions by the database (docs/shared-store.md, "People and permissions"): once
         -- `codemode store grant` has enforced them here, only members of codemode_approver decide.
         ALTER TABLE cm_executions ADD COLUMN handed_refused TEXT;
         CREATE TABLE cm_permissions (enforced BOOLEAN NOT NULL);
         CREATE FUNCTION cm_may_decide(decision TEXT) RETURNS VOID
           LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $fn$
             BEGIN
               IF decision IS NOT NULL
                  AND (decision::jsonb ->> 'by') IN ('console', 'cli', 'api', 'notification', 'client', 'device')
                  AND EXISTS (SELECT 1 FROM cm_permissions WHERE enforced)
                  AND NOT (EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'codemode_approver')
                           AND pg_has_role(session_user, 'codemode_approver', 'MEMBER')) THEN
                 RAISE EXCEPTION USING ERRCODE = '42501',
                   MESSAGE = format('%s may not decide calls: deciding needs the role codemode_approver '
                                    '(an admin runs: codemode store grant approver %s)', session_user, session_user);
               END IF;
             END
           $fn$;
         CREATE FUNCTION cm_stamp_handed() RETURNS trigger
           LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $fn$
           BEGIN
             IF NEW.handed IS NOT NULL THEN
               PERFORM cm_may_decide(NEW.handed);
               NEW.handed := cm_person_decision(NEW.handed, session_user);
             END IF;
             RETURN NEW;
           END
         $fn$;
         CREATE TRIGGER cm_stamp_handed BEFORE INSERT OR UPDATE OF handed ON cm_executions
           FOR EACH ROW EXECUTE FUNCTION cm_stamp_handed();
         CREATE FUNCTION cm_stamp_decision() RETURNS trigger
           LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $fn$
           DECLARE
             handed TEXT;
           BEGIN
             IF NEW.decision IS NOT NULL THEN
               SELECT e.handed INTO handed FROM cm_executions e WHERE e.id = NEW.execution_id;
               -- The run's own host copies a decision an approver handed it; anyone else decides themselves.
               IF handed IS NULL THEN
                 PERFORM cm_may_decide(NEW.decision);
               END IF;
               NEW.decision := cm_person_decision(NEW.decision,
                 coalesce(handed::jsonb ->> 'person', session_user::text));
             END IF;
             RETURN NEW;
           END
         $fn$;
         CREATE TRIGGER cm_stamp_decision BEFORE INSERT OR UPDATE OF decision ON cm_log
           FOR EACH ROW EXECUTE FUNCTION cm_stamp_decision();"#,
    ),
    (
        15,
        r#"ALTER TABLE cm_log ADD COLUMN quorum BIGINT;
         CREATE TABLE cm_approvals (
            execution_id TEXT COLLATE "C" NOT NULL,
            seq BIGINT NOT NULL,
            digest TEXT COLLATE "C" NOT NULL,
            person TEXT COLLATE "C" NOT NULL,
            decision TEXT NOT NULL,
            at BIGINT NOT NULL,
            PRIMARY KEY (execution_id, seq, digest, person)
         );
         -- The person of an approval is the role the server authenticated, whatever the client sent, and
         -- only an approver may give one once permissions are enforced: so one person cannot count twice
         -- by claiming another's name.
         CREATE FUNCTION cm_stamp_approval() RETURNS trigger
           LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $fn$
           BEGIN
             -- An approval is always a person's: a decision "by" a rule would slip past cm_may_decide.
             IF (NEW.decision::jsonb ->> 'by') NOT IN ('console', 'cli', 'api', 'notification', 'client', 'device')
                OR (NEW.decision::jsonb ->> 'by') IS NULL THEN
               RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = 'an approval is given by a person';
             END IF;
             PERFORM cm_may_decide(NEW.decision);
             NEW.person := session_user;
             NEW.decision := cm_person_decision(NEW.decision, session_user);
             RETURN NEW;
           END
         $fn$;
         CREATE TRIGGER cm_stamp_approval BEFORE INSERT OR UPDATE ON cm_approvals
           FOR EACH ROW EXECUTE FUNCTION cm_stamp_approval();
         DO $do$ BEGIN
           IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'codemode_agent') THEN
             GRANT SELECT, INSERT, UPDATE, DELETE ON cm_approvals
               TO codemode_agent, codemode_approver, codemode_admin;
           END IF;
         END $do$;"#,
    ),
    (
        16,
        r#"ALTER TABLE cm_log ADD COLUMN asked_at BIGINT;
         ALTER TABLE cm_log ADD COLUMN started_at BIGINT;
         ALTER TABLE cm_log ADD COLUMN finished_at BIGINT;
         ALTER TABLE cm_executions ADD COLUMN handed_seq BIGINT;
         -- A handed decision is the approver's for the call it was handed for only: written onto another
         -- call, it is the writer's own decision, checked as such.
         CREATE OR REPLACE FUNCTION cm_stamp_decision() RETURNS trigger
           LANGUAGE plpgsql SECURITY DEFINER SET search_path = public AS $fn$
           DECLARE
             handed TEXT;
             handed_seq BIGINT;
           BEGIN
             IF NEW.decision IS NOT NULL THEN
               SELECT e.handed, e.handed_seq INTO handed, handed_seq
                 FROM cm_executions e WHERE e.id = NEW.execution_id;
               IF handed IS NULL OR handed_seq IS DISTINCT FROM NEW.seq THEN
                 PERFORM cm_may_decide(NEW.decision);
                 handed := NULL;
               END IF;
               NEW.decision := cm_person_decision(NEW.decision,
                 coalesce(handed::jsonb ->> 'person', session_user::text));
             END IF;
             RETURN NEW;
           END
         $fn$;"#,
    ),
    (
        17,
        r#"ALTER TABLE cm_executions ADD COLUMN forked_from TEXT COLLATE "C";
         ALTER TABLE cm_executions ADD COLUMN forked_seq BIGINT;
         ALTER TABLE cm_executions ADD COLUMN diverged_at BIGINT;
         ALTER TABLE cm_executions ADD COLUMN diverged TEXT;
         ALTER TABLE cm_log ADD COLUMN inherited BIGINT NOT NULL DEFAULT 0;
         CREATE INDEX cm_executions_forked ON cm_executions (forked_from) WHERE forked_from IS NOT NULL;"#,
    ),
];

/// The schema version a PostgreSQL store holds; 0 for an empty database.
pub(super) fn postgres_schema_version(connection: &dyn Sql) -> Result<i64> {
    let exists: bool = connection.query_row(
        "SELECT to_regclass('cm_schema') IS NOT NULL",
        args![],
        |row| row.get(0),
    )?;
    if !exists {
        return Ok(0);
    }
    connection.query_row(
        "SELECT coalesce(max(version), 0) FROM cm_schema",
        args![],
        |row| row.get(0),
    )
}

pub(super) fn migrate(
    connection: &mut rusqlite::Connection,
    path: &Path,
) -> Result<(), StoreError> {
    let tx = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let version: i64 = tx.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            path: path.display().to_string(),
            found: version,
        });
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        tx.execute_batch(migration)?;
        tx.pragma_update(None, "user_version", index as i64 + 1)?;
    }
    tx.commit()?;
    Ok(())
}
