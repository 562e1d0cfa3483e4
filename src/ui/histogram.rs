//! Returns over time as stacked SVG bars (a path a band); hover shows a bucket's counts,
//! click or drag zooms the time range (the URL's `time`).

use leptos::prelude::*;
use saltscope_core::query::histogram::{Histogram, HistogramBucket};
use saltscope_core::text::{counted, fixed};
use saltscope_core::time::{iso_millis, utc_millis};

const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 90.0;

#[component]
pub fn HistogramChart(
    histogram: Histogram,
    /// Called with the zoomed range (epoch ms).
    on_zoom: Callback<(i64, i64)>,
) -> impl IntoView {
    let h = StoredValue::new(histogram);
    let drag_start = RwSignal::new(None::<f64>);
    let drag_now = RwSignal::new(None::<f64>);
    let hover = RwSignal::new(None::<HistogramBucket>);
    // offsetX is in CSS pixels; the viewBox is WIDTH wide. A drag holds the
    // pointer (pointer capture: the mouse events keep coming to the chart,
    // and no mouseleave till it ends), so it may end past either edge.
    let to_chart = |ev: &web_sys::MouseEvent| -> f64 {
        let width = ev
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .map(|e| e.client_width() as f64)
            .unwrap_or(WIDTH)
            .max(1.0);
        (ev.offset_x() as f64 / width * WIDTH).clamp(0.0, WIDTH)
    };
    let [succeeded, failed, runner] = h.with_value(|h| h.band_paths(WIDTH, HEIGHT, HEIGHT + 1.0));
    let total = h.with_value(Histogram::total);
    let (from, to) = h.with_value(|h| (h.from_ms, h.to_ms));
    view! {
        <figure class="histogram" aria-label="Returns over time">
            <svg viewBox=format!("0 0 {} {}", at(WIDTH), at(HEIGHT + 2.0)) preserveAspectRatio="none" role="img"
                aria-label=format!("{} from {} to {}", counted(total, "return"), iso_millis(from), iso_millis(to))
                on:pointerdown=move |ev| {
                    // The main button only: a right click opens the menu, not a zoom.
                    if ev.button() != 0 { return; }
                    let x = to_chart(&ev);
                    drag_start.set(Some(x));
                    drag_now.set(Some(x));
                    if let Some(svg) = ev.current_target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok()) {
                        let _ = svg.set_pointer_capture(ev.pointer_id());
                    }
                }
                on:mousemove=move |ev| {
                    let x = to_chart(&ev);
                    if drag_start.get_untracked().is_some() { drag_now.set(Some(x)); }
                    let under = h.with_value(|h| h.bucket_at(x, WIDTH).cloned());
                    if hover.get_untracked() != under { hover.set(under); }
                }
                on:mouseleave=move |_| { hover.set(None); drag_start.set(None); drag_now.set(None); }
                on:mouseup=move |ev| {
                    if ev.button() != 0 { return; }
                    let x = to_chart(&ev);
                    if let Some(x0) = drag_start.get_untracked() {
                        drag_start.set(None);
                        drag_now.set(None);
                        on_zoom.run(h.with_value(|h| h.zoom_range(x0, x, WIDTH)));
                    }
                }>
                <path class="bar-succeeded" d=succeeded/>
                <path class="bar-failed" d=failed/>
                <path class="bar-runner" d=runner/>
                {move || hover.get().map(|b| {
                    let (x, w) = h.with_value(|h| h.bar_span(&b, WIDTH));
                    view! { <rect class="bar-hover" x=at(x) y="0" width=at(w) height=at(HEIGHT + 2.0)/> }
                })}
                {move || match (drag_start.get(), drag_now.get()) {
                    (Some(a), Some(b)) if (a - b).abs() > 1.0 => Some(view! {
                        <rect class="zoom-selection" x=at(a.min(b)) y="0" width=at((a - b).abs()) height=at(HEIGHT + 2.0)/>
                    }),
                    _ => None,
                }}
            </svg>
            <figcaption>
                <span class="axis">{utc_millis(from)}</span>
                <span class="hover" role="status" aria-live="polite">{move || hover.get().map(|b| format!("{}: {} succeeded, {} failed{}", utc_millis(b.start_ms), b.succeeded, b.failed,
                    if b.runner > 0 { format!(", {} runner", b.runner) } else { String::new() })).unwrap_or_else(|| "Drag or click to zoom".into())}</span>
                <span class="axis">{utc_millis(to)}</span>
            </figcaption>
        </figure>
    }
}

/// A coordinate of the chart as an attribute: a hundredth of a unit of its
/// 1000-wide view box is finer than any screen shows.
fn at(v: f64) -> String {
    fixed(v, 2)
}
