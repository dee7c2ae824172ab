//! Tests of the Redis tier against a real `redis-server` started on a free loopback port.

use smtproxy::cache::{redis::redis_key, CacheConfig, Entry, Key, RedisStore, Store, TieredCache};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REDIS: &str = "/usr/bin/redis-server";

/// A loopback port that was free and that no other test in this process has been given
/// (tests run in parallel and must not end up sharing or killing each other's server).
fn free_port() -> u16 {
    static USED: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut used = USED.lock().unwrap();
    loop {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        if !used.contains(&port) {
            used.push(port);
            return port;
        }
    }
}

struct Server {
    port: u16,
    child: Child,
}

impl Server {
    /// Starts a throw-away server, or returns None (with a note) if redis-server is missing.
    /// Other processes on this machine may grab the same port between our probe and
    /// redis' bind, so a start that does not yield *our* server is retried on a new port.
    fn start() -> Option<Server> {
        if !std::path::Path::new(REDIS).exists() {
            eprintln!("SKIPPED: {REDIS} not installed; redis tier not tested");
            return None;
        }
        for _ in 0..10 {
            if let Some(s) = Server::try_start_on(free_port()) {
                return Some(s);
            }
        }
        panic!("could not start redis-server on any port");
    }

    fn start_on(port: u16) -> Server {
        Server::try_start_on(port).unwrap_or_else(|| panic!("redis-server did not start on port {port}"))
    }

