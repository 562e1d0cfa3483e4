//! The fleet's noise on the master's event bus (`--events`): what floods a
//! real `<prefix>-master-event-cache` besides the jobs. Shapes from Salt
//! 3008.5's source (the fixture run stored none of these):
//!
//! - `salt/auth` (`salt.master.ClearFuncs._auth`, with `auth_events`, the
//!   default): `{result, act, id, pub, _stamp}`; `act` is `accept` for a
//!   known key, `pend` while a new key waits for `salt-key -a`.
//! - `minion_start` (with `enable_legacy_startup_events`) and
//!   `salt/minion/<id>/start` (`Minion._fire_master_minion_start`): the
//!   minion's `_minion_event` load as the master re-fires it, `{id, cmd,
//!   pretag, data, tag, _stamp, ts}`, `data` = `Minion <id> started at
//!   <time.asctime()>`.
//! - `salt/key` (`salt.key.Key`): `{result, act, id, pub, _stamp}` with `act`
//!   `accepted` when a key is accepted (3008 names the state it moved to), and
//!   `{result, act: "delete", id, _stamp}` when one is deleted.
//!
//! The noise comes in episodes, each from its own seed: the fleet (or one
//! role) authenticating again within seconds after the master's AES key
//! rotated or the master restarted, salt-minion restarts (a role's rollout,
//! or one minion), a new minion's key pending (a `pend` every 10 s) until it
//! is accepted or deleted, an old key deleted. Within a burst of thousands of
//! minions many events share a millisecond, and `salt/auth` or
//! `minion_start` events share their tag too: a page cursor of (`_stamp` ms,
//! tag) does not tell them apart.

use super::events::event_doc;
use super::{mix, Config, Doc, Fleet, Plan, Rng};
use crate::json::{s, J};
use crate::obj;
use crate::states::{minion_id, ROLES};
use saltscope_core::time::iso_utc;
use std::ops::Range;

/// Where the noise's streams start: apart from the jobs'.
const NOISE_STREAM: u64 = 0x0015_e5a1_7000_0001;
/// Where the minions' public keys come from.
const KEY_STREAM: u64 = 0x0015_e5a1_7000_00fe;
/// `acceptance_wait_time`: a pending minion tries again every 10 s (Salt's default).
const ACCEPTANCE_WAIT_US: i64 = 10_000_000;
/// A work unit of noise holds about this many events.
const UNIT_EVENTS: u64 = 4_000;

