//! How `codemode mcp` reads and writes its stdio: one JSON-RPC message per line, and an answer for every
//! request, including the ones rmcp's own stdio transport drops without a word (an oversized line, malformed
//! JSON, JSON that is no message). An agent waiting on a request that never gets a response hangs.

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde::Deserializer as _;
use serde::de::{Error as _, IgnoredAny, MapAccess, Visitor};
use serde_json::{Value, json};
use std::io;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// The largest message read, in bytes without its newline. Larger lines are skipped unread past this point, so
/// memory stays bounded whatever a peer sends; a program this large could not be recorded anyway.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;

/// One line on its way to stdout, and who wants to hear that it was written.
struct Outgoing {
    bytes: Vec<u8>,
    written: Option<oneshot::Sender<io::Result<()>>>,
}

/// The server's side of stdio as an rmcp transport.
pub struct StdioLines<R> {
    read: BufReader<R>,
    /// The line being read. It survives a cancelled `receive` (rmcp polls it inside a `select!`), so a read
    /// resumes where it stopped.
    line: Vec<u8>,
    limit: usize,
    /// Set once a line went past the limit and was answered, until its newline has been skipped.
    skipping: bool,
    /// Every line, responses and our error answers alike, goes through one writer task: an error answer is
    /// queued without awaiting, so a cancelled `receive` can neither lose it nor leave half of it on stdout
    /// for a response to be written into.
    out: Option<mpsc::UnboundedSender<Outgoing>>,
    writer: Option<JoinHandle<()>>,
}

impl<R: AsyncRead + Send + Unpin> StdioLines<R> {
    pub fn new<W: AsyncWrite + Send + Unpin + 'static>(read: R, write: W, limit: usize) -> Self {
        let (out, queue) = mpsc::unbounded_channel();
        StdioLines {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            limit,
            skipping: false,
            out: Some(out),
            writer: Some(tokio::spawn(write_lines(write, queue))),
        }
    }

    /// Reads up to the next newline into `self.line`, never holding more than `limit` bytes of it. Each step
    /// copies and consumes with no await in between, so a cancelled read loses nothing.
    async fn next_line(&mut self) -> io::Result<Read> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                // A last message without its newline is still a message.
                return Ok(if self.line.is_empty() || self.skipping {
                    Read::End
                } else {
                    Read::Line
                });
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let content = newline.unwrap_or(available.len());
            let mut read = None;
            if self.skipping {
                self.skipping = newline.is_none();
            } else if self.line.len() + content > self.limit {
                // Keep the start (up to the limit) to find the request's id in; the rest is never stored.
                let room = self.limit - self.line.len();
                self.line.extend_from_slice(&available[..room]);
                self.skipping = newline.is_none();
                read = Some(Read::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    read = Some(Read::Line);
                }
            }
            self.read.consume(take);
            if let Some(read) = read {
                return Ok(read);
            }
        }
    }

    /// Queues an error answer; see `out` for why this does not wait for the write.
    fn answer(&self, id: Option<Value>, code: i64, message: String) {
        let reply =
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
        if let Some(out) = &self.out {
            let mut bytes = reply.to_string().into_bytes();
            bytes.push(b'\n');
            // A closed queue means stdout is gone; `receive` then ends at the next read or EOF.
            let _ = out.send(Outgoing {
                bytes,
                written: None,
            });
        }
    }

    /// The message on a complete line, `None` for a line that needs nothing, or the error answer it gets.
    fn judge(&self) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        // RFC 8259 §8.1 lets a parser ignore a leading byte order mark.
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let error = match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
            Ok(message) => return Some(message),
            Err(error) => error,
        };
        match serde_json::from_slice::<Value>(line) {
            // NaN, a cut-off line, bytes that are not UTF-8: no id can be trusted.
            Err(_) => self.answer(None, PARSE_ERROR, format!("Parse error: {error}")),
            // A notification gets no answer, not even an error one (JSON-RPC 2.0 §4.1).
            Ok(value) if value.get("method").is_some() && value.get("id").is_none() => {
                eprintln!("codemode mcp: ignored a notification that is not one: {error}");
            }
            Ok(value) => {
                let id = value
                    .get("id")
                    .filter(|id| id.is_string() || id.is_number());
                self.answer(
                    id.cloned(),
                    INVALID_REQUEST,
                    format!("Invalid Request: {error}"),
                );
            }
        }
        None
    }
}

