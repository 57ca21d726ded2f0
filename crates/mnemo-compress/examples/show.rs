//! Prints what the offline compressor and the renderer make of a sample turn.
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(8);
    let batch = mnemo_compress::sample::turn(n);
    let out = mnemo_compress::offline(&batch);
    for o in &out.observations {
        println!("{}", serde_json::to_string_pretty(o).unwrap());
    }
    println!("{}", serde_json::to_string_pretty(&out.summary).unwrap());
    println!(
        "----\n{}",
        mnemo_compress::render_batch(&batch, mnemo_compress::DEFAULT_RENDER_BUDGET)
    );
}
