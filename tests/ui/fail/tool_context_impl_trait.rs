use tool_runtime::tool;

pub trait Clock {
    fn now(&self) -> u64;
}

/// Tells the time.
#[tool]
pub fn now(clock: impl Clock) -> u64 {
    clock.now()
}

fn main() {}
