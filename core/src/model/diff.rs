//! A diff from a state's `changes` (file.managed's `diff`), cut for drawing:
//! runs of lines of one kind (context, added, removed, hunk header), each a
//! slice of the text, so a 5 MB diff of 70,000 lines is drawn as a few
//! thousand coloured spans, the first 64 KB at once and the rest a part at
//! a time once the person asks for all of it.

use std::ops::Range;

use crate::text::FOLD_BYTES;

/// The kind of a diff line, for colouring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffLine {
    Added,
    Removed,
    Hunk,
    Context,
}

pub fn diff_line_kind(line: &str) -> DiffLine {
    if line.starts_with("+++") || line.starts_with("---") {
        DiffLine::Context
    } else if line.starts_with('+') {
        DiffLine::Added
    } else if line.starts_with('-') {
        DiffLine::Removed
    } else if line.starts_with("@@") {
        DiffLine::Hunk
    } else {
        DiffLine::Context
    }
}

/// Bytes a run grows to before the next line of the same kind starts a new
/// one: a new 5 MB file is one kind of line throughout, and the fold must
/// still cut it near 64 KB.
const RUN_BYTES: usize = 16 * 1024;

/// Consecutive lines of one kind: `range` of the diff's text, each line
/// with its newline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffRun {
    pub kind: DiffLine,
    pub range: Range<usize>,
}

/// A diff cut in runs, and where it folds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffRuns {
    pub runs: Vec<DiffRun>,
    /// Runs shown before "show all": those starting in the first
    /// [`FOLD_BYTES`]; all of them for a short diff.
    pub folded: usize,
}

impl DiffRuns {
    pub fn of(diff: &str) -> DiffRuns {
        let mut runs: Vec<DiffRun> = Vec::new();
        let mut at = 0;
        for line in diff.split_inclusive('\n') {
            let kind = diff_line_kind(line);
            let end = at + line.len();
            match runs.last_mut() {
                Some(run) if run.kind == kind && run.range.len() < RUN_BYTES => run.range.end = end,
                _ => runs.push(DiffRun {
                    kind,
                    range: at..end,
                }),
            }
            at = end;
        }
        let folded = runs
            .iter()
            .take_while(|run| run.range.start < FOLD_BYTES)
            .count();
        DiffRuns { runs, folded }
    }

    /// Whether "show all" has anything to add.
    pub fn is_folded(&self) -> bool {
        self.folded < self.runs.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_lines_are_told_apart_with_headers_as_context() {
        assert_eq!(diff_line_kind("--- "), DiffLine::Context);
        assert_eq!(diff_line_kind("+++ "), DiffLine::Context);
        assert_eq!(diff_line_kind("-workers 2"), DiffLine::Removed);
        assert_eq!(diff_line_kind("+workers 4"), DiffLine::Added);
        assert_eq!(diff_line_kind("@@ -1,3 +1,4 @@"), DiffLine::Hunk);
    }

    #[test]
    fn lines_of_one_kind_run_together_and_the_runs_give_back_the_text() {
        let diff = "--- \n+++ \n@@ -1,4 +1,4 @@\n a\n b\n-c\n+C\n+D\n d";
        let cut = DiffRuns::of(diff);
        let kinds: Vec<(DiffLine, &str)> = cut
            .runs
            .iter()
            .map(|r| (r.kind, &diff[r.range.clone()]))
            .collect();
        assert_eq!(
            kinds,
            [
                (DiffLine::Context, "--- \n+++ \n"),
                (DiffLine::Hunk, "@@ -1,4 +1,4 @@\n"),
                (DiffLine::Context, " a\n b\n"),
                (DiffLine::Removed, "-c\n"),
                (DiffLine::Added, "+C\n+D\n"),
                (DiffLine::Context, " d"),
            ]
        );
        assert_eq!(cut.folded, 6);
        assert!(!cut.is_folded());
    }

    #[test]
    fn a_5_mb_new_file_folds_near_64_kb_and_keeps_every_byte() {
        let diff: String = (0..70_000).map(|i| format!("+line {i:066}\n")).collect();
        let cut = DiffRuns::of(&diff);
        assert!(cut.runs.iter().all(|r| r.range.len() <= RUN_BYTES + 80));
        let shown: usize = cut.runs[..cut.folded].iter().map(|r| r.range.len()).sum();
        assert!(
            (FOLD_BYTES..FOLD_BYTES + RUN_BYTES + 80).contains(&shown),
            "{shown}"
        );
        assert!(cut.is_folded());
        let whole: String = cut.runs.iter().map(|r| &diff[r.range.clone()]).collect();
        assert_eq!(whole, diff);
    }
}
