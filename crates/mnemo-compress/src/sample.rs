//! Realistic batches for benchmarks (here and in the worker) and for tests
//! of other crates: the shapes Claude Code 2.1.328 sends and capture
//! stores (Write without its echoed content, Edit with its structured patch,
//! Bash with stdout/stderr, failures with `Exit code N`).

use serde_json::json;

use crate::{AssistantNote, BatchEvent, QuestionAnswer, SummaryDraft, TurnBatch, TurnNarrative};

const ROOT: &str = "/home/dev/projects/acme-billing";

/// [`turn`] as the transcript tells it: the assistant explains every other
/// call, asks one question, reports at the end, and the turn is the last
/// piece of a long one (two earlier pieces to merge).
pub fn narrated_turn(events: usize) -> TurnBatch {
    let mut batch = turn(events);
    let mut notes = Vec::new();
    for (i, e) in batch.events.iter_mut().enumerate() {
        let id = format!("toolu_{i:04}");
        e.tool_use_id = Some(id.clone());
        if i % 2 == 0 {
            notes.push(AssistantNote {
                text: format!(
                    "Let me look at step {i}. The total ignores late fees because \
                     `compute_total` never calls `late_fee`, so overdue invoices are \
                     undercharged. Now let me fix `compute_total` to add the fee."
                ),
                before_tool_use_id: Some(id),
            });
        }
    }
    batch.narrative = Some(TurnNarrative {
        notes,
        questions: vec![QuestionAnswer {
            question: "Cap late fees?".into(),
            options: vec!["30 days".into(), "No cap".into()],
            option_notes: Vec::new(),
            answer: "30 days".into(),
        }],
        final_report: batch.last_assistant_message.clone(),
        ..Default::default()
    });
    batch.earlier_pieces = (0..2)
        .map(|n| SummaryDraft {
            request: batch.prompt.clone().unwrap_or_default(),
            investigated: format!("read src/billing/part{n}.py"),
            learned: "`pytest` failed with ImportError; fixed by editing fees.py".into(),
            completed: format!("created part{n}.py; changed invoice.py and fees.py"),
            next_steps: String::new(),
            notes: String::new(),
        })
        .collect();
    batch
}

/// A complete turn of `events` tool calls (at least 1): a cycle of reading,
/// searching, creating a module, editing it, a failing test run, a fix and a
/// passing run, repeated with different file names until `events` is
/// reached.
pub fn turn(events: usize) -> TurnBatch {
    let mut out = Vec::with_capacity(events);
    let mut cycle = 0;
    while out.len() < events.max(1) {
        for e in cycle_events(cycle) {
            if out.len() >= events.max(1) {
                break;
            }
            out.push(e);
        }
        cycle += 1;
    }
    for (i, e) in out.iter_mut().enumerate() {
        e.id = i as i64 + 1;
        e.created_at = 1_790_000_000_000 + i as i64 * 1500;
    }
    TurnBatch {
        project_root: ROOT.into(),
        project_name: "acme-billing".into(),
        session_id: 7,
        prompt_number: 3,
        prompt: Some("Add late fees to invoices and make sure the tests pass".into()),
        events: out,
        last_assistant_message: Some(
            "I added `late_fee` in src/billing/fees.py and wired it into `compute_total`. \
             The first test run failed because `late_fee` was not imported; after fixing the \
             import all 5 tests pass.\n\nNext, you may want to cap late fees at 30 days."
                .into(),
        ),
        turn_complete: true,
        ..Default::default()
    }
}

fn path(cycle: usize, name: &str) -> String {
    if cycle == 0 {
        format!("{ROOT}/src/billing/{name}")
    } else {
        format!("{ROOT}/src/billing{cycle}/{name}")
    }
}

/// One cycle's events: look around, add the fee, then test, fix and pass.
fn cycle_events(cycle: usize) -> Vec<BatchEvent> {
    let invoice = path(cycle, "invoice.py");
    let fees = path(cycle, "fees.py");
    let mut events = look_around(&invoice);
    events.extend(add_late_fees(&invoice, &fees));
    events.extend(test_fix_and_pass(&fees));
    events
}

