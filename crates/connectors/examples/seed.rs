//! Fills a data directory with many executions, for trying the console (and its end-to-end test) at scale:
//! `seed DATA_DIR [COUNT]` — every 100th run pauses at a `files.write_file`, the others read the workspace.

use codemode::{Runtime, RuntimeOptions};
use connectors::{Connectors, config};
use std::path::PathBuf;
use std::time::Instant;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(args.next().ok_or("usage: seed DATA_DIR [COUNT]")?);
    let count: usize = match args.next() {
        Some(n) => n
            .parse()
            .map_err(|_| format!("COUNT \"{n}\" is not a number"))?,
        None => 10_000,
    };
    let config = config::load(&dir).map_err(|e| e.to_string())?;
    let built = Connectors::build(&config, &dir)?;
    let options = RuntimeOptions {
        name: config.runtime.name.clone(),
        keep_warm: true,
        max_executions: usize::MAX,
        ..RuntimeOptions::default()
    };
    let runtime = Runtime::open(&dir.join("codemode.db"), options, built.all)
        .await
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    for i in 0..count {
        let code = if i % 100 == 0 {
            format!(
                "async () => files.write_file({{ path: \"seed/{i}.txt\", content: \"run {i}\" }})"
            )
        } else {
            format!(
                "async () => {{ const l = await files.list_dir({{}}); return {{ run: {i}, entries: l.entries.length }}; }}"
            )
        };
        runtime
            .execute_from(&code, Some("seed"))
            .await
            .map_err(|e| e.to_string())?;
    }
    println!(
        "seeded {count} executions in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
