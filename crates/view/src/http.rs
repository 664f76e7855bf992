//! HTTP/1.1 for one local user: a thread per connection (keep-alive, at most
//! [`MAX_CONNECTIONS`]), request heads parsed by `httparse` and bounded in size and time,
//! answers with a `Content-Length`. Only GET is served; a request that cannot be read gets
//! a 4xx and the connection is closed.
//!
//! Why not `tiny_http`: its connection pool (0.12) can leave a new connection queued with
//! no thread to take it when a browser opens several at once (two spawns see the same
//! waiting thread), so a page's module scripts stalled until an unrelated connection
//! closed — seconds, or for good.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// Connections served at once; more are answered 503 and closed.
const MAX_CONNECTIONS: usize = 64;
/// Longest request head (request line and headers).
const MAX_HEAD: usize = 32 * 1024 + 4096;
/// An idle keep-alive connection is closed after this.
const IDLE: Duration = Duration::from_secs(30);
/// A request head must arrive within this.
const SLOW_HEAD: Duration = Duration::from_secs(10);
/// How often a waiting connection looks whether the server stops.
const TICK: Duration = Duration::from_millis(200);

/// A request as the handler sees it.
pub struct Request {
    pub method: String,
    pub target: String,
    /// The Host header, if any.
    pub host: Option<String>,
}

/// An answer.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: Arc<Vec<u8>>,
}

/// Serves connections from `listener` with `handler` until `stop` is set.
pub fn serve(listener: &TcpListener, handler: &(dyn Fn(&Request) -> Response + Sync), stop: &AtomicBool) {
    let open = AtomicUsize::new(0);
    let address = listener.local_addr().ok();
    std::thread::scope(|scope| {
        // Wakes the accept loop when `stop` is set (a connection to ourselves).
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            if let Some(address) = address {
                let _ = TcpStream::connect_timeout(&address, Duration::from_secs(1));
            }
        });
        for stream in listener.incoming() {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let Ok(mut stream) = stream else { continue };
            if open.load(Ordering::Relaxed) >= MAX_CONNECTIONS {
                let _ = write_response(&mut stream, &plain(503, "too many connections"), false);
                continue;
            }
            open.fetch_add(1, Ordering::Relaxed);
            let open = &open;
            let spawned = std::thread::Builder::new().name("view-connection".into()).spawn_scoped(scope, move || {
                connection(stream, handler, stop);
                open.fetch_sub(1, Ordering::Relaxed);
            });
            if spawned.is_err() {
                open.fetch_sub(1, Ordering::Relaxed);
            }
        }
    });
}

/// A short text answer.
pub fn plain(status: u16, text: &str) -> Response {
    let headers = vec![("Content-Type", "text/plain; charset=utf-8".to_string())];
    Response { status, headers, body: Arc::new(text.as_bytes().to_vec()) }
}

fn connection(stream: TcpStream, handler: &(dyn Fn(&Request) -> Response + Sync), stop: &AtomicBool) {
    // Short reads, so the connection notices `stop` and its idle time.
    let _ = stream.set_read_timeout(Some(TICK));
    let _ = stream.set_write_timeout(Some(IDLE));
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else { return };
    let mut reader = BufReader::new(stream);
    let mut head = Vec::new();
    let mut idle = Duration::ZERO;
    while !stop.load(Ordering::Relaxed) {
        match read_head(&mut reader, &mut head) {
            Ok(Head::Complete) => idle = Duration::ZERO,
            Ok(Head::Closed) => return,
            Ok(Head::Waiting) => {
                idle += TICK;
                if idle >= IDLE || (!head.is_empty() && idle >= SLOW_HEAD) {
                    return;
                }
                continue;
            }
            Err(status) => {
                let _ = write_response(&mut writer, &plain(status, "cannot read the request"), false);
                return;
            }
        }
        let (request, keep_alive) = match parse(&head) {
            Ok(parsed) => parsed,
            Err(status) => {
                let _ = write_response(&mut writer, &plain(status, "malformed request"), false);
                return;
            }
        };
        head.clear();
        let response = handler(&request);
        if write_response(&mut writer, &response, keep_alive).is_err() || !keep_alive {
            return;
        }
    }
}

/// Where reading a request head got to.
enum Head {
    /// `head` holds a whole request head.
    Complete,
    /// The client closed the connection between requests.
    Closed,
    /// Nothing more for now (`head` keeps what came).
    Waiting,
}

/// Reads into `head` up to the blank line that ends a request head.
fn read_head(reader: &mut BufReader<TcpStream>, head: &mut Vec<u8>) -> Result<Head, u16> {
    loop {
        let room = (MAX_HEAD + 1).saturating_sub(head.len()) as u64;
        let before = head.len();
        let read = reader.by_ref().take(room).read_until(b'\n', head);
        match read {
            Ok(0) if head.is_empty() => return Ok(Head::Closed),
            Ok(0) => return Err(400),
            Ok(_) => {}
            Err(error) if is_timeout(&error) => return Ok(Head::Waiting),
            Err(_) => return Err(400),
        }
        if head.len() > MAX_HEAD {
            return Err(431);
        }
        let line = &head[before..];
        if !line.ends_with(b"\n") {
            return Err(400);
        }
        if line == b"\r\n" || line == b"\n" {
            if before == 0 {
                head.clear(); // a stray blank line between requests
                continue;
            }
            return Ok(Head::Complete);
        }
    }
}

fn is_timeout(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)
}

/// The request and whether the connection stays open after it.
fn parse(head: &[u8]) -> Result<(Request, bool), u16> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut headers);
    match parsed.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) | Err(_) => return Err(400),
    }
    let version = parsed.version.ok_or(400u16)?;
    let header = |name: &str| {
        parsed
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .and_then(|h| std::str::from_utf8(h.value).ok())
            .map(str::to_string)
    };
    let connection = header("Connection").map(|c| c.to_ascii_lowercase()).unwrap_or_default();
    // A body is not read: requests that announce one cannot keep the connection.
    let has_body = header("Content-Length").is_some_and(|l| l.trim() != "0") || header("Transfer-Encoding").is_some();
    let keep_alive = !has_body && !connection.contains("close") && (version == 1 || connection.contains("keep-alive"));
    let request = Request {
        method: parsed.method.ok_or(400u16)?.to_string(),
        target: parsed.path.ok_or(400u16)?.to_string(),
        host: header("Host"),
    };
    Ok((request, keep_alive))
}

fn write_response(out: &mut TcpStream, response: &Response, keep_alive: bool) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", response.status, reason(response.status));
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    head.push_str(if keep_alive { "Connection: keep-alive\r\n\r\n" } else { "Connection: close\r\n\r\n" });
    out.write_all(head.as_bytes())?;
    out.write_all(&response.body)?;
    out.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        202 => "Accepted",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_heads() {
        let (request, keep) = parse(b"GET /a?b=1 HTTP/1.1\r\nHost: localhost:1\r\n\r\n").unwrap();
        assert_eq!((request.method.as_str(), request.target.as_str(), keep), ("GET", "/a?b=1", true));
        assert_eq!(request.host.as_deref(), Some("localhost:1"));
        assert!(!parse(b"GET / HTTP/1.0\r\n\r\n").unwrap().1, "HTTP/1.0 closes");
        assert!(!parse(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").unwrap().1);
        assert!(!parse(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").unwrap().1, "an unread body closes");
        assert_eq!(parse(b"\x00\x01garbage\r\n\r\n").err(), Some(400));
        assert_eq!(parse(b"GET / HTTP/9.9\r\n\r\n").err(), Some(400));
    }
}
