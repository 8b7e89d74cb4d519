//! The bounded queues between the game thread and the network thread.
//!
//! Why not a channel (tokio's, or any lock-free one): a channel moves each
//! message across on its own, so every send and every take writes shared
//! counters the other thread reads next (a list's tail, its ready bits,
//! the waker's state, the bound's count): cache lines crossing between
//! the cores several times per message. Here the sender appends to a
//! vector under a mutex that the receiver takes only when it has used up
//! what it took before: it takes everything waiting at once, and a
//! message costs the sender a lock its core mostly holds already, and the
//! receiver nothing. [`Receiver::try_recv`] (a pump, the network loop
//! between messages) never waits for the lock, so a sender that loses
//! its core while holding it stalls neither; the lock is held for a push
//! or a swap of vectors, never for an allocation of the receiver's.
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
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes};

struct State<T> {
    items: Vec<T>,
    bytes: Vec<u8>,
    /// Taken by the receiver and not yet used (as of its last look).
    held: usize,
    /// [`Inner::ready`], as the lock's holder knows it (not read back).
    ready: bool,
    /// The receiver, waiting for a message.
    waker: Option<Waker>,
    senders: usize,
    receiver: bool,
}

struct Inner<T> {
    state: Mutex<State<T>>,
    /// Something waits in `state.items`: a receiver that finds nothing
    /// (a pump with nothing from the network, most of them) takes no
    /// lock. Written under the lock, read without.
    ready: AtomicBool,
}

