//! The Playground: running a program, rerunning one from a step, and the snippet library.

use crate::console::{CommandResult, Console};
use codemode::{Outcome, SaveSnippet, Snippet};
use codemode_api::Rerun;
use tauri::State;

/// The Playground: the same path an agent's program takes.
#[tauri::command]
pub async fn run_program(console: State<'_, Console>, code: String) -> CommandResult<Outcome> {
    console.api().await?.run(&code, "Playground").await
}

/// "Rerun from here" on a timeline entry: the same API call as `codemode rerun ID --from SEQ`.
#[tauri::command]
pub async fn rerun_execution(
    console: State<'_, Console>,
    id: String,
    from: Option<u64>,
) -> CommandResult<Rerun> {
    console.api().await?.rerun(&id, from, None).await
}

#[tauri::command]
pub async fn snippets(console: State<'_, Console>) -> CommandResult<Vec<Snippet>> {
    console.api().await?.snippets()
}

#[tauri::command]
pub async fn save_snippet(
    console: State<'_, Console>,
    name: String,
    execution_id: String,
    description: Option<String>,
) -> CommandResult<Snippet> {
    let save = SaveSnippet {
        execution_id,
        description,
        input_schema: None,
    };
    console.api().await?.save_snippet(&name, save)
}

#[tauri::command]
pub async fn delete_snippet(console: State<'_, Console>, name: String) -> CommandResult<()> {
    console.api().await?.delete_snippet(&name)
}
