//! `mnemo search`, `show`, `timeline`, `context`. STUB until issue 4.

use anyhow::{Result, bail};

#[derive(clap::Args)]
pub struct SearchArgs {}
#[derive(clap::Args)]
pub struct ShowArgs {}
#[derive(clap::Args)]
pub struct TimelineArgs {}
#[derive(clap::Args)]
pub struct ContextArgs {}

pub fn search(_args: SearchArgs) -> Result<i32> {
    bail!("not built yet")
}
pub fn show(_args: ShowArgs) -> Result<i32> {
    bail!("not built yet")
}
pub fn timeline(_args: TimelineArgs) -> Result<i32> {
    bail!("not built yet")
}
pub fn context(_args: ContextArgs) -> Result<i32> {
    bail!("not built yet")
}
