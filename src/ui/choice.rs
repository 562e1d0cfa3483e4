//! Lists (`<select>`) that apply a choice as soon as it is made: with the
//! pointer at once, with the keyboard once the person settles on it.

use std::time::Duration;

use leptos::callback::UnsyncCallback;
use leptos::ev::{Event, FocusEvent, KeyboardEvent};
use leptos::prelude::*;

/// How long the keyboard's last step stands before it is applied.
const SETTLE: Duration = Duration::from_millis(700);

/// On a closed list the arrow keys step through the choices and the browser
/// fires `change` at every step: applied at once, each step would ask the
/// engine and add an entry to the history. A keyboard's choice is applied on
/// Enter, on leaving the list, or once it has stood for [`SETTLE`]; a
/// pointer's at once. Every list takes the same three handlers (one copy of
/// each in the wasm).
#[derive(Clone, Copy)]
pub struct SettledChoice {
    apply: UnsyncCallback<()>,
    /// Set when the list's "custom" choice is made: it opens fields to
    /// fill, and applies nothing yet.
    custom: Option<RwSignal<bool>>,
    keyed: StoredValue<bool>,
    pending: StoredValue<Option<TimeoutHandle>, LocalStorage>,
}

impl SettledChoice {
    pub fn new(apply: UnsyncCallback<()>, custom: Option<RwSignal<bool>>) -> SettledChoice {
        let choice = SettledChoice {
            apply,
            custom,
            keyed: StoredValue::new(false),
            pending: StoredValue::new_local(None),
        };
        on_cleanup(move || choice.cancel());
        choice
    }

    /// For `on:keydown`: Enter applies a pending choice (and does not open
    /// the list, as Chromium would); another key chooses.
    pub fn on_key(self) -> impl Fn(KeyboardEvent) + Copy + 'static {
        move |ev| match ev.key().as_str() {
            "Enter" => {
                ev.prevent_default();
                self.settle()
            }
            // Space opens the list: a choice in it is applied at once.
            "Tab" | "Shift" | " " => {}
            _ => self.keyed.set_value(true),
        }
    }

    /// For `on:blur`: leaving the list applies a pending choice.
    pub fn on_blur(self) -> impl Fn(FocusEvent) + Copy + 'static {
        move |_| self.settle()
    }

    /// For `on:change`: applied now, or once the keyboard's choice stands.
    pub fn on_change(self) -> impl Fn(Event) + Copy + 'static {
        move |ev| {
            if let Some(custom) = self.custom.filter(|_| event_target_value(&ev) == "custom") {
                return custom.set(true);
            }
            if !self.keyed.get_value() {
                return self.apply.run(());
            }
            self.cancel();
            let settled = move || {
                self.pending.try_set_value(None);
                self.keyed.try_set_value(false);
                self.apply.try_run(());
            };
            if let Ok(handle) = set_timeout_with_handle(settled, SETTLE) {
                self.pending.set_value(Some(handle));
            }
        }
    }

    fn settle(self) {
        self.keyed.set_value(false);
        if let Some(handle) = self.pending.try_update_value(Option::take).flatten() {
            handle.clear();
            self.apply.run(());
        }
    }

    fn cancel(self) {
        if let Some(handle) = self.pending.try_update_value(Option::take).flatten() {
            handle.clear();
        }
    }
}
