//! Property tests of the core's readers: whatever the engine hands back —
//! arbitrary bytes, arbitrary JSON, returner-shaped documents with odd types
//! in every field, huge strings, control characters, deep nesting — every
//! reader answers (a value with notes, or an error) and never panics, and
//! the readers that should agree do.
//!
//! Case counts keep `cargo test -p saltscope-core` fast on two cores: 256
//! for cheap readers, 128 for the export plan, 64 for documents nested
//! hundreds of levels deep, 6 for 100 KB strings. Most of the time goes to
//! proptest itself, which the workspace builds optimised even in debug.
//! Generators are boxed: unboxed, their value trees took up to 100 KB of
//! stack per frame in a debug build and overflowed the test threads.

mod dates;
mod export;
mod gen;
mod job;
mod msearch;
mod publish;
mod returns;
mod rows;
mod states;
