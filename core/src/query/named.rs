//! The minion an address names on the job page (`/job/<jid>#minion-web01`,
//! a link from another view to one minion's return): where the page has it,
//! or why it has not.

use super::job::{JobDetail, MinionsShown};
use crate::model::ReturnDoc;
use crate::route::link::minion_anchor;

/// Where the job page has the minion an address names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NamedMinion {
    /// The address names no minion.
    Nothing,
    /// Its return is listed (first: see [`named_first`]).
    Listed,
    /// Targeted, no return: its line in the missing minions carries the id.
    Missing,
    /// Not among the returns listed ("failed minions only"): it did not
    /// fail, or has no return; the page listing every minion tells.
    Unlisted,
    /// No return of it in this job, and not among the minions it targeted
    /// as far as they are known: a link from elsewhere, or a typo.
    NoReturn(String),
}

impl JobDetail {
    /// Where this page has the minion `anchor` names, listing `shown`.
    pub fn named_minion(&self, anchor: &str, shown: MinionsShown) -> NamedMinion {
        let Some(id) = anchor.strip_prefix("minion-").filter(|id| !id.is_empty()) else {
            return NamedMinion::Nothing;
        };
        let named = |minion: &str| minion_anchor(minion) == anchor;
        if self.returns.iter().any(|r| named(&r.minion)) {
            return NamedMinion::Listed;
        }
        if self.missing.iter().any(|m| named(&m.minion)) {
            return NamedMinion::Missing;
        }
        // The job's data for the named minion comes with the page whatever
        // page of returns it is on (FirstOutput::Named): listing every
        // minion, none means none. Listing the failed, a targeted minion
        // may have succeeded.
        let targeted = self
            .publish
            .as_ref()
            .and_then(|p| p.minions.as_ref())
            .map(|minions| minions.iter().any(|m| named(m)));
        match (shown, targeted) {
            (MinionsShown::Failed, Some(true) | None) => NamedMinion::Unlisted,
            _ => NamedMinion::NoReturn(id.to_string()),
        }
    }
}

/// The return of the minion an address names (`#minion-…`) moved to the
/// front, the others keeping their order: the page then scrolls to it, and
/// no output drawn later above it can push it away. Nothing moves when no
/// return on the page is that minion's.
pub fn named_first(returns: &mut [ReturnDoc], anchor: &str) {
    let named = returns
        .iter()
        .position(|r| minion_anchor(&r.minion) == anchor);
    if let Some(front) = named.and_then(|at| returns.get_mut(..=at)) {
        front.rotate_right(1);
    }
}
