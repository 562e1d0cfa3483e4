//! The minions: ids by role, and which of them are offline or flaky.

use super::Rng;
use crate::states::{minion_id, ROLES};

#[derive(Clone, Debug)]
pub struct Minion {
    pub id: String,
    pub role: usize,
    /// accepted key, never answers (decommissioned, powered off)
    pub offline: bool,
    /// fails states far more often than the rest
    pub flaky: bool,
    pub version: &'static str,
}

#[derive(Clone, Debug)]
pub struct Fleet {
    pub minions: Vec<Minion>,
    /// per role, minion indices sorted by id
    pub by_role: Vec<Vec<u32>>,
    /// all minion indices sorted by id
    pub sorted: Vec<u32>,
}

impl Fleet {
    pub fn new(n: usize, rng: &mut Rng) -> Fleet {
        let total: u32 = ROLES.iter().map(|r| r.share).sum();
        let mut counts: Vec<usize> = ROLES
            .iter()
            .map(|r| n * r.share as usize / total as usize)
            .collect();
        let assigned: usize = counts.iter().sum();
        counts[0] += n - assigned;
        let mut minions = Vec::with_capacity(n);
        for (role, c) in counts.iter().enumerate() {
            for k in 0..*c {
                minions.push(Minion {
                    id: minion_id(role, k),
                    role,
                    offline: rng.chance(0.006),
                    flaky: rng.chance(0.03),
                    version: if rng.chance(0.05) { "3007.8" } else { "3008.5" },
                });
            }
        }
        let mut sorted: Vec<u32> = (0..minions.len() as u32).collect();
        sorted.sort_by(|a, b| minions[*a as usize].id.cmp(&minions[*b as usize].id));
        let mut by_role = vec![Vec::new(); ROLES.len()];
        for i in &sorted {
            by_role[minions[*i as usize].role].push(*i);
        }
        Fleet {
            minions,
            by_role,
            sorted,
        }
    }
}
