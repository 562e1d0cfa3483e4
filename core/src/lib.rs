//! The DOM-free heart of Saltscope.
//!
//! Everything here runs on the host under `cargo test`: the documents Salt's
//! `elasticsearch` returner writes ([`model`]), the requests each view sends
//! and the parsing of their answers ([`query`]), what the engine answered
//! about itself and how its errors read ([`engine`]), the CSV export's rows,
//! encoding and paging plan ([`export`]), the operator's `config.json`
//! ([`config`]), and dates over chrono ([`time`], shared with the
//! generator). Nothing here may import leptos, web-sys or
//! gloo: the web app at the repository root is the only place that does.

pub mod config;
pub mod engine;
pub mod export;
pub mod json;
pub mod model;
pub mod parts;
pub mod query;
pub mod route;
pub mod sort;
pub mod text;
pub mod time;
pub mod views;
