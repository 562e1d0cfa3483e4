use std::sync::Arc;

use leptos::prelude::*;
use saltscope_core::model::{NodeShape, TreeEntry, TreeNode, ENTRIES_PER_PART, OPEN_AT_ONCE};
use saltscope_core::parts::ListParts;
use serde_json::Value;

use super::visible::{pre_view, FrameParts};

/// A return value as a collapsible tree: scalars inline, long or multi-line
/// strings preformatted and folded, objects and lists as nested `<details>`,
/// drawn a part at a time (`TreeNode`). Always text.
pub fn value_tree(value: Arc<Value>) -> AnyView {
    node_view(TreeNode::new(value))
}

fn node_view(node: TreeNode) -> AnyView {
    match node.shape() {
        NodeShape::Branch { entries } => {
            view! { <Branch node=node.clone() entries=entries/> }.into_any()
        }
        NodeShape::Text(text) => pre_view(text, "text"),
        NodeShape::Scalar(text) => view! { <span class="scalar">{text}</span> }.into_any(),
    }
}

/// A branch's entries in parts: the first part at once, and more as the
/// person scrolls near the end or asks ("Show 2500 more entries").
#[component]
fn Branch(node: TreeNode, entries: usize) -> impl IntoView {
    let cut = ListParts::new(entries, ENTRIES_PER_PART);
    let parts = FrameParts::new(cut);
    // A list per part: the browser skips laying out the parts off screen.
    let list = parts.view(Arc::new(move |k| {
        let part = node.entries(cut.range(k));
        view! { <ul class="tree">{part.into_iter().map(entry).collect_view()}</ul> }.into_any()
    }));
    view! {
        <div class="tree-parts">{list}</div>
        {parts.show_more("entries")}
    }
}

fn entry(TreeEntry { label, node }: TreeEntry) -> AnyView {
    match node.shape() {
        NodeShape::Branch { entries } => {
            let open = entries <= OPEN_AT_ONCE;
            // A closed branch is built when first opened, then kept.
            let opened = RwSignal::new(open);
            let on_toggle = move |ev: leptos::ev::Event| {
                if event_target::<web_sys::HtmlDetailsElement>(&ev).open() {
                    opened.set(true);
                }
            };
            view! {
                <li><details open=open on:toggle=on_toggle>
                    <summary class="key">{label}</summary>
                    {move || opened.get().then(|| node_view(node.clone()))}
                </details></li>
            }
            .into_any()
        }
        _ => view! { <li><span class="key">{label}</span>": "{node_view(node)}</li> }.into_any(),
    }
}
