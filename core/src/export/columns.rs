//! The columns each export can hold, the default choice, and the user's
//! choice as it is remembered (a comma list of column ids).

use super::ExportKind;

/// One column of an export: `id` is stable (it is what a remembered choice
/// holds), `header` is what the CSV's first line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Column {
    pub id: &'static str,
    pub header: &'static str,
}

const fn col(id: &'static str, header: &'static str) -> Column {
    Column { id, header }
}

/// Column ids, one spelling for the row builders and the lists below.
pub mod id {
    pub const TIME: &str = "time";
    pub const START_TIME: &str = "start_time";
    pub const JID: &str = "jid";
    pub const MINION: &str = "minion";
    pub const FUNCTION: &str = "function";
    pub const ARGUMENTS: &str = "arguments";
    pub const TARGET: &str = "target";
    pub const TARGET_TYPE: &str = "target_type";
    pub const USER: &str = "user";
    pub const RETURNED: &str = "minions_returned";
    pub const FAILED: &str = "minions_failed";
    pub const MISSING: &str = "minions_missing";
    pub const TARGETED: &str = "minions_targeted";
    pub const FIRST_RETURN: &str = "first_return";
    pub const LAST_RETURN: &str = "last_return";
    pub const STATES_SUCCEEDED: &str = "states_succeeded";
    pub const STATES_CHANGED: &str = "states_changed";
    pub const STATES_FAILED: &str = "states_failed";
    pub const STATES_TOTAL: &str = "states_total";
    pub const SUCCESS: &str = "success";
    pub const RETCODE: &str = "retcode";
    pub const INDEX: &str = "index";
    pub const OUTPUT: &str = "output";
    pub const RUN_ORDER: &str = "run_order";
    pub const STATE_ID: &str = "state_id";
    pub const STATE_FUNCTION: &str = "state_function";
    pub const NAME: &str = "name";
    pub const SLS: &str = "sls";
    pub const RESULT: &str = "result";
    pub const CHANGED: &str = "changed";
    pub const COMMENT: &str = "comment";
    pub const DURATION_MS: &str = "duration_ms";
    pub const STATE_START: &str = "state_start_time";
    pub const STATE_RAN: &str = "state_ran";
    pub const DIFF: &str = "diff";
    pub const CHANGES: &str = "changes";
    pub const KIND: &str = "kind";
    pub const SOURCE: &str = "source";
    pub const RISKS: &str = "risks";
    pub const TAG: &str = "tag";
    pub const FAMILY: &str = "family";
    pub const DATA: &str = "data";
}

use id::*;

/// Every column of the jobs export; the first `JOB_DEFAULT` are the
/// default choice.
pub const JOB_COLUMNS: &[Column] = &[
    col(START_TIME, "Start time (UTC)"),
    col(JID, "JID"),
    col(FUNCTION, "Function"),
    col(ARGUMENTS, "Arguments"),
    col(TARGET, "Target"),
    col(TARGET_TYPE, "Target type"),
    col(USER, "User"),
    col(RETURNED, "Minions returned"),
    col(FAILED, "Minions failed"),
    col(STATES_SUCCEEDED, "States succeeded"),
    col(STATES_CHANGED, "States changed"),
    col(STATES_FAILED, "States failed"),
    // Not in the default choice:
    col(MISSING, "Minions missing"),
    col(TARGETED, "Minions targeted"),
    col(FIRST_RETURN, "First return (UTC)"),
    col(LAST_RETURN, "Last return (UTC)"),
];
const JOB_DEFAULT: usize = 12;

pub const RETURN_COLUMNS: &[Column] = &[
    col(TIME, "Time (UTC)"),
    col(JID, "JID"),
    col(MINION, "Minion"),
    col(FUNCTION, "Function"),
    col(SUCCESS, "Success"),
    col(RETCODE, "Retcode"),
    col(STATES_SUCCEEDED, "States succeeded"),
    col(STATES_CHANGED, "States changed"),
    col(STATES_FAILED, "States failed"),
    // Not in the default choice:
    col(STATES_TOTAL, "States total"),
    col(INDEX, "Index"),
    col(OUTPUT, "Output"),
];
const RETURN_DEFAULT: usize = 9;

pub const STATE_COLUMNS: &[Column] = &[
    col(TIME, "Time (UTC)"),
    col(JID, "JID"),
    col(MINION, "Minion"),
    col(FUNCTION, "Function"),
    col(USER, "User"),
    col(RUN_ORDER, "Run order"),
    col(STATE_ID, "State ID"),
    col(STATE_FUNCTION, "State function"),
    col(NAME, "Name"),
    col(SLS, "SLS"),
    col(RESULT, "Result"),
    col(CHANGED, "Changed"),
    col(COMMENT, "Comment"),
    col(DURATION_MS, "Duration (ms)"),
    // Not in the default choice:
    col(STATE_START, "State start (minion local time)"),
    col(STATE_RAN, "State ran"),
    col(DIFF, "Diff"),
    col(CHANGES, "Changes (JSON)"),
];
const STATE_DEFAULT: usize = 14;

