//! The big job shapes made on request, on top of the normal mix.

use super::{mix, Config, Fleet, Fun, Job, Rng};
use crate::json::{s, J};
use crate::states::{run_list, Kind, StateDef};

/// A job made at size on request (`--states-per-return`, `--minions-per-job`,
/// `--output-bytes`), on top of the normal mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// state.apply on 1 minion whose return holds `states_per_return` states
    States,
    /// state.apply on `minions_per_job` minions
    WideStateApply,
    /// test.version on `minions_per_job` minions
    WideTestVersion,
    /// cmd.run on 1 minion whose output is `output_bytes` long
    OutputCmdRun,
    /// state.apply on 1 minion, one file state with a diff `output_bytes` long
    OutputDiff,
    /// cmd.run_all on 1 minion whose stdout is `output_bytes` long
    OutputCmdRunAll,
    /// file.find on 1 minion listing paths of `output_bytes` in all
    OutputFileFind,
}

impl Special {
    pub const ALL: [Special; 7] = [
        Special::States,
        Special::WideStateApply,
        Special::WideTestVersion,
        Special::OutputCmdRun,
        Special::OutputDiff,
        Special::OutputCmdRunAll,
        Special::OutputFileFind,
    ];
    /// 1..=7: the last two digits of its jid
    pub fn code(self) -> i64 {
        match self {
            Special::States => 1,
            Special::WideStateApply => 2,
            Special::WideTestVersion => 3,
            Special::OutputCmdRun => 4,
            Special::OutputDiff => 5,
            Special::OutputCmdRunAll => 6,
            Special::OutputFileFind => 7,
        }
    }
    /// its name in the summary and in the marker document
    pub fn name(self) -> &'static str {
        match self {
            Special::States => "states",
            Special::WideStateApply => "wide_state_apply",
            Special::WideTestVersion => "wide_test_version",
            Special::OutputCmdRun => "output_cmd_run",
            Special::OutputDiff => "output_diff",
            Special::OutputCmdRunAll => "output_cmd_run_all",
            Special::OutputFileFind => "output_file_find",
        }
    }
    pub fn fun(self) -> Fun {
        match self {
            Special::WideTestVersion => Fun::TestVersion,
            Special::OutputCmdRun => Fun::CmdRun,
            Special::OutputCmdRunAll => Fun::CmdRunAll,
            Special::OutputFileFind => Fun::FileFind,
            _ => Fun::StateApply,
        }
    }
    pub fn wanted(self, cfg: &Config) -> bool {
        match self {
            Special::States => cfg.states_per_return > 0,
            Special::WideStateApply => {
                cfg.minions_per_job > 0 && cfg.wide_funs.contains(&Fun::StateApply)
            }
            Special::WideTestVersion => {
                cfg.minions_per_job > 0 && cfg.wide_funs.contains(&Fun::TestVersion)
            }
            Special::OutputCmdRun
            | Special::OutputDiff
            | Special::OutputCmdRunAll
            | Special::OutputFileFind => cfg.output_bytes > 0,
        }
    }
}

/// When a special job starts, which is its jid: 6 hours before `--end` rounded
/// down to the minute, 10 minutes apart in `Special::ALL` order, with
/// microseconds `SSSSKK` (SSSS = seed mod 10000, KK = `code`). So the jid reads
/// `YYYYMMDDhhmm00SSSSKK`: the same for the same seed and end, and recognisable.
pub fn special_start_us(cfg: &Config, kind: Special) -> i64 {
    let minute = cfg.end_us.div_euclid(60_000_000) * 60_000_000;
    minute - 6 * 3_600_000_000
        + (kind.code() - 1) * 600_000_000
        + (cfg.seed % 10_000) as i64 * 100
        + kind.code()
}

/// Who the `--minions-per-job` jobs target: (targeted, returning), exactly
/// `minions_per_job` returning, and a few targeted ones that never return.
#[derive(Clone, Debug)]
pub(super) struct WideTarget {
    /// the whole fleet (`*`), or a list
    whole: bool,
    targeted: Vec<u32>,
}

