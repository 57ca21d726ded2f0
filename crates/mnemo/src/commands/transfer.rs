//! `mnemo export` and `mnemo import`.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use anyhow::Context as _;
use mnemo_core::privacy::Sanitizer;
use mnemo_core::words::{count, count_s};

use crate::output::{data_and_config, open_store, open_store_read_only};

pub fn export(output: Option<&Path>) -> anyhow::Result<i32> {
    let (data, config) = data_and_config()?;
    let store = open_store_read_only(&data, &config)?;
    let counts = match output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::new(file);
            let counts = store.export(&mut out)?;
            out.flush()?;
            // A later forget or redaction reaches this copy, or names it.
            if let Err(e) = mnemo_store::export_ledger::record(&data, path) {
                eprintln!(
                    "mnemo: warning: cannot note {} among the exports written ({e}); \
                     a later forget or redaction will not reach it",
                    path.display()
                );
            }
            counts
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            store.export(&mut out)?
        }
    };
    eprintln!("exported {}", describe_counts(&counts));
    Ok(0)
}

/// Imports `file`; `project` (a directory) is the project of records that
/// name none, identified as capture identifies projects.
pub fn import(file: &Path, project: Option<&Path>) -> anyhow::Result<i32> {
    let (data, config) = data_and_config()?;
    let project_root = match project {
        Some(dir) if !dir.is_dir() => {
            anyhow::bail!("--project {}: not a directory", dir.display())
        }
        Some(dir) => Some(
            mnemo_core::project::identify(dir)
                .root
                .to_string_lossy()
                .into_owned(),
        ),
        None => None,
    };
    let mut input: Box<dyn BufRead> = if file == Path::new("-") {
        Box::new(BufReader::new(std::io::stdin().lock()))
    } else {
        let f =
            std::fs::File::open(file).with_context(|| format!("cannot open {}", file.display()))?;
        Box::new(BufReader::new(f))
    };
    let mut store = open_store(&data, &config)?;
    let sanitizer = Sanitizer::new(&config.privacy);
    let report = store.import(&mut input, &sanitizer, project_root.as_deref())?;
    let n = &report.inserted;
    println!(
        "imported {}; {} already present",
        describe_counts(n),
        report.skipped
    );
    if report.invalid.is_empty() {
        return Ok(0);
    }
    for (line, problem) in report.invalid.iter().take(20) {
        eprintln!("{}:{line}: {problem}", file.display());
    }
    if report.invalid.len() > 20 {
        eprintln!("... and {} more", report.invalid.len() - 20);
    }
    eprintln!(
        "mnemo: {} not imported; fix them and run the import again (it skips what is already stored)",
        count_s(report.invalid.len(), "line")
    );
    Ok(1)
}

/// `12 records: 1 project, 2 sessions, ...`
fn describe_counts(n: &mnemo_store::export::ExportCounts) -> String {
    format!(
        "{}: {}, {}, {}, {}, {}, {}",
        count_s(n.total(), "record"),
        count_s(n.projects, "project"),
        count_s(n.sessions, "session"),
        count_s(n.prompts, "prompt"),
        count_s(n.events, "event"),
        count_s(n.observations, "observation"),
        count(n.summaries, "summary", "summaries"),
    )
}
