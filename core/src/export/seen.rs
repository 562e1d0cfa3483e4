//! What an export under `_shard_doc` paging has written of the index it is
//! reading, so a lost point in time costs a re-read, not a duplicate row.

use std::hash::{DefaultHasher, Hash, Hasher};

use nohash_hasher::IntMap;

use super::rows::Row;

/// Under `_shard_doc` paging, the hits of the index being read that are in
/// the file already. `_shard_doc` values belong to one PIT's segments: when
/// the PIT is lost (expired, or a node left the cluster), a new PIT reads
/// that index again from its start and these are skipped — nothing lost,
/// nothing twice.
///
/// A hit is known by its `_id`, or, on pages of doc values (which leave
/// `_id` out: it makes the engine read each hit's stored fields), by its
/// row. Keys are counted, not only remembered: two returns with the same
/// row are two rows in the file, and a re-read skips as many hits with
/// that row as the file has, then writes the rest.
#[derive(Debug, Default)]
pub(crate) struct IndexSeen {
    pub index: String,
    /// The hits of `index` in the file, by key.
    written: KeyCounts,
    /// Reading the index again after a lost PIT: the hits of `index` read
    /// since, by key (the first pass needs none: it is `written`).
    replayed: Option<KeyCounts>,
}

/// Counts by key. A key is already a `DefaultHasher` hash: the maps use it
/// as it is instead of hashing it again.
type KeyCounts = IntMap<u64, u32>;

/// One hit of a page, for [`IndexSeen::add`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SeenHit {
    pub index: String,
    pub key: u64,
    /// In the file already (skipped by a re-read).
    pub skipped: bool,
}

impl IndexSeen {
    /// The key of a hit known by its `_id`.
    pub fn id_key(id: &str) -> u64 {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        h.finish()
    }

    /// The key of a hit known by its row (a page of doc values).
    pub fn row_key(row: &Row) -> u64 {
        let mut h = DefaultHasher::new();
        row.hash(&mut h);
        h.finish()
    }

    /// After a lost PIT: the index is read again from its start.
    pub fn replay(&mut self) {
        self.replayed = Some(KeyCounts::default());
    }

    /// Which of a page's hits, each `(index, key, item)`, are not in the
    /// file yet: those items, and every hit for [`IndexSeen::add`] (none
    /// when `remember` is false: paging that never reads an index again).
    pub fn unwritten<T>(
        &self,
        hits: Vec<(String, u64, T)>,
        remember: bool,
    ) -> (Vec<T>, Vec<SeenHit>) {
        let mut kept = Vec::with_capacity(hits.len());
        let mut read = Vec::with_capacity(if remember { hits.len() } else { 0 });
        // Hits of this page with each key so far (a re-read only).
        let mut on_page = KeyCounts::default();
        for (index, key, item) in hits {
            let skipped = match &self.replayed {
                Some(replayed) if index == self.index => {
                    let before = on_page.entry(key).or_default();
                    let read_again = replayed.get(&key).copied().unwrap_or(0) + *before;
                    *before += 1;
                    read_again < self.written.get(&key).copied().unwrap_or(0)
                }
                _ => false,
            };
            if !skipped {
                kept.push(item);
            }
            if remember {
                read.push(SeenHit {
                    index,
                    key,
                    skipped,
                });
            }
        }
        (kept, read)
    }

    /// A page is in the file: counts its hits.
    pub(crate) fn add(&mut self, read: &[SeenHit]) {
        for hit in read {
            if hit.index != self.index {
                // A new index: the last one is done, and so is any replay.
                self.index = hit.index.clone();
                self.written.clear();
                self.replayed = None;
            }
            if let Some(replayed) = &mut self.replayed {
                *replayed.entry(hit.key).or_default() += 1;
            }
            if !hit.skipped {
                *self.written.entry(hit.key).or_default() += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(index: &str, keys: &[u64]) -> Vec<(String, u64, u64)> {
        keys.iter().map(|&k| (index.to_string(), k, k)).collect()
    }

    #[test]
    fn a_re_read_skips_each_key_as_often_as_the_file_has_it() {
        let mut seen = IndexSeen::default();
        // Key 7 twice (two returns with the same row), then the PIT is lost.
        let (kept, read) = seen.unwritten(hits("a", &[7, 1, 7]), true);
        assert_eq!(kept, [7, 1, 7]);
        seen.add(&read);
        seen.replay();
        // The new PIT gives three 7s (one written since) and a new 2, over
        // two pages.
        let (kept, read) = seen.unwritten(hits("a", &[7, 2, 7]), true);
        assert_eq!(kept, [2]);
        seen.add(&read);
        let (kept, read) = seen.unwritten(hits("a", &[1, 7]), true);
        assert_eq!(kept, [7], "the third 7 is new");
        seen.add(&read);
        // Lost again: everything read so far is in the file.
        seen.replay();
        let (kept, _) = seen.unwritten(hits("a", &[7, 7, 7, 1, 2, 3]), true);
        assert_eq!(kept, [3]);
    }

    #[test]
    fn the_next_index_is_never_skipped_and_ends_the_replay() {
        let mut seen = IndexSeen::default();
        let (_, read) = seen.unwritten(hits("a", &[1]), true);
        seen.add(&read);
        seen.replay();
        let (kept, read) = seen.unwritten(
            hits("a", &[1]).into_iter().chain(hits("b", &[1])).collect(),
            true,
        );
        assert_eq!(kept, [1], "b's hit");
        seen.add(&read);
        assert_eq!(seen.index, "b");
        assert!(seen.replayed.is_none(), "the replay ended");
    }

    #[test]
    fn without_paging_that_reads_again_nothing_is_remembered() {
        let seen = IndexSeen::default();
        let (kept, read) = seen.unwritten(hits("a", &[1, 1]), false);
        assert_eq!(kept, [1, 1]);
        assert!(read.is_empty());
    }

    #[test]
    fn rows_that_differ_in_any_cell_have_different_keys() {
        let row = |cells: &[&str]| -> Row { cells.iter().map(|c| c.to_string()).collect() };
        assert_eq!(
            IndexSeen::row_key(&row(&["1", "m"])),
            IndexSeen::row_key(&row(&["1", "m"]))
        );
        assert_ne!(
            IndexSeen::row_key(&row(&["1", "m"])),
            IndexSeen::row_key(&row(&["1m", ""]))
        );
        assert_ne!(
            IndexSeen::row_key(&row(&["1", "m"])),
            IndexSeen::row_key(&row(&["1", "n"]))
        );
    }
}
