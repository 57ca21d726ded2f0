//! `mnemo forget`, `edit`, `pin`, `unpin`, `redact`: curating the memory
//! from the terminal, straight on the store (no worker needed), with the
//! same checks as the HTTP API and the MCP tool ([`mnemo_recall::curate`]).

use mnemo_recall::curate::{self, ForgetRequest};
use mnemo_store::Store;
use mnemo_store::curate::{Edit, Redacted, Removed};
use mnemo_store::shape;

use super::recall::{current_dir, out, print_json};
use crate::cli::{EditArgs, ForgetArgs, PinArgs, RedactArgs};
use crate::output::{data_and_config, open_store};

fn open() -> anyhow::Result<Store> {
    Ok(open_with_data()?.0)
}

fn open_with_data() -> anyhow::Result<(Store, mnemo_core::DataDir)> {
    let (data, config) = data_and_config()?;
    if !data.db_path().exists() {
        anyhow::bail!(
            "no database at {} yet: nothing to curate",
            data.db_path().display()
        );
    }
    Ok((open_store(&data, &config)?, data))
}

pub fn forget(args: ForgetArgs) -> anyhow::Result<i32> {
    let (mut store, data) = open_with_data()?;
    let request = ForgetRequest {
        ids: &args.ids,
        session: args.session.as_deref(),
        project: args.project.as_deref(),
    };
    let target = curate::forget_target(&store, &request, &current_dir()?)?;
    let forgotten = store
        .forget_everywhere(&data, &target, args.dry_run)
        .map_err(curate::curate_error)?;
    if args.vacuum {
        store.vacuum()?;
    }
    if args.json {
        let mut json = serde_json::to_value(&forgotten)?;
        json["dry_run"] = args.dry_run.into();
        print_json(&json)?;
    } else {
        let verb = if args.dry_run {
            "would forget"
        } else {
            "forgot"
        };
        out(&format!("{verb}: {}", counts(&forgotten.removed)))?;
        if !forgotten.files.is_empty() {
            out(&format!("also taken out of {}", places(&forgotten.files)))?;
        }
    }
    warn_remaining(&forgotten.remaining);
    Ok(0)
}

/// Says on stderr which files may still hold what was taken out.
fn warn_remaining(remaining: &[String]) {
    for left in remaining {
        eprintln!("mnemo: warning: a copy may remain in {left}");
    }
}

/// `a.jsonl 2, logs/worker.log 1`.
fn places<'a>(places: impl IntoIterator<Item = (&'a String, &'a usize)>) -> String {
    places
        .into_iter()
        .map(|(place, n)| format!("{place} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `observations 3, summaries 1, prompts 1, events 12, sessions 1`.
fn counts(r: &Removed) -> String {
    format!(
        "observations {}, summaries {}, prompts {}, events {}, sessions {}",
        r.observations, r.summaries, r.prompts, r.events, r.sessions
    )
}

pub fn edit(args: EditArgs) -> anyhow::Result<i32> {
    let id = curate::observation_id(&args.id)?;
    let mut store = open()?;
    let obs_type = args
        .obs_type
        .as_deref()
        .map(|t| curate::observation_type(&store, t))
        .transpose()?;
    let edit = Edit {
        title: args.title,
        subtitle: args.subtitle,
        narrative: args.narrative,
        facts: (!args.facts.is_empty()).then_some(args.facts),
        obs_type,
    };
    if edit.is_empty() {
        anyhow::bail!("nothing to change: give --title, --subtitle, --narrative, --fact or --type");
    }
    store
        .edit_observation(id, &edit)
        .map_err(curate::curate_error)?;
    let record = shape::observation(store.conn(), id)?
        .ok_or_else(|| anyhow::anyhow!("#{id} disappeared while being edited"))?;
    if args.json {
        print_json(&record)?;
    } else {
        out(&format!(
            "edited {} [{}] {}",
            record.reference, record.obs_type, record.title
        ))?;
    }
    Ok(0)
}

pub fn pin(args: PinArgs, pinned: bool) -> anyhow::Result<i32> {
    let id = curate::observation_id(&args.id)?;
    let store = open()?;
    store
        .pin_observation(id, pinned)
        .map_err(curate::curate_error)?;
    let verb = if pinned { "pinned" } else { "unpinned" };
    out(&format!("{verb} #{id}"))?;
    Ok(0)
}

pub fn redact(args: RedactArgs) -> anyhow::Result<i32> {
    let (mut store, data) = open_with_data()?;
    let redacted = store
        .redact_everywhere(&data, &args.text)
        .map_err(curate::curate_error)?;
    if args.json {
        print_json(&redacted)?;
    } else {
        out(&redaction_summary(&redacted))?;
    }
    warn_remaining(&redacted.remaining);
    Ok(0)
}

/// What a redaction replaced, where, in one line.
fn redaction_summary(redacted: &Redacted) -> String {
    if redacted.replaced == 0 {
        return "not found anywhere mnemo keeps data; nothing changed".to_owned();
    }
    format!(
        "replaced in {} places with {} ({})",
        redacted.replaced,
        mnemo_store::curate::REDACTED,
        places(redacted.places.iter().chain(&redacted.files))
    )
}
