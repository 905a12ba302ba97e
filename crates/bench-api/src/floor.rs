//! `bench-api fanout-floor` (hidden; `streams` starts it for its `floor` configuration): the
//! least work any server with one TCP connection per live stream must do on this machine.
//!
//! It answers every connection with a bare `200` head of a chunked `text/event-stream`, and
//! on each line `move SEQ BYTES` on its standard input writes one chunk holding one frame of
//! `BYTES` bytes with `id: SEQ` to every connection, from one thread per core, each owning
//! its share of the connections: no async runtime, no wake-ups, no per-viewer filtering, no
//! database. What is left is the kernel's cost of a TCP write and, on loopback, of its
//! delivery. The same clients that time the real server time this process, so the two
//! figures are comparable like commands/s and pgbench's inserts. It exits when its standard
//! input closes (the bench ended or died).

use std::io::{BufRead, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};

/// Flags of `bench-api fanout-floor`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Writer threads (default: one per core, as the server's workers).
    #[arg(long)]
    writers: Option<usize>,
}

/// The response head: what the server sends before its frames, less its extra headers.
const HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
    transfer-encoding: chunked\r\ncache-control: no-cache\r\n\r\n";

/// What a writer thread is told.
enum Job {
    /// A connection to own from now on.
    Own(TcpStream),
    /// Write these bytes to every owned connection, then report on the channel.
    Write(Arc<[u8]>, mpsc::Sender<()>),
}

/// One chunk of a chunked body holding one server-sent event of `bytes` bytes (at least
/// what its `id:` and `event:` lines take) with `id: seq`.
#[must_use]
pub fn chunk(seq: u64, bytes: usize) -> Vec<u8> {
    let lead = format!("id: {seq}\nevent: floor\ndata: ");
    let pad = bytes.saturating_sub(lead.len() + 2);
    let mut frame = lead.into_bytes();
    frame.extend(std::iter::repeat_n(b'x', pad));
    frame.extend_from_slice(b"\n\n");
    let mut out = format!("{:x}\r\n", frame.len()).into_bytes();
    out.extend_from_slice(&frame);
    out.extend_from_slice(b"\r\n");
    out
}

/// Parses `move SEQ BYTES`.
fn parse_move(line: &str) -> anyhow::Result<(u64, usize)> {
    let mut words = line.split_whitespace();
    match (words.next(), words.next(), words.next(), words.next()) {
        (Some("move"), Some(seq), Some(bytes), None) => {
            Ok((seq.parse().context("SEQ")?, bytes.parse().context("BYTES")?))
        }
        _ => bail!("expected `move SEQ BYTES`, got {line:?}"),
    }
}

/// Reads the request head (up to the blank line) and answers the `200` head.
fn greet(stream: &mut TcpStream) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf)?;
        if n == 0 || head.len() > 16 * 1024 {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
        head.extend_from_slice(&buf[..n]);
    }
    stream.set_nodelay(true)?;
    stream.write_all(HEAD)
}

fn writer(jobs: &mpsc::Receiver<Job>) {
    let mut owned: Vec<TcpStream> = Vec::new();
    while let Ok(job) = jobs.recv() {
        match job {
            Job::Own(stream) => owned.push(stream),
            Job::Write(bytes, done) => {
                // A connection the client closed is dropped.
                owned.retain_mut(|s| s.write_all(&bytes).is_ok());
                let _ = done.send(());
            }
        }
    }
}

/// Serves until standard input closes; prints `listening ADDR` first. A move is written to
/// every connection before the next line is read.
///
/// # Errors
/// No port to bind, a malformed line on standard input.
pub fn serve(args: &Args) -> anyhow::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding 127.0.0.1:0")?;
    let addr = listener.local_addr()?;
    let writers = args
        .writers
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, std::num::NonZero::get));
    let mut lanes = Vec::new();
    for _ in 0..writers.max(1) {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || writer(&rx));
        lanes.push(tx);
    }
    let accepting = lanes.clone();
    std::thread::spawn(move || {
        for (i, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { continue };
            if greet(&mut stream).is_ok() {
                let _ = accepting[i % accepting.len()].send(Job::Own(stream));
            }
        }
    });
    let mut out = std::io::stdout().lock();
    writeln!(out, "listening {addr}")?;
    out.flush()?;
    for line in std::io::stdin().lock().lines() {
        let (seq, bytes) = parse_move(&line?)?;
        let bytes: Arc<[u8]> = chunk(seq, bytes).into();
        let (done, finished) = mpsc::channel();
        for lane in &lanes {
            lane.send(Job::Write(bytes.clone(), done.clone()))
                .context("a writer thread ended")?;
        }
        drop(done);
        while finished.recv().is_ok() {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_chunk_is_one_frame_of_the_asked_size_with_its_id() {
        let c = chunk(42, 300);
        let text = String::from_utf8(c).unwrap();
        let (size, rest) = text.split_once("\r\n").unwrap();
        let frame = rest.strip_suffix("\r\n").unwrap();
        assert_eq!(usize::from_str_radix(size, 16).unwrap(), frame.len());
        assert_eq!(frame.len(), 300);
        assert!(frame.starts_with("id: 42\nevent: floor\ndata: x"));
        assert!(frame.ends_with("x\n\n"));
        // Too small a size still makes a whole frame.
        let small = String::from_utf8(chunk(7, 1)).unwrap();
        assert!(small.contains("id: 7\nevent: floor\ndata: \n\n"));
    }

    #[test]
    fn a_writer_sends_each_move_to_every_connection_it_owns() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (jobs, rx) = mpsc::channel();
        let thread = std::thread::spawn(move || writer(&rx));
        let mut clients = Vec::new();
        for _ in 0..3 {
            let mut client = TcpStream::connect(addr).unwrap();
            client.write_all(b"GET /floor HTTP/1.1\r\n\r\n").unwrap();
            let (mut served, _) = listener.accept().unwrap();
            greet(&mut served).unwrap();
            jobs.send(Job::Own(served)).unwrap();
            let mut head = vec![0u8; HEAD.len()];
            client.read_exact(&mut head).unwrap();
            assert_eq!(head, HEAD);
            clients.push(client);
        }
        // One client leaves: the next move still reaches the others.
        drop(clients.remove(1));
        for seq in [1, 2] {
            let bytes: Arc<[u8]> = chunk(seq, 64).into();
            let (done, finished) = mpsc::channel();
            jobs.send(Job::Write(bytes.clone(), done)).unwrap();
            finished.recv().unwrap();
            for client in &mut clients {
                let mut got = vec![0u8; bytes.len()];
                client.read_exact(&mut got).unwrap();
                assert_eq!(got, &bytes[..]);
            }
        }
        drop(jobs);
        thread.join().unwrap();
    }

    #[test]
    fn reads_move_lines_and_refuses_others() {
        assert_eq!(parse_move("move 3 250").unwrap(), (3, 250));
        assert!(parse_move("move 3").is_err());
        assert!(parse_move("move x 250").is_err());
        assert!(parse_move("go 3 250").is_err());
        assert!(parse_move("move 3 250 9").is_err());
    }
}
