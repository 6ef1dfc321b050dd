//! The job queue of a pass: promise jobs only (the sandbox has no timers), drained until the program's own
//! promise settles, so that work the program left running cannot hold its outcome back.

use boa_engine::{
    Context, JsResult,
    builtins::promise::PromiseState,
    job::{Job, JobExecutor},
    object::builtins::JsPromise,
};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};

#[derive(Default)]
pub(super) struct PassJobs {
    queue: RefCell<VecDeque<Job>>,
    target: RefCell<Option<JsPromise>>,
}

impl PassJobs {
    /// Stop draining as soon as `promise` settles.
    pub(super) fn stop_when_settled(&self, promise: JsPromise) {
        *self.target.borrow_mut() = Some(promise);
    }

    fn settled(&self) -> bool {
        self.target
            .borrow()
            .as_ref()
            .is_some_and(|p| !matches!(p.state(), PromiseState::Pending))
    }

    pub(super) fn run(self: Rc<Self>, context: &mut Context) -> JsResult<()> {
        loop {
            if self.settled() {
                return Ok(());
            }
            let Some(job) = self.queue.borrow_mut().pop_front() else {
                return Ok(());
            };
            let outcome = match job {
                Job::PromiseJob(job) => job.call(context).map(drop),
                Job::GenericJob(job) => job.call(context).map(drop),
                // Only the engine itself makes async jobs here (dynamic `import()` refusing to load, for
                // one); they finish without waiting on anything outside, so one poll settles them.
                Job::AsyncJob(job) => {
                    let context = RefCell::new(&mut *context);
                    let mut future = job.call(&context);
                    match Pin::new(&mut future).poll(&mut TaskContext::from_waker(Waker::noop())) {
                        Poll::Ready(result) => result.map(drop),
                        Poll::Pending => Ok(()),
                    }
                }
                // Timers and finalisation callbacks do not exist in the sandbox.
                _ => Ok(()),
            };
            if let Err(error) = outcome {
                self.queue.borrow_mut().clear();
                return Err(error);
            }
        }
    }
}

impl JobExecutor for PassJobs {
    fn enqueue_job(self: Rc<Self>, job: Job, _context: &mut Context) {
        self.queue.borrow_mut().push_back(job);
    }

    fn run_jobs(self: Rc<Self>, context: &mut Context) -> JsResult<()> {
        self.run(context)
    }
}
