//! Rerunning a run from a step: a new run linked to the old one, served the old run's recorded outcomes for
//! the calls before the step and running the rest under today's rules (docs/history.md, "Rerun from a step").

use super::*;

impl Runtime {
    /// Reruns execution `id` from call `from` (from the start when `None`), with `code` instead of its
    /// program when given. The calls before `from` must have outcomes on record; the new run is served
    /// them while its program makes the same calls, and a program that makes another call before `from`
    /// runs fresh from there (its `forkedFrom.diverged` says where and why). The rerun carries the old run's
    /// source, so the rules that judged the old run's calls judge its new ones.
    pub async fn rerun(
        &self,
        id: &str,
        from: Option<u64>,
        code: Option<&str>,
    ) -> Result<Outcome, RuntimeError> {
        let Some(old) = self.inner.store.execution(id)? else {
            return Err(no_run(id, Operation::Rerun));
        };
        let from = from.unwrap_or(0);
        crate::rerun::check_from(id, &old.log, from).map_err(RuntimeError::InvalidArgs)?;
        let code = code.unwrap_or(&old.code);
        if let Some(unfit) = self.unfit_code(code) {
            return Err(RuntimeError::InvalidArgs(unfit));
        }
        let now = self.inner.now();
        let new_id = new_execution_id(now);
        let source = old.source.as_deref();
        self.inner
            .store
            .begin_rerun(&new_id, code, &self.inner.names(), source, now, id, from)?;
        self.pass(&new_id, code, source, Start::Recorded).await
    }
}
