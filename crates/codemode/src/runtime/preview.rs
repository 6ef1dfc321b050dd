//! What a waiting call would change, asked of its connector, which reads and never writes (docs/design.md,
//! "Previews").

use super::*;

impl Runtime {
    /// Rejects several pending calls, each its own decision, in the given order.
    /// What the pending call at `seq` would change, for a person about to decide it (docs/design.md,
    /// "Previews"). Computed now by its connector, bounded in size and in time (the call timeout); a failure
    /// is an `unavailable` preview rather than an error, so a preview never stands between a person and the
    /// decision. What is returned is kept as what the person was shown, and the decision takes it along.
    pub async fn preview(&self, id: &str, seq: u64) -> Result<Option<Preview>, RuntimeError> {
        let Some(state) = self.inner.store.execution(id)? else {
            return Err(no_run(id, Operation::Read));
        };
        let Some(entry) = state
            .log
            .iter()
            .find(|e| e.seq == seq && e.state == EntryState::Pending)
        else {
            return Err(Refusal::NotWaiting {
                run: id.to_owned(),
                seq,
            }
            .into());
        };
        if let Some(host) = state.host.as_ref().filter(|host| !host.here) {
            // What the call would change is on its host's machine; this one's files would mislead.
            return Ok(Some(Preview::Unavailable {
                message: format!(
                    "the call runs on host {}, whose connectors preview it",
                    host.name
                ),
            }));
        }
        let Some(registered) = self.inner.connector(&entry.connector) else {
            return Ok(None);
        };
        let ctx = CallContext {
            execution_id: id.to_owned(),
            seq,
        };
        let computing = registered
            .connector
            .preview(&entry.method, entry.args.clone(), ctx);
        let preview = match tokio::time::timeout(self.inner.options.timeout, computing).await {
            Ok(Ok(preview)) => preview,
            Ok(Err(message)) => Some(Preview::Unavailable { message }),
            Err(_) => Some(Preview::Unavailable {
                message: format!(
                    "the preview took longer than {} ms",
                    self.inner.options.timeout.as_millis()
                ),
            }),
        };
        let Some(preview) = preview.map(Preview::bounded) else {
            return Ok(None);
        };
        let json = serde_json::to_string(&preview).unwrap_or_default();
        let shown = Shown {
            digest: crate::codec::sha256_hex(json.as_bytes()),
            at: self.inner.now(),
            preview: (json.len() <= SHOWN_PREVIEW_LIMIT).then(|| preview.clone()),
        };
        self.inner.store.record_shown(
            id,
            seq,
            &serde_json::to_string(&shown).unwrap_or_default(),
        )?;
        Ok(Some(preview))
    }
}
