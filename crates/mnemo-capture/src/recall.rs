//! Memory in the hook's answer. STUB until issue 4: answers what the handler planned.

use mnemo_core::{Config, DataDir};

use crate::event::{HookInput, HookResponse};
use crate::persist::Diagnostic;

pub fn respond(
    _input: &HookInput,
    planned: HookResponse,
    _data: &DataDir,
    _config: &Config,
    _diagnostics: &mut Vec<Diagnostic>,
) -> HookResponse {
    planned
}