    /// Spawns redis-server and waits until the server answering on `port` reports our
    /// child's process id; None if the child exits or someone else answers.
    fn try_start_on(port: u16) -> Option<Server> {
        let child = Command::new(REDIS)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start redis-server");
        let mut server = Server { port, child };
        let want = format!("process_id:{}", server.child.id());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if server.child.try_wait().unwrap().is_some() {
                return None; // e.g. port taken
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                let info: Option<String> = redis::Client::open(server.url())
                    .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
                    .and_then(|mut c| redis::cmd("INFO").arg("server").query(&mut c))
                    .ok();
                match info {
                    Some(i) if i.lines().any(|l| l.trim() == want) => return Some(server),
                    Some(_) => return None, // another process's server
                    None => {}
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn key(i: u32) -> Key {
    let mut k = [0xa5u8; 16];
    k[..4].copy_from_slice(&i.to_le_bytes());
    Key(k)
}

fn entry(i: u32) -> Entry {
    if i.is_multiple_of(2) {
        Entry::unsat()
    } else {
        Entry::sat(Some(format!("((x0 #x{i:08x}) (a0 ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00)))")))
    }
}

#[test]
fn redis_two_clients_share_entries() {
    let Some(server) = Server::start() else { return };
    let mut a = RedisStore::connect(&server.url()).unwrap();
    let mut b = RedisStore::connect(&server.url()).unwrap();
    for i in 0..2000 {
        a.put(&key(i), &entry(i)).unwrap();
    }
    a.flush().unwrap();
    assert_eq!(a.written(), 2000);
    for i in 0..2000 {
        assert_eq!(b.get(&key(i)).unwrap(), Some(entry(i)), "entry {i}");
    }
    assert_eq!(b.get(&key(99_999)).unwrap(), None);
    // First writer wins.
    b.put(&key(1), &Entry::sat(Some("other".into()))).unwrap();
    b.flush().unwrap();
    assert_eq!(a.get(&key(1)).unwrap(), Some(entry(1)));
    // Namespaced, versioned key layout.
    let client = redis::Client::open(server.url()).unwrap();
    let mut raw = client.get_connection().unwrap();
    let v: Option<Vec<u8>> = redis::cmd("GET").arg(redis_key(&key(3))).query(&mut raw).unwrap();
    assert_eq!(Entry::decode(&v.unwrap()).unwrap(), entry(3));
    assert!(redis_key(&key(3)).starts_with("smtproxy:v1:"));
    // An entry in an unknown format is rejected, not misread.
    redis::cmd("SET").arg(redis_key(&key(5))).arg(&[7u8, 1, 0][..]).query::<()>(&mut raw).unwrap();
    assert!(b.get(&key(5)).unwrap_err().is_entry_error());
}

#[test]
fn redis_put_does_not_block() {
    let Some(server) = Server::start() else { return };
    let mut a = RedisStore::connect(&server.url()).unwrap();
    let t = Instant::now();
    for i in 0..20_000 {
        a.put(&key(i), &entry(i)).unwrap();
    }
    let took = t.elapsed();
    a.flush().unwrap_or_default();
    eprintln!("20k puts took {took:?}, written {}, dropped {}", a.written(), a.dropped_writes());
    assert!(took < Duration::from_secs(2));
    assert_eq!(a.written() + a.dropped_writes(), 20_000);
}

#[test]
fn redis_server_down_tiered_warns_once_and_continues() {
    let Some(mut server) = Server::start() else { return };
    let cfg = CacheConfig { mem_entries: 4, mem_bytes: 1 << 20, disk: None, redis: Some(server.url()) };
    let mut c = TieredCache::new(&cfg);
    assert_eq!(c.active_tiers(), vec!["memory", "redis"]);
    for i in 0..10 {
        c.put(&key(i), &entry(i));
    }
    c.flush();
    // key(0) was evicted from the 4-entry memory tier: served by Redis and promoted.
    assert_eq!(c.get(&key(0)), Some(entry(0)));
    assert_eq!(c.stats().redis_hits, 1);
    assert_eq!(c.get(&key(0)), Some(entry(0)));
    assert_eq!(c.stats().mem_hits, 1);

    server.stop();
    let t = Instant::now();
    for i in 100..200 {
        c.put(&key(i), &entry(i));
        assert_eq!(c.get(&key(i + 1000)), None);
    }
    assert_eq!(c.get(&key(199)), Some(entry(199)));
    let took = t.elapsed();
    assert!(took < Duration::from_secs(1), "operations with Redis down took {took:?}");
    assert_eq!(c.active_tiers(), vec!["memory"]);
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
    let w = &c.warnings()[0];
    assert!(w.starts_with(&format!("redis cache at {} unavailable (", server.url())), "{w}");
    assert!(w.ends_with("; continuing without it"), "{w}");
    c.flush();
    assert_eq!(c.warnings().len(), 1);
}

#[test]
fn redis_unreachable_at_start() {
    // A port we hold open but never answer on: the connection is accepted by the kernel,
    // and PING must time out quickly (the "hung server" case; a closed port is refused
    // even faster). Holding it also stops any other process from taking the port.
    let hold = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = hold.local_addr().unwrap().port();
    let url = format!("redis://127.0.0.1:{port}");
    let t = Instant::now();
    assert!(RedisStore::connect(&url).is_err());
    let mut c = TieredCache::new(&CacheConfig { mem_entries: 10, mem_bytes: 1 << 20, disk: None, redis: Some(url) });
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(c.active_tiers(), vec!["memory"]);
    c.put(&key(1), &entry(1));
    assert_eq!(c.get(&key(1)), Some(entry(1)));
    assert_eq!(c.warnings().len(), 1);
}

#[test]
fn redis_backs_off_then_reconnects_after_restart() {
    let Some(mut server) = Server::start() else { return };
    let port = server.port;
    let mut s = RedisStore::connect(&server.url()).unwrap();
    s.put(&key(1), &entry(1)).unwrap();
    s.flush().unwrap();
    assert_eq!(s.get(&key(1)).unwrap(), Some(entry(1)));

    server.stop();
    assert!(s.get(&key(1)).is_err());
    // Within the back-off interval, calls fail without touching the network.
    let t = Instant::now();
    for _ in 0..1000 {
        assert!(s.get(&key(1)).is_err());
    }
    assert!(t.elapsed() < Duration::from_millis(200), "back-off not effective: {:?}", t.elapsed());
    // Writes never block the caller, even now.
    let t = Instant::now();
    for i in 0..100 {
        let _ = s.put(&key(i), &entry(i));
    }
    assert!(t.elapsed() < Duration::from_millis(200));
    let t = Instant::now();
    assert!(s.flush().is_err(), "writes to a dead server reported as done");
    assert!(t.elapsed() < Duration::from_secs(3));

    let _server2 = Server::start_on(port);
    std::thread::sleep(Duration::from_millis(1100));
    // The new server is empty (no persistence); the store reconnects by itself.
    assert_eq!(s.get(&key(1)).unwrap(), None);
    std::thread::sleep(Duration::from_millis(1100)); // writer's back-off too
    s.put(&key(2), &entry(2)).ok();
    s.flush().unwrap();
    assert_eq!(s.get(&key(2)).unwrap(), Some(entry(2)));
}
