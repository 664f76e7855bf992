//! `schedlens view` end to end: it prints its loopback address, answers there, and stops
//! cleanly (exit 0) on Ctrl-C; a missing trace is an error naming the file. What the page
//! shows is tested in a browser (crates/view/tests/browser).

use refcheck::fixture;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn serves_on_loopback_and_stops_on_ctrl_c() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["view", "--no-open", "--port", "0", &fixture("scenario-pinned-v7zstd.dat")])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schedlens runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let url =
        line.split_whitespace().find(|w| w.starts_with("http://")).unwrap_or_else(|| panic!("no URL in {line:?}"));
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    assert!(address.starts_with("127.0.0.1:"), "{address}");

    let mut stream = TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    stream.write_all(b"GET /api/meta HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("scenario-pinned-v7zstd.dat"), "{answer}");

    // Ctrl-C while the model is built ends the process at once (exit 130): wait until the
    // viewer says it is ready, as a script would.
    let mut ready = String::new();
    stdout.read_line(&mut ready).unwrap();
    assert!(ready.contains("ready"), "{ready:?}");
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "exit: {:?}", output.status);
    assert!(String::from_utf8_lossy(&output.stderr).contains("stopped"));
}

#[test]
fn a_missing_trace_is_an_error_naming_it() {
    let output = Command::new(env!("CARGO_BIN_EXE_schedlens"))
        .args(["view", "--no-open", "--port", "0", "/nonexistent/trace.dat"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("/nonexistent/trace.dat"));
}
