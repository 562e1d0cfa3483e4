//! Rendering on demand: what is far below the screen is drawn (or fetched)
//! when the person scrolls near it, so a job of 10,000 states or 2,000
//! minions opens at once and scrolls smoothly.

use leptos::html::Div;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{IntersectionObserver, IntersectionObserverEntry, IntersectionObserverInit};

/// Calls `seen` each time the element comes within a screen's height of
/// the viewport.
pub fn when_near(node: NodeRef<Div>, seen: impl Fn() + 'static) {
    let observer =
        StoredValue::new_local(None::<(IntersectionObserver, Closure<dyn FnMut(js_sys::Array)>)>);
    let seen = std::rc::Rc::new(seen);
    Effect::new(move |_| {
        let Some(element) = node.get() else { return };
        let seen = seen.clone();
        let callback = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
            let near = entries.iter().any(|e| {
                e.dyn_into::<IntersectionObserverEntry>()
                    .is_ok_and(|e| e.is_intersecting())
            });
            if near {
                seen();
            }
        });
        let init = IntersectionObserverInit::new();
        init.set_root_margin("100% 0px");
        if let Ok(o) =
            IntersectionObserver::new_with_options(callback.as_ref().unchecked_ref(), &init)
        {
            o.observe(&element);
            if let Some((old, _)) = observer
                .try_update_value(|v| v.replace((o, callback)))
                .flatten()
            {
                old.disconnect();
            }
        }
    });
    on_cleanup(move || {
        if let Some((o, _)) = observer.try_update_value(Option::take).flatten() {
            o.disconnect();
        }
    });
}

/// A marker at the end of a long list: when the person scrolls near it,
/// `more` draws the next slice.
#[component]
pub fn ShowMore(
    /// What is not drawn yet, for the button ("Show 9,500 more states").
    #[prop(into)]
    label: Signal<String>,
    more: Callback<()>,
) -> impl IntoView {
    let node = NodeRef::<Div>::new();
    when_near(node, move || more.run(()));
    view! {
        <div class="show-more" node_ref=node>
            <button type="button" on:click=move |_| more.run(())>{label}</button>
        </div>
    }
}

/// Text longer than this is shown folded: its start, and "show all".
pub const FOLD_BYTES: usize = 64 * 1024;

/// A size in bytes as people read it: "5.0 MB", "63 KB".
pub fn human_bytes(n: usize) -> String {
    if n >= 1_000_000 {
        format!("{:.1} MB", n as f64 / 1e6)
    } else {
        format!("{} KB", n.div_ceil(1000))
    }
}

/// Preformatted text, folded when long: the first 64 KB and a button
/// "show all (5.0 MB)".
#[component]
pub fn FoldedText(text: std::sync::Arc<str>, #[prop(into)] class: String) -> impl IntoView {
    let whole = RwSignal::new(text.len() <= FOLD_BYTES);
    let size = human_bytes(text.len());
    let shown = move || {
        if whole.get() {
            text.to_string()
        } else {
            let mut end = FOLD_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}…", &text[..end])
        }
    };
    view! {
        <pre class=class>{shown}</pre>
        {move || (!whole.get()).then(|| view! {
            <button type="button" class="show-all" on:click=move |_| whole.set(true)>{format!("show all ({size})")}</button>
        })}
    }
}
