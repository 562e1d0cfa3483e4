use super::state::{StateResult, StateRun};

/// The totals Salt's highstate outputter prints under a minion's states.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HighstateSummary {
    /// Results True or None.
    pub succeeded: u64,
    /// Results None (test mode): Salt shows them as `unchanged=`.
    pub unchanged: u64,
    /// States with non-empty changes, failed ones included.
    pub changed: u64,
    pub failed: u64,
    pub total: u64,
    pub total_ms: f64,
}

impl HighstateSummary {
    pub fn of(runs: &[StateRun]) -> HighstateSummary {
        let mut s = HighstateSummary::default();
        for run in runs {
            s.count(run.result, run.changed(), run.duration_ms);
        }
        s
    }

    /// Counts one more state as Salt's outputter does.
    pub fn count(&mut self, result: StateResult, changed: bool, duration_ms: Option<f64>) {
        self.total += 1;
        match result {
            StateResult::True => self.succeeded += 1,
            StateResult::None => {
                self.succeeded += 1;
                self.unchanged += 1;
            }
            StateResult::False => self.failed += 1,
        }
        if changed {
            self.changed += 1;
        }
        self.total_ms += duration_ms.unwrap_or(0.0);
    }

    /// Adds another minion's totals (the job's totals across minions).
    pub fn add(&mut self, other: &HighstateSummary) {
        self.succeeded += other.succeeded;
        self.unchanged += other.unchanged;
        self.changed += other.changed;
        self.failed += other.failed;
        self.total += other.total;
        self.total_ms += other.total_ms;
    }

    /// `Succeeded: 5 (unchanged=2, changed=3)` as Salt prints it.
    pub fn succeeded_line(&self) -> String {
        let mut stats = Vec::new();
        if self.unchanged > 0 {
            stats.push(format!("unchanged={}", self.unchanged));
        }
        if self.changed > 0 {
            stats.push(format!("changed={}", self.changed));
        }
        if stats.is_empty() {
            format!("Succeeded: {}", self.succeeded)
        } else {
            format!("Succeeded: {} ({})", self.succeeded, stats.join(", "))
        }
    }

    pub fn lines(&self) -> [String; 4] {
        [
            self.succeeded_line(),
            format!("Failed: {}", self.failed),
            format!("Total states run: {}", self.total),
            format!(
                "Total run time: {}",
                crate::text::salt_duration(self.total_ms)
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateReturn;
    use serde_json::json;

    fn runs(data: serde_json::Value) -> Vec<StateRun> {
        StateReturn::read(data.as_object().unwrap()).unwrap().runs
    }

    #[test]
    fn summary_counts_as_the_highstate_outputter_does() {
        let s = HighstateSummary::of(&runs(json!({
            "a_|-1_|-1_|-x": {"result": true, "changes": {}, "duration": 1.5, "__run_num__": 0},
            "a_|-2_|-2_|-x": {"result": true, "changes": {"diff": "New file"}, "duration": 2.0, "__run_num__": 1},
            "a_|-3_|-3_|-x": {"result": false, "changes": {"retcode": 2}, "duration": 0.5, "__run_num__": 2},
            "a_|-4_|-4_|-x": {"result": false, "changes": {}, "__run_num__": 3}
        })));
        assert_eq!(
            s.lines(),
            [
                "Succeeded: 2 (changed=2)".to_string(),
                "Failed: 2".to_string(),
                "Total states run: 4".to_string(),
                "Total run time: 4.000 ms".to_string(),
            ]
        );
    }

    #[test]
    fn test_mode_shows_unchanged_for_none_results() {
        let s = HighstateSummary::of(&runs(json!({
            "a_|-1_|-1_|-x": {"result": null, "changes": {"diff": "x"}, "duration": 1000.0, "__run_num__": 0},
            "a_|-2_|-2_|-x": {"result": null, "changes": {}, "duration": 500.0, "__run_num__": 1},
            "a_|-3_|-3_|-x": {"result": true, "changes": {}, "__run_num__": 2}
        })));
        assert_eq!(s.succeeded_line(), "Succeeded: 3 (unchanged=2, changed=1)");
        assert_eq!(s.lines()[3], "Total run time: 1.500 s");
    }

    #[test]
    fn no_changes_prints_a_bare_succeeded_line() {
        let s = HighstateSummary::of(&runs(
            json!({"a_|-1_|-1_|-x": {"result": true, "changes": {}}}),
        ));
        assert_eq!(s.succeeded_line(), "Succeeded: 1");
    }
}
