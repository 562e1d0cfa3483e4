//! Dates and times, all UTC, over `chrono`: reading the times people and
//! links give, printing epoch milliseconds for people and for ISO 8601, and
//! the formats Salt itself writes (`isoformat()`, jids, a state's
//! `start_time`), which the generator shares.
//!
//! chrono does the calendar: which dates and times exist, the offsets, the
//! epoch arithmetic. Two things stay here on purpose. Printing is `format!`
//! over chrono's accessors, because chrono's strftime machinery
//! (`format()`, `to_rfc3339()`) costs about 22 KB of gzipped wasm. And the
//! lexical scan of an input is ours, because no single chrono parser takes
//! the forms the app accepts (RFC 3339, a date-time input's value without
//! seconds or zone, a bare date) or says which field is wrong.

mod parse;
mod print;

pub use parse::{parse_end, parse_utc, DateError, DateProblem};
pub use print::{
    iso_millis, iso_utc, jid, jid_start_ms, jid_start_time, time_of_day, utc_clock, utc_millis,
    utc_timestamp,
};
