//! Byte-level pieces of the [`super::FaultProxy`]: reading a chunked body
//! verbatim and forcing `Connection: close` on a response head.

use std::io::{self, BufRead, BufReader, Read};
use std::net::TcpStream;

/// Reads a chunked body verbatim (chunk framing included) so it can be
/// forwarded unchanged with its `Transfer-Encoding` header.
pub(super) fn read_chunked_raw(reader: &mut BufReader<TcpStream>) -> io::Result<Vec<u8>> {
    let mut raw = Vec::new();
    loop {
        let mut size_line = String::new();
        if reader.read_line(&mut size_line)? == 0 {
            return Err(bad_data("EOF inside chunked body".into()));
        }
        raw.extend_from_slice(size_line.as_bytes());
        let size_text = size_line
            .trim()
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let size = usize::from_str_radix(&size_text, 16)
            .map_err(|_| bad_data(format!("bad chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, up to and including the empty line.
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line)? == 0 {
                    return Ok(raw);
                }
                raw.extend_from_slice(line.as_bytes());
                if line.trim().is_empty() {
                    return Ok(raw);
                }
            }
        }
        let mut chunk = vec![0; size + 2]; // data + CRLF
        reader.read_exact(&mut chunk)?;
        raw.extend_from_slice(&chunk);
    }
}

/// Makes sure the response head carries `Connection: close` (the proxy serves
/// one request per client connection).
pub(super) fn ensure_connection_close(response: &[u8]) -> Vec<u8> {
    let Some(head_end) = super::super::find(response, b"\r\n\r\n") else {
        return response.to_vec();
    };
    let head = String::from_utf8_lossy(&response[..head_end]);
    let mut lines = head.split("\r\n");
    let mut out = String::from(lines.next().unwrap_or(""));
    for line in lines {
        let is_connection = line.split_once(':').is_some_and(|(name, _)| {
            let name = name.trim();
            name.eq_ignore_ascii_case("connection") || name.eq_ignore_ascii_case("keep-alive")
        });
        if !is_connection {
            out.push_str("\r\n");
            out.push_str(line);
        }
    }
    out.push_str("\r\nConnection: close\r\n\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(&response[head_end + 4..]);
    bytes
}

fn bad_data(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// The response without any header named `name` (case-insensitive).
pub(super) fn without_header(response: &[u8], name: &str) -> Vec<u8> {
    let Some(head_end) = super::super::find(response, b"\r\n\r\n") else {
        return response.to_vec();
    };
    let head = String::from_utf8_lossy(&response[..head_end]);
    let kept: Vec<&str> = head
        .split("\r\n")
        .enumerate()
        .filter(|(i, line)| {
            *i == 0
                || !line
                    .split_once(':')
                    .is_some_and(|(n, _)| n.trim().eq_ignore_ascii_case(name))
        })
        .map(|(_, line)| line)
        .collect();
    let mut bytes = kept.join("\r\n").into_bytes();
    bytes.extend_from_slice(&response[head_end..]);
    bytes
}

/// The response with one more header, right after the status line.
pub(super) fn with_header(response: &[u8], name: &str, value: &str) -> Vec<u8> {
    let Some(line_end) = super::super::find(response, b"\r\n") else {
        return response.to_vec();
    };
    let mut bytes = response[..line_end].to_vec();
    bytes.extend_from_slice(format!("\r\n{name}: {value}").as_bytes());
    bytes.extend_from_slice(&response[line_end..]);
    bytes
}