/// The fleet, grown when `--minions-per-job` needs more minions than `--minions`
/// (the job then targets `*`: all of them), and whom the wide jobs target.
pub(super) fn wide_fleet(cfg: &Config, rng: &mut Rng) -> (Fleet, Option<WideTarget>) {
    let n = cfg.minions_per_job;
    let want = cfg.minions.max(1);
    let wide = cfg.minions_per_job > 0
        && (cfg.wide_funs.contains(&Fun::StateApply) || cfg.wide_funs.contains(&Fun::TestVersion));
    if !wide {
        return (Fleet::new(want, rng), None);
    }
    // Room for the minions that never return: offline (0.6 %) and timed out.
    let fits = n + n / 100 + 8;
    let whole = want <= fits;
    let mut size = want.max(fits);
    let start = rng.clone();
    loop {
        *rng = start.clone();
        let fleet = Fleet::new(size, rng);
        let online = fleet.minions.iter().filter(|m| !m.offline).count();
        if whole && online >= n {
            let targeted = fleet.sorted.clone();
            return (fleet, Some(WideTarget { whole, targeted }));
        }
        if !whole {
            // The first minions by id, until n of them answer, and one more.
            let mut targeted = Vec::new();
            let mut answering = 0;
            for &m in &fleet.sorted {
                targeted.push(m);
                if !fleet.minions[m as usize].offline {
                    answering += 1;
                }
                if answering > n {
                    break;
                }
            }
            if answering > n {
                return (fleet, Some(WideTarget { whole, targeted }));
            }
        }
        // Too many offline ones (a small fleet, bad luck): a few more minions.
        size += n / 100 + 8;
    }
}

/// The file state whose diff `--output-bytes` makes long, in a role's run:
/// its last file.managed that neither requires nor waits on another state.
pub(super) fn diff_state(role: usize) -> Option<&'static StateDef> {
    run_list(role, 0)
        .into_iter()
        .rev()
        .find(|d| matches!(d.kind, Kind::File(..)) && d.req.is_none() && d.onchanges.is_none())
}

pub(super) fn special_job(
    cfg: &Config,
    fleet: &Fleet,
    wide: Option<&WideTarget>,
    kind: Special,
) -> Job {
    // Each special job draws from its own stream: the normal mix stays as it is.
    let mut rng = Rng::new(mix(cfg.seed, 0x5bec_1a10 + kind.code() as u64));
    let fun = kind.fun();
    let mut job = Job {
        fun,
        tgt: J::Null,
        tgt_type: "glob",
        minions: vec![],
        returning: vec![],
        start_us: special_start_us(cfg, kind),
        seed: rng.next_u64(),
        user: "root",
        arg: vec![],
        variant: 0,
        test_mode: false,
        render_error: false,
        rollout: vec![],
        broken: None,
        special: Some(kind),
    };
    let ms = &fleet.minions;
    match (kind, wide) {
        (Special::WideStateApply | Special::WideTestVersion, Some(w)) => {
            let n = cfg.minions_per_job;
            let answering: Vec<u32> = w
                .targeted
                .iter()
                .copied()
                .filter(|m| !ms[*m as usize].offline)
                .collect();
            // Exactly n of them return: the others time out (chosen evenly at random).
            let mut skip = answering.len().saturating_sub(n);
            let mut left = answering.len();
            for m in answering {
                if skip > 0 && rng.below(left) < skip {
                    skip -= 1;
                } else {
                    job.returning.push(m);
                }
                left -= 1;
            }
            job.minions = w.targeted.clone();
            if w.whole {
                job.tgt = s("*");
            } else {
                job.tgt = J::Arr(job.minions.iter().map(|m| s(&ms[*m as usize].id)).collect());
                job.tgt_type = "list";
            }
            if kind == Special::WideStateApply {
                // a rollout that changes every minion, and a lock that fails a few
                job.rollout = vec!["motd", "sshd.config"];
                job.broken = Some(("base.packages", 0.05));
            }
        }
        _ => {
            let answering: Vec<u32> = fleet
                .sorted
                .iter()
                .copied()
                .filter(|m| !ms[*m as usize].offline)
                .collect();
            let m = answering
                .get(rng.below(answering.len()))
                .copied()
                .unwrap_or(fleet.sorted[0]);
            job.tgt = s(&ms[m as usize].id);
            job.minions = vec![m];
            job.returning = vec![m];
            match kind {
                Special::OutputCmdRun | Special::OutputCmdRunAll => {
                    job.arg = vec![s(BIG_OUTPUT_COMMAND)];
                }
                Special::OutputFileFind => job.arg = vec![s(BIG_FIND_ROOT)],
                _ => {}
            }
        }
    }
    job
}

/// What the `--output-bytes` file.find job lists.
pub const BIG_FIND_ROOT: &str = "/srv/www";

/// The command of the `--output-bytes` cmd.run and cmd.run_all jobs.
pub const BIG_OUTPUT_COMMAND: &str =
    "journalctl -u app.service --no-pager -o short-iso-precise --since -24h";
