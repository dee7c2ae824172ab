//! Tests of the Redis tier against a real `redis-server` started on a free loopback port.

use crate::common;

use common::redis_server::Server;
use smtproxy::cache::{redis::redis_key, CacheConfig, Entry, Key, RedisStore, Store, TieredCache};
use std::net::TcpListener;
use std::time::{Duration, Instant};

fn key(i: u32) -> Key {
    let mut k = [0xa5u8; 16];
    k[..4].copy_from_slice(&i.to_le_bytes());
    Key(k)
}

fn entry(i: u32) -> Entry {
    if i.is_multiple_of(2) {
        Entry::unsat()
    } else {
        Entry::sat(Some(format!(
            "((x0 #x{i:08x}) (a0 ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00)))"
        )))
    }
}

/// The fleet secret these stores share (without one, no unsat read from Redis is trusted).
fn secret() -> smtproxy::cache::FleetSecret {
    smtproxy::cache::FleetSecret::from_bytes(b"cache_redis test secret").unwrap()
}

#[test]
fn redis_two_clients_share_entries() {
    let server = Server::start();
    let mut a = RedisStore::connect(&server.url())
        .unwrap()
        .with_secret(Some(secret()));
    let mut b = RedisStore::connect(&server.url())
        .unwrap()
        .with_secret(Some(secret()));
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
    let v: Option<Vec<u8>> = redis::cmd("GET")
        .arg(redis_key(&key(3)))
        .query(&mut raw)
        .unwrap();
    // The entry's bytes, then its fleet tag.
    let v = v.unwrap();
    let (bytes, tag) = Entry::split_encoded(&v).unwrap();
    assert_eq!(Entry::decode(&key(3), bytes).unwrap(), entry(3));
    assert!(secret().verify(&key(3).0, bytes, tag));
    assert!(redis_key(&key(3)).starts_with("smtproxy:v2:"));
    // An entry in an unknown format is rejected, not misread.
    redis::cmd("SET")
        .arg(redis_key(&key(5)))
        .arg(&[7u8, 1, 0][..])
        .query::<()>(&mut raw)
        .unwrap();
    assert!(b.get(&key(5)).unwrap_err().is_entry_error());
    // Another key's entry under this key fails its checksum.
    let v3: Vec<u8> = redis::cmd("GET")
        .arg(redis_key(&key(3)))
        .query(&mut raw)
        .unwrap();
    redis::cmd("SET")
        .arg(redis_key(&key(6)))
        .arg(&v3[..])
        .query::<()>(&mut raw)
        .unwrap();
    let err = b.get(&key(6)).unwrap_err();
    assert!(
        err.is_entry_error() && err.to_string().contains("checksum"),
        "{err}"
    );
}

#[test]
fn redis_put_does_not_block() {
    let server = Server::start();
    let mut a = RedisStore::connect(&server.url())
        .unwrap()
        .with_secret(Some(secret()));
    let t = Instant::now();
    for i in 0..20_000 {
        a.put(&key(i), &entry(i)).unwrap();
    }
    let took = t.elapsed();
    a.flush().unwrap_or_default();
    eprintln!(
        "20k puts took {took:?}, written {}, dropped {}",
        a.written(),
        a.dropped_writes()
    );
    assert!(took < Duration::from_secs(2));
    assert_eq!(a.written() + a.dropped_writes(), 20_000);
}

#[test]
fn redis_server_down_tiered_warns_once_and_continues() {
    let mut server = Server::start();
    let cfg = CacheConfig {
        mem_entries: 4,
        mem_bytes: 1 << 20,
        disk: None,
        redis: Some(server.url()),
        secret: Some(secret()),
        ..CacheConfig::default()
    };
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
    assert!(
        took < Duration::from_secs(1),
        "operations with Redis down took {took:?}"
    );
    assert_eq!(c.active_tiers(), vec!["memory"]);
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
    let w = &c.warnings()[0];
    assert!(
        w.starts_with(&format!("redis cache at {} unavailable (", server.url())),
        "{w}"
    );
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
    let mut c = TieredCache::new(&CacheConfig {
        mem_entries: 10,
        mem_bytes: 1 << 20,
        disk: None,
        redis: Some(url),
        secret: Some(secret()),
        ..CacheConfig::default()
    });
    assert!(t.elapsed() < Duration::from_secs(2));
    assert_eq!(c.active_tiers(), vec!["memory"]);
    c.put(&key(1), &entry(1));
    assert_eq!(c.get(&key(1)), Some(entry(1)));
    assert_eq!(c.warnings().len(), 1);
}

#[test]
fn redis_backs_off_then_reconnects_after_restart() {
    let mut server = Server::start();
    let port = server.port;
    let mut s = RedisStore::connect(&server.url())
        .unwrap()
        .with_secret(Some(secret()));
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
    assert!(
        t.elapsed() < Duration::from_millis(200),
        "back-off not effective: {:?}",
        t.elapsed()
    );
    // Writes never block the caller, even now.
    let t = Instant::now();
    for i in 0..100 {
        let _ = s.put(&key(i), &entry(i));
    }
    assert!(t.elapsed() < Duration::from_millis(200));
    let t = Instant::now();
    assert!(
        s.flush().is_err(),
        "writes to a dead server reported as done"
    );
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

/// Keys present on the server (raw connection, short timeout).
fn server_has(url: &str, keys: &[Key]) -> usize {
    let Ok(mut c) = redis::Client::open(url)
        .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
    else {
        return 0;
    };
    keys.iter()
        .filter(|k| {
            redis::cmd("EXISTS")
                .arg(redis_key(k))
                .query::<i64>(&mut c)
                .unwrap_or(0)
                == 1
        })
        .count()
}

#[test]
fn redis_restart_tiered_resumes_and_delivers_held_writes() {
    let mut server = Server::start();
    let port = server.port;
    let url = server.url();
    let cfg = CacheConfig {
        mem_entries: 4,
        mem_bytes: 1 << 20,
        disk: None,
        redis: Some(url.clone()),
        secret: Some(secret()),
        ..CacheConfig::default()
    };
    let mut c = TieredCache::new(&cfg);
    for i in 0..10 {
        c.put(&key(i), &entry(i));
    }
    c.flush();
    assert_eq!(server_has(&url, &(0..10).map(key).collect::<Vec<_>>()), 10);

    server.stop();
    // Down: misses are fast, writes are held by the writer thread.
    let t = Instant::now();
    assert_eq!(
        c.get(&key(0)),
        None,
        "key(0) was evicted from memory and Redis is gone"
    );
    for i in 100..110 {
        c.put(&key(i), &entry(i));
        assert_eq!(c.get(&key(i + 1000)), None);
    }
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "operations with Redis down took {:?}",
        t.elapsed()
    );
    assert_eq!(c.active_tiers(), vec!["memory"]);

    // Back on the same port, empty: what was written meanwhile and what comes next arrives.
    let _server2 = Server::start_on(port);
    for i in 200..210 {
        c.put(&key(i), &entry(i));
    }
    let want: Vec<Key> = (100..110).chain(200..210).map(key).collect();
    let t = Instant::now();
    while server_has(&url, &want) < want.len() {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "held writes never reached the restarted server ({} of {})",
            server_has(&url, &want),
            want.len()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // Reads resume: key(100) is no longer in the 4-entry memory tier.
    assert_eq!(c.get(&key(100)), Some(entry(100)));
    assert_eq!(c.stats().redis_hits, 1, "{:?}", c.stats());
    assert_eq!(c.active_tiers(), vec!["memory", "redis"]);
    c.flush();
    assert_eq!(c.warnings().len(), 1, "{:?}", c.warnings());
}
