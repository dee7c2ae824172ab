//! A throw-away `redis-server` on a free loopback port (no persistence), for the tests
//! of the Redis tier (store level and through the binary).

use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The redis-server binary: /usr/bin or /usr/local/bin (None: not installed).
pub fn redis_server() -> Option<&'static str> {
    ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// A loopback port that was free and that no other test in this process has been given
/// (tests run in parallel and must not end up sharing or killing each other's server).
pub fn free_port() -> u16 {
    static USED: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut used = USED.lock().unwrap();
    loop {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        if !used.contains(&port) {
            used.push(port);
            return port;
        }
    }
}

pub struct Server {
    pub port: u16,
    child: Child,
}

impl Server {
    /// Starts a throw-away server. A missing redis-server fails the test (the test command
    /// installs it).
    /// Other processes on this machine may grab the same port between our probe and
    /// redis' bind, so a start that does not yield *our* server is retried on a new port.
    pub fn start() -> Server {
        assert!(
            redis_server().is_some(),
            "redis-server is not installed: scripts/install-deps.sh installs it"
        );
        for _ in 0..10 {
            if let Some(s) = Server::try_start_on(free_port()) {
                return s;
            }
        }
        panic!("could not start redis-server on any port");
    }

    pub fn start_on(port: u16) -> Server {
        Server::try_start_on(port)
            .unwrap_or_else(|| panic!("redis-server did not start on port {port}"))
    }

    /// Spawns redis-server and waits until the server answering on `port` reports our
    /// child's process id; None if the child exits or someone else answers.
    pub fn try_start_on(port: u16) -> Option<Server> {
        let child = Command::new(redis_server()?)
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
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

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// SIGKILL (no shutdown, no save): the server just disappears.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
