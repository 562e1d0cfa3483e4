//! A return value drawn as a tree, a part at a time. `file.find` can return
//! 100,000 paths and `cmd.run_all` 5 MB of stdout in one field: the page
//! draws a branch's first entries and more on request, builds a closed
//! branch only when it is opened, and folds long text, so the size of the
//! value never decides how long the page takes to open.

use crate::json::At;
use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

use crate::text::{scalar_text, FOLD_BYTES};

/// Entries of one branch drawn in one part (a frame).
pub const ENTRIES_PER_PART: usize = 500;

/// A branch of at most this many entries is drawn open; a bigger one is
/// drawn closed and built when the person opens it.
pub const OPEN_AT_ONCE: usize = 20;

/// Salt's bookkeeping key in some `changes` dicts, not part of the value.
const HIDDEN_KEY: &str = "_orig_key";

/// A place in a value: the whole value, shared, and the JSON pointer of the
/// part, so a drawn node holds a path rather than a copy of its subtree.
#[derive(Clone, Debug)]
pub struct TreeNode {
    root: Arc<Value>,
    pointer: String,
}

/// What a node is drawn as.
#[derive(Debug, PartialEq)]
pub enum NodeShape<'a> {
    /// An object or a list with this many entries (at least one).
    Branch { entries: usize },
    /// A string of several lines, or too long for a line: preformatted and
    /// folded past [`FOLD_BYTES`].
    Text(&'a str),
    /// Anything else, as a person reads it (strings without quotes, `{}`).
    Scalar(String),
}

/// One entry of a branch: its key (`[3]` in a list) and its value.
#[derive(Clone, Debug)]
pub struct TreeEntry {
    pub label: String,
    pub node: TreeNode,
}

impl TreeNode {
    /// The whole value.
    pub fn new(root: Arc<Value>) -> Self {
        TreeNode {
            root,
            pointer: String::new(),
        }
    }

    pub fn value(&self) -> &Value {
        self.root.at(&self.pointer).unwrap_or(&Value::Null)
    }

    pub fn shape(&self) -> NodeShape<'_> {
        match self.value() {
            Value::Object(map) => match map.keys().filter(|k| *k != HIDDEN_KEY).count() {
                0 => NodeShape::Scalar("{}".into()),
                entries => NodeShape::Branch { entries },
            },
            Value::Array(items) if !items.is_empty() => NodeShape::Branch {
                entries: items.len(),
            },
            Value::String(s) if s.contains('\n') || s.len() > FOLD_BYTES => NodeShape::Text(s),
            other => NodeShape::Scalar(scalar_text(other)),
        }
    }

    /// Entries `from..to` of a branch (fewer at its end, none for a leaf).
    pub fn entries(&self, range: Range<usize>) -> Vec<TreeEntry> {
        let (from, take) = (range.start, range.len());
        match self.value() {
            Value::Object(map) => map
                .keys()
                .filter(|k| *k != HIDDEN_KEY)
                .skip(from)
                .take(take)
                .map(|k| TreeEntry {
                    label: k.clone(),
                    node: self.child(k),
                })
                .collect(),
            Value::Array(items) => (from..range.end.min(items.len()))
                .map(|i| TreeEntry {
                    label: format!("[{i}]"),
                    node: self.child(&i.to_string()),
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn child(&self, key: &str) -> TreeNode {
        // RFC 6901: `~` and `/` in a key are escaped.
        let key = key.replace('~', "~0").replace('/', "~1");
        TreeNode {
            root: self.root.clone(),
            pointer: format!("{}/{key}", self.pointer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(v: Value) -> TreeNode {
        TreeNode::new(Arc::new(v))
    }

    #[test]
    fn a_list_of_100000_paths_gives_its_entries_a_step_at_a_time() {
        let paths: Vec<String> = (0..100_000).map(|i| format!("/srv/f{i}")).collect();
        let root = node(json!(paths));
        assert_eq!(root.shape(), NodeShape::Branch { entries: 100_000 });
        let first = root.entries(0..ENTRIES_PER_PART);
        assert_eq!(first.len(), ENTRIES_PER_PART);
        assert_eq!(first[0].label, "[0]");
        assert_eq!(first[0].node.shape(), NodeShape::Scalar("/srv/f0".into()));
        let last = root.entries(99_900..99_900 + ENTRIES_PER_PART);
        assert_eq!(last.len(), 100);
        assert_eq!(last[99].label, "[99999]");
        assert_eq!(last[99].node.value(), &json!("/srv/f99999"));
    }

    #[test]
    fn keys_with_slashes_and_tildes_still_find_their_values() {
        let root = node(json!({"/etc/motd": {"a~b": 1}, "_orig_key": "x"}));
        assert_eq!(root.shape(), NodeShape::Branch { entries: 1 });
        let motd = &root.entries(0..10)[0];
        assert_eq!(motd.label, "/etc/motd");
        let inner = &motd.node.entries(0..10)[0];
        assert_eq!(inner.label, "a~b");
        assert_eq!(inner.node.value(), &json!(1));
    }

    #[test]
    fn long_or_multi_line_strings_are_text_and_the_rest_reads_as_scalars() {
        let big = "x".repeat(FOLD_BYTES + 1);
        let root = node(json!({
            "stdout": "a\nb", "big": big, "pid": 4242, "ok": true, "none": null,
            "empty": {}, "list": [], "line": "one line"
        }));
        let shapes: Vec<(String, String)> = root
            .entries(0..100)
            .into_iter()
            .map(|e| {
                let shape = match e.node.shape() {
                    NodeShape::Branch { entries } => format!("branch {entries}"),
                    NodeShape::Text(t) => format!("text {}", t.len()),
                    NodeShape::Scalar(s) => format!("scalar {s}"),
                };
                (e.label, shape)
            })
            .collect();
        let expect = [
            ("big", format!("text {}", FOLD_BYTES + 1)),
            ("empty", "scalar {}".into()),
            ("line", "scalar one line".into()),
            ("list", "scalar []".into()),
            ("none", "scalar ".into()),
            ("ok", "scalar true".into()),
            ("pid", "scalar 4242".into()),
            ("stdout", "text 3".into()),
        ];
        let expect: Vec<(String, String)> = expect
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        assert_eq!(shapes, expect);
    }
}