pub const AUDIT_COLUMNS: &[Column] = &[
    col(TIME, "Time (UTC)"),
    col(JID, "JID"),
    col(KIND, "Kind"),
    col(USER, "User"),
    col(FUNCTION, "Function"),
    col(ARGUMENTS, "Arguments"),
    col(TARGET, "Target"),
    col(TARGET_TYPE, "Target type"),
    col(TARGETED, "Minions targeted"),
    col(RISKS, "Risks"),
    // Not in the default choice:
    col(SOURCE, "Source"),
];
const AUDIT_DEFAULT: usize = 10;

pub const EVENT_COLUMNS: &[Column] = &[
    col(TIME, "Time (UTC)"),
    col(TAG, "Tag"),
    col(MINION, "Minion"),
    col(JID, "JID"),
    col(FAILED, "Failed return"),
    col(DATA, "Data (JSON)"),
    // Not in the default choice:
    col(FAMILY, "Family"),
    col(INDEX, "Index"),
];
const EVENT_DEFAULT: usize = 6;

impl ExportKind {
    /// Every column this kind can hold, defaults first.
    pub fn columns(self) -> &'static [Column] {
        match self {
            ExportKind::Jobs => JOB_COLUMNS,
            ExportKind::Returns => RETURN_COLUMNS,
            ExportKind::States => STATE_COLUMNS,
            ExportKind::Audit => AUDIT_COLUMNS,
            ExportKind::Events => EVENT_COLUMNS,
        }
    }

    pub fn default_columns(self) -> Vec<Column> {
        let n = match self {
            ExportKind::Jobs => JOB_DEFAULT,
            ExportKind::Returns => RETURN_DEFAULT,
            ExportKind::States => STATE_DEFAULT,
            ExportKind::Audit => AUDIT_DEFAULT,
            ExportKind::Events => EVENT_DEFAULT,
        };
        self.columns()[..n].to_vec()
    }

    pub fn column(self, id: &str) -> Option<Column> {
        self.columns().iter().copied().find(|c| c.id == id)
    }
}

/// A user's column choice, read from a comma list of ids.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnChoice {
    /// In the order given, each once. Never empty: with no known id the
    /// default choice is used.
    pub columns: Vec<Column>,
    /// Ids that are not columns of this kind, as given (to tell the user;
    /// a remembered choice from an older version must not break the export).
    pub unknown: Vec<String>,
}

impl ColumnChoice {
    pub fn parse(kind: ExportKind, text: &str) -> ColumnChoice {
        let mut columns: Vec<Column> = Vec::new();
        let mut unknown = Vec::new();
        for part in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            match kind.column(part) {
                Some(c) if !columns.contains(&c) => columns.push(c),
                Some(_) => {}
                None => unknown.push(part.to_string()),
            }
        }
        if columns.is_empty() {
            columns = kind.default_columns();
        }
        ColumnChoice { columns, unknown }
    }

    /// The choice as it is remembered (`time,jid,minion`).
    pub fn to_param(&self) -> String {
        ids(&self.columns)
    }
}

pub fn ids(columns: &[Column]) -> String {
    columns.iter().map(|c| c.id).collect::<Vec<_>>().join(",")
}

pub fn headers(columns: &[Column]) -> Vec<&'static str> {
    columns.iter().map(|c| c.header).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn every_kind_has_unique_ids_and_the_asked_for_defaults() {
        for kind in ExportKind::ALL {
            let ids: HashSet<&str> = kind.columns().iter().map(|c| c.id).collect();
            assert_eq!(ids.len(), kind.columns().len(), "{kind:?}");
        }
        assert_eq!(
            super::ids(&ExportKind::Jobs.default_columns()),
            "start_time,jid,function,arguments,target,target_type,user,minions_returned,minions_failed,states_succeeded,states_changed,states_failed"
        );
        assert_eq!(
            super::ids(&ExportKind::Returns.default_columns()),
            "time,jid,minion,function,success,retcode,states_succeeded,states_changed,states_failed"
        );
        assert_eq!(
            super::ids(&ExportKind::States.default_columns()),
            "time,jid,minion,function,user,run_order,state_id,state_function,name,sls,result,changed,comment,duration_ms"
        );
        assert_eq!(ExportKind::Audit.default_columns()[0].id, "time");
    }

    #[test]
    fn a_choice_keeps_its_order_drops_repeats_and_reports_unknown_ids() {
        let c = ColumnChoice::parse(
            ExportKind::States,
            " comment, jid,nonsense,jid ,, diff,Minion",
        );
        assert_eq!(c.to_param(), "comment,jid,diff");
        assert_eq!(c.unknown, ["nonsense", "Minion"]);
        assert_eq!(c.columns[0].header, "Comment");
        let again = ColumnChoice::parse(ExportKind::States, &c.to_param());
        assert_eq!(again.columns, c.columns);
        assert!(again.unknown.is_empty());
    }

    #[test]
    fn an_empty_or_unknown_choice_falls_back_to_the_defaults() {
        assert_eq!(
            ColumnChoice::parse(ExportKind::Returns, "").columns,
            ExportKind::Returns.default_columns()
        );
        let c = ColumnChoice::parse(ExportKind::Audit, "comment");
        assert_eq!(c.columns, ExportKind::Audit.default_columns());
        assert_eq!(c.unknown, ["comment"], "comment is a states column");
    }
}
