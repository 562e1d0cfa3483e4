//! The lines of the job page's table of one return's states, as the view
//! asks (`state_verbose`, grouping by SLS), cut in chunks: a return of
//! 10,000 states opens with its first chunk, and each chunk is drawn once,
//! when the person scrolls near it, without redrawing the ones above.

use std::ops::Range;

use super::output::{group_by_sls, is_problem_or_change};
use super::state::StateRun;
use crate::parts::ListParts;
use crate::route::StateView;

/// One line of the table: an SLS heading, or a state (its index in the
/// return's runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StateLine {
    /// The SLS the states under it came from; "" for states without `__sls__`.
    Sls(String),
    State(usize),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateTableLines {
    lines: Vec<StateLine>,
    /// Where each chunk starts in `lines`.
    starts: Vec<usize>,
    states: usize,
    per_chunk: usize,
}

impl StateTableLines {
    /// `runs` in run order, as `view` shows them, `per_chunk` states to a
    /// chunk. An SLS heading goes with the chunk of the state under it, so
    /// no chunk ends on a heading.
    pub fn of(runs: &[StateRun], view: StateView, per_chunk: usize) -> StateTableLines {
        let per_chunk = per_chunk.max(1);
        let shown =
            (0..runs.len()).filter(|&at| !view.problems_only || is_problem_or_change(&runs[at]));
        let lines: Vec<StateLine> = if view.by_sls {
            group_by_sls(runs, shown)
                .into_iter()
                .flat_map(|(sls, members)| {
                    std::iter::once(StateLine::Sls(sls.to_string()))
                        .chain(members.into_iter().map(StateLine::State))
                })
                .collect()
        } else {
            shown.map(StateLine::State).collect()
        };
        let mut starts = Vec::new();
        let mut states = 0;
        let mut heading = None;
        for (at, line) in lines.iter().enumerate() {
            match line {
                StateLine::Sls(_) => heading = Some(at),
                StateLine::State(_) => {
                    if states % per_chunk == 0 {
                        starts.push(heading.unwrap_or(at));
                    }
                    heading = None;
                    states += 1;
                }
            }
        }
        StateTableLines {
            lines,
            starts,
            states,
            per_chunk,
        }
    }

    /// The states counted in chunks, for "Show N more states".
    pub fn parts(&self) -> ListParts {
        ListParts::new(self.states, self.per_chunk)
    }

    /// The lines of chunk `i` (none past the last).
    pub fn chunk(&self, i: usize) -> &[StateLine] {
        &self.lines[self.chunk_range(i)]
    }

    fn chunk_range(&self, i: usize) -> Range<usize> {
        let Some(&start) = self.starts.get(i) else {
            return 0..0;
        };
        start..self.starts.get(i + 1).copied().unwrap_or(self.lines.len())
    }

    /// The states shown, drawn or not.
    pub fn states(&self) -> usize {
        self.states
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StateReturn;
    use serde_json::json;

    fn runs(sls: &[&str]) -> Vec<StateRun> {
        let data: serde_json::Map<String, serde_json::Value> = sls
            .iter()
            .enumerate()
            .map(|(n, sls)| {
                let result = n % 3 != 2;
                let mut state = json!({"result": result, "changes": {}, "__run_num__": n});
                if !sls.is_empty() {
                    state["__sls__"] = json!(sls);
                }
                (format!("pkg_|-s{n}_|-s{n}_|-installed"), state)
            })
            .collect();
        StateReturn::read(&data).unwrap().runs
    }

    fn view(problems_only: bool, by_sls: bool) -> StateView {
        StateView {
            problems_only,
            by_sls,
            ..StateView::default()
        }
    }

    fn states_of(lines: &[StateLine]) -> Vec<usize> {
        lines
            .iter()
            .filter_map(|l| match l {
                StateLine::State(at) => Some(*at),
                StateLine::Sls(_) => None,
            })
            .collect()
    }

    #[test]
    fn chunks_hold_per_chunk_states_in_run_order_and_together_all_of_them() {
        let runs = runs(&[""; 10]);
        let table = StateTableLines::of(&runs, view(false, false), 4);
        assert_eq!(table.parts().count(), 3);
        assert_eq!(table.states(), 10);
        assert_eq!(states_of(table.chunk(0)), [0, 1, 2, 3]);
        assert_eq!(states_of(table.chunk(2)), [8, 9]);
        assert!(table.chunk(3).is_empty());
        let all: Vec<usize> = (0..table.parts().count())
            .flat_map(|i| states_of(table.chunk(i)))
            .collect();
        assert_eq!(all, (0..10).collect::<Vec<_>>());
        assert_eq!(table.parts().left_after(1), 6);
    }

    #[test]
    fn an_sls_heading_opens_the_chunk_of_the_state_under_it() {
        let runs = runs(&["web", "web", "db", "db", "db", "web"]);
        let table = StateTableLines::of(&runs, view(false, true), 2);
        let sls = |s: &str| StateLine::Sls(s.to_string());
        assert_eq!(
            table.chunk(0),
            [sls("web"), StateLine::State(0), StateLine::State(1)]
        );
        // The third web state ran last but groups with the other two.
        assert_eq!(
            table.chunk(1),
            [StateLine::State(5), sls("db"), StateLine::State(2)]
        );
        assert_eq!(table.chunk(2), [StateLine::State(3), StateLine::State(4)]);
        assert_eq!(table.parts().count(), 3);
    }

    #[test]
    fn failures_and_changes_only_chunks_only_what_it_shows() {
        // Every third state failed: 2, 5, 8.
        let runs = runs(&[""; 9]);
        let table = StateTableLines::of(&runs, view(true, false), 2);
        assert_eq!(table.states(), 3);
        assert_eq!(states_of(table.chunk(0)), [2, 5]);
        assert_eq!(states_of(table.chunk(1)), [8]);
        let clean = StateTableLines::of(&runs[..2], view(true, false), 2);
        assert_eq!((clean.states(), clean.parts().count()), (0, 0));
        assert!(clean.chunk(0).is_empty());
    }
}
