//! The address bar as signals. Links (a click on a same-origin `<a href>`),
//! the views ([`use_navigate`]) and the browser's back and forward change
//! it; the core's route table (`Page`) and the views' `from_query` read it.
//! This is the app's only binding to the History API: leptos_router's
//! `Router` did the same through its generic location and navigation
//! layers, for routes the app never gave it; without it the wasm is 12 KB
//! (gzip) smaller.

use leptos::ev;
use leptos::prelude::*;
use saltscope_core::route::QueryMap;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use web_sys::{HtmlAnchorElement, MouseEvent};

/// Where the app is: the path (percent-encoded, as the browser has it)
/// and the query, read.
#[derive(Clone, Copy)]
pub struct Location {
    address: RwSignal<Address>,
    pub pathname: Memo<String>,
    pub query: Memo<QueryMap>,
    /// What leaving this view would lose (see [`warn_before_leaving`]).
    leave_warning: RwSignal<Option<&'static str>>,
}

#[derive(Clone, Debug, PartialEq)]
struct Address {
    path: String,
    search: String,
}

impl Address {
    fn current() -> Address {
        let location = window().location();
        Address {
            path: location.pathname().unwrap_or_default(),
            search: location.search().unwrap_or_default(),
        }
    }
}

/// How a view moves the address: `replace` the history entry instead of
/// adding one; `scroll` to the top (or to the `#id` the address names).
#[derive(Clone, Copy, Debug)]
pub struct NavigateOptions {
    pub replace: bool,
    pub scroll: bool,
}

impl Default for NavigateOptions {
    fn default() -> Self {
        NavigateOptions {
            replace: false,
            scroll: true,
        }
    }
}

/// Reads the address, follows back and forward, and takes over the clicks
/// on the app's own links, for the whole app.
pub fn provide_location() {
    let address = RwSignal::new(Address::current());
    let location = Location {
        address,
        pathname: Memo::new(move |_| address.with(|a| a.path.clone())),
        query: Memo::new(move |_| address.with(|a| QueryMap::parse(&a.search))),
        leave_warning: RwSignal::new(None),
    };
    provide_context(location);
    let popstate = window_event_listener(ev::popstate, move |_| {
        let to = Address::current();
        if location.may_leave_for(&to.path) {
            address.set(to);
        } else if let Ok(history) = window().history() {
            // Staying: the browser has moved back already; the view's own
            // address goes on top of the history again.
            let here = address.with_untracked(|a| format!("{}{}", a.path, a.search));
            let _ = history.push_state_with_url(&JsValue::NULL, "", Some(&here));
        }
    });
    let click = window_event_listener(ev::click, move |ev| location.follow_link(&ev));
    // A reload, closing the tab, another site: the browser's own question.
    let unload = window_event_listener(ev::beforeunload, move |ev| {
        if location.leave_warning.get_untracked().is_some() {
            ev.prevent_default();
        }
    });
    on_cleanup(move || {
        popstate.remove();
        click.remove();
        unload.remove();
    });
}

/// While `warning` gives a message, leaving the view asks first: a link to
/// another view (a link within it keeps it, and what runs there), a
/// reload, closing the tab, back and forward.
pub fn warn_before_leaving(warning: impl Fn() -> Option<&'static str> + 'static) {
    let slot = use_location().leave_warning;
    Effect::new(move |_| slot.set(warning()));
    on_cleanup(move || {
        slot.try_set(None);
    });
}

pub fn use_location() -> Location {
    expect_context::<Location>()
}

pub fn use_query_map() -> Memo<QueryMap> {
    use_location().query
}

/// Moves the address to `to` (a path, with its query and `#id`).
pub fn use_navigate() -> impl Fn(&str, NavigateOptions) + Clone + 'static {
    let location = use_location();
    move |to, options| location.navigate(to, options)
}

impl Location {
    /// Whether the view may go for `path`: asked when that is another view
    /// and leaving this one would lose something.
    fn may_leave_for(self, path: &str) -> bool {
        let elsewhere = self.address.with_untracked(|a| a.path != path);
        match self.leave_warning.get_untracked().filter(|_| elsewhere) {
            Some(warning) => window().confirm_with_message(warning).unwrap_or(true),
            None => true,
        }
    }

    fn navigate(self, to: &str, options: NavigateOptions) {
        let window = window();
        let Ok(history) = window.history() else {
            return;
        };
        let here = window.location();
        let now = format!(
            "{}{}{}",
            here.pathname().unwrap_or_default(),
            here.search().unwrap_or_default(),
            here.hash().unwrap_or_default()
        );
        let moved = if options.replace || to == now {
            history.replace_state_with_url(&JsValue::NULL, "", Some(to))
        } else {
            history.push_state_with_url(&JsValue::NULL, "", Some(to))
        };
        if moved.is_err() {
            return; // not this origin: the browser never allows it
        }
        self.address.set(Address::current());
        scroll_into_place(options.scroll);
    }

    /// A plain click on a link to this app is a move of the address, not a
    /// page load; any other (a modifier, another button, another origin,
    /// `target`, `download`, `rel=external`) is the browser's.
    fn follow_link(self, ev: &MouseEvent) {
        if ev.default_prevented()
            || ev.button() != 0
            || ev.meta_key()
            || ev.alt_key()
            || ev.ctrl_key()
            || ev.shift_key()
        {
            return;
        }
        let Some(anchor) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|e| e.closest("a").ok().flatten())
            .and_then(|a| a.dyn_into::<HtmlAnchorElement>().ok())
        else {
            return;
        };
        let external = anchor
            .get_attribute("rel")
            .is_some_and(|rel| rel.split_ascii_whitespace().any(|r| r == "external"));
        if !anchor.target().is_empty() || anchor.has_attribute("download") || external {
            return;
        }
        let (Ok(url), Ok(origin)) = (
            web_sys::Url::new(&anchor.href()),
            window().location().origin(),
        ) else {
            return;
        };
        if url.origin() != origin {
            return;
        }
        ev.prevent_default();
        if !self.may_leave_for(&url.pathname()) {
            return;
        }
        let to = format!("{}{}{}", url.pathname(), url.search(), url.hash());
        let options = NavigateOptions {
            replace: false,
            scroll: !anchor.has_attribute("noscroll"),
        };
        self.navigate(&to, options);
    }
}

/// The element id the address's `#id` names, decoded; empty when none.
pub fn named_id() -> String {
    let hash = window().location().hash().unwrap_or_default();
    let id = hash.strip_prefix('#').unwrap_or_default();
    js_sys::decode_uri_component(id)
        .ok()
        .and_then(|d| d.as_string())
        .unwrap_or_else(|| id.to_string())
}

/// To the element the address's `#id` names, if it is drawn; else to the
/// top when `to_top`.
fn scroll_into_place(to_top: bool) {
    let named = named_id();
    let element = (!named.is_empty())
        .then(|| document().get_element_by_id(&named))
        .flatten();
    match element {
        Some(element) => element.scroll_into_view(),
        None if to_top => window().scroll_to_with_x_and_y(0.0, 0.0),
        None => {}
    }
}

/// To the element the address's `#id` names, once a view has drawn it: a
/// link from another view (`/job/<jid>#minion-web01`) moves the address
/// before the job page has its returns.
pub fn scroll_to_named() {
    scroll_into_place(false);
}
