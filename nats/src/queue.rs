//! The bounded queues between the game thread and the network thread.
//!
//! Why not tokio's bounded channel: every message taken from it gives its
//! permit back under a mutex (the semaphore's waiters list), on each side
//! of the bridge, once per message; the bridge never waits for room
//! anyway (a full queue is a drop, counted). An unbounded channel with an
//! atomic count for the bound costs one atomic add per message instead,
//! and keeps the channel's wake-only-when-waiting receiver.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

/// The sending side: refuses a message when `bound` already wait.
pub(crate) struct Sender<T> {
    tx: UnboundedSender<T>,
    len: Arc<AtomicUsize>,
    bound: usize,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            len: self.len.clone(),
            bound: self.bound,
        }
    }
}

/// The receiving side.
pub(crate) struct Receiver<T> {
    rx: UnboundedReceiver<T>,
    len: Arc<AtomicUsize>,
}

/// A queue holding at most `bound` messages.
pub(crate) fn bounded<T>(bound: usize) -> (Sender<T>, Receiver<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let len = Arc::new(AtomicUsize::new(0));
    (
        Sender {
            tx,
            len: len.clone(),
            bound,
        },
        Receiver { rx, len },
    )
}

impl<T> Sender<T> {
    /// Queues `value`; gives it back when the queue is full or its
    /// receiver gone.
    pub(crate) fn try_send(&self, value: T) -> Result<(), T> {
        if self.len.fetch_add(1, Ordering::AcqRel) >= self.bound {
            self.len.fetch_sub(1, Ordering::AcqRel);
            return Err(value);
        }
        self.tx.send(value).map_err(|e| {
            self.len.fetch_sub(1, Ordering::AcqRel);
            e.0
        })
    }

    /// Queues `value` past the bound: for what is already bounded
    /// elsewhere (the answer to a request this node holds).
    pub(crate) fn send_anyway(&self, value: T) {
        // Nobody to take it: dropped here, as the receiver would.
        let _ = self.try_send_anyway(value);
    }

    /// Like [`Sender::send_anyway`], giving `value` back when the
    /// receiver is gone.
    pub(crate) fn try_send_anyway(&self, value: T) -> Result<(), T> {
        self.len.fetch_add(1, Ordering::AcqRel);
        self.tx.send(value).map_err(|e| {
            self.len.fetch_sub(1, Ordering::AcqRel);
            e.0
        })
    }

    /// How many messages wait now.
    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// The most messages it holds (but for those sent anyway).
    pub(crate) fn bound(&self) -> usize {
        self.bound
    }
}

impl<T> Receiver<T> {
    /// The next message, waiting for one; `None` once every sender is
    /// gone and the queue is empty.
    pub(crate) async fn recv(&mut self) -> Option<T> {
        let value = self.rx.recv().await?;
        self.len.fetch_sub(1, Ordering::AcqRel);
        Some(value)
    }

    /// The next message if one waits.
    pub(crate) fn try_recv(&mut self) -> Option<T> {
        let value = self.rx.try_recv().ok()?;
        self.len.fetch_sub(1, Ordering::AcqRel);
        Some(value)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.rx.is_closed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_gives_the_message_back_until_one_is_taken() {
        let (tx, mut rx) = bounded(2);
        assert!(tx.try_send(1).is_ok());
        assert!(tx.try_send(2).is_ok());
        assert_eq!(tx.try_send(3), Err(3));
        assert_eq!(tx.len(), 2);
        assert_eq!(rx.try_recv(), Some(1));
        assert!(tx.try_send(3).is_ok());
        assert_eq!(rx.try_recv(), Some(2));
        assert_eq!(rx.try_recv(), Some(3));
        assert_eq!(rx.try_recv(), None);
        assert_eq!(tx.len(), 0);
    }
}
