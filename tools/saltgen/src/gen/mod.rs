//! Job planning and document generation. Pure: no I/O, reproducible from the seed.
//!
//! [`Plan::new`] draws the fleet and the jobs from the seed ([`plan`],
//! [`special`]); [`Plan::job_docs_to`] and [`Plan::special_docs_to`] make
//! each job's documents one at a time ([`docs`], [`state_run`]).

mod config;
mod docs;
mod events;
mod fleet;
mod funs;
mod noise;
mod plan;
mod rng;
mod special;
mod state_run;

pub use config::Config;
pub use docs::Doc;
pub use fleet::{Fleet, Minion};
pub use funs::{
    event_index, job_cache_index, return_index, Fun, COMMANDS, FUNS, SPECIAL_FUNS, USERS,
};
pub use noise::{asctime, legacy_start, pub_key, Episode, EpisodeKind, Group};
pub use plan::{Job, Plan};
pub use rng::Rng;
pub(crate) use rng::{mix, ms};
pub use special::{special_start_us, Special, BIG_FIND_ROOT, BIG_OUTPUT_COMMAND};
