use tool_runtime::tool;

pub struct Counter(pub u32);

/// Counts calls.
#[tool]
pub fn count(counter: &mut Counter) -> u32 {
    counter.0 += 1;
    counter.0
}

fn main() {}
