//! The documents Salt's `elasticsearch` returner writes, read leniently:
//! whatever is missing or oddly shaped becomes a visible note, never a panic
//! and never a dropped document.

mod diff;
mod event;
mod fleet_status;
pub mod output;
mod publish;
mod return_doc;
mod run_summary;
mod state;
mod state_table;
mod summary;
mod tally;
mod value_tree;

pub use diff::{diff_line_kind, DiffLine, DiffRun, DiffRuns};
pub use event::{family_of, EventDoc, EVENT_FAMILIES, MINION_TAGS};
pub use fleet_status::FleetStatus;
pub use publish::{short_target, with_target_type, PublishInfo, PublishSource};
pub use return_doc::{Outcome, ReturnData, ReturnDoc, ReturnFields};
pub use run_summary::{
    RunSummary, SUMMARY_FIELD, SUMMARY_PIPELINE, SUMMARY_VERSION, SUMMARY_VERSION_FIELD,
};
pub use state::{decode_state_key, StateIdentity, StateKey, StateResult, StateReturn, StateRun};
pub use state_table::{StateLine, StateTableLines};
pub use summary::HighstateSummary;
pub use tally::StateTally;
pub use value_tree::{NodeShape, TreeEntry, TreeNode, ENTRIES_PER_PART, OPEN_AT_ONCE};

/// Functions whose return is an object of state results. `state.single` is
/// not one of the returner's state functions (never ordered or counted) but
/// its `data` is state-shaped all the same.
pub fn is_state_function(fun: &str) -> bool {
    matches!(
        fun,
        "state.apply"
            | "state.sls"
            | "state.highstate"
            | "state.single"
            | "state.sls_id"
            | "state.top"
            | "state.template"
            | "state.template_str"
            | "state.low"
            | "state.high"
            | "state.orchestrate"
    )
}
