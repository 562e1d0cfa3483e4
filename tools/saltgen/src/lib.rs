//! saltscope-gen: synthetic Salt job returns, shaped exactly like the documents
//! Salt's elasticsearch returner writes (see shared/returner-contract.md and
//! tests/fixtures/), for loading a real engine with up to millions of returns.

pub mod gen;
pub mod json;
pub mod states;
pub mod time;
