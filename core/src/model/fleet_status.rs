//! A minion's standing from its latest state run, as Puppetboard classifies
//! Puppet nodes: one rule ([`FleetStatus::of_run`]) for the fleet view,
//! whether it read the summary pipeline's fields or the documents.

use super::HighstateSummary;

/// A minion's standing, worst first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FleetStatus {
    /// A state failed (result False), or the run itself failed (a render
    /// error: `data` is a list of messages, `retcode` not 0).
    Failed,
    /// No state run within `unreported_hours`, or none at all.
    Unreported,
    /// A state ran in test mode (result None): what would change.
    TestMode,
    /// Every state succeeded and at least one changed something.
    Changed,
    /// Every state succeeded and nothing changed: in its state.
    Unchanged,
}

impl FleetStatus {
    pub const ALL: [FleetStatus; 5] = [
        FleetStatus::Failed,
        FleetStatus::Unreported,
        FleetStatus::TestMode,
        FleetStatus::Changed,
        FleetStatus::Unchanged,
    ];

    pub fn id(self) -> &'static str {
        match self {
            FleetStatus::Failed => "failed",
            FleetStatus::Unreported => "unreported",
            FleetStatus::TestMode => "test",
            FleetStatus::Changed => "changed",
            FleetStatus::Unchanged => "unchanged",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            FleetStatus::Failed => "Failed",
            FleetStatus::Unreported => "Unreported",
            FleetStatus::TestMode => "Test mode",
            FleetStatus::Changed => "Changed",
            FleetStatus::Unchanged => "Unchanged",
        }
    }

    pub fn parse(id: &str) -> Option<FleetStatus> {
        FleetStatus::ALL.into_iter().find(|s| s.id() == id)
    }

    /// The class of one state run, from its totals and the return's own
    /// verdict. One rule for every path that computes it.
    pub fn of_run(summary: &HighstateSummary, run_failed: bool) -> FleetStatus {
        if summary.failed > 0 || run_failed {
            FleetStatus::Failed
        } else if summary.unchanged > 0 {
            FleetStatus::TestMode
        } else if summary.changed > 0 {
            FleetStatus::Changed
        } else {
            FleetStatus::Unchanged
        }
    }
}
