use leptos::prelude::*;
use serde_json::Value;

/// A return value as a collapsible tree: scalars inline, multi-line strings
/// preformatted, objects and lists as nested `<details>`. Always text.
pub fn value_tree(value: &Value) -> AnyView {
    match value {
        Value::Object(map) => {
            let entries = map
                .iter()
                .filter(|(k, _)| k.as_str() != "_orig_key")
                .map(|(k, v)| entry(k.clone(), v))
                .collect_view();
            view! { <ul class="tree">{entries}</ul> }.into_any()
        }
        Value::Array(items) => {
            let entries = items
                .iter()
                .enumerate()
                .map(|(i, v)| entry(format!("[{i}]"), v))
                .collect_view();
            view! { <ul class="tree">{entries}</ul> }.into_any()
        }
        Value::String(s) if s.contains('\n') => {
            view! { <pre class="text">{s.clone()}</pre> }.into_any()
        }
        other => {
            let text = saltscope_core::text::scalar_text(other);
            view! { <span class="scalar">{text}</span> }.into_any()
        }
    }
}

fn entry(key: String, value: &Value) -> AnyView {
    match value {
        Value::Object(m) if !m.is_empty() => view! {
            <li><details open={m.len() <= 20}><summary class="key">{key}</summary>{value_tree(value)}</details></li>
        }
        .into_any(),
        Value::Array(a) if !a.is_empty() => view! {
            <li><details open={a.len() <= 20}><summary class="key">{key}</summary>{value_tree(value)}</details></li>
        }
        .into_any(),
        _ => view! { <li><span class="key">{key}</span>": "{value_tree(value)}</li> }.into_any(),
    }
}
