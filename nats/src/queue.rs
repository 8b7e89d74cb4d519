//! The bounded queues between the game thread and the network thread.
//!
//! Why not a channel (tokio's, or any lock-free one): a channel moves each
//! message across on its own, so every send and every take writes shared
//! counters the other thread reads next (a list's tail, its ready bits,
//! the waker's state, the bound's count): a cache line crossing between
//! the cores several times per message, which at a few hundred thousand
//! messages a second is most of what a bridged message costs. Here the
//! sender appends to a vector under a mutex that the receiver takes only
//! when it has used up what it took before: it takes everything waiting
//! at once, and a message costs the sender an uncontended lock (its core
//! holds the line) and the receiver nothing.
//!
//! A message may come with bytes ([`Sender::try_send_with`]): they are
//! appended to one buffer the receiver takes with the messages, and read
//! back in order with [`Receiver::bytes`]. A payload then needs no
//! allocation of its own, and its reference count is touched by the
//! receiving thread alone.
//!
//! The bound counts what the receiver has taken but not yet used as
//! waiting still: [`Sender::len`] is what the network has not sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;

struct State<T> {
    items: Vec<T>,
    bytes: Vec<u8>,
    /// Taken by the receiver and not yet used (as of its last look).
    held: usize,
    /// The receiver, waiting for a message.
    waker: Option<Waker>,
    senders: usize,
    receiver: bool,
}

struct Inner<T> {
    state: Mutex<State<T>>,
}

impl<T> Inner<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // A panic while holding it leaves nothing half-done: a push or a
        // swap of vectors.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The sending side: refuses a message when `bound` already wait.
pub(crate) struct Sender<T> {
    inner: Arc<Inner<T>>,
    bound: usize,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.inner.lock().senders += 1;
        Self {
            inner: self.inner.clone(),
            bound: self.bound,
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let mut state = self.inner.lock();
        state.senders -= 1;
        let waker = if state.senders == 0 {
            state.waker.take()
        } else {
            None
        };
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

/// The receiving side.
pub(crate) struct Receiver<T> {
    inner: Arc<Inner<T>>,
    /// What it took, in order.
    local: VecDeque<T>,
    /// The bytes that came with them, read in order.
    bytes: Bytes,
    /// An empty buffer of the last one's size, given to the sender at the
    /// next take: a steady stream allocates no buffer per take.
    spare: Vec<u8>,
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut state = self.inner.lock();
        state.receiver = false;
        // Dropped here, not by whichever sender goes last.
        let items = std::mem::take(&mut state.items);
        drop(state);
        drop(items);
    }
}

/// A queue holding at most `bound` messages.
pub(crate) fn bounded<T>(bound: usize) -> (Sender<T>, Receiver<T>) {
    let inner = Arc::new(Inner {
        state: Mutex::new(State {
            items: Vec::new(),
            bytes: Vec::new(),
            held: 0,
            waker: None,
            senders: 1,
            receiver: true,
        }),
    });
    (
        Sender {
            inner: inner.clone(),
            bound,
        },
        Receiver {
            inner,
            local: VecDeque::new(),
            bytes: Bytes::new(),
            spare: Vec::new(),
        },
    )
}

impl<T> Sender<T> {
    /// Queues `value`; gives it back when the queue is full or its
    /// receiver gone.
    pub(crate) fn try_send(&self, value: T) -> Result<(), T> {
        self.push(value, &[], true)
    }

    /// Queues `value` with `bytes`, which the receiver reads with
    /// [`Receiver::bytes`] when it takes `value`.
    pub(crate) fn try_send_with(&self, value: T, bytes: &[u8]) -> Result<(), T> {
        self.push(value, bytes, true)
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
        self.push(value, &[], false)
    }

