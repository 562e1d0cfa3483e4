//! Talking to Elasticsearch or OpenSearch: the one [`Transport`] every
//! request goes through, the requests themselves, `_msearch` bundles, point
//! in time per product, what the engine says about itself, and how its
//! errors read.

mod client;
mod error;
pub(crate) mod lenient;
mod msearch;
#[cfg(feature = "native")]
pub mod native;
mod pit;
mod product;
mod request;
mod transport;

pub use client::{
    Client, ClientEvent, ClientSettings, Credentials, Exchange, ExchangeError, Exchanged,
};
pub use error::EngineError;
#[cfg(test)]
pub(crate) use error::FETCH_FROM_A_NODE_GONE;
pub use msearch::{
    msearch, msearch_request, read_msearch, SearchAnswer, SearchBundle, SearchRequest,
};
pub use pit::{pit_expired, pit_lost, pit_unavailable, PitApi};
pub use product::{Product, ProductInfo};
pub use request::{encode_component, Body, HttpRequest, Method, NextPage, LAST_SORT};
pub use transport::{reply, send_json, Answer, Reply, Transport};
