//! Starting the worker from a hook. STUB until issue 3.

use mnemo_core::{Config, DataDir};

use crate::persist::Diagnostic;

pub fn ensure_running(_data: &DataDir, _config: &Config, _diagnostics: &mut Vec<Diagnostic>) {}