    fn push(&self, value: T, bytes: &[u8], bounded: bool) -> Result<(), T> {
        let mut state = self.inner.lock();
        if !state.receiver || (bounded && state.items.len() + state.held >= self.bound) {
            return Err(value);
        }
        state.items.push(value);
        state.bytes.extend_from_slice(bytes);
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// How many messages wait now.
    pub(crate) fn len(&self) -> usize {
        let state = self.inner.lock();
        state.items.len() + state.held
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
        std::future::poll_fn(|cx| self.poll_recv(cx)).await
    }

    fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        if let Some(value) = self.local.pop_front() {
            return Poll::Ready(Some(value));
        }
        let mut state = self.inner.lock();
        if take(
            &mut state,
            &mut self.local,
            &mut self.bytes,
            &mut self.spare,
        ) {
            drop(state);
            return Poll::Ready(self.local.pop_front());
        }
        if state.senders == 0 {
            return Poll::Ready(None);
        }
        if !state
            .waker
            .as_ref()
            .is_some_and(|w| w.will_wake(cx.waker()))
        {
            state.waker = Some(cx.waker().clone());
        }
        Poll::Pending
    }

    /// The next message if one waits.
    pub(crate) fn try_recv(&mut self) -> Option<T> {
        if let Some(value) = self.local.pop_front() {
            return Some(value);
        }
        let mut state = self.inner.lock();
        take(
            &mut state,
            &mut self.local,
            &mut self.bytes,
            &mut self.spare,
        );
        drop(state);
        self.local.pop_front()
    }

    /// The next `len` bytes sent with the messages taken, in order.
    pub(crate) fn bytes(&mut self, len: usize) -> Bytes {
        self.bytes.split_to(len.min(self.bytes.len()))
    }

    /// Counts exactly what it holds as waiting: when it stops taking for
    /// a while (the connection lost), the sender's bound is exact.
    pub(crate) fn settle(&self) {
        self.inner.lock().held = self.local.len();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.inner.lock().senders == 0
    }
}

/// Takes everything waiting into `local` (what it took before is all
/// used: the bytes read, the messages gone); true when it found any.
/// Counts what the receiver holds now as waiting.
fn take<T>(
    state: &mut State<T>,
    local: &mut VecDeque<T>,
    bytes: &mut Bytes,
    spare: &mut Vec<u8>,
) -> bool {
    debug_assert!(local.is_empty());
    if state.items.is_empty() {
        state.held = 0;
        return false;
    }
    let mut items = Vec::from(std::mem::take(local));
    std::mem::swap(&mut items, &mut state.items);
    state.held = items.len();
    let taken = std::mem::replace(&mut state.bytes, std::mem::take(spare));
    *local = VecDeque::from(items);
    if !taken.is_empty() {
        *spare = Vec::with_capacity(taken.len());
    }
    *bytes = Bytes::from(taken);
    true
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
        // Taken but not used: still waiting.
        assert_eq!(tx.len(), 2);
        rx.settle();
        assert_eq!(tx.len(), 1);
        assert!(tx.try_send(3).is_ok());
        assert_eq!(rx.try_recv(), Some(2));
        assert_eq!(rx.try_recv(), Some(3));
        assert_eq!(rx.try_recv(), None);
        assert_eq!(tx.len(), 0);
    }

    #[test]
    fn bytes_sent_with_messages_are_read_back_in_order() {
        let (tx, mut rx) = bounded(8);
        tx.try_send_with(1, b"one").unwrap();
        tx.try_send(2).unwrap();
        tx.try_send_with(3, b"three").unwrap();
        assert_eq!(rx.try_recv(), Some(1));
        assert_eq!(&rx.bytes(3)[..], b"one");
        tx.try_send_with(4, b"four").unwrap();
        assert_eq!(rx.try_recv(), Some(2));
        assert_eq!(rx.try_recv(), Some(3));
        assert_eq!(&rx.bytes(5)[..], b"three");
        assert_eq!(rx.try_recv(), Some(4));
        assert_eq!(&rx.bytes(4)[..], b"four");
    }

    #[test]
    fn a_queue_without_senders_ends() {
        let (tx, mut rx) = bounded::<u8>(2);
        tx.try_send(1).unwrap();
        drop(tx);
        assert!(rx.is_closed());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(rx.recv()), Some(1));
        assert_eq!(rt.block_on(rx.recv()), None);
    }
}