enum Read {
    Line,
    TooLong,
    End,
}

impl<R: AsyncRead + Send + Unpin> Transport<RoleServer> for StdioLines<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // Queued now, in the order rmcp sends, and awaited below until it is on stdout.
        let queued = serde_json::to_vec(&item)
            .map_err(io::Error::from)
            .and_then(|mut bytes| {
                bytes.push(b'\n');
                let (written, done) = oneshot::channel();
                let out = self.out.as_ref().ok_or_else(closed)?;
                out.send(Outgoing {
                    bytes,
                    written: Some(written),
                })
                .map_err(|_| closed())?;
                Ok(done)
            });
        async move { queued?.await.unwrap_or_else(|_| Err(closed())) }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let read = match self.next_line().await {
                Ok(read) => read,
                Err(error) => {
                    eprintln!("codemode mcp: cannot read stdin: {error}");
                    return None;
                }
            };
            let message = match read {
                Read::End => return None,
                Read::Line => self.judge(),
                Read::TooLong => {
                    self.answer(
                        leading_id(&self.line),
                        INVALID_REQUEST,
                        format!(
                            "Request too large (limit {} bytes): it was skipped unread",
                            self.limit
                        ),
                    );
                    None
                }
            };
            self.line.clear();
            // One huge message should not keep its buffer for the rest of the session.
            self.line.shrink_to(64 * 1024);
            if message.is_some() {
                return message;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing the queue lets the writer finish what is queued and stop; waiting for it means nothing
        // already answered is lost when the process exits.
        self.out = None;
        if let Some(writer) = self.writer.take() {
            writer.await.map_err(io::Error::other)?;
        }
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "stdout is closed")
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut write: W,
    mut queue: mpsc::UnboundedReceiver<Outgoing>,
) {
    while let Some(outgoing) = queue.recv().await {
        let result = match write.write_all(&outgoing.bytes).await {
            Ok(()) => write.flush().await,
            Err(error) => Err(error),
        };
        let failed = result.is_err();
        if let Some(written) = outgoing.written {
            // The sender may have stopped waiting; the line was written (or failed) all the same.
            let _ = written.send(result);
        }
        if failed {
            // The peer is gone: dropping the queue makes every later send fail instead of piling up.
            return;
        }
    }
}

/// The top-level `"id"` of a message of which only the start is at hand, when it comes before the cut, so even
/// an oversized request's answer can name it.
fn leading_id(start: &[u8]) -> Option<Value> {
    struct FindId<'a>(&'a mut Option<Value>);
    impl<'de> Visitor<'de> for FindId<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    let id: Value = map.next_value()?;
                    // A number that runs into the cut may be missing digits; what follows it proves it whole.
                    if id.is_string() || map.next_key::<IgnoredAny>().is_ok() {
                        *self.0 = Some(id);
                    }
                    // Stop here: the rest of the message is not needed, and it is cut off.
                    return Err(A::Error::custom("found"));
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut id = None;
    // Failing is the expected end: the input stops mid-message, or the visitor stops at the id.
    let _ = serde_json::Deserializer::from_slice(start).deserialize_map(FindId(&mut id));
    id.filter(|id| id.is_string() || id.is_number())
}

#[cfg(test)]
mod tests {
    use super::leading_id;
    use serde_json::json;

    #[test]
    fn an_oversized_request_is_answered_with_its_id_when_it_comes_first() {
        let cut =
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"arguments":{"code":"xxxx"#;
        assert_eq!(leading_id(cut), Some(json!(7)));
        let named = br#"{"id":"a\"b","params":{"x":[1,{"id":5}"#;
        assert_eq!(leading_id(named), Some(json!("a\"b")));
        let late = br#"{"jsonrpc":"2.0","params":{"id":3,"code":"xxxx"#;
        assert_eq!(leading_id(late), None, "a nested id is not the request's");
        assert_eq!(leading_id(br#"{"id":null,"#), None);
        assert_eq!(
            leading_id(br#"{"id":12"#),
            None,
            "digits at the cut may be missing some"
        );
        assert_eq!(leading_id(br#"{"id":12}"#), Some(json!(12)));
        assert_eq!(leading_id(b"[1,2"), None);
    }
}
