//! `mnemo mcp`. STUB until issue 4.

use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct McpArgs {}

pub fn run(_args: McpArgs) -> Result<i32> {
    bail!("not built yet")
}
