//! What to generate: the options of one load.

use super::Fun;

#[derive(Clone, Debug)]
pub struct Config {
    pub prefix: String,
    pub returns: u64,
    pub minions: usize,
    pub days: f64,
    pub seed: u64,
    /// end of the time span, µs since the epoch
    pub end_us: i64,
    /// master id; runner returns get `minion: "<master>"` (Salt's default id is `<host>_master`)
    pub master: String,
    /// the returner's `states_count` option: `counts: {succeeded, failed}`
    pub states_count: bool,
    /// padding states added to every state run (0..=12), to test bigger documents
    pub extra_states: usize,
    /// also write `salt/job/<jid>/ret/<minion>` events for test.ping jobs
    pub ret_events: bool,
    /// `--states-per-return N`: a state.apply job of 1 minion whose return holds N states (0: none)
    pub states_per_return: usize,
    /// `--minions-per-job N`: a job on N minions (N returns) for each of `wide_funs` (0: none)
    pub minions_per_job: usize,
    /// the functions of the `--minions-per-job` jobs (`--minions-per-job-fun`)
    pub wide_funs: Vec<Fun>,
    /// `--output-bytes N`: a cmd.run return whose output is N bytes, and a state.apply
    /// return with a file state whose diff is N bytes (0: none)
    pub output_bytes: usize,
    /// `--events N`: the master's event bus in `<prefix>-master-event-cache`: every
    /// job's events and the fleet's noise, at least N event documents (0: only the
    /// jobs' `new` events, as without the option)
    pub events: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            prefix: "saltgen".into(),
            returns: 10_000,
            minions: 2_000,
            days: 30.0,
            seed: 1,
            end_us: saltscope_core::time::parse_end("2026-12-01T00:00:00").unwrap(),
            master: "salt01_master".into(),
            states_count: false,
            extra_states: 0,
            ret_events: false,
            states_per_return: 0,
            minions_per_job: 0,
            wide_funs: vec![Fun::StateApply, Fun::TestVersion],
            output_bytes: 0,
            events: 0,
        }
    }
}
