use leptos::prelude::*;
use saltscope_core::engine::EngineError;

/// The one place errors are shown: what failed, where, and the engine's words.
#[component]
pub fn ErrorPanel(error: EngineError) -> impl IntoView {
    let title = match &error {
        EngineError::Unreachable { .. } => "The engine cannot be reached",
        EngineError::Status { status, .. } if *status == 401 || *status == 403 => {
            "The engine refused access"
        }
        EngineError::Status { .. } => "The engine answered with an error",
        EngineError::BadResponse { .. } => "The engine's answer could not be read",
        EngineError::Config(_) => "config.json is not valid",
    };
    view! {
        <div class="error-panel" role="alert">
            <strong>{title}</strong>
            <p class="error-detail">{error.to_string()}</p>
        </div>
    }
}

/// Notes about data that was odd or incomplete: shown, never swallowed.
#[component]
pub fn Notes(notes: Vec<String>) -> impl IntoView {
    (!notes.is_empty()).then(|| {
        view! {
            <ul class="notes" aria-label="Notes">
                {notes.into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}
            </ul>
        }
    })
}
