//! `mnemo mcp`: the MCP server on stdio, which Claude Code starts for the
//! `mcp__mnemo__*` tools (registered by `mnemo install`).

use mnemo_mcp::{Options, run_stdio};

use crate::cli::McpArgs;
use crate::output::data_and_config;

pub fn run(_args: McpArgs) -> anyhow::Result<i32> {
    let (data, config) = data_and_config()?;
    // Before the runtime exists: the local UTC offset can only be read while
    // the process has one thread.
    let options = Options::from_env(data, config);
    run_stdio(options)?;
    Ok(0)
}
