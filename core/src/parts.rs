//! A long list drawn in parts (a return's states, a value's entries, a
//! comparison's rows), and a long text drawn in parts (an output after
//! "show all"): which items or bytes a part holds, and what "Show N more"
//! says. The page draws the parts a frame at a time; the counting is here.

use std::ops::Range;

/// Parts one "show more" asks for unless the list says otherwise: drawn a
/// frame each, so the page answers between them.
pub const PARTS_PER_ASK: usize = 5;

/// `items` cut in parts of `per_part`: `first` parts drawn at once, then
/// `per_ask` parts to an ask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListParts {
    items: usize,
    per_part: usize,
    first: usize,
    per_ask: usize,
}

impl ListParts {
    pub fn new(items: usize, per_part: usize) -> ListParts {
        ListParts {
            items,
            per_part: per_part.max(1),
            first: 1,
            per_ask: PARTS_PER_ASK,
        }
    }

    /// The same parts, the first `parts` drawn at once: a first screen of
    /// small parts.
    pub fn first_drawn(self, parts: usize) -> ListParts {
        ListParts {
            first: parts.max(1),
            ..self
        }
    }

    /// Parts drawn at once, before any ask.
    pub fn first(self) -> usize {
        self.first
    }

    /// The same parts, `parts` to an ask: small parts (one fits a frame)
    /// with as many items an ask as bigger ones.
    pub fn asking(self, parts: usize) -> ListParts {
        ListParts {
            per_ask: parts.max(1),
            ..self
        }
    }

    /// Parts one ask draws.
    pub fn per_ask(self) -> usize {
        self.per_ask
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
        self.left_after(parts).min(self.per_part * self.per_ask)
    }
}

/// Bytes of a long text drawn in one frame after "show all": a 50 MB
/// output set in one `<pre>` at once held the page for 5 s in one frame.
pub const TEXT_PART_BYTES: usize = 256 * 1024;

/// A long text cut in parts of about `per_part` bytes, each ending just
/// after a line break where the part holds one (the page draws each part as
/// a block, so a part ending mid-line would break that line on screen), else
/// between two characters. The first part is at most `first` bytes: what a
/// folded text shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextParts {
    /// Where each part ends, in bytes: ascending, the last the text's length.
    ends: Vec<usize>,
}

impl TextParts {
    pub fn of(text: &str, first: usize, per_part: usize) -> TextParts {
        let mut ends = Vec::new();
        let mut start = 0;
        let mut budget = first.max(1);
        while start < text.len() {
            let end = part_end(text, start, budget);
            ends.push(end);
            start = end;
            budget = per_part.max(1);
        }
        TextParts { ends }
    }

    /// How many parts; none for an empty text.
    pub fn count(&self) -> usize {
        self.ends.len()
    }

    /// The bytes of part `i` (empty past the last).
    pub fn range(&self, i: usize) -> Range<usize> {
        match self.ends.get(i) {
            Some(&end) => i.checked_sub(1).map_or(0, |before| self.ends[before])..end,
            None => 0..0,
        }
    }
}

/// Where a part starting at `start` ends: after the last line break within
/// `budget` bytes, else at the last character boundary within them (a line
/// longer than a part), else after the character at `start`.
fn part_end(text: &str, start: usize, budget: usize) -> usize {
    let limit = start.saturating_add(budget);
    if limit >= text.len() {
        return text.len();
    }
    if let Some(nl) = text.as_bytes()[start..limit]
        .iter()
        .rposition(|&b| b == b'\n')
    {
        return start + nl + 1;
    }
    let mut end = limit;
    while end > start && !text.is_char_boundary(end) {
        end -= 1;
    }
    if end > start {
        return end;
    }
    // A budget smaller than the character at `start`: that whole character.
    let mut end = start + 1;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts_of(text: &str, first: usize, per_part: usize) -> Vec<&str> {
        let parts = TextParts::of(text, first, per_part);
        (0..parts.count()).map(|i| &text[parts.range(i)]).collect()
    }

    #[test]
    fn text_parts_end_after_line_breaks_and_give_back_the_text() {
        let text = "one\ntwo\nthree\nfour\nfive\n";
        // The first part within 9 bytes, the others within 11.
        assert_eq!(
            parts_of(text, 9, 11),
            ["one\ntwo\n", "three\nfour\n", "five\n"]
        );
        assert_eq!(parts_of(text, 1000, 11).concat(), text);
        assert_eq!(parts_of(text, 1000, 11), [text]);
        // No line break at the end: the last part is what is left.
        assert_eq!(parts_of("ab\ncd", 3, 3), ["ab\n", "cd"]);
        assert_eq!(TextParts::of("", 10, 10).count(), 0);
        assert_eq!(TextParts::of("ab\ncd", 3, 3).range(2), 0..0);
    }

    #[test]
    fn a_line_longer_than_a_part_is_cut_between_characters() {
        // "é" is two bytes: a cut at byte 3 would split the second one.
        let text = "éééé\nx";
        assert_eq!(parts_of(text, 3, 3), ["é", "é", "é", "é\n", "x"]);
        // A budget under one character still moves on, a character a part.
        assert_eq!(parts_of("éé", 1, 1), ["é", "é"]);
    }

    #[test]
    fn a_big_output_is_cut_in_parts_of_at_most_a_part_each() {
        let line = "x".repeat(99) + "\n";
        let text = line.repeat(30_000); // 3 MB
        let parts = TextParts::of(&text, 64 * 1024, TEXT_PART_BYTES);
        let all: Vec<&str> = (0..parts.count()).map(|i| &text[parts.range(i)]).collect();
        assert_eq!(all.concat(), text);
        assert!(all[0].len() <= 64 * 1024 && all[0].ends_with('\n'));
        assert!(all
            .iter()
            .all(|p| p.len() <= TEXT_PART_BYTES && p.ends_with('\n')));
        assert_eq!(parts.count(), 13);
    }

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
        // Small parts, as many items an ask.
        let small = ListParts::new(10_000, 25).asking(20);
        assert_eq!((small.per_ask(), small.next_ask(4)), (20, 500));
        assert_eq!(small.next_ask(390), 250);
    }

    #[test]
    fn a_first_screen_of_small_parts_is_drawn_at_once() {
        assert_eq!(ListParts::new(10_000, 100).first(), 1);
        let small = ListParts::new(10_000, 25).first_drawn(4).asking(20);
        // The first screen is the 100 states one big part was, and "Show
        // N more" then counts from there.
        assert_eq!(small.range(small.first() - 1).end, 100);
        assert_eq!(small.next_ask(small.first()), 500);
        assert_eq!(ListParts::new(10, 25).first_drawn(0).first(), 1);
    }
}
