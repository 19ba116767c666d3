//! When a submission is complete for the host: the device has run it and
//! every host callback it carries (the map callbacks that copy read-backs
//! into host memory, those that read event timestamps) has returned.
//!
//! wgpu cannot say so on its own when several threads share a device. It
//! runs callbacks in whichever thread next polls the device or submits,
//! after that thread has released wgpu's locks (wgpu-core 30,
//! `device/mod.rs`, `UserClosures::fire`). A thread waiting for submission
//! N with `Device::poll(Wait)` may therefore return while another thread
//! that collected N's callbacks has not yet run them, or is halfway through
//! one. `fire` does run a batch's map callbacks before its
//! submitted-work-done callbacks ("Mappings _must_ be fired before
//! submissions"), but only among the callbacks one thread collected: thread
//! A may collect submission N - 1 and thread B submission N, and B may
//! report N done while A still copies N - 1's data; and a map registered
//! after its submission was already retired (`Queue::submit` registers the
//! maps of `map_buffer_on_submit` only after submitting, and another
//! thread's poll may retire the submission in between) is collected by a
//! later poll than the work-done callback registered with it.
//!
//! So kiln counts the callbacks itself. Each batch has a [`Completion`];
//! every callback recorded into the batch holds a share of it (a [`Hold`]),
//! and so does a submitted-work-done callback registered on the batch's
//! encoder, which wgpu runs only once the device has finished the
//! submission. When the last share is released, the batch is complete, and
//! [`Completions`] records it; a batch counts as complete for a waiter only
//! when it and every earlier batch are. A share dropped without its
//! callback having run (wgpu dropped the callback: the device was lost or
//! destroyed) marks the batch abandoned, and waiters get an error instead
//! of waiting for callbacks that will never come.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// Where the batches of one device stand, numbered from 1 in submission order.
pub(crate) struct Completions {
    progress: Mutex<Progress>,
    changed: Condvar,
}

#[derive(Default)]
struct Progress {
    /// Every batch numbered up to this one is complete.
    through: u64,
    /// Complete batches numbered above `through + 1`, waiting for an earlier one.
    ahead: BTreeSet<u64>,
    /// The first batch one of whose callbacks was dropped without running.
    abandoned: Option<u64>,
}

/// The host's view of a batch and every batch before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// Some callbacks have not run yet (or the device has not finished).
    Running,
    /// Every callback has run.
    Complete,
    /// A callback was dropped without running; it never will.
    Abandoned,
}

impl Completions {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Completions { progress: Mutex::new(Progress::default()), changed: Condvar::new() })
    }

    fn progress(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether batch `number` and all before it are complete. Batch 0 is
    /// "nothing submitted" and always complete.
    pub(crate) fn state(&self, number: u64) -> State {
        self.progress().state(number)
    }

    /// Wait until batch `number` is no longer running, or `timeout` passes.
    pub(crate) fn wait(&self, number: u64, timeout: Duration) -> State {
        let progress = self.progress();
        let (progress, _) = self
            .changed
            .wait_timeout_while(progress, timeout, |p| p.state(number) == State::Running)
            .unwrap_or_else(|p| p.into_inner());
        progress.state(number)
    }

    fn finish(&self, number: u64, abandoned: bool) {
        let mut guard = self.progress();
        let p = &mut *guard;
        if abandoned && p.abandoned.is_none_or(|a| number < a) {
            p.abandoned = Some(number);
        }
        p.ahead.insert(number);
        while p.ahead.remove(&(p.through + 1)) {
            p.through += 1;
        }
        drop(guard);
        self.changed.notify_all();
    }
}

impl Progress {
    fn state(&self, number: u64) -> State {
        match self.abandoned {
            Some(a) if a <= number => State::Abandoned,
            _ if number <= self.through => State::Complete,
            _ => State::Running,
        }
    }
}

/// The host callbacks of one batch: the batch is complete when the last
/// [`Hold`] on it, and the batch's own reference, are gone.
pub(crate) struct Completion {
    number: u64,
    completions: Arc<Completions>,
    abandoned: AtomicBool,
}

impl Completion {
    pub(crate) fn new(number: u64, completions: &Arc<Completions>) -> Arc<Self> {
        Arc::new(Completion { number, completions: completions.clone(), abandoned: AtomicBool::new(false) })
    }

    /// The batch's number.
    pub(crate) fn number(&self) -> u64 {
        self.number
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        // The last Arc's release orders every callback's writes (and its
        // `abandoned` store) before this; the mutex in `finish` then orders
        // them before any waiter that sees the batch complete.
        self.completions.finish(self.number, *self.abandoned.get_mut());
    }
}

/// One callback's share of its batch's [`Completion`]. The callback calls
/// [`ran`](Hold::ran) as its last act; dropped otherwise, it marks the batch abandoned.
pub(crate) struct Hold(Option<Arc<Completion>>);

impl Hold {
    pub(crate) fn new(completion: &Arc<Completion>) -> Self {
        Hold(Some(completion.clone()))
    }

    /// The callback has done everything it will do.
    pub(crate) fn ran(mut self) {
        self.0.take();
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        if let Some(completion) = self.0.take() {
            completion.abandoned.store(true, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_is_complete_only_with_every_earlier_one() {
        let c = Completions::new();
        let (one, two) = (Completion::new(1, &c), Completion::new(2, &c));
        let hold = Hold::new(&one);
        assert_eq!(c.state(0), State::Complete);
        drop(two);
        assert_eq!(c.state(2), State::Running, "batch 2 is done but batch 1 is not");
        drop(one);
        assert_eq!(c.state(1), State::Running, "a callback of batch 1 still holds it");
        hold.ran();
        assert_eq!((c.state(1), c.state(2), c.state(3)), (State::Complete, State::Complete, State::Running));
    }

    #[test]
    fn a_dropped_callback_abandons_its_batch_and_later_ones() {
        let c = Completions::new();
        let one = Completion::new(1, &c);
        let hold = Hold::new(&one);
        drop(one);
        drop(hold);
        assert_eq!(c.state(1), State::Abandoned);
        drop(Completion::new(2, &c));
        assert_eq!(c.state(2), State::Abandoned);
        assert_eq!(c.state(0), State::Complete);
    }

    #[test]
    fn a_waiter_wakes_when_the_batch_completes() {
        let c = Completions::new();
        let hold = Hold::new(&Completion::new(1, &c));
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            hold.ran();
        });
        assert_eq!(c.wait(1, Duration::from_secs(60)), State::Complete);
        t.join().unwrap();
    }
}