/// Reading the invoice module and searching for the fee.
fn look_around(invoice: &str) -> Vec<BatchEvent> {
    let invoice_content = "from billing.tax import tax_for\n\n\
        def compute_total(subtotal, region, days_late=0):\n    \
        tax = tax_for(subtotal, region)\n    \
        return subtotal + tax + late_fee(subtotal, days_late)\n"
        .repeat(8);
    vec![
        BatchEvent {
            tool_name: "Read".into(),
            input: json!({"file_path": invoice}),
            response: Some(json!({"type": "text", "file": {
                "filePath": invoice, "content": invoice_content,
                "numLines": 40, "startLine": 1, "totalLines": 40}})),
            files_read: vec![invoice.to_owned()],
            ..Default::default()
        },
        BatchEvent {
            tool_name: "Grep".into(),
            input: json!({"pattern": "late_fee", "path": format!("{ROOT}/src"), "output_mode": "files_with_matches"}),
            response: Some(json!({"mode": "files_with_matches", "numFiles": 1,
                                   "filenames": [invoice]})),
            ..Default::default()
        },
    ]
}

/// Creating the fees module and importing it into the invoice module.
fn add_late_fees(invoice: &str, fees: &str) -> Vec<BatchEvent> {
    let fees_content = "from decimal import Decimal\n\n\
        DAILY_RATE = Decimal(\"0.001\")\n\n\n\
        def late_fee(subtotal, days_late):\n    \
        \"\"\"Fee for paying `days_late` days after the due date.\"\"\"\n    \
        if days_late <= 0:\n        return Decimal(0)\n    \
        return subtotal * DAILY_RATE * days_late\n";
    vec![
        BatchEvent {
            tool_name: "Write".into(),
            input: json!({"file_path": fees, "content": fees_content}),
            response: Some(json!({"type": "create", "filePath": fees,
                                   "structuredPatch": [], "userModified": false})),
            files_modified: vec![fees.to_owned()],
            ..Default::default()
        },
        BatchEvent {
            tool_name: "Edit".into(),
            input: json!({"file_path": invoice,
                          "old_string": "from billing.tax import tax_for",
                          "new_string": "from billing.tax import tax_for\nfrom billing.fees import late_fee",
                          "replace_all": false}),
            response: Some(json!({"filePath": invoice, "structuredPatch": [{
                "oldStart": 1, "oldLines": 3, "newStart": 1, "newLines": 4,
                "lines": [" from billing.tax import tax_for", "+from billing.fees import late_fee", " ", " def compute_total(subtotal, region, days_late=0):"]}],
                "userModified": false, "replaceAll": false})),
            files_modified: vec![invoice.to_owned()],
            ..Default::default()
        },
    ]
}

/// A failing test run, the fix in the fees module, a passing run and a
/// look at the working tree.
fn test_fix_and_pass(fees: &str) -> Vec<BatchEvent> {
    vec![
        BatchEvent {
            tool_name: "Bash".into(),
            failed: true,
            input: json!({"command": "python -m pytest tests/test_invoice.py -q", "description": "Run invoice tests"}),
            error: Some(format!(
                "Exit code 1\nF....\nE   NameError: name 'Decimal' is not defined\n{}1 failed, 4 passed in 0.31s",
                "    at tests/test_invoice.py:12\n".repeat(40)
            )),
            ..Default::default()
        },
        BatchEvent {
            tool_name: "Edit".into(),
            input: json!({"file_path": fees,
                          "old_string": "    return subtotal * DAILY_RATE * days_late",
                          "new_string": "    return Decimal(subtotal) * DAILY_RATE * days_late"}),
            response: Some(json!({"filePath": fees, "structuredPatch": [{
                "oldStart": 6, "oldLines": 4, "newStart": 6, "newLines": 4,
                "lines": ["     if days_late <= 0:", "         return Decimal(0)",
                          "-    return subtotal * DAILY_RATE * days_late",
                          "+    return Decimal(subtotal) * DAILY_RATE * days_late"]}]})),
            files_modified: vec![fees.to_owned()],
            ..Default::default()
        },
        BatchEvent {
            tool_name: "Bash".into(),
            input: json!({"command": "python -m pytest tests/test_invoice.py -q", "description": "Run invoice tests"}),
            response: Some(
                json!({"stdout": ".....                                                                    [100%]\n5 passed in 0.24s",
                                   "stderr": "", "interrupted": false, "isImage": false}),
            ),
            ..Default::default()
        },
        BatchEvent {
            tool_name: "Bash".into(),
            input: json!({"command": "git status --short"}),
            response: Some(
                json!({"stdout": " M src/billing/invoice.py\n?? src/billing/fees.py", "stderr": "", "interrupted": false}),
            ),
            ..Default::default()
        },
    ]
}
