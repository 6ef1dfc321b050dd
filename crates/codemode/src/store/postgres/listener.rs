//! The one connection that only LISTENs: it counts the changes every host announces and hears the runs
//! handed to this host.

use super::{CHANNEL, Handed};
use crate::store::postgres_tls::RustlsConnect;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio_postgres::AsyncMessage;

/// What the listener serves: this runtime's change count, and the runs handed to this host.
pub(super) struct Listening {
    pub(super) runtime: String,
    pub(super) host: String,
    pub(super) announced: Arc<AtomicU64>,
    pub(super) changed: tokio::sync::watch::Sender<u64>,
    pub(super) handed: tokio::sync::mpsc::UnboundedSender<Handed>,
}

impl Listening {
    fn count(&self) {
        let count = self.announced.fetch_add(1, Ordering::SeqCst) + 1;
        self.changed.send_replace(count);
    }

    fn heard(&self, payload: &str) {
        let mut fields = payload.split('\t');
        if fields.next() != Some(self.runtime.as_str()) {
            return;
        }
        self.count();
        if let (Some("hand-off"), Some(host), Some(id)) =
            (fields.next(), fields.next(), fields.next())
            && host == self.host
        {
            let _ = self.handed.send(Handed::Run(id.to_owned()));
        }
    }
}

/// Keeps one connection LISTENing on [`CHANNEL`]. When the connection ends it connects again, counts a
/// change and asks for a rescan of handed runs, since what was announced meanwhile is lost.
pub(super) async fn listen(
    config: tokio_postgres::Config,
    connector: RustlsConnect,
    listening: Listening,
) {
    let listening = Arc::new(listening);
    loop {
        if let Ok((client, mut connection)) = config.connect(connector.clone()).await {
            let heard = listening.clone();
            let driver = tokio::spawn(async move {
                let mut messages =
                    futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
                while let Some(Ok(message)) = futures_util::StreamExt::next(&mut messages).await {
                    if let AsyncMessage::Notification(notification) = message {
                        heard.heard(notification.payload());
                    }
                }
            });
            if client
                .batch_execute(&format!("LISTEN {CHANNEL}"))
                .await
                .is_ok()
            {
                listening.count();
                let _ = listening.handed.send(Handed::Rescan);
            }
            let _ = driver.await;
            drop(client);
        }
        if listening.handed.is_closed() && listening.changed.is_closed() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}
