//! Robustness against damaged files: deterministic mutations of realistic settings files must
//! never make the planners panic, and whatever they return must still be JSONC.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use common::{BIN, fixtures, jsonc_options, specs};
use mnemo_install::{plan_install, plan_mcp_install, plan_mcp_uninstall, plan_uninstall};

const VARIANTS_PER_FILE: usize = 40;

/// Knuth's MMIX LCG: deterministic, so a failure reproduces from the printed input.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Deletes, duplicates, swaps or inserts a few characters.
fn mutate(text: &str, rng: &mut Lcg) -> String {
    const INSERTABLE: &[char] = &[
        '{', '}', '[', ']', ',', ':', '"', '/', '*', '\n', ' ', '\\', 'x', '0',
    ];
    let mut chars: Vec<char> = text.chars().collect();
    for _ in 0..1 + rng.below(4) {
        if chars.is_empty() {
            chars.push(INSERTABLE[rng.below(INSERTABLE.len())]);
            continue;
        }
        let at = rng.below(chars.len());
        match rng.below(4) {
            0 => {
                chars.remove(at);
            }
            1 => chars.insert(at, chars[at]),
            2 => {
                let other = rng.below(chars.len());
                chars.swap(at, other);
            }
            _ => chars.insert(at, INSERTABLE[rng.below(INSERTABLE.len())]),
        }
    }
    chars.into_iter().collect()
}

fn assert_jsonc(text: &str, context: &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Err(err) = jsonc_parser::parse_to_value(text, &jsonc_options()) {
        panic!("{context} produced text that does not parse ({err}):\n{text}");
    }
}

/// Runs every planner on `input` and checks what comes out.
fn check(input: &str) {
    let hooks = specs(BIN);
    if let Ok(installed) = plan_install(input, &hooks) {
        assert_jsonc(&installed.new_text, "plan_install");
        let again = plan_install(&installed.new_text, &hooks).expect("install output re-plans");
        assert!(again.is_noop(), "install not idempotent on:\n{input}");
        assert_eq!(again.new_text, installed.new_text);
        let uninstalled = plan_uninstall(&installed.new_text).expect("install output uninstalls");
        assert_jsonc(&uninstalled.new_text, "plan_uninstall after plan_install");
    }
    if let Ok(uninstalled) = plan_uninstall(input) {
        assert_jsonc(&uninstalled.new_text, "plan_uninstall");
    }
    if let Ok(installed) = plan_mcp_install(input, "mnemo", BIN, &["mcp".to_string()]) {
        assert_jsonc(&installed.new_text, "plan_mcp_install");
        let uninstalled =
            plan_mcp_uninstall(&installed.new_text, "mnemo").expect("mcp output uninstalls");
        assert_jsonc(
            &uninstalled.new_text,
            "plan_mcp_uninstall after plan_mcp_install",
        );
    }
}

#[test]
fn mutated_settings_files_never_panic_and_stay_jsonc() {
    let mut bases: Vec<String> = fixtures().into_iter().map(|(_, text)| text).collect();
    // Files that already hold our entries exercise the update and removal paths.
    let installed: Vec<String> = bases
        .iter()
        .map(|text| {
            plan_install(text, &specs("/opt/old dir/mnemo"))
                .unwrap()
                .new_text
        })
        .collect();
    bases.extend(installed);
    bases.push(String::new());

    let mut rng = Lcg(0x6d6e_656d_6f21);
    let (mut planned, mut refused) = (0, 0);
    for base in &bases {
        for _ in 0..VARIANTS_PER_FILE {
            let input = mutate(base, &mut rng);
            let outcome = catch_unwind(AssertUnwindSafe(|| check(&input)));
            if let Err(panic) = outcome {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                panic!("panicked ({message}) on input:\n{input:?}");
            }
            match plan_install(&input, &specs(BIN)) {
                Ok(_) => planned += 1,
                Err(_) => refused += 1,
            }
        }
    }
    // Both paths must have been exercised for the test to mean anything.
    let total = planned + refused;
    eprintln!("{total} variants: {planned} planned, {refused} refused");
    assert!(
        planned > total / 5 && refused > total / 5,
        "planned {planned}, refused {refused}"
    );
}
