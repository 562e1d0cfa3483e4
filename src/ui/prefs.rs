//! What one person sets for themselves, kept in this browser's localStorage:
//! never credentials, only view preferences.

const NOISY_KEY: &str = "saltscope.noisy_functions";

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

/// The person's own list of noisy functions, if they changed it.
pub fn noisy_functions() -> Option<Vec<String>> {
    let text = storage()?.get_item(NOISY_KEY).ok()??;
    serde_json::from_str(&text).ok()
}

pub fn set_noisy_functions(list: Option<&[String]>) {
    let Some(s) = storage() else { return };
    let _ = match list {
        Some(list) => s.set_item(NOISY_KEY, &serde_json::to_string(list).unwrap_or_default()),
        None => s.remove_item(NOISY_KEY),
    };
}