/// Whose minions an episode is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// every minion of the fleet
    Fleet,
    /// the minions of one role (`ROLES` index)
    Role(usize),
    /// one minion (fleet index)
    One(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EpisodeKind {
    /// The group's online minions authenticate again within `window_ms`: the
    /// master rotated its AES key, or restarted.
    Reauth { group: Group, window_ms: u32 },
    /// salt-minion restarts on the group's online minions within `window_ms`
    /// (an upgrade rolled out, a reboot): each one's `salt/auth` accept, then
    /// its start events.
    Restart { group: Group, window_ms: u32 },
    /// The key of a new minion (the `nth` new one of `role`) waits: a `salt/auth`
    /// pend every `acceptance_wait_time`, `tries` times; then `salt-key -a` (a
    /// `salt/key` accepted, its `salt/auth` accept and start events) or
    /// `salt-key -d` (a `salt/key` delete).
    Pending {
        role: usize,
        nth: usize,
        tries: u32,
        accepted: bool,
    },
    /// `salt-key -d` of a minion that went away: one `salt/key` delete.
    Delete { minion: u32 },
}

#[derive(Clone, Debug)]
pub struct Episode {
    pub kind: EpisodeKind,
    pub start_us: i64,
    pub seed: u64,
    /// the event documents it makes
    pub events: u64,
}

/// The episode kinds drawn, per draw: fleet reauth, role reauth, role
/// restart, one minion's restart, a pending key, a deleted key.
const KIND_WEIGHTS: &[u32] = &[2, 3, 4, 40, 6, 1];
/// The first draws: one of each, so every kind exists however few events are asked for.
const FIRST_KINDS: &[usize] = &[0, 1, 2, 3, 4, 4, 5];

/// Whether a minion runs with `enable_legacy_startup_events` (off by default
/// since 3001; about 40 % of this fleet still has it): it fires
/// `minion_start` besides `salt/minion/<id>/start`.
pub fn legacy_start(id: &str) -> bool {
    // FNV-1a: the same answer for the same id, whatever the seed
    let h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    h % 5 < 2
}

/// The online minions of a group, in id order.
fn members(fleet: &Fleet, group: Group) -> Vec<u32> {
    let online = |m: &&u32| !fleet.minions[**m as usize].offline;
    match group {
        Group::Fleet => fleet.sorted.iter().filter(online).copied().collect(),
        Group::Role(r) => fleet.by_role[r].iter().filter(online).copied().collect(),
        Group::One(m) => vec![m],
    }
}

/// Events of one started minion: `salt/auth`, `salt/minion/<id>/start` and maybe `minion_start`.
fn start_events(id: &str) -> u64 {
    2 + u64::from(legacy_start(id))
}

/// The id of the `nth` new minion of a role: the next free number.
fn new_minion_id(fleet: &Fleet, role: usize, nth: usize) -> String {
    minion_id(role, fleet.by_role[role].len() + nth)
}

fn episode_events(fleet: &Fleet, kind: EpisodeKind) -> u64 {
    match kind {
        EpisodeKind::Reauth { group, .. } => members(fleet, group).len() as u64,
        EpisodeKind::Restart { group, .. } => members(fleet, group)
            .iter()
            .map(|m| start_events(&fleet.minions[*m as usize].id))
            .sum(),
        EpisodeKind::Pending {
            role,
            nth,
            tries,
            accepted,
        } => {
            tries as u64
                + if accepted {
                    1 + start_events(&new_minion_id(fleet, role, nth))
                } else {
                    1
                }
        }
        EpisodeKind::Delete { .. } => 1,
    }
}

/// The noise of a load: episodes until they make at least `want` events
/// (and one of each kind however small `want` is), spread over the span.
pub fn plan_noise(cfg: &Config, fleet: &Fleet, want: u64) -> Vec<Episode> {
    let mut rng = Rng::new(mix(cfg.seed, NOISE_STREAM));
    let first = cfg.end_us - (cfg.days * 86_400e6) as i64;
    // room at the end for a pending key's hour of tries and its acceptance
    let last = (cfg.end_us - 2 * 3_600_000_000).max(first + 1);
    let offline: Vec<u32> = (0..fleet.minions.len() as u32)
        .filter(|m| fleet.minions[*m as usize].offline)
        .collect();
    let mut new_per_role = vec![0usize; ROLES.len()];
    let mut out = Vec::new();
    let mut total = 0u64;
    for draw in 0.. {
        if draw >= FIRST_KINDS.len() && total >= want {
            break;
        }
        let role = rng.below(ROLES.len());
        let kind = match FIRST_KINDS
            .get(draw)
            .copied()
            .unwrap_or_else(|| rng.weighted(KIND_WEIGHTS))
        {
            0 => EpisodeKind::Reauth {
                group: Group::Fleet,
                window_ms: 2_000 + rng.below(10_000) as u32,
            },
            1 => EpisodeKind::Reauth {
                group: Group::Role(role),
                window_ms: 1_000 + rng.below(4_000) as u32,
            },
            2 => EpisodeKind::Restart {
                group: Group::Role(role),
                window_ms: 2_000 + rng.below(28_000) as u32,
            },
            3 => EpisodeKind::Restart {
                group: Group::One(fleet.sorted[rng.below(fleet.sorted.len())]),
                window_ms: 1,
            },
            4 => {
                new_per_role[role] += 1;
                EpisodeKind::Pending {
                    role,
                    nth: new_per_role[role] - 1,
                    tries: 1 + rng.below(360) as u32,
                    accepted: rng.chance(0.7),
                }
            }
            _ => EpisodeKind::Delete {
                minion: match offline.len() {
                    0 => fleet.sorted[rng.below(fleet.sorted.len())],
                    n => offline[rng.below(n)],
                },
            },
        };
        let start_us = first + (rng.unit() * (last - first) as f64) as i64;
        let seed = rng.next_u64();
        let events = episode_events(fleet, kind);
        if events == 0 {
            // a role without online minions in a small fleet
            if draw > FIRST_KINDS.len() + 10_000 && total == 0 {
                break;
            }
            continue;
        }
        total += events;
        out.push(Episode {
            kind,
            start_us,
            seed,
            events,
        });
    }
    out
}

/// Consecutive episodes in work units of about `UNIT_EVENTS` events each.
pub fn noise_units(episodes: &[Episode]) -> Vec<Range<usize>> {
    let mut units = Vec::new();
    let (mut from, mut n) = (0, 0);
    for (i, e) in episodes.iter().enumerate() {
        n += e.events;
        if n >= UNIT_EVENTS {
            units.push(from..i + 1);
            (from, n) = (i + 1, 0);
        }
    }
    if from < episodes.len() {
        units.push(from..episodes.len());
    }
    units
}

/// A minion's public key as its `salt/auth` and `salt/key` events carry it:
/// a PEM RSA 2048 SubjectPublicKeyInfo, the same for the same `key_seed`.
pub fn pub_key(key_seed: u64) -> String {
    const SPKI_HEAD: [u8; 33] = [
        0x30, 0x82, 0x01, 0x22, 0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01,
        0x01, 0x01, 0x05, 0x00, 0x03, 0x82, 0x01, 0x0f, 0x00, 0x30, 0x82, 0x01, 0x0a, 0x02, 0x82,
        0x01, 0x01, 0x00,
    ];
    let mut r = Rng::new(key_seed);
    let mut der = Vec::with_capacity(294);
    der.extend_from_slice(&SPKI_HEAD);
    for _ in 0..32 {
        der.extend_from_slice(&r.next_u64().to_be_bytes());
    }
    der[33] |= 0x80; // a 2048-bit modulus
    der[33 + 255] |= 1; // odd
    der.extend_from_slice(&[0x02, 0x03, 0x01, 0x00, 0x01]); // e = 65537
    let b64 = base64(&der);
    let mut pem = String::with_capacity(460);
    pem.push_str("-----BEGIN PUBLIC KEY-----\n");
    for line in b64.as_bytes().chunks(64) {
        pem.push_str(std::str::from_utf8(line).unwrap_or_default());
        pem.push('\n');
    }
    pem.push_str("-----END PUBLIC KEY-----\n");
    pem
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= c.len() {
                out.push(A[(n >> shift & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `time.asctime()` of a UTC time: `Wed Dec  2 19:13:58 2026`.
pub fn asctime(us: i64) -> String {
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let iso = iso_utc(us); // 2026-12-02T19:13:58.123456+00:00
    let weekday = (us.div_euclid(86_400_000_000) + 4).rem_euclid(7) as usize; // 1970-01-01: Thursday
    let month: usize = iso[5..7].parse().unwrap_or(1);
    let day: u32 = iso[8..10].parse().unwrap_or(1);
    format!(
        "{} {} {day:2} {} {}",
        DAYS[weekday],
        MONTHS[month - 1],
        &iso[11..19],
        &iso[0..4]
    )
}

impl Plan {
    /// Event documents of the whole load: the jobs' and the noise's.
    pub fn event_docs(&self) -> u64 {
        self.job_event_docs() + self.noise.iter().map(|e| e.events).sum::<u64>()
    }

    /// The noise's documents of work unit `u`, one at a time.
    pub fn noise_docs_to(&self, u: usize, sink: &mut dyn FnMut(Doc)) {
        for e in &self.noise[self.noise_units[u].clone()] {
            self.episode_docs(e, sink);
        }
    }

    fn key_of(&self, m: u32) -> String {
        pub_key(mix(self.cfg.seed ^ KEY_STREAM, m as u64))
    }

    fn episode_docs(&self, e: &Episode, sink: &mut dyn FnMut(Doc)) {
        let mut r = Rng::new(e.seed);
        let fleet = &self.fleet;
        match e.kind {
            EpisodeKind::Reauth { group, window_ms } => {
                let mut burst = Burst::default();
                for m in members(fleet, group) {
                    let t = e.start_us + burst.next(window_ms, &mut r);
                    let id = &fleet.minions[m as usize].id;
                    sink(self.auth(id, "accept", self.key_of(m), t, &mut r));
                }
            }
            EpisodeKind::Restart { group, window_ms } => {
                let mut burst = Burst::default();
                for m in members(fleet, group) {
                    let t = e.start_us + burst.next(window_ms, &mut r);
                    let id = &fleet.minions[m as usize].id;
                    sink(self.auth(id, "accept", self.key_of(m), t, &mut r));
                    self.started(id, t, &mut r, sink);
                }
            }
            EpisodeKind::Pending {
                role,
                nth,
                tries,
                accepted,
            } => {
                let id = new_minion_id(fleet, role, nth);
                let key = pub_key(mix(
                    self.cfg.seed ^ KEY_STREAM,
                    1 << 40 | (role as u64) << 32 | nth as u64,
                ));
                let mut t = e.start_us;
                for _ in 0..tries {
                    sink(self.auth(&id, "pend", key.clone(), t, &mut r));
                    t += ACCEPTANCE_WAIT_US + r.range(1_000.0, 40_000.0) as i64;
                }
                // someone runs salt-key before the next try
                let keyed = t - r.range(1_000_000.0, 9_000_000.0) as i64;
                if accepted {
                    sink(self.key_event(&id, "accepted", Some(key.clone()), keyed, &mut r));
                    sink(self.auth(&id, "accept", key, t, &mut r));
                    self.started(&id, t, &mut r, sink);
                } else {
                    sink(self.key_event(&id, "delete", None, keyed, &mut r));
                }
            }
            EpisodeKind::Delete { minion } => {
                let id = &fleet.minions[minion as usize].id;
                sink(self.key_event(id, "delete", None, e.start_us, &mut r));
            }
        }
    }

    /// `salt/auth`: `{result, act, id, pub, _stamp}`.
    fn auth(&self, id: &str, act: &str, key: String, t: i64, r: &mut Rng) -> Doc {
        let data = obj! {
            "result" => J::Bool(true),
            "act" => s(act),
            "id" => s(id),
            "pub" => s(key),
            "_stamp" => s(iso_utc(t)),
        };
        event_doc(&self.cfg.prefix, "salt/auth".into(), data, r)
    }

    /// `salt/key`: `{result, act, id, [pub], _stamp}`.
    fn key_event(&self, id: &str, act: &str, key: Option<String>, t: i64, r: &mut Rng) -> Doc {
        let mut data = obj! {
            "result" => J::Bool(true),
            "act" => s(act),
            "id" => s(id),
        };
        if let Some(k) = key {
            data.set("pub", s(k));
        }
        data.set("_stamp", s(iso_utc(t)));
        event_doc(&self.cfg.prefix, "salt/key".into(), data, r)
    }

    /// A minion that authenticated at `t` comes up: `minion_start` (legacy
    /// minions) and `salt/minion/<id>/start`, one request after the other.
    fn started(&self, id: &str, t: i64, r: &mut Rng, sink: &mut dyn FnMut(Doc)) {
        let mut at = t + r.range(300_000.0, 2_000_000.0) as i64;
        let tags = [
            legacy_start(id).then(|| "minion_start".to_string()),
            Some(format!("salt/minion/{id}/start")),
        ];
        for tag in tags.into_iter().flatten() {
            let sent = at - r.range(300.0, 3_000.0) as i64;
            let data = obj! {
                "id" => s(id),
                "cmd" => s("_minion_event"),
                "pretag" => J::Null,
                "data" => s(format!("Minion {id} started at {}", asctime(sent))),
                "tag" => s(&tag),
                "_stamp" => s(iso_utc(at)),
                "ts" => J::Int(sent.div_euclid(1_000_000)),
            };
            sink(event_doc(&self.cfg.prefix, tag, data, r));
            at += r.range(800.0, 5_000.0) as i64;
        }
    }
}

/// Events of a burst in clumps of 1 to 5 per millisecond: the master's
/// workers take requests a few at a time, and fire their events together.
const CLUMP_WEIGHTS: &[u32] = &[80, 10, 5, 3, 2];

/// Offsets into a burst of `window_ms`: a millisecond shared by a clump of
/// events, then each one's µs in it.
#[derive(Default)]
struct Burst {
    ms: i64,
    left: usize,
}

impl Burst {
    fn next(&mut self, window_ms: u32, r: &mut Rng) -> i64 {
        if self.left == 0 {
            self.ms = r.below(window_ms as usize) as i64;
            self.left = 1 + r.weighted(CLUMP_WEIGHTS);
        }
        self.left -= 1;
        self.ms * 1_000 + r.below(1_000) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_keys_are_pem_rsa_2048() {
        let k = pub_key(7);
        let lines: Vec<&str> = k.lines().collect();
        assert_eq!(lines[0], "-----BEGIN PUBLIC KEY-----");
        assert_eq!(*lines.last().unwrap(), "-----END PUBLIC KEY-----");
        let body: String = lines[1..lines.len() - 1].concat();
        assert_eq!(body.len(), 392, "294 DER bytes");
        assert!(body.starts_with("MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"));
        assert!(body.ends_with("IDAQAB"), "e = 65537");
        assert!(lines[1..lines.len() - 2].iter().all(|l| l.len() == 64));
        assert_eq!(k, pub_key(7));
        assert_ne!(k, pub_key(8));
        assert_eq!(base64(b"Man"), "TWFu");
        assert_eq!(base64(b"Ma"), "TWE=");
        assert_eq!(base64(b"M"), "TQ==");
    }

    #[test]
    fn asctime_is_pythons() {
        // 2026-12-02T19:13:58Z was a Wednesday
        let us = saltscope_core::time::parse_utc("2026-12-02T19:13:58.5+00:00").unwrap() * 1000;
        assert_eq!(asctime(us), "Wed Dec  2 19:13:58 2026");
        let us = saltscope_core::time::parse_utc("2027-01-17T07:03:09+00:00").unwrap() * 1000;
        assert_eq!(asctime(us), "Sun Jan 17 07:03:09 2027");
    }
}
