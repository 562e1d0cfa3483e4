//! The SLS tree every generated minion runs: a common base plus one role.
//! The set of state keys is fixed (as in a real fleet, where the same tree
//! runs everywhere), so the dynamic mapping of a state index stays bounded:
//! every state key is a field, and so is every subfield under it.

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// pkg.installed; the packages it manages (name, old version, new version)
    Pkg(&'static [(&'static str, &'static str, &'static str)]),
    /// file.managed; (old line, new line) used for the unified diff
    File(&'static str, &'static str),
    Directory,
    /// service.running, restarted when the `watch` state changed
    Service,
    User,
    /// cmd.run; stdout on success, (exit code, stderr) on failure
    Cmd(&'static str, i64, &'static str),
    /// test.succeed_without_changes (padding states, see `--extra-states`)
    Test,
}

#[derive(Clone, Copy, Debug)]
pub struct StateDef {
    pub module: &'static str,
    pub id: &'static str,
    pub name: &'static str,
    pub fun: &'static str,
    pub sls: &'static str,
    pub kind: Kind,
    /// `require`/`watch`: fails with "One or more requisite failed" when this id failed,
    /// and (for services) restarts when it changed.
    pub req: Option<&'static str>,
    /// `onchanges`: only runs when this id changed, else `__state_ran__: false`.
    pub onchanges: Option<&'static str>,
    /// Can fail on its own (a broken deploy, a flaky host).
    pub can_fail: bool,
}

const fn st(
    module: &'static str,
    id: &'static str,
    name: &'static str,
    fun: &'static str,
    sls: &'static str,
    kind: Kind,
) -> StateDef {
    StateDef {
        module,
        id,
        name,
        fun,
        sls,
        kind,
        req: None,
        onchanges: None,
        can_fail: false,
    }
}

const fn req(mut d: StateDef, id: &'static str) -> StateDef {
    d.req = Some(id);
    d
}
const fn onch(mut d: StateDef, id: &'static str) -> StateDef {
    d.onchanges = Some(id);
    d
}
const fn fails(mut d: StateDef) -> StateDef {
    d.can_fail = true;
    d
}

pub const BASE_PKGS: &[(&str, &str, &str)] = &[
    ("curl", "7.88.1-10+deb12u7", "7.88.1-10+deb12u8"),
    ("python3.11", "3.11.2-6+deb12u4", "3.11.2-6+deb12u5"),
    ("openssl", "3.0.15-1~deb12u1", "3.0.16-1~deb12u1"),
    ("ca-certificates", "20230311", "20230311+deb12u1"),
    ("tzdata", "2025b-0+deb12u1", "2026a-0+deb12u1"),
];

pub const COMMON: &[StateDef] = &[
    fails(st("pkg", "base.packages", "base.packages", "installed", "common.packages", Kind::Pkg(BASE_PKGS))),
    onch(
        st("cmd", "apt.cache.refresh", "apt-get -qq update", "run", "common.packages", Kind::Cmd("", 100, "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)")),
        "base.packages",
    ),
    st("file", "motd", "/etc/motd", "managed", "common.motd", Kind::File("Welcome to {minion}", "Welcome to {minion} - managed by Salt, changes will be overwritten")),
    st("user", "users.deploy", "deploy", "present", "common.users", Kind::User),
    st("file", "sshd.config", "/etc/ssh/sshd_config", "managed", "common.ssh", Kind::File("PasswordAuthentication yes", "PasswordAuthentication no")),
    fails(req(st("service", "sshd.service", "sshd", "running", "common.ssh", Kind::Service), "sshd.config")),
    st("file", "chrony.conf", "/etc/chrony/chrony.conf", "managed", "common.time", Kind::File("pool 2.debian.pool.ntp.org iburst", "pool ntp.example.com iburst maxsources 4")),
    req(st("service", "chrony.service", "chrony", "running", "common.time", Kind::Service), "chrony.conf"),
];

pub const WEB: &[StateDef] = &[
    st("pkg", "nginx", "nginx", "installed", "nginx", Kind::Pkg(&[("nginx", "1.22.1-9", "1.22.1-9+deb12u1")])),
    st("file", "nginx.conf", "/etc/nginx/nginx.conf", "managed", "nginx", Kind::File("worker_connections 768;", "worker_connections 4096;")),
    st("file", "nginx.vhost.www", "/etc/nginx/sites-enabled/www.example.com.conf", "managed", "nginx.vhosts", Kind::File("server_name www.example.com;", "server_name www.example.com example.com;")),
    fails(req(
        st("cmd", "nginx.configtest", "nginx -t", "run", "nginx", Kind::Cmd("", 1, "nginx: [emerg] unknown directive \"worker_connection\" in /etc/nginx/nginx.conf:12\nnginx: configuration file /etc/nginx/nginx.conf test failed")),
        "nginx.conf",
    )),
    req(st("service", "nginx.service", "nginx", "running", "nginx", Kind::Service), "nginx.configtest"),
];

pub const APP: &[StateDef] = &[
    st(
        "file",
        "app.config",
        "/opt/app/etc/config.yml",
        "managed",
        "app",
        Kind::File("workers: 4", "workers: 8"),
    ),
    fails(req(
        st(
            "cmd",
            "app.migrate",
            "/opt/app/bin/migrate --apply",
            "run",
            "app",
            Kind::Cmd(
                "Applied 0 migrations.",
                2,
                "Migration 0042_add.index failed: relation \"jobs.minion\" already exists",
            ),
        ),
        "app.config",
    )),
    req(
        st(
            "service",
            "app.service",
            "app",
            "running",
            "app",
            Kind::Service,
        ),
        "app.migrate",
    ),
];

