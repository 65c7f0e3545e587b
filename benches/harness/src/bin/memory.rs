//! Figure 4, memory.
//!
//! `memory per-tool`: the heap bytes each framework holds per registered tool. 1,000 tools
//! with the ticket input, each under its own name and with its own copy of the schema, are
//! registered in the framework's by-name registry (tool-runtime: `Tool::builder` and an
//! `Agent`; rmcp: a `ToolRouter`; rig: a `ToolSet` of `DynamicTool`s), and the bytes still
//! allocated afterwards are counted by a counting global allocator.
//!
//! `memory run <framework>`: one process per framework: 1,000 calls with the valid arguments
//! (tool-runtime: one `Agent::run` of 10 turns of 100 parallel calls, whose output is kept; the
//! others: 1,000 calls, results kept, as a transcript keeps them). Reports the peak RSS (`VmHWM`) and the peak heap.
//!
//! Each prints one JSON object on stdout.

use serde_json::json;
use tool_bench::counting::{Counting, held, peak, reset_peak};
use tool_bench::{TOOL_NAME, args, block_on, peak_rss_bytes, rss_bytes};

#[global_allocator]
static GLOBAL: Counting = Counting;

const TOOLS: usize = 1000;
const CALLS: usize = 1000;

/// Bytes still held after `build` returns its value, per tool; the value is dropped after.
fn per_tool<T>(build: impl FnOnce() -> T) -> f64 {
    let before = held();
    let value = build();
    let after = held();
    drop(value);
    (after.saturating_sub(before)) as f64 / TOOLS as f64
}

fn name(i: usize) -> String {
    format!("triage-ticket-{i:04}")
}

mod ours_reg {
    use std::convert::Infallible;

    use tool_bench::ours::Ticket;
    use tool_bench::runloop::ReplayModel;
    use tool_bench::shared::triage;
    use tool_runtime::{Agent, Context, Tool};

    pub fn tools(n: usize) -> Vec<Tool> {
        (0..n)
            .map(|i| {
                Tool::builder(
                    super::name(i),
                    "Triage a ticket: file it in a queue and score it.",
                )
                .handler(|_ctx: Context, t: Ticket| async move {
                    Ok::<_, Infallible>(triage(
                        &t.title,
                        &t.reporter,
                        t.priority,
                        t.estimate_hours,
                        t.kind.as_str(),
                        &t.labels,
                    ))
                })
                .build()
            })
            .collect()
    }

    pub fn agent(n: usize) -> Agent {
        Agent::builder(ReplayModel::new(0, 0, 1))
            .tools(tools(n))
            .build()
            .expect("the agent builds")
    }
}

#[cfg(feature = "rmcp")]
mod rmcp_reg {
    use std::borrow::Cow;
    use std::sync::Arc;

    use rmcp::handler::server::router::tool::{ToolRoute, ToolRouter};
    use tool_bench::mcp::Server;

    pub fn router(n: usize) -> ToolRouter<Server> {
        let mut router = ToolRouter::new();
        for i in 0..n {
            let mut attr = Server::triage_ticket_tool_attr();
            attr.name = Cow::Owned(super::name(i));
            attr.input_schema = Arc::new((*attr.input_schema).clone());
            router.add_route(ToolRoute::new(attr, Server::triage_ticket));
        }
        router
    }
}

#[cfg(feature = "rig")]
mod rig_reg {
    use rig_agent::tool::ToolSet;
    use rig_core::completion::message::ToolName;
    use rig_core::tool::{DynamicTool, PortableTool, ToolExecutionError, ToolOutput};
    use tool_bench::rig::{TriageTicket, TriageTicketParameters};
    use tool_bench::shared::triage;

    pub fn set(n: usize) -> ToolSet {
        let mut set = ToolSet::default();
        for i in 0..n {
            let tool = DynamicTool::new(
                ToolName::new(super::name(i)).expect("a name"),
                PortableTool::description(&TriageTicket),
                PortableTool::parameters(&TriageTicket),
                |args| {
                    Box::pin(async move {
                        let t: TriageTicketParameters = serde_json::from_value(args)
                            .map_err(|e| ToolExecutionError::invalid_args(e.to_string()))?;
                        let out = triage(
                            &t.title,
                            &t.reporter,
                            t.priority,
                            t.estimate_hours,
                            t.kind.as_str(),
                            &t.labels,
                        );
                        serde_json::to_value(out)
                            .map(ToolOutput::json)
                            .map_err(|e| ToolExecutionError::other(e.to_string()))
                    })
                },
            );
            set.add_dynamic_tool(tool);
        }
        set
    }
}

