//! Redis as a fleet's store, tested as a fleet: network namespaces on this machine, one
//! holding `redis-server`, four holding two smtproxy processes each, every process
//! replaying another KLEE log with `--check` against the answers recorded in it. Then one
//! test per fault of the shared server: full (`noeviction` at a tiny `maxmemory`),
//! evicting (`allkeys-lru`), slow (a delaying proxy in the server's namespace: this
//! kernel has no `netem`), restarted mid-run, unreachable at
//! start, and poisoned (forged unsat and sat entries with wrong models under the right
//! keys). In every one: no wrong answer, every process exits 0.
//!
//! Needs root and `ip netns` (the suite runs as root; scripts/install-deps.sh
//! installs redis-server): a namespace that cannot be made fails the test, never skips
//! it. Namespaces are removed by a guard even when a test fails.

use crate::common;

use common::{bin, corpus, KLEE_PROGRAMS};
use smtproxy::cache::{Entry, FleetSecret, Key, Verdict};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const PORT: u16 = 6379;
const SECRET: &str = "fleet-test-secret";

fn sh(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn must(args: &[&str]) {
    if let Err(e) = sh(args) {
        panic!("cannot build the test network (root, ip netns and tc are needed): {e}");
    }
}

/// One test's network: `srv` holds redis-server and a veth to each client namespace and
/// to the host (the test process itself reaches Redis over that one). Dropping it kills
/// what runs there and deletes the namespaces.
struct Net {
    srv: String,
    clients: Vec<String>,
    /// The third octet of the host link, distinct per test: 10.213.T.0/24.
    t: u8,
    redis: Option<Child>,
    dir: tempfile::TempDir,
}

impl Net {
    fn new(tag: &str, t: u8, clients: usize) -> Net {
        let id = format!("{tag}{}", std::process::id() % 100_000);
        let srv = format!("sf{id}s");
        let mut net = Net {
            srv: srv.clone(),
            clients: Vec::new(),
            t,
            redis: None,
            dir: tempfile::tempdir().unwrap(),
        };
        let _ = sh(&["ip", "netns", "del", &srv]);
        must(&["ip", "netns", "add", &srv]);
        must(&["ip", "-n", &srv, "link", "set", "lo", "up"]);
        for i in 0..clients {
            let ns = format!("sf{id}c{i}");
            let _ = sh(&["ip", "netns", "del", &ns]);
            must(&["ip", "netns", "add", &ns]);
            net.clients.push(ns.clone());
            must(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            must(&[
                "ip",
                "link",
                "add",
                "vc",
                "netns",
                &ns,
                "type",
                "veth",
                "peer",
                "name",
                &format!("s{i}"),
                "netns",
                &srv,
            ]);
            must(&[
                "ip",
                "-n",
                &ns,
                "addr",
                "add",
                &format!("10.77.{i}.2/24"),
                "dev",
                "vc",
            ]);
            must(&[
                "ip",
                "-n",
                &srv,
                "addr",
                "add",
                &format!("10.77.{i}.1/24"),
                "dev",
                &format!("s{i}"),
            ]);
            must(&["ip", "-n", &ns, "link", "set", "vc", "up"]);
            must(&["ip", "-n", &srv, "link", "set", &format!("s{i}"), "up"]);
        }
        let host = format!("sf{id}h");
        let _ = sh(&["ip", "link", "del", &host]);
        must(&[
            "ip", "link", "add", &host, "type", "veth", "peer", "name", "vh", "netns", &srv,
        ]);
        must(&[
            "ip",
            "addr",
            "add",
            &format!("10.213.{t}.2/24"),
            "dev",
            &host,
        ]);
        must(&[
            "ip",
            "-n",
            &srv,
            "addr",
            "add",
            &format!("10.213.{t}.1/24"),
            "dev",
            "vh",
        ]);
        must(&["ip", "link", "set", &host, "up"]);
        must(&["ip", "-n", &srv, "link", "set", "vh", "up"]);
        net
    }

    /// The URL client namespace `i` reaches the server at.
    fn url(&self, i: usize) -> String {
        format!("redis://10.77.{i}.1:{PORT}")
    }

    /// The URL the test process reaches the server at.
    fn host_url(&self) -> String {
        format!("redis://10.213.{}.1:{PORT}", self.t)
    }

    /// Starts redis-server in the server namespace with `extra` settings; waits for it.
    fn start_redis(&mut self, extra: &[&str]) {
        common::require("redis-server");
        let mut cmd = Command::new("ip");
        cmd.args([
            "netns",
            "exec",
            &self.srv,
            "redis-server",
            "--port",
            &PORT.to_string(),
        ])
        .args([
            "--bind",
            "0.0.0.0",
            "--protected-mode",
            "no",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        self.redis = Some(cmd.spawn().expect("start redis-server"));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if self.conn().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("redis-server did not come up in namespace {}", self.srv);
    }

    fn stop_redis(&mut self) {
        if let Some(mut c) = self.redis.take() {
            // `ip netns exec` execs redis-server: the child is the server.
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn conn(&self) -> Option<redis::Connection> {
        redis::Client::open(self.host_url())
            .ok()?
            .get_connection_with_timeout(Duration::from_millis(500))
            .ok()
    }

    /// A slow server: a proxy in the server's namespace on port `PORT + 1` of every
    /// client link that holds each chunk of bytes, either way, for `ms` before passing it
    /// on to the server (this kernel has no `netem`, so the delay is added in user space).
    /// The clients are then pointed at it by [`Net::slow_url`].
    fn slow_proxy(&self, ms: u64) {
        use std::io::{Read, Write};
        use std::os::fd::AsRawFd;
        let ns = std::fs::File::open(format!("/var/run/netns/{}", self.srv)).unwrap();
        let n = self.clients.len();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            // SAFETY: setns on this thread only, with a namespace file we hold open.
            let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            let listeners: Vec<_> = (0..n)
                .map(|i| {
                    std::net::TcpListener::bind((
                        "10.77.".to_string() + &i.to_string() + ".1",
                        PORT + 1,
                    ))
                })
                .collect();
            tx.send(r == 0 && listeners.iter().all(|l| l.is_ok()))
                .unwrap();
            let pump = move |mut from: std::net::TcpStream, mut to: std::net::TcpStream| {
                std::thread::spawn(move || {
                    let mut buf = [0u8; 65536];
                    while let Ok(k) = from.read(&mut buf) {
                        if k == 0 {
                            break;
                        }
                        std::thread::sleep(Duration::from_millis(ms));
                        if to.write_all(&buf[..k]).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(std::net::Shutdown::Both);
                });
            };
            for l in listeners.into_iter().flatten() {
                std::thread::spawn(move || {
                    for c in l.incoming().flatten() {
                        // The accepting thread was spawned in the server's namespace.
                        let Ok(up) = std::net::TcpStream::connect(("127.0.0.1", PORT)) else {
                            continue;
                        };
                        pump(c.try_clone().unwrap(), up.try_clone().unwrap());
                        pump(up, c);
                    }
                });
            }
        });
        assert!(
            rx.recv().unwrap(),
            "could not start the slow proxy in {}",
            self.srv
        );
    }

    fn slow_url(&self, i: usize) -> String {
        format!("redis://10.77.{i}.1:{}", PORT + 1)
    }

    /// Two replays per client namespace of the logs `logs` (round robin), each with a
    /// store of its own on disk, so only Redis is shared; `secret` in the environment.
    fn fleet(&self, wave: &str, logs: &[PathBuf], secret: bool) -> Vec<Proc> {
        self.fleet_at(wave, logs, secret, |i| self.url(i))
    }

    fn fleet_at(
        &self,
        wave: &str,
        logs: &[PathBuf],
        secret: bool,
        url: impl Fn(usize) -> String,
    ) -> Vec<Proc> {
        logs.iter()
            .enumerate()
            .map(|(n, log)| {
                let i = n % self.clients.len();
                let home = self.dir.path().join(format!("{wave}-{n}"));
                std::fs::create_dir_all(&home).unwrap();
                let json = home.join("summary.json");
                let mut cmd = Command::new("ip");
                cmd.args(["netns", "exec", &self.clients[i], bin()])
                    .args([
                        "replay",
                        "--check",
                        "--quiet",
                        "--solver",
                        "z3",
                        "--strategy",
                        "hybrid",
                    ])
                    .args(["--cache", &url(i), "--json"])
                    .arg(&json)
                    .arg(log)
                    .env("XDG_CACHE_HOME", &home)
                    .env_remove("SMTPROXY_CACHE_SECRET")
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped());
                if secret {
                    cmd.env("SMTPROXY_CACHE_SECRET", SECRET);
                }
                Proc {
                    log: log.clone(),
                    json,
                    child: Some(cmd.spawn().expect("start smtproxy")),
                }
            })
            .collect()
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        self.stop_redis();
        for ns in self.clients.iter().chain([&self.srv]) {
            let _ = sh(&["ip", "netns", "del", ns]);
        }
        let id = &self.srv[..self.srv.len() - 1];
        let _ = sh(&["ip", "link", "del", &format!("{id}h")]);
    }
}

struct Proc {
    log: PathBuf,
    json: PathBuf,
    child: Option<Child>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Some(c) = self.child.as_mut() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What a finished wave reported, summed.
#[derive(Debug, Default)]
struct Totals {
    queries: u64,
    redis_hits: u64,
    untrusted: u64,
    rejected: u64,
}

/// Waits for every process (bounded): each must exit 0 with no mismatch against the
/// recorded answers.
fn finish(procs: Vec<Proc>, limit: Duration) -> Totals {
    let deadline = Instant::now() + limit;
    let mut t = Totals::default();
    for mut p in procs {
        let mut child = p.child.take().unwrap();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "smtproxy on {} did not finish within {limit:?}",
                    p.log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = String::new();
        use std::io::Read;
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(
            status.success(),
            "smtproxy on {} exited {status}: {}",
            p.log.display(),
            common::tail(&err)
        );
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p.json).unwrap()).unwrap();
        assert_eq!(v["expected_mismatches"], 0, "{}: {v}", p.log.display());
        assert_eq!(v["unknown"], 0, "{}: {v}", p.log.display());
        t.queries += v["queries"].as_u64().unwrap();
        t.redis_hits += v["redis_hits"].as_u64().unwrap();
        t.untrusted += v["redis_untrusted_unsat"].as_u64().unwrap();
        t.rejected += v["redis_rejected"].as_u64().unwrap();
    }
    t
}

/// Every KLEE program's solver-queries log: eight different logs.
fn solver_logs() -> Vec<PathBuf> {
    KLEE_PROGRAMS
        .iter()
        .map(|p| corpus(&format!("klee/{p}/solver-queries.smt2.gz")))
        .collect()
}

/// The longer all-queries logs, for faults that strike mid-run.
fn long_logs() -> Vec<PathBuf> {
    [
        "regexp",
        "sbase-expr",
        "sbase-cut",
        "sbase-basename",
        "sbase-dirname",
        "sbase-echo",
        "sort",
        "get_sign",
    ]
    .iter()
    .map(|p| corpus(&format!("klee/{p}/all-queries.smt2.gz")))
    .collect()
}

fn dbsize(net: &Net) -> i64 {
    let mut c = net.conn().expect("redis reachable from the host");
    redis::cmd("DBSIZE").query(&mut c).unwrap()
}

const LIMIT: Duration = Duration::from_secs(60);

/// Four namespaces, two processes each, one server: the first wave fills Redis, the
/// second (fresh disks) is served from it, unsat included (the fleet holds the secret).
#[test]
fn fleet_of_eight_shares_one_redis() {
    let mut net = Net::new("a", 1, 4);
    net.start_redis(&[]);
    let first = finish(net.fleet("w1", &solver_logs(), true), LIMIT);
    assert!(
        dbsize(&net) > 100,
        "the fleet wrote little: {}",
        dbsize(&net)
    );
    let second = finish(net.fleet("w2", &solver_logs(), true), LIMIT);
    assert!(
        second.redis_hits > 100,
        "first {first:?}, second {second:?}"
    );
    assert_eq!(second.untrusted, 0, "{second:?}");
}

/// `maxmemory` reached with `noeviction`: every write is refused (`OOM`), reads go on.
#[test]
fn fault_redis_full() {
    let mut net = Net::new("b", 2, 4);
    net.start_redis(&["--maxmemory", "1", "--maxmemory-policy", "noeviction"]);
    let t = finish(net.fleet("w1", &solver_logs(), true), LIMIT);
    assert!(t.rejected > 0, "no write refused: {t:?}");
    assert_eq!(dbsize(&net), 0);
}

/// A server bounded by `maxmemory` with `allkeys-lru` evicts; a missing key is a miss.
#[test]
fn fault_redis_evicting() {
    let mut net = Net::new("c", 3, 4);
    net.start_redis(&["--maxmemory-policy", "allkeys-lru"]);
    // Room for about 200 KB of entries above what the empty server takes.
    let mut c = net.conn().unwrap();
    let info: String = redis::cmd("INFO").arg("memory").query(&mut c).unwrap();
    let used: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(used + 200_000)
        .query(&mut c)
        .unwrap();
    finish(net.fleet("w1", &long_logs(), true), LIMIT);
    let mut c = net.conn().unwrap();
    let info: String = redis::cmd("INFO").arg("stats").query(&mut c).unwrap();
    let evicted: u64 = info
        .lines()
        .find_map(|l| l.strip_prefix("evicted_keys:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap();
    assert!(evicted > 0, "the bound never bit (dbsize {})", dbsize(&net));
    finish(net.fleet("w2", &long_logs(), true), LIMIT);
}

/// 20 ms more on every chunk to and from the server: slower, still right.
#[test]
fn fault_redis_slow() {
    let mut net = Net::new("d", 4, 4);
    net.start_redis(&[]);
    finish(net.fleet("w1", &solver_logs(), true), LIMIT);
    net.slow_proxy(20);
    let start = Instant::now();
    let t = finish(
        net.fleet_at("w2", &solver_logs(), true, |i| net.slow_url(i)),
        LIMIT,
    );
    assert!(t.redis_hits > 0, "{t:?}");
    eprintln!("slow wave: {:?}, {t:?}", start.elapsed());
}

/// The server killed and started again (empty) while the fleet replays.
#[test]
fn fault_redis_restarted() {
    let mut net = Net::new("e", 5, 4);
    net.start_redis(&[]);
    let procs = net.fleet("w1", &long_logs(), true);
    std::thread::sleep(Duration::from_millis(400));
    net.stop_redis();
    std::thread::sleep(Duration::from_millis(600));
    net.start_redis(&[]);
    finish(procs, LIMIT);
}

/// No server when the fleet starts; one comes up while it runs.
#[test]
fn fault_redis_unreachable_at_start() {
    let mut net = Net::new("f", 6, 4);
    let procs = net.fleet("w1", &long_logs(), true);
    std::thread::sleep(Duration::from_millis(500));
    net.start_redis(&[]);
    finish(procs, LIMIT);
}

/// Every entry in Redis replaced by a lie under its own key: each sat by an unsat (bare,
/// or with a tag of another secret), each unsat by a sat whose model is another entry's.
/// Entries are written with valid checksums (anyone can compute them). Neither a fleet
/// holding the secret nor one without it answers wrongly; the forged unsat are counted.
#[test]
fn fault_redis_poisoned() {
    let mut net = Net::new("g", 7, 4);
    net.start_redis(&[]);
    finish(net.fleet("w1", &solver_logs(), true), LIMIT);
    let mut c = net.conn().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("smtproxy:*").query(&mut c).unwrap();
    assert!(keys.len() > 100);
    let models: Vec<String> = keys
        .iter()
        .filter_map(|name| {
            let k = Key::from_hex(name.rsplit(':').next()?)?;
            let v: Vec<u8> = redis::cmd("GET").arg(name).query(&mut c).ok()?;
            let (bytes, _) = Entry::split_encoded(&v)?;
            Entry::decode(&k, bytes).ok()?.model
        })
        .collect();
    assert!(!models.is_empty());
    let wrong = FleetSecret::from_bytes(b"not the fleet's").unwrap();
    let (mut forged_unsat, mut forged_sat) = (0, 0);
    for (n, name) in keys.iter().enumerate() {
        let k = Key::from_hex(name.rsplit(':').next().unwrap()).unwrap();
        let v: Vec<u8> = redis::cmd("GET").arg(name).query(&mut c).unwrap();
        let (bytes, _) = Entry::split_encoded(&v).unwrap();
        let lie = match Entry::decode(&k, bytes).unwrap().verdict {
            Verdict::Sat => {
                forged_unsat += 1;
                let mut b = Entry::unsat().encode(&k);
                if n % 2 == 0 {
                    let tag = wrong.tag(&k.0, &b);
                    b.extend_from_slice(&tag);
                }
                b
            }
            Verdict::Unsat => {
                forged_sat += 1;
                Entry::sat(Some(models[n % models.len()].clone())).encode(&k)
            }
        };
        let _: () = redis::cmd("SET").arg(name).arg(lie).query(&mut c).unwrap();
    }
    assert!(forged_unsat > 0 && forged_sat > 0);
    let with = finish(net.fleet("w2", &solver_logs(), true), LIMIT);
    assert!(with.untrusted > 0, "{with:?}");
    let without = finish(net.fleet("w3", &solver_logs(), false), LIMIT);
    assert!(without.untrusted > 0, "{without:?}");
}
