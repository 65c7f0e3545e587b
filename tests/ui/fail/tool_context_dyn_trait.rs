use tool_runtime::tool;

pub trait Clock: Send + Sync {
    fn now(&self) -> u64;
}

/// Tells the time.
#[tool]
pub fn now(clock: &dyn Clock) -> u64 {
    clock.now()
}

fn main() {}
