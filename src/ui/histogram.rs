//! Returns over time as stacked SVG bars; hover shows a bucket's counts,
//! click or drag zooms the time range (the URL's `time`).

use leptos::prelude::*;
use saltscope_core::query::histogram::Histogram;
use saltscope_core::text::fixed;
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
    let hover = RwSignal::new(None::<String>);
    // offsetX is in CSS pixels; the viewBox is WIDTH wide.
    let to_chart = |ev: &web_sys::MouseEvent| -> f64 {
        let width = ev
            .current_target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .map(|e| e.client_width() as f64)
            .unwrap_or(WIDTH)
            .max(1.0);
        ev.offset_x() as f64 / width * WIDTH
    };
    let bars = h.with_value(|h| h.layout(WIDTH, HEIGHT));
    let total = h.with_value(Histogram::total);
    let (from, to) = h.with_value(|h| (h.from_ms, h.to_ms));
    view! {
        <figure class="histogram" aria-label="Returns over time">
            <svg viewBox=format!("0 0 {} {}", at(WIDTH), at(HEIGHT + 2.0)) preserveAspectRatio="none" role="img"
                aria-label=format!("{total} returns from {} to {}", iso_millis(from), iso_millis(to))
                on:mousedown=move |ev| { let x = to_chart(&ev); drag_start.set(Some(x)); drag_now.set(Some(x)); }
                on:mousemove=move |ev| {
                    let x = to_chart(&ev);
                    if drag_start.get_untracked().is_some() { drag_now.set(Some(x)); }
                    hover.set(h.with_value(|h| h.bucket_at(x, WIDTH).map(|b| format!(
                        "{}: {} succeeded, {} failed{}", utc_millis(b.start_ms), b.succeeded, b.failed,
                        if b.runner > 0 { format!(", {} runner", b.runner) } else { String::new() }))));
                }
                on:mouseleave=move |_| { hover.set(None); drag_start.set(None); drag_now.set(None); }
                on:mouseup=move |ev| {
                    let x = to_chart(&ev);
                    if let Some(x0) = drag_start.get_untracked() {
                        drag_start.set(None);
                        drag_now.set(None);
                        on_zoom.run(h.with_value(|h| h.zoom_range(x0, x, WIDTH)));
                    }
                }>
                {bars.into_iter().map(|b| {
                    let base = HEIGHT + 1.0;
                    let title = format!("{}: {} succeeded, {} failed, {} runner",
                        utc_millis(b.bucket.start_ms), b.bucket.succeeded, b.bucket.failed, b.bucket.runner);
                    view! {
                        <g class="bar" data-start=b.bucket.start_ms.to_string()>
                            <title>{title}</title>
                            <rect class="bar-succeeded" x=at(b.x) y=at(base - b.succeeded_h) width=at(b.width) height=at(b.succeeded_h)/>
                            <rect class="bar-failed" x=at(b.x) y=at(base - b.succeeded_h - b.failed_h) width=at(b.width) height=at(b.failed_h)/>
                            <rect class="bar-runner" x=at(b.x) y=at(base - b.succeeded_h - b.failed_h - b.runner_h) width=at(b.width) height=at(b.runner_h)/>
                        </g>
                    }
                }).collect_view()}
                {move || match (drag_start.get(), drag_now.get()) {
                    (Some(a), Some(b)) if (a - b).abs() > 1.0 => Some(view! {
                        <rect class="zoom-selection" x=at(a.min(b)) y="0" width=at((a - b).abs()) height=at(HEIGHT + 2.0)/>
                    }),
                    _ => None,
                }}
            </svg>
            <figcaption>
                <span class="axis">{utc_millis(from)}</span>
                <span class="hover" role="status" aria-live="polite">{move || hover.get().unwrap_or_else(|| "Drag or click to zoom".into())}</span>
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
