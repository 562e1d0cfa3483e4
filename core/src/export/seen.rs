//! What an export under `_shard_doc` paging has written of the index it is
//! reading, so a lost point in time costs a re-read, not a duplicate row.

use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Under `_shard_doc` paging, the documents of the index being read that
/// are in the file already. `_shard_doc` values belong to one PIT's
/// segments: when the PIT is lost (expired, or a node left the cluster),
/// a new PIT reads that index again from its start and these are skipped
/// — nothing lost, nothing twice.
#[derive(Debug, Default)]
pub(crate) struct IndexSeen {
    pub index: String,
    ids: HashSet<u64>,
    /// Reading the index again after a lost PIT: skip what is seen.
    pub replaying: bool,
}

impl IndexSeen {
    fn key(id: &str) -> u64 {
        let mut h = DefaultHasher::new();
        id.hash(&mut h);
        h.finish()
    }

    /// Whether the document `(index, id)` is in the file already.
    pub fn written(&self, index: &str, id: &str) -> bool {
        self.replaying && index == self.index && self.ids.contains(&IndexSeen::key(id))
    }

    pub(crate) fn add(&mut self, read: &[(String, String)]) {
        for (index, id) in read {
            if *index != self.index {
                // A new index: the last one is done, and so is any replay.
                self.index = index.clone();
                self.ids.clear();
                self.replaying = false;
            }
            self.ids.insert(IndexSeen::key(id));
        }
    }
}
