//! Stable sorting compiled once for the whole app.
//!
//! `slice::sort_by` is generic over the element and the comparator, so every
//! call site compiles its own copy of the standard library's driftsort: 17
//! copies were 58 KB of the app's wasm (4 %, `twiggy monos`). Here only a
//! list of indices is sorted, with the comparison behind `&dyn Fn`, so
//! driftsort is compiled once; a call site adds only the comparison and the
//! loop that moves the items into place. The price is one indirect call per
//! comparison and a `usize` per item: nothing next to the searches these
//! lists come from. Same contract as `sort_by`: stable, `O(n log n)`.

use std::cmp::Ordering;

/// Sorts `items` by `compare`, keeping equal items in their order.
pub fn sort_by<T>(items: &mut [T], compare: impl Fn(&T, &T) -> Ordering) {
    let order = sorted_indices(items.len(), &|a, b| compare(&items[a], &items[b]));
    permute(&order, &mut |a, b| items.swap(a, b));
}

/// Sorts `items` by the key `key` gives, keeping equal items in their order.
pub fn sort_by_key<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    sort_by(items, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `items` in ascending order, keeping equal items in their order.
pub fn sort<T: Ord>(items: &mut [T]) {
    sort_by(items, T::cmp);
}

/// Collects into an ordered collection (`BTreeMap`, `BTreeSet`, serde_json's
/// `Map`) one insert at a time. `collect()` into one sorts the items first,
/// with a copy of the standard library's stable sort per item type (~3 KB
/// of wasm each); inserting keeps the same result: ordered, the last of
/// equal keys winning.
pub fn collect_ordered<C: Default + Extend<T>, T>(items: impl IntoIterator<Item = T>) -> C {
    let mut ordered = C::default();
    ordered.extend(items);
    ordered
}

/// The positions `0..len` in the order `compare` puts them.
#[inline(never)]
fn sorted_indices(len: usize, compare: &dyn Fn(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| compare(a, b));
    order
}

/// Moves the item at `order[i]` to position `i`, by swaps: each cycle of the
/// permutation is followed once, the item that started it carried along.
#[inline(never)]
fn permute(order: &[usize], swap: &mut dyn FnMut(usize, usize)) {
    let mut placed = vec![false; order.len()];
    for start in 0..order.len() {
        let mut at = start;
        while !placed[at] {
            placed[at] = true;
            let from = order[at];
            if from == start {
                break;
            }
            swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cheap deterministic sequence (no rand in the core's dependencies).
    fn numbers(n: usize, seed: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x
            })
            .collect()
    }

    #[test]
    fn agrees_with_the_standard_stable_sort_including_ties() {
        for (n, seed) in [(0, 1), (1, 2), (2, 3), (17, 4), (1000, 5), (10_000, 6)] {
            // (key, original position): few distinct keys, so ties abound and
            // stability shows.
            let mut ours: Vec<(u64, usize)> = numbers(n, seed)
                .into_iter()
                .enumerate()
                .map(|(i, x)| (x % 7, i))
                .collect();
            let mut std = ours.clone();
            sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
            std.sort_by_key(|a| a.0);
            assert_eq!(ours, std, "n = {n}");
        }
    }

    #[test]
    fn sorts_by_key_descending_and_plain() {
        let mut words = vec!["pkg", "cmd", "file", "cmd", "user"];
        sort(&mut words);
        assert_eq!(words, ["cmd", "cmd", "file", "pkg", "user"]);
        let mut counts = vec![("a", 1), ("b", 3), ("c", 2), ("d", 3)];
        sort_by_key(&mut counts, |c| std::cmp::Reverse(c.1));
        assert_eq!(counts, [("b", 3), ("d", 3), ("c", 2), ("a", 1)]);
    }

    #[test]
    fn moves_items_that_cannot_be_copied() {
        let mut names: Vec<String> = ["web-02", "db-01", "web-01"].map(String::from).to_vec();
        sort_by(&mut names, |a, b| b.cmp(a));
        assert_eq!(names, ["web-02", "web-01", "db-01"]);
    }

    #[test]
    fn collects_ordered_as_collect_does_the_last_of_equal_keys_winning() {
        let pairs = [("web", 1), ("db", 2), ("web", 3), ("cache", 4)];
        let ours: std::collections::BTreeMap<&str, i32> = collect_ordered(pairs);
        let std: std::collections::BTreeMap<&str, i32> = pairs.into_iter().collect();
        assert_eq!(ours, std);
        assert_eq!(
            ours.into_iter().collect::<Vec<_>>(),
            [("cache", 4), ("db", 2), ("web", 3)]
        );
        let map: serde_json::Map<String, serde_json::Value> =
            collect_ordered([("b".to_string(), 1.into()), ("a".to_string(), 2.into())]);
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b"]);
    }
}
