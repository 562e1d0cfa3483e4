//! A long list drawn in parts (a return's states, a value's entries, a
//! comparison's rows): which items a part holds, and what "Show N more"
//! says. The page draws the parts a frame at a time; the counting is here.

use std::ops::Range;

/// Parts one "show more" asks for: drawn a frame each, so the page answers
/// between them.
pub const PARTS_PER_ASK: usize = 5;

/// `items` cut in parts of `per_part`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListParts {
    items: usize,
    per_part: usize,
}

impl ListParts {
    pub fn new(items: usize, per_part: usize) -> ListParts {
        ListParts {
            items,
            per_part: per_part.max(1),
        }
    }

    /// How many parts; none for no items.
    pub fn count(self) -> usize {
        self.items.div_ceil(self.per_part)
    }

    /// The items of part `i` (empty past the last).
    pub fn range(self, i: usize) -> Range<usize> {
        let start = i.saturating_mul(self.per_part).min(self.items);
        start..start.saturating_add(self.per_part).min(self.items)
    }

    /// Items not drawn once the first `parts` are.
    pub fn left_after(self, parts: usize) -> usize {
        self.items
            .saturating_sub(parts.saturating_mul(self.per_part))
    }

    /// Items the next ask draws once the first `parts` are: "Show 500 more".
    pub fn next_ask(self, parts: usize) -> usize {
        self.left_after(parts).min(self.per_part * PARTS_PER_ASK)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_every_item_once_in_order() {
        let list = ListParts::new(1_050, 100);
        assert_eq!(list.count(), 11);
        let all: Vec<usize> = (0..list.count()).flat_map(|i| list.range(i)).collect();
        assert_eq!(all, (0..1_050).collect::<Vec<_>>());
        assert_eq!(list.range(10), 1_000..1_050);
        assert!(list.range(11).is_empty());
        assert_eq!(ListParts::new(0, 100).count(), 0);
    }

    #[test]
    fn show_more_counts_what_is_left_up_to_one_ask() {
        let list = ListParts::new(10_000, 100);
        assert_eq!(list.left_after(1), 9_900);
        assert_eq!(list.next_ask(1), 500);
        // The last ask: only what is left.
        assert_eq!(list.next_ask(98), 200);
        assert_eq!(list.left_after(100), 0);
        assert_eq!(list.next_ask(120), 0);
    }
}