impl<T> Inner<T> {
    fn mark_ready(&self, state: &mut State<T>) {
        if !state.ready && !state.items.is_empty() {
            state.ready = true;
            self.ready.store(true, Ordering::Release);
        }
    }

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
    /// It counted nothing as held when it last took.
    held_none: bool,
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
        ready: AtomicBool::new(false),
        state: Mutex::new(State {
            items: Vec::new(),
            bytes: Vec::new(),
            held: 0,
            ready: false,
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
            held_none: true,
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

    /// Queues `value` with `parts` (one after the other), which the
    /// receiver reads with [`Receiver::bytes`] when it takes `value`.
    pub(crate) fn try_send_with(&self, value: T, parts: &[&[u8]]) -> Result<(), T> {
        self.push(value, parts, true)
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

    /// Queues the messages of `staged` (whose bytes, in order, are
    /// `staged_bytes`; `len_of` says how many are each one's) under one
    /// lock, as many as there is room for; both are left empty. Returns
    /// how many did not fit (the last ones) and were dropped.
    pub(crate) fn send_many(
        &self,
        staged: &mut Vec<T>,
        staged_bytes: &mut Vec<u8>,
        len_of: impl Fn(&T) -> usize,
    ) -> usize {
        let mut state = self.inner.lock();
        let room = if state.receiver {
            self.bound
                .saturating_sub(state.items.len() + state.held)
                .min(staged.len())
        } else {
            0
        };
        let dropped = staged.split_off(room);
        let bytes: usize = staged.iter().map(&len_of).sum();
        staged_bytes.truncate(bytes);
        // Most often the receiver took everything before: the staged
        // vectors are handed over whole, not copied.
        if state.items.is_empty() {
            std::mem::swap(&mut state.items, staged);
        } else {
            state.items.append(staged);
        }
        if state.bytes.is_empty() {
            std::mem::swap(&mut state.bytes, staged_bytes);
        } else {
            state.bytes.extend_from_slice(staged_bytes);
        }
        self.inner.mark_ready(&mut state);
        let waker = state.waker.take();
        drop(state);
        staged_bytes.clear();
        if let Some(waker) = waker {
            waker.wake();
        }
        dropped.len()
    }

    fn push(&self, value: T, parts: &[&[u8]], bounded: bool) -> Result<(), T> {
        let mut state = self.inner.lock();
        if !state.receiver || (bounded && state.items.len() + state.held >= self.bound) {
            return Err(value);
        }
        state.items.push(value);
        for part in parts {
            state.bytes.extend_from_slice(part);
        }
        self.inner.mark_ready(&mut state);
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
        if let Some(taken) = take(
            &self.inner.ready,
            &mut state,
            &mut self.local,
            &mut self.spare,
        ) {
            self.held_none = false;
            drop(state);
            took(taken, &mut self.bytes, &mut self.spare);
            return Poll::Ready(self.local.pop_front());
        }
        self.held_none = true;
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
        // Nothing queued, and nothing held (it counted none when it last
        // found none): nothing to do, and no lock taken.
        if !self.inner.ready.load(Ordering::Acquire) && self.held_none {
            return None;
        }
        // Never waits for the lock: its holder (a sender) may have lost
        // its core for a while, and the caller will look again (a pump
        // next tick, the network loop before it sleeps).
        let mut state = match self.inner.state.try_lock() {
            Ok(state) => state,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        let taken = take(
            &self.inner.ready,
            &mut state,
            &mut self.local,
            &mut self.spare,
        );
        self.held_none = state.held == 0;
        drop(state);
        if let Some(taken) = taken {
            took(taken, &mut self.bytes, &mut self.spare);
        }
        self.local.pop_front()
    }

    /// The next `len` bytes sent with the messages taken, in order.
    pub(crate) fn bytes(&mut self, len: usize) -> Bytes {
        let len = len.min(self.bytes.len());
        self.bytes.split_to(len)
    }

    /// The next bytes sent with the messages taken, `lens` long one after
    /// the other: where each is in the buffer given with them (one count
    /// taken on the buffer, not one per part).
    pub(crate) fn parts<const N: usize>(&mut self, lens: [usize; N]) -> (Bytes, [Range<usize>; N]) {
        let mut at = 0;
        let ranges = lens.map(|len| {
            let start = at;
            at = (at + len).min(self.bytes.len());
            start..at
        });
        let buffer = self.bytes.clone();
        self.bytes.advance(at);
        (buffer, ranges)
    }

    /// Counts exactly what it holds as waiting: when it stops taking for
    /// a while (the connection lost), the sender's bound is exact.
    pub(crate) fn settle(&mut self) {
        self.inner.lock().held = self.local.len();
        self.held_none = self.local.is_empty();
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.inner.lock().senders == 0
    }
}

/// Takes everything waiting into `local` (what it took before is all
/// used: the bytes read, the messages gone); true when it found any.
/// Counts what the receiver holds now as waiting.
fn take<T>(
    ready: &AtomicBool,
    state: &mut State<T>,
    local: &mut VecDeque<T>,
    spare: &mut Vec<u8>,
) -> Option<Vec<u8>> {
    debug_assert!(local.is_empty());
    if state.items.is_empty() {
        state.held = 0;
        return None;
    }
    state.ready = false;
    ready.store(false, Ordering::Release);
    let mut items = Vec::from(std::mem::take(local));
    std::mem::swap(&mut items, &mut state.items);
    state.held = items.len();
    *local = VecDeque::from(items);
    Some(std::mem::replace(&mut state.bytes, std::mem::take(spare)))
}

/// The bytes [`take`] took made readable, and a spare buffer of their
/// size made for the next take: allocations done out of the lock.
fn took(taken: Vec<u8>, bytes: &mut Bytes, spare: &mut Vec<u8>) {
    if !taken.is_empty() {
        *spare = Vec::with_capacity(taken.len());
    }
    *bytes = Bytes::from(taken);
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
        tx.try_send_with(1, &[b"o", b"ne"]).unwrap();
        tx.try_send(2).unwrap();
        tx.try_send_with(3, &[b"three"]).unwrap();
        assert_eq!(rx.try_recv(), Some(1));
        assert_eq!(&rx.bytes(3)[..], b"one");
        tx.try_send_with(4, &[b"four"]).unwrap();
        assert_eq!(rx.try_recv(), Some(2));
        assert_eq!(rx.try_recv(), Some(3));
        assert_eq!(&rx.bytes(5)[..], b"three");
        assert_eq!(rx.try_recv(), Some(4));
        assert_eq!(&rx.bytes(4)[..], b"four");
    }

    #[test]
    fn a_batch_goes_in_up_to_the_bound_and_the_rest_is_counted_dropped() {
        let (tx, mut rx) = bounded(3);
        tx.try_send_with(1, &[b"a"]).unwrap();
        let (mut staged, mut bytes) = (vec![2, 3, 4], b"bbcccdddd".to_vec());
        let dropped = tx.send_many(&mut staged, &mut bytes, |n| *n as usize);
        assert_eq!(dropped, 1);
        assert!(staged.is_empty() && bytes.is_empty());
        assert_eq!(tx.len(), 3);
        assert_eq!(rx.try_recv(), Some(1));
        assert_eq!(rx.try_recv(), Some(2));
        let (buffer, [a, b]) = rx.parts([1, 2]);
        assert_eq!((&buffer[a], &buffer[b]), (&b"a"[..], &b"bb"[..]));
        assert_eq!(rx.try_recv(), Some(3));
        assert_eq!(&rx.bytes(3)[..], b"ccc");
        assert_eq!(rx.try_recv(), None);
        assert_eq!(tx.len(), 0);
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