fn per_tool_report() -> serde_json::Value {
    // Warm up lazily initialised statics (schemas, regexes, …) so they are not counted.
    drop(ours_reg::agent(2));
    #[cfg(feature = "rmcp")]
    drop(rmcp_reg::router(2));
    #[cfg(feature = "rig")]
    drop(rig_reg::set(2));

    let mut out = serde_json::Map::new();
    out.insert("tools".into(), json!(TOOLS));
    out.insert(
        "ours_tool".into(),
        json!(per_tool(|| ours_reg::tools(TOOLS))),
    );
    out.insert(
        "ours_agent".into(),
        json!(per_tool(|| ours_reg::agent(TOOLS))),
    );
    let t = ours_reg::tools(1);
    out.insert(
        "ours_schema_text_bytes".into(),
        json!(t[0].schema_json().len()),
    );
    #[cfg(feature = "rmcp")]
    out.insert("rmcp".into(), json!(per_tool(|| rmcp_reg::router(TOOLS))));
    #[cfg(feature = "rig")]
    out.insert("rig".into(), json!(per_tool(|| rig_reg::set(TOOLS))));
    serde_json::Value::Object(out)
}

fn run_report(which: &str) -> serde_json::Value {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // Results are kept as `Box<str>`, so that what a framework's string happened to reserve
    // does not count.
    let mut results: Vec<Box<str>> = Vec::with_capacity(CALLS);
    // Set up, then measure from here.
    type Run<'a> = Box<dyn FnMut(&mut Vec<Box<str>>) + 'a>;
    let run: Run<'_> = match which {
        "baseline" => Box::new(|r: &mut Vec<Box<str>>| {
            for _ in 0..CALLS {
                r.push(tool_bench::baseline::call(TOOL_NAME, args::VALID).into_boxed_str());
            }
        }),
        "ours-invoke" => {
            let caller = tool_bench::ours::Caller::new();
            Box::new(move |r: &mut Vec<Box<str>>| {
                for _ in 0..CALLS {
                    r.push(block_on(caller.call(TOOL_NAME, args::VALID)).into_boxed_str());
                }
            })
        }
        "ours-agent" => {
            let tool = tool_bench::ours::Caller::new()
                .tool(TOOL_NAME)
                .expect("the tool")
                .clone();
            let args = std::str::from_utf8(args::VALID).expect("utf-8");
            let turns = (0..10)
                .map(|t| {
                    (0..CALLS / 10)
                        .map(|i| tool_runtime::ToolCall::new(format!("c{t}-{i}"), TOOL_NAME, args))
                        .collect()
                })
                .collect();
            let agent =
                tool_runtime::Agent::builder(tool_bench::runloop::ReplayModel::with_turns(turns))
                    .tool(tool)
                    .max_concurrency(100)
                    .max_turns(11)
                    .build()
                    .expect("the agent builds");
            let rt = &rt;
            Box::new(move |r: &mut Vec<Box<str>>| {
                let out = rt
                    .block_on(agent.run(&tool_runtime::Context::new(), "go"))
                    .expect("the run answers");
                assert_eq!(out.calls.len(), CALLS);
                r.extend(out.calls.iter().map(|c| Box::from(c.text())));
            })
        }
        #[cfg(feature = "rmcp")]
        "rmcp" => {
            let caller = tool_bench::mcp::Caller::new();
            Box::new(move |r: &mut Vec<Box<str>>| {
                for _ in 0..CALLS {
                    r.push(block_on(caller.call(TOOL_NAME, args::VALID)).into_boxed_str());
                }
            })
        }
        #[cfg(feature = "rig")]
        "rig" => {
            let caller = tool_bench::rig::Caller::new();
            Box::new(move |r: &mut Vec<Box<str>>| {
                for _ in 0..CALLS {
                    r.push(block_on(caller.call(TOOL_NAME, args::VALID)).into_boxed_str());
                }
            })
        }
        other => panic!("unknown framework {other}"),
    };
    let mut run = run;
    let rss_before = rss_bytes();
    let heap_before = held();
    reset_peak();
    run(&mut results);
    let heap_peak = peak();
    let heap_after = held();
    assert_eq!(results.len(), CALLS);
    json!({
        "framework": which,
        "calls": CALLS,
        "rss_before_bytes": rss_before,
        "peak_rss_bytes": peak_rss_bytes(),
        "heap_peak_over_start_bytes": heap_peak - heap_before,
        "heap_kept_bytes": heap_after.saturating_sub(heap_before),
    })
}

fn main() {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let report = match argv.first().map(String::as_str) {
        Some("per-tool") => per_tool_report(),
        Some("run") => run_report(argv.get(1).map_or("ours-agent", String::as_str)),
        _ => {
            eprintln!(
                "usage: memory per-tool | memory run <baseline|ours-invoke|ours-agent|rmcp|rig>"
            );
            std::process::exit(2);
        }
    };
    println!("{report}");
}