pub const DB: &[StateDef] = &[
    st(
        "pkg",
        "postgres.pkg",
        "postgresql-16",
        "installed",
        "postgres",
        Kind::Pkg(&[("postgresql-16", "16.9-1.pgdg120+1", "16.10-1.pgdg120+1")]),
    ),
    st(
        "file",
        "postgres.conf",
        "/etc/postgresql/16/main/postgresql.conf",
        "managed",
        "postgres",
        Kind::File("shared_buffers = 128MB", "shared_buffers = 4GB"),
    ),
    fails(req(
        st(
            "service",
            "postgres.service",
            "postgresql",
            "running",
            "postgres",
            Kind::Service,
        ),
        "postgres.conf",
    )),
    st(
        "file",
        "postgres.backups",
        "/var/lib/postgresql/backups",
        "directory",
        "postgres.backup",
        Kind::Directory,
    ),
    req(
        st(
            "cmd",
            "pgbouncer.reload",
            "systemctl reload pgbouncer",
            "run",
            "postgres",
            Kind::Cmd("", 1, "Job for pgbouncer.service failed."),
        ),
        "postgres.service",
    ),
];

pub const CACHE: &[StateDef] = &[
    st(
        "pkg",
        "redis.pkg",
        "redis-server",
        "installed",
        "redis",
        Kind::Pkg(&[("redis-server", "5:7.0.15-1~deb12u3", "5:7.0.15-1~deb12u4")]),
    ),
    st(
        "file",
        "redis.conf",
        "/etc/redis/redis.conf",
        "managed",
        "redis",
        Kind::File("maxmemory 256mb", "maxmemory 2gb"),
    ),
    req(
        st(
            "service",
            "redis.service",
            "redis-server",
            "running",
            "redis",
            Kind::Service,
        ),
        "redis.conf",
    ),
    fails(req(
        st(
            "cmd",
            "redis.ping",
            "redis-cli ping",
            "run",
            "redis",
            Kind::Cmd(
                "PONG",
                1,
                "Could not connect to Redis at 127.0.0.1:6379: Connection refused",
            ),
        ),
        "redis.service",
    )),
];

pub const K8S: &[StateDef] = &[
    st(
        "pkg",
        "kubelet.pkg",
        "kubelet",
        "installed",
        "kubernetes.node",
        Kind::Pkg(&[("kubelet", "1.31.4-1.1", "1.31.5-1.1")]),
    ),
    fails(req(
        st(
            "service",
            "kubelet.service",
            "kubelet",
            "running",
            "kubernetes.node",
            Kind::Service,
        ),
        "kubelet.pkg",
    )),
];

pub const LB: &[StateDef] = &[
    st(
        "file",
        "haproxy.cfg",
        "/etc/haproxy/haproxy.cfg",
        "managed",
        "haproxy",
        Kind::File("maxconn 2000", "maxconn 20000"),
    ),
    fails(req(
        st(
            "service",
            "haproxy.service",
            "haproxy",
            "running",
            "haproxy",
            Kind::Service,
        ),
        "haproxy.cfg",
    )),
];

/// Padding states for `--extra-states`: distinct keys, small values.
pub const EXTRA: &[StateDef] = &[
    st(
        "test",
        "audit.rule.01",
        "audit.rule.01",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.02",
        "audit.rule.02",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.03",
        "audit.rule.03",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.04",
        "audit.rule.04",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.05",
        "audit.rule.05",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.06",
        "audit.rule.06",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.07",
        "audit.rule.07",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.08",
        "audit.rule.08",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.09",
        "audit.rule.09",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.10",
        "audit.rule.10",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.11",
        "audit.rule.11",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
    st(
        "test",
        "audit.rule.12",
        "audit.rule.12",
        "succeed_without_changes",
        "common.audit",
        Kind::Test,
    ),
];

/// Minion roles: name pattern, share of the fleet, role states, grain role.
#[derive(Clone, Copy, Debug)]
pub struct Role {
    pub name: &'static str,
    pub share: u32,
    pub states: &'static [StateDef],
    /// the glob that targets every minion of the role
    pub glob: &'static str,
}

pub const ROLES: &[Role] = &[
    Role {
        name: "web",
        share: 30,
        states: WEB,
        glob: "web*.prod.example.com",
    },
    Role {
        name: "app",
        share: 20,
        states: APP,
        glob: "app*.example.com",
    },
    Role {
        name: "k8s",
        share: 20,
        states: K8S,
        glob: "k8s-node-*",
    },
    Role {
        name: "db",
        share: 10,
        states: DB,
        glob: "db-*",
    },
    Role {
        name: "cache",
        share: 12,
        states: CACHE,
        glob: "cache-*.example.org",
    },
    Role {
        name: "lb",
        share: 8,
        states: LB,
        glob: "lb*.edge.example.com",
    },
];

/// The minion id of the n-th minion (0-based) of a role.
pub fn minion_id(role: usize, n: usize) -> String {
    match ROLES[role].name {
        "web" => format!("web{:04}.prod.example.com", n + 1),
        "app" => format!(
            "app{:03}.{}.example.com",
            n / 2 + 1,
            if n.is_multiple_of(2) { "fra1" } else { "iad2" }
        ),
        "k8s" => format!("k8s-node-{:03}", n + 1),
        "db" => format!("db-{:02}", n + 1),
        "cache" => format!("cache-{:02}.example.org", n + 1),
        _ => format!("lb{:02}.edge.example.com", n + 1),
    }
}

/// The state run of a role, in run order.
pub fn run_list(role: usize, extra: usize) -> Vec<&'static StateDef> {
    COMMON
        .iter()
        .chain(EXTRA.iter().take(extra))
        .chain(ROLES[role].states.iter())
        .collect()
}
