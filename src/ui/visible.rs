//! Rendering on demand: what is far below the screen is drawn (or fetched)
//! when the person scrolls near it, so a job of 10,000 states or 2,000
//! minions opens at once and scrolls smoothly.

use std::sync::Arc;

use leptos::html::Div;
use leptos::prelude::*;
use saltscope_core::model::{short_target, with_target_type};
use saltscope_core::parts::{ListParts, TextParts, TEXT_PART_BYTES};
use saltscope_core::text::{folded_start, human_bytes, short_line, FOLD_BYTES};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{IntersectionObserver, IntersectionObserverEntry, IntersectionObserverInit};

/// Calls `seen` each time the element comes within a screen's height of
/// the viewport, until `seen` answers `false`: a minion's section is drawn
/// once, not anew each time it comes near again.
pub fn when_near(node: NodeRef<Div>, seen: impl Fn() -> bool + 'static) {
    type Watch = Closure<dyn FnMut(js_sys::Array, IntersectionObserver)>;
    let observer = StoredValue::new_local(None::<(IntersectionObserver, Watch)>);
    let seen = std::rc::Rc::new(seen);
    Effect::new(move |_| {
        let Some(element) = node.get() else { return };
        let seen = seen.clone();
        let callback = Watch::new(move |entries: js_sys::Array, me: IntersectionObserver| {
            let near = entries.iter().any(|e| {
                e.dyn_into::<IntersectionObserverEntry>()
                    .is_ok_and(|e| e.is_intersecting())
            });
            if near && !seen() {
                me.disconnect();
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

/// Draws part `i` of a list.
pub type Part = Arc<dyn Fn(usize) -> AnyView + Send + Sync>;

/// A long list drawn in parts, a frame at a time: the person asks for more
/// ([`FrameParts::show_more`], when scrolled near or clicked) and the parts
/// are drawn one per animation frame, so the page answers between them.
/// Each part is built once; the parts above are left alone however many
/// follow.
#[derive(Clone, Copy)]
pub struct FrameParts {
    list: ListParts,
    drawn: RwSignal<usize>,
    wanted: RwSignal<usize>,
}

impl FrameParts {
    /// The list's first parts ([`ListParts::first`]) drawn at once.
    pub fn new(list: ListParts) -> Self {
        let total = list.count();
        let first = list.first();
        let (drawn, wanted) = (RwSignal::new(first), RwSignal::new(first));
        Effect::new(move |_| {
            if drawn.get() < wanted.get().min(total) {
                // Gone with the list if it was dropped meanwhile.
                request_animation_frame(move || {
                    drawn.try_update(|n| *n = (*n + 1).min(wanted.get_untracked()));
                });
            }
        });
        FrameParts {
            list,
            drawn,
            wanted,
        }
    }

    /// Every part, the first at once and the rest a frame each, unasked:
    /// for "show all".
    pub fn every(list: ListParts) -> Self {
        let parts = FrameParts::new(list);
        parts.wanted.set(list.count());
        parts
    }

    /// The parts, drawn by `part`.
    pub fn view(self, part: Part) -> Option<AnyView> {
        let total = self.list.count();
        let drawn = self.drawn;
        let shown = Signal::derive(move || drawn.get().min(total));
        (total > 0).then(|| parts_from(0, shown, part))
    }

    /// "Show 500 more states" under the list while any are left: scrolling
    /// near it or clicking it asks for the next parts.
    pub fn show_more(self, noun: &'static str) -> impl IntoView {
        let list = self.list;
        let next = Memo::new(move |_| list.next_ask(self.wanted.get()));
        let any_left = Memo::new(move |_| next.get() > 0);
        move || {
            any_left.get().then(|| {
                view! {
                    <ShowMore label=Signal::derive(move || format!("Show {} more {noun}", next.get()))
                        more=Callback::new(move |()| self.wanted.update(|w| *w += list.per_ask()))/>
                }
            })
        }
    }
}

/// Parts `i..count`, each built once: part `i + 1` when `count` passes it.
fn parts_from(i: usize, count: Signal<usize>, part: Part) -> AnyView {
    let this = part(i);
    let next = Memo::new(move |_| count.get() > i + 1);
    view! {
        {this}
        {move || next.get().then(|| parts_from(i + 1, count, part.clone()))}
    }
    .into_any()
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
    when_near(node, move || {
        more.run(());
        true
    });
    view! {
        <div class="show-more" node_ref=node>
            <button type="button" on:click=move |_| more.run(())>{label}</button>
        </div>
    }
}

/// Text over 64 KB, folded: its first 64 KB (to a line's end) and a button
/// "show all (5.0 MB)", which draws the rest a part of 256 KB a frame, each
/// part a block of its own, so that the page answers between them and
/// drawing a part lays out only that part (a 50 MB output set at once held
/// the page for 5 s in one frame). [`pre_view`] decides when to fold.
#[component]
fn FoldedText(text: Arc<str>, class: &'static str) -> impl IntoView {
    let parts = Arc::new(TextParts::of(&text, FOLD_BYTES, TEXT_PART_BYTES));
    let whole = RwSignal::new(false);
    let first = text_part(&text, parts.range(0));
    let bytes = text.len();
    // Folded, the text is longer than its first part: one part or more follows.
    let list = ListParts::new(parts.count() - 1, 1);
    let rest = drawn_once_asked(
        whole,
        list,
        Arc::new(move |k| text_part(&text, parts.range(k + 1))),
    );
    view! {
        <pre class=class>{first}{move || (!whole.get()).then_some("…")}{rest}</pre>
        {show_all(bytes, whole)}
    }
}

/// The rest of a folded text (`list` of parts, each drawn by `part`), drawn
/// a part a frame once "show all" sets `whole`.
pub fn drawn_once_asked(whole: RwSignal<bool>, list: ListParts, part: Part) -> impl IntoView {
    move || {
        whole
            .get()
            .then(|| FrameParts::every(list).view(part.clone()))
    }
}

/// A part of a long text: a block in its `<pre>`.
fn text_part(text: &str, bytes: std::ops::Range<usize>) -> AnyView {
    view! { <span class="text-part">{text[bytes].to_string()}</span> }.into_any()
}

/// "show all (5.0 MB)" under folded text of `bytes`, while `whole` is not
/// set; clicking it sets it.
pub fn show_all(bytes: usize, whole: RwSignal<bool>) -> impl IntoView {
    let label = format!("show all ({})", human_bytes(bytes));
    move || {
        (!whole.get()).then(|| {
            let label = label.clone();
            view! { <button type="button" class="show-all" on:click=move |_| whole.set(true)>{label}</button> }
        })
    }
}

/// A line that may be very long (a 2,000-name target, megabytes of
/// arguments): its short line, and the whole of it when opened.
fn abridged(short: Option<String>, whole: String) -> AnyView {
    match short {
        Some(short) => view! {
            <details class="abridged"><summary>{short}</summary><span>{whole}</span></details>
        }
        .into_any(),
        None => whole.into_any(),
    }
}

/// A line that may be very long (a `cmd.run` state named by its inline
/// script): its first 120 characters, the whole when opened.
pub fn line_view(line: &str) -> AnyView {
    abridged(short_line(line), line.to_string())
}

/// Text in a `<pre>` of `class`: folded behind "show all" past 64 KB (an
/// output, a state's comment quoting a tool's whole output), else as it
/// is, without the reactive parts a fold needs.
pub fn pre_view(text: &str, class: &'static str) -> AnyView {
    if folded_start(text).is_some() {
        view! { <FoldedText text=Arc::from(text) class=class/> }.into_any()
    } else {
        view! { <pre class=class>{text.to_string()}</pre> }.into_any()
    }
}

/// A job's arguments as the CLI spells them, abridged when long.
pub fn arguments_view(args: &[String]) -> AnyView {
    line_view(&args.join(" "))
}

/// A job's target and its type, abridged when long: "web0000,web0001,web0002
/// … and 1997 more (list)", every name when opened.
pub fn target_view(target: Option<&str>, target_type: Option<&str>) -> AnyView {
    let Some(target) = target else {
        return "".into_any();
    };
    match short_target(target, target_type) {
        Some(short) => abridged(
            Some(with_target_type(&short, target_type)),
            target.to_string(),
        ),
        None => with_target_type(target, target_type).into_any(),
    }
}
