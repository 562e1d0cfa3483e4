//! saltscope-gen: synthetic Salt job returns, shaped exactly like the documents
//! Salt's elasticsearch returner writes (see shared/returner-contract.md and
//! tests/fixtures/), for loading a real engine with up to millions of returns.

pub mod big;
pub mod cli;
pub mod gen;
pub mod http;
pub mod json;
pub mod load;
pub mod mappings;
pub mod marker;
pub mod states;
