//! What the app needs to know about the engine that answers it: which
//! product and version it is, how its errors read, and the `_msearch` wire
//! format. The HTTP itself lives in the web app (gloo-net) and in the
//! native integration tests (ureq); both go through these functions.

mod error;
mod msearch;
mod product;

pub use error::EngineError;
pub use msearch::{msearch_body, split_msearch, SearchRequest};
pub use product::{Product, ProductInfo};
