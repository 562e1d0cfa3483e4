//! saltscope-gen: bulk-load synthetic Salt returns into Elasticsearch/OpenSearch.
//! See `saltscope-gen --help`.

use saltscope_core::engine::Method;
use saltscope_gen::cli::{parse_args, Opts};
use saltscope_gen::gen::{
    event_index, job_cache_index, return_index, Fun, Plan, FUNS, SPECIAL_FUNS,
};
use saltscope_gen::http::{cat_indices, Http};
use saltscope_gen::load::{Loader, Stats};
use saltscope_gen::mappings::{
    big_state_index_body, event_cache_index_body, summarised_index_body, summary_pipeline,
};
use saltscope_gen::marker::{marker_doc, print_summary, MARKER_INDEX, MARKER_KEYS};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn main() {
    let o = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("saltscope-gen: {e}");
            std::process::exit(2);
        }
    };
    match run(o) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("saltscope-gen: ERROR: {e}");
            std::process::exit(1);
        }
    }
}

fn run(o: Opts) -> Result<i32, String> {
    let t0 = Instant::now();
    let cfg = o.cfg.clone();
    let prefix = cfg.prefix.clone();
    let plan = Arc::new(Plan::new(cfg.clone()));
    let njobs = plan.jobs.len() + plan.specials.len();
    let minion_jobs = njobs - plan.jobs.iter().filter(|j| j.fun.is_runner()).count();
    let return_docs = plan.return_docs();
    eprintln!(
        "saltscope-gen: planned {} returns in {} jobs ({} minion jobs, {} runner, {} special) over {} minions, {} days, seed {} ({:.1}s)",
        return_docs,
        njobs,
        minion_jobs,
        njobs - minion_jobs,
        plan.specials.len(),
        plan.fleet.minions.len(),
        cfg.days,
        cfg.seed,
        t0.elapsed().as_secs_f64()
    );
    let event_docs = plan.event_docs();
    let planned_docs = return_docs + plan.job_cache_docs() + event_docs;
    if cfg.events > 0 {
        eprintln!(
            "saltscope-gen: planned {event_docs} events: {} of the jobs, {} of the fleet in {} episodes",
            plan.job_event_docs(),
            event_docs - plan.job_event_docs(),
            plan.noise.len()
        );
    }
    if plan.fleet.minions.len() > cfg.minions {
        eprintln!(
            "saltscope-gen: the fleet grew from {} to {} minions for --minions-per-job {}",
            cfg.minions,
            plan.fleet.minions.len(),
            cfg.minions_per_job
        );
    }
    let specials: serde_json::Value =
        serde_json::from_str(&plan.specials_summary().to_json()).unwrap_or_default();

    let http = Http::new(&o.url);
    let mut indices: Vec<String> = FUNS
        .iter()
        .chain(SPECIAL_FUNS)
        .filter(|f| {
            plan.jobs
                .iter()
                .chain(&plan.specials)
                .any(|j| j.fun == **f && j.return_docs(&cfg) > 0)
        })
        .map(|f| return_index(&prefix, *f))
        .collect();
    indices.push(job_cache_index(&prefix));
    indices.push(event_index(&prefix));

    if !o.dry_run {
        let info = http.ok(Method::Get, "/", None)?;
        eprintln!(
            "saltscope-gen: engine {} {} at {}",
            info.pointer("/version/distribution")
                .and_then(|v| v.as_str())
                .unwrap_or("elasticsearch"),
            info.pointer("/version/number")
                .and_then(|v| v.as_str())
                .unwrap_or("?"),
            o.url
        );
        let existing = cat_indices(&http, &prefix)?;
        if o.skip_if_loaded {
            let (st, m) =
                http.json(Method::Get, &format!("/{MARKER_INDEX}/_doc/{prefix}"), None)?;
            let want = marker_doc(&plan, 0);
            let src = m.get("_source").cloned().unwrap_or_default();
            let same = st == 200
                && MARKER_KEYS
                    .iter()
                    .all(|(k, old)| src.get(k).or(old.as_ref()) == want.get(k));
            let loaded: u64 = existing
                .iter()
                .filter(|(n, _, _)| !n.starts_with(&format!("{prefix}-master-")))
                .map(|(_, c, _)| c)
                .sum();
            // With --events the event cache is part of the set too.
            let events_loaded: u64 = existing
                .iter()
                .filter(|(n, _, _)| n.starts_with(&event_index(&prefix)))
                .map(|(_, c, _)| c)
                .sum();
            let events_same = cfg.events == 0 || events_loaded == event_docs;
            if same && loaded == return_docs && events_same {
                let and_events = if cfg.events > 0 {
                    format!(" and {events_loaded} events")
                } else {
                    String::new()
                };
                println!("saltscope-gen: {prefix}-* already holds {loaded} returns{and_events} for seed {} (marker {MARKER_INDEX}/{prefix}): nothing to do", cfg.seed);
                // The jids of the special jobs as loaded (their --end may have been another).
                if !plan.specials.is_empty() {
                    print_summary(&prefix, cfg.seed, &src["special_jobs"]);
                }
                return Ok(0);
            }
            if st == 200 || !existing.is_empty() {
                eprintln!("saltscope-gen: loaded set differs (marker {}, {loaded} returns and {events_loaded} events in the engine): reloading", if same { "same" } else { "different/missing" });
            }
        }
        if !existing.is_empty() {
            if !o.replace {
                return Err(format!(
                    "{} indices {prefix}-* exist already (returns have engine ids, a second load would double them): pass --replace",
                    existing.len()
                ));
            }
            for (name, _, _) in &existing {
                http.ok(Method::Delete, &format!("/{name}"), None)?;
            }
            eprintln!(
                "saltscope-gen: deleted {} existing {prefix}-* indices",
                existing.len()
            );
        }
        let _ = http.json(
            Method::Delete,
            &format!("/{MARKER_INDEX}/_doc/{prefix}"),
            None,
        );
        if o.summary_pipeline {
            let (name, body) = summary_pipeline()?;
            http.ok(
                Method::Put,
                &format!("/_ingest/pipeline/{name}"),
                Some(&body.to_string()),
            )?;
            eprintln!("saltscope-gen: ingest pipeline {name} installed; the return indices run it");
        }
        // As the returner does: create `<name>-v1` (1 shard, 0 replicas), then the alias.
        let big_states_index = return_index(&prefix, Fun::StateApply);
        let master_indices = format!("{prefix}-master-");
        for name in &indices {
            let body = if o.summary_pipeline && !name.starts_with(&master_indices) {
                summarised_index_body()?.to_string()
            } else if cfg.states_per_return > 0 && *name == big_states_index {
                big_state_index_body()?.to_string()
            } else if cfg.events > 0 && *name == event_index(&prefix) {
                event_cache_index_body()?.to_string()
            } else {
                r#"{"settings": {"number_of_shards": 1, "number_of_replicas": 0}}"#.to_string()
            };
            http.ok(Method::Put, &format!("/{name}-v1"), Some(&body))?;
            if cfg.states_per_return > 0 && *name == big_states_index {
                eprintln!("saltscope-gen: {name}-v1 created with data unindexed (deploy/index-template/salt-returns-objects.json): a {}-state return is over the engine's 1000-field limit otherwise", cfg.states_per_return);
            }
            http.ok(
                Method::Put,
                &format!("/{name}-v1/_alias/{name}"),
                Some("{}"),
            )?;
            if !o.keep_refresh {
                http.ok(
                    Method::Put,
                    &format!("/{name}-v1/_settings"),
                    Some(r#"{"index": {"refresh_interval": "-1"}}"#),
                )?;
            }
        }
    }

    let stats = Arc::new(Stats::default());
    let next = Arc::new(AtomicUsize::new(0));
    let out_file: Option<Arc<Mutex<Box<dyn Write + Send>>>> = match (&o.dry_run, &o.out) {
        (true, Some(p)) if p == "-" => Some(Arc::new(Mutex::new(Box::new(std::io::stdout())))),
        (true, Some(p)) => Some(Arc::new(Mutex::new(Box::new(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("{p}: {e}"))?,
        ))))),
        _ => None,
    };
    // Work units: each special job alone (the big ones first, so that the
    // threads share them), then the normal jobs 32 at a time.
    // Last, the noise of the event bus, a few thousand events a unit.
    let nspecial = plan.specials.len();
    let job_units = plan.jobs.len().div_ceil(32);
    let units = nspecial + job_units + plan.noise_units.len();
    let t_load = Instant::now();
    let mut handles = Vec::new();
    for _ in 0..o.threads {
        let (plan, stats, next, out_file) =
            (plan.clone(), stats.clone(), next.clone(), out_file.clone());
        // Each thread makes its own client: a client is not shared across threads.
        let url = o.url.clone();
        let batch = o.batch;
        let master = format!("{prefix}-master-");
        handles.push(std::thread::spawn(move || {
            let mut loader =
                Loader::new(Http::new(&url), &stats, out_file.as_deref(), batch, master);
            loop {
                if stats.abort.load(Ordering::Relaxed) {
                    break;
                }
                let u = next.fetch_add(1, Ordering::Relaxed);
                if u >= units {
                    break;
                }
                if u < nspecial {
                    plan.special_docs_to(u, &mut |d| loader.push(d));
                } else if u >= nspecial + job_units {
                    plan.noise_docs_to(u - nspecial - job_units, &mut |d| loader.push(d));
                } else {
                    let j0 = (u - nspecial) * 32;
                    for j in j0..(j0 + 32).min(plan.jobs.len()) {
                        plan.job_docs_to(j, &mut |d| loader.push(d));
                    }
                }
            }
            if !stats.abort.load(Ordering::Relaxed) {
                loader.flush();
            }
            let mut all = stats.per_index.lock().unwrap();
            for (k, v) in std::mem::take(&mut loader.per_index) {
                *all.entry(k).or_default() += v;
            }
        }));
    }
    // Progress.
    let mut last = Instant::now();
    while handles.iter().any(|h| !h.is_finished()) {
        std::thread::sleep(Duration::from_millis(200));
        if last.elapsed() >= Duration::from_secs(5) {
            last = Instant::now();
            let secs = t_load.elapsed().as_secs_f64();
            let r = stats.returns.load(Ordering::Relaxed);
            let docs = stats.docs.load(Ordering::Relaxed);
            // with --events most documents are no returns: the share of all of them
            let done = if cfg.events > 0 {
                docs as f64 / planned_docs.max(1) as f64
            } else {
                r as f64 / return_docs.max(1) as f64
            };
            eprintln!(
                "saltscope-gen: {:>5.1}% {r}/{} returns, {} docs, {:.0} MB, {:.0}s, {:.0} docs/s",
                100.0 * done,
                return_docs,
                docs,
                stats.bytes.load(Ordering::Relaxed) as f64 / 1e6,
                secs,
                stats.docs.load(Ordering::Relaxed) as f64 / secs
            );
        }
    }
    for h in handles {
        h.join().map_err(|_| "a worker thread panicked")?;
    }
    if let Some(f) = &out_file {
        f.lock().unwrap().flush().map_err(|e| e.to_string())?;
    }
    let load_secs = t_load.elapsed().as_secs_f64();

    let expected = stats.per_index.lock().unwrap().clone();
    let mut actual: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut mismatch = Vec::new();
    if !o.dry_run && !stats.abort.load(Ordering::Relaxed) {
        for name in &indices {
            if !o.keep_refresh {
                http.ok(
                    Method::Put,
                    &format!("/{name}-v1/_settings"),
                    Some(r#"{"index": {"refresh_interval": null}}"#),
                )?;
            }
        }
        http.ok(Method::Post, &format!("/{prefix}-*/_refresh"), None)?;
        for (name, count, size) in cat_indices(&http, &prefix)? {
            actual.insert(name.trim_end_matches("-v1").to_string(), (count, size));
        }
        for (name, want) in &expected {
            let got = actual.get(name).map(|a| a.0).unwrap_or(0);
            if got != *want {
                mismatch.push(format!(
                    "{name}: expected {want} docs, the engine holds {got}"
                ));
            }
        }
    }
    let total_secs = t0.elapsed().as_secs_f64();

    // The table.
    let docs = stats.docs.load(Ordering::Relaxed);
    let bytes = stats.bytes.load(Ordering::Relaxed);
    println!();
    println!(
        "{:<44} {:>10} {:>10} {:>12}",
        "index (alias)", "docs", "in engine", "store MB"
    );
    for (name, n) in &expected {
        let (c, sz) = actual
            .get(name)
            .map(|a| (a.0.to_string(), format!("{:.1}", a.1 as f64 / 1048576.0)))
            .unwrap_or(("-".into(), "-".into()));
        println!("{name:<44} {n:>10} {c:>10} {sz:>12}");
    }
    println!("{}", "-".repeat(79));
    println!("returns        {}", stats.returns.load(Ordering::Relaxed));
    if cfg.events > 0 {
        let written = expected.get(&event_index(&prefix)).copied().unwrap_or(0);
        println!(
            "events         {written} ({} of the jobs, {} of the fleet)",
            plan.job_event_docs(),
            written.saturating_sub(plan.job_event_docs())
        );
    }
    println!(
        "jobs           {njobs} ({minion_jobs} minion jobs, {} runner jobs, {} special)",
        njobs - minion_jobs,
        plan.specials.len()
    );
    println!("minions        {}", plan.fleet.minions.len());
    println!("documents      {docs}");
    println!(
        "bulk bytes     {bytes} ({:.1} MB, {:.0} B/doc)",
        bytes as f64 / 1e6,
        bytes as f64 / docs.max(1) as f64
    );
    println!("load seconds   {load_secs:.1} (total {total_secs:.1})");
    println!("docs/s         {:.0}", docs as f64 / load_secs.max(1e-9));

    let item_errors = stats.item_errors.load(Ordering::Relaxed);
    let errors = stats.errors.lock().unwrap().clone();
    if item_errors > 0
        || !errors.is_empty()
        || !mismatch.is_empty()
        || stats.abort.load(Ordering::Relaxed)
    {
        eprintln!("\nsaltscope-gen: FAILED: {item_errors} rejected documents");
        for e in errors.iter().chain(mismatch.iter()) {
            eprintln!("  {e}");
        }
        return Ok(1);
    }
    if !o.dry_run {
        let marker = marker_doc(&plan, docs).to_string();
        http.ok(
            Method::Put,
            &format!("/{MARKER_INDEX}/_doc/{prefix}?refresh=true"),
            Some(&marker),
        )?;
    }
    if let Some(jobs) = specials.as_object().filter(|j| !j.is_empty()) {
        println!();
        for (name, j) in jobs {
            println!(
                "special {name:<18} jid {}  {} returns of {}",
                j["jid"].as_str().unwrap_or("?"),
                j["returns"],
                j["fun"].as_str().unwrap_or("?")
            );
        }
        print_summary(&prefix, cfg.seed, &specials);
    }
    Ok(0)
}
