//! The big job shapes: a state return holding N states (`--states-per-return`,
//! [`states`]) and texts and lists of N bytes (`--output-bytes`, [`text`]).

mod states;
mod text;

pub use crate::mappings::big_state_index_body;
pub use states::{long_comment, script_state, write_states, StateRun, BIG_SLS};
pub use text::{command_output, dpkg_failure, found_paths, long_diff};
