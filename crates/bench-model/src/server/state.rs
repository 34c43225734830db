//! What a running endpoint's request handlers share: the conversation, the journal,
//! the limits and the counters. Apart from the endpoint that makes it, so that the
//! listener and the handlers use it without depending on the endpoint.

use super::body::Pacing;
use super::limits::Limits;
use crate::conversation::Conversation;
use crate::journal::Journal;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

/// The endpoint's shared state, one per endpoint, behind an `Arc` in every handler.
pub(super) struct State {
    pub(super) path_token: Option<String>,
    pub(super) conversation: Arc<Mutex<Conversation>>,
    pub(super) journal: Journal,
    pub(super) limits: Limits,
    pub(super) seed: u64,
    pub(super) requests: AtomicU64,
    pub(super) connections: Arc<tokio::sync::Semaphore>,
    pub(super) rejections: Arc<tokio::sync::Semaphore>,
    pub(super) pacing: Pacing,
    pub(super) peer_uid: Option<u32>,
}

/// Locks `mutex`, taking over the value of a panicked holder.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The conversation is consistent between decisions; a panic in one leaves it usable.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
