//! `mnemo worker …` and `mnemo stats`. STUB until issue 3.

use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct WorkerArgs {}

#[derive(clap::Args)]
pub struct StatsArgs {}

pub fn worker(_args: WorkerArgs) -> Result<i32> {
    bail!("not built yet")
}

pub fn stats(_args: StatsArgs) -> Result<i32> {
    bail!("not built yet")
}
