//! A call whose handler says where its long work begins (M9):
//! [`Context::continue_as_task`](crate::Context::continue_as_task).
//!
//! Over MCP, a tool the server runs as a task only once its questions are answered
//! (`McpServerBuilder::questions_before_task`) asks its first questions in the call's own
//! answer (`input_required`, round by round); when its handler calls
//! [`Context::continue_as_task`], the client is answered with the task, and the handler goes
//! on inside it. Everywhere else (an agent run, a plain call, a call that is a task from its
//! start) the call is already what it will be, and the method does nothing.

use std::sync::Arc;

use crate::Context;

/// What a transport is told when a call's handler says its work may go on as a task.
pub type TaskStart = Arc<dyn Fn() + Send + Sync>;

impl Context {
    /// The same context, telling `start` when its handler calls
    /// [`Context::continue_as_task`] (M9). Transports call this for a call's context; a
    /// call made inside the call (a sub-agent's, say) does not inherit it.
    #[must_use]
    pub fn with_task_start(mut self, start: TaskStart) -> Self {
        self.task_start = Some(start);
        self
    }

    /// Says that the call's work from here on may go on as a task (M9): over MCP, a call of a
    /// tool declared with `McpServerBuilder::questions_before_task` is answered with its task
    /// now, its questions so far having been asked in the call's own answer; the handler goes
    /// on, and what it asks later waits in the task. Calling it again, or where the call is
    /// already what it will be (an agent run, a plain MCP call, a call that was a task from
    /// its start), does nothing.
    ///
    /// ```
    /// # async fn purge(ctx: tool_core::Context) {
    /// // The questions are asked; what follows is long.
    /// ctx.continue_as_task();
    /// # }
    /// ```
    pub fn continue_as_task(&self) {
        if let Some(start) = &self.task_start {
            start();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[test]
    fn m9_a_call_is_told_its_handler_continues_as_a_task_and_a_call_inside_it_is_not() {
        let told = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&told);
        let ctx = Context::new()
            .for_call("c1", "purge")
            .with_task_start(Arc::new(move || {
                counter.fetch_add(1, Ordering::SeqCst);
            }));
        ctx.child().continue_as_task();
        assert_eq!(
            told.load(Ordering::SeqCst),
            1,
            "a child context is the same call"
        );
        ctx.for_call("c2", "inner").continue_as_task();
        assert_eq!(
            told.load(Ordering::SeqCst),
            1,
            "a call inside the call is another call"
        );
        Context::new().continue_as_task();
    }
}
