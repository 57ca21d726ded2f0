//! Prints what the reader makes of a transcript: `cargo run -p
//! mnemo-transcript --example dump -- FILE`.

use mnemo_core::config::Config;
use mnemo_core::privacy::Sanitizer;

fn main() {
    let sanitizer = Sanitizer::new(&Config::default().privacy);
    for path in std::env::args().skip(1) {
        let session = mnemo_transcript::read_session(path.as_ref(), &sanitizer).expect("readable");
        println!(
            "session {} cwd {:?} {:?}",
            session.session_id, session.cwd, session.stats
        );
        for (n, turn) in session.turns.iter().enumerate() {
            let cut = |s: &str| s.chars().take(100).collect::<String>().replace('\n', " ");
            println!(
                "#{n} {:?} interrupted={} calls={} notes={} prompt={:?} continues={:?}",
                turn.origin,
                turn.interrupted,
                turn.tool_calls.len(),
                turn.notes.len(),
                turn.prompt.as_deref().map(cut),
                turn.continues_request.as_deref().map(cut)
            );
            for q in &turn.questions {
                println!("   Q {} {:?} -> {}", cut(&q.question), q.options, q.answer);
            }
            for note in turn.notes.iter().take(3) {
                println!("   note {:?}: {}", note.before_tool_use_id, cut(&note.text));
            }
            if let Some(r) = &turn.final_report {
                println!("   report: {}", cut(r));
            }
        }
    }
}
