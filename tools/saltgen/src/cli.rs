//! The command line: `saltscope-gen --help`.

use crate::gen::{Config, Fun};
use saltscope_core::time::parse_end;

pub const USAGE: &str = "\
saltscope-gen: load synthetic Salt returns shaped exactly like the elasticsearch returner's

usage: saltscope-gen [options]
  --url URL            engine base URL (default http://127.0.0.1:9200)
  --returns N          return documents to write (default 1000000)
  --prefix P           index prefix (default saltgen): <P>-<fun_>, <P>-master-job-cache,
                       <P>-master-event-cache
  --days D             spread jobs over the last D days (default 30)
  --end TIME           end of the span: unix seconds or 2026-12-01T00:00:00 (default now)
  --minions N          fleet size (default 2000)
  --seed S             PRNG seed (default 1); same seed, same documents
  --batch N            documents per bulk request (default 5000)
  --threads N          generator+loader threads (default 2)
  --master ID          runner returns' minion (default salt01_master)
  --states-count       the returner's states_count option: counts {succeeded, failed}
  --extra-states N     add N (0..12) padding states to every state run (default 0)
  --ret-events         also write salt/job/<jid>/ret/<minion> events (test.ping jobs)
  --events N           the master's event bus, at least N event documents (default 0: off, only
                       each job's salt/job/<jid>/new): every job's new, publish and one ret per
                       returning minion (failed ones too), runner salt/run/<jid>/new and ret,
                       then fleet noise up to N: salt/auth floods (accept, pend), minion_start
                       and salt/minion/<id>/start, salt/key (accepted, delete). <prefix>-master-
                       event-cache-v1 is then created with the mappings of deploy/index-template/
                       salt-master-event-cache.json (the dynamic mapping refuses most ret events);
                       supersedes --ret-events
big job shapes, on top of the --returns mix (--returns 0: only them); each has a fixed jid
YYYYMMDDhhmm00SSSSKK (6 h before --end, +10 min per kind; SSSS = seed mod 10000, KK = kind),
listed at the end (last line: JSON) and in the marker document:
  --states-per-return N  (KK 01) one state.apply return of 1 minion holding N states
                       (<= 100000); <prefix>-state_apply is then created with data unindexed
                       (deploy/index-template/salt-returns-objects.json), as the engine refuses
                       a return of more than 1000 fields under the dynamic mapping
  --minions-per-job N  (KK 02 state.apply, 03 test.version) a job on N minions: N returns, a
                       few targeted minions that never return; the fleet grows to fit
  --minions-per-job-fun F   state.apply | test.version | both (default both)
  --output-bytes N     (KK 04) a cmd.run return whose output is N bytes, (KK 05) a
                       state.apply return whose file state's changes.diff is N bytes,
                       (KK 06) a cmd.run_all return whose stdout is N bytes and (KK 07) a
                       file.find return listing paths of N bytes in all (1024..=50000000)
  --replace            delete existing <prefix>-* indices first
  --skip-if-loaded     exit 0 without loading when the marker says the same set is loaded
  --keep-refresh       don't turn index refresh off during the load
  --summary-pipeline   create the return indices as the project's index template does,
                       through the ingest pipeline saltscope-return-summary (installed
                       from deploy/ingest/): returns carry the saltscope.* summary fields
  --dry-run --out F    write the bulk NDJSON to F ('-' = stdout) instead of loading
";

pub struct Opts {
    pub url: String,
    pub cfg: Config,
    pub batch: usize,
    pub threads: usize,
    pub replace: bool,
    pub skip_if_loaded: bool,
    pub keep_refresh: bool,
    /// Return indices as the index template makes them, through the summary pipeline.
    pub summary_pipeline: bool,
    pub dry_run: bool,
    pub out: Option<String>,
}

pub fn parse_args() -> Result<Opts, String> {
    let now_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let mut o = Opts {
        url: "http://127.0.0.1:9200".into(),
        cfg: Config {
            returns: 1_000_000,
            end_us: now_us,
            ..Config::default()
        },
        batch: 5000,
        threads: 2,
        replace: false,
        skip_if_loaded: false,
        keep_refresh: false,
        summary_pipeline: false,
        dry_run: false,
        out: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or_else(|| format!("{a} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|_| format!("bad number '{v}'"));
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                std::process::exit(0);
            }
            "--url" => o.url = val()?.trim_end_matches('/').to_string(),
            "--returns" => o.cfg.returns = num(val()?)?,
            "--prefix" => o.cfg.prefix = val()?,
            "--days" => o.cfg.days = val()?.parse().map_err(|_| "bad --days")?,
            "--end" => {
                let v = val()?;
                o.cfg.end_us = parse_end(&v).map_err(|e| format!("bad --end: {e}"))?
            }
            "--minions" => o.cfg.minions = num(val()?)? as usize,
            "--seed" => o.cfg.seed = num(val()?)?,
            "--batch" => o.batch = num(val()?)?.max(1) as usize,
            "--threads" => o.threads = num(val()?)?.max(1) as usize,
            "--master" => o.cfg.master = val()?,
            "--states-count" => o.cfg.states_count = true,
            "--extra-states" => o.cfg.extra_states = (num(val()?)? as usize).min(12),
            "--ret-events" => o.cfg.ret_events = true,
            "--events" => o.cfg.events = num(val()?)?,
            "--states-per-return" => o.cfg.states_per_return = num(val()?)? as usize,
            "--minions-per-job" => o.cfg.minions_per_job = num(val()?)? as usize,
            "--minions-per-job-fun" => {
                o.cfg.wide_funs = match val()?.as_str() {
                    "state.apply" => vec![Fun::StateApply],
                    "test.version" => vec![Fun::TestVersion],
                    "both" => vec![Fun::StateApply, Fun::TestVersion],
                    v => {
                        return Err(format!(
                            "bad --minions-per-job-fun '{v}': state.apply, test.version or both"
                        ))
                    }
                }
            }
            "--output-bytes" => o.cfg.output_bytes = num(val()?)? as usize,
            "--replace" => o.replace = true,
            "--skip-if-loaded" => o.skip_if_loaded = true,
            "--keep-refresh" => o.keep_refresh = true,
            "--summary-pipeline" => o.summary_pipeline = true,
            "--dry-run" => o.dry_run = true,
            "--out" => o.out = Some(val()?),
            _ => return Err(format!("unknown option '{a}'\n\n{USAGE}")),
        }
    }
    if o.dry_run && o.out.is_none() {
        return Err("--dry-run needs --out FILE (or --out -)".into());
    }
    if o.cfg.prefix.is_empty() || o.cfg.prefix.contains(['*', ',', ' ', '/']) {
        return Err("bad --prefix".into());
    }
    // One return is one bulk item: the engine takes at most 100 MB a request.
    if o.cfg.states_per_return > 100_000 {
        return Err("--states-per-return: at most 100000 (about 45 MB in one document)".into());
    }
    if o.cfg.output_bytes > 0 && !(1024..=50_000_000).contains(&o.cfg.output_bytes) {
        return Err("--output-bytes: from 1024 to 50000000".into());
    }
    if o.cfg.minions_per_job > 1_000_000 {
        return Err("--minions-per-job: at most 1000000".into());
    }
    Ok(o)
}
