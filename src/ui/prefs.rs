//! What one person sets for themselves — the noisy functions they hide, the
//! export columns they pick — as reactive context: a change shows at once
//! in every view that reads it, and is kept in this browser's localStorage
//! (never credentials, only view preferences).

use std::collections::HashMap;

use leptos::prelude::*;
use saltscope_core::export::{Column, ColumnChoice, ExportKind};

const NOISY_KEY: &str = "saltscope.noisy_functions";
const COLUMNS_KEY: &str = "saltscope.export.columns.";

#[derive(Clone, Copy)]
pub struct Prefs {
    /// The person's own noisy functions, if they changed config.json's.
    pub noisy: RwSignal<Option<Vec<String>>>,
    /// Export columns per kind, as chosen last.
    columns: RwSignal<HashMap<&'static str, Vec<&'static str>>>,
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok()?
}

fn load_noisy() -> Option<Vec<String>> {
    let text = storage()?.get_item(NOISY_KEY).ok()??;
    serde_json::from_str(&text).ok()
}

pub fn provide_prefs() {
    let prefs = Prefs {
        noisy: RwSignal::new(load_noisy()),
        columns: RwSignal::new(HashMap::new()),
    };
    // Written back whenever it changes (not on the first run: that is
    // what was just read).
    Effect::new(move |first: Option<()>| {
        let noisy = prefs.noisy.get();
        if first.is_none() {
            return;
        }
        if let Some(s) = storage() {
            let _ = match noisy {
                Some(list) => {
                    s.set_item(NOISY_KEY, &serde_json::to_string(&list).unwrap_or_default())
                }
                None => s.remove_item(NOISY_KEY),
            };
        }
    });
    provide_context(prefs);
}

pub fn use_prefs() -> Prefs {
    expect_context::<Prefs>()
}

impl Prefs {
    pub fn columns(&self, kind: ExportKind) -> Vec<Column> {
        if let Some(ids) = self.columns.with(|c| c.get(kind.id()).cloned()) {
            return ids.iter().filter_map(|id| kind.column(id)).collect();
        }
        let saved = storage().and_then(|s| {
            s.get_item(&format!("{COLUMNS_KEY}{}", kind.id()))
                .ok()
                .flatten()
        });
        match saved {
            Some(text) => ColumnChoice::parse(kind, &text).columns,
            None => kind.default_columns(),
        }
    }

    pub fn set_columns(&self, kind: ExportKind, columns: &[Column]) {
        let ids: Vec<&'static str> = columns.iter().map(|c| c.id).collect();
        if let Some(s) = storage() {
            let _ = s.set_item(&format!("{COLUMNS_KEY}{}", kind.id()), &ids.join(","));
        }
        self.columns.update(|c| {
            c.insert(kind.id(), ids);
        });
    }
}
