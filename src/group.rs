//! Group commit: callers who arrive while a batch is being written wait in a queue, and
//! the next batch takes them all in one transaction.
//!
//! On PostgreSQL a command's cost is mostly per transaction and per statement (round trips,
//! each two context switches; the commit), not per row. One caller at a time leads: it
//! takes the queue (its own job first), runs the batch on its own thread and hands each
//! waiter its result, then passes the lead to the first caller who queued meanwhile. A
//! lone caller leads a batch of one at once, so nothing waits for a batch to fill; under
//! load the batches grow by themselves (about one per client in flight), and the work per
//! command falls as the load rises. The same scheme as LevelDB's and RocksDB's write queue.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// A queue whose jobs run in batches of at most `max`.
pub struct GroupQueue<J, R> {
    inner: Mutex<Inner<J, R>>,
    max: usize,
    batches: AtomicU64,
    jobs: AtomicU64,
}

/// How a queue's batches went so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupStats {
    /// Batches run.
    pub batches: u64,
    /// Jobs in them.
    pub jobs: u64,
}

struct Inner<J, R> {
    waiting: VecDeque<(J, Arc<Ticket<R>>)>,
    /// Someone leads (runs a batch or is about to): a new job waits.
    leading: bool,
}

/// One caller's place: it sleeps on it until its result is in or it is to lead.
struct Ticket<R> {
    state: Mutex<State<R>>,
    woken: Condvar,
}

enum State<R> {
    Waiting,
    Lead,
    Done(R),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<R> Ticket<R> {
    fn new() -> Self {
        Self {
            state: Mutex::new(State::Waiting),
            woken: Condvar::new(),
        }
    }

    fn set(&self, state: State<R>) {
        *lock(&self.state) = state;
        self.woken.notify_one();
    }

    /// Sleeps until the result is in (`Ok`) or this caller is to lead (`Err(())`).
    fn wait(&self) -> Result<R, ()> {
        let mut state = lock(&self.state);
        loop {
            match std::mem::replace(&mut *state, State::Waiting) {
                State::Done(r) => return Ok(r),
                State::Lead => return Err(()),
                State::Waiting => {
                    state = self
                        .woken
                        .wait(state)
                        .unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

/// The leader's batch: if the leader unwinds before every ticket has its result, the
/// rest get `abandoned()`; and the lead passes on (once), so no waiter sleeps for ever.
struct Batch<'q, J, R, F: Fn() -> R> {
    queue: &'q GroupQueue<J, R>,
    tickets: Vec<Arc<Ticket<R>>>,
    abandoned: F,
    passed: std::cell::Cell<bool>,
}

impl<J, R, F: Fn() -> R> Batch<'_, J, R, F> {
    /// The first caller who queued meanwhile leads the next batch (from now on).
    fn pass_lead(&self) {
        if self.passed.replace(true) {
            return;
        }
        let mut inner = lock(&self.queue.inner);
        match inner.waiting.front() {
            Some((_, next)) => next.set(State::Lead),
            None => inner.leading = false,
        }
    }
}

impl<J, R, F: Fn() -> R> Drop for Batch<'_, J, R, F> {
    fn drop(&mut self) {
        for ticket in self.tickets.drain(..) {
            ticket.set(State::Done((self.abandoned)()));
        }
        self.pass_lead();
    }
}

impl<J, R> GroupQueue<J, R> {
    /// A queue whose batches hold at most `max` jobs (at least 1).
    #[must_use]
    pub fn new(max: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                waiting: VecDeque::new(),
                leading: false,
            }),
            max: max.max(1),
            batches: AtomicU64::new(0),
            jobs: AtomicU64::new(0),
        }
    }

    /// Batches and jobs run so far.
    pub fn stats(&self) -> GroupStats {
        GroupStats {
            batches: self.batches.load(Ordering::Relaxed),
            jobs: self.jobs.load(Ordering::Relaxed),
        }
    }

    /// Runs `job` in a batch and returns its result. The caller who leads runs `run` on
    /// the batch's jobs, in the order they came; `run` returns one result per job, in
    /// that order (a missing one, or a leader that panics, gives `abandoned()`). `run` may
    /// call its second argument to let the next batch start before it has finished (the
    /// group commit does when only its `COMMIT` is left); otherwise the lead passes when
    /// `run` returns.
    pub fn submit(
        &self,
        job: J,
        run: impl FnOnce(Vec<J>, &dyn Fn()) -> Vec<R>,
        abandoned: impl Fn() -> R,
    ) -> R {
        let mine = Arc::new(Ticket::new());
        let lead_now = {
            let mut inner = lock(&self.inner);
            inner.waiting.push_back((job, Arc::clone(&mine)));
            !std::mem::replace(&mut inner.leading, true)
        };
        if !lead_now && let Ok(result) = mine.wait() {
            return result;
        }
        // Leading: this caller's job is first in the queue.
        let (jobs, tickets): (Vec<J>, Vec<Arc<Ticket<R>>>) = {
            let mut inner = lock(&self.inner);
            let n = inner.waiting.len().min(self.max);
            inner.waiting.drain(..n).unzip()
        };
        self.batches.fetch_add(1, Ordering::Relaxed);
        self.jobs.fetch_add(
            u64::try_from(jobs.len()).unwrap_or(u64::MAX),
            Ordering::Relaxed,
        );
        let mut batch = Batch {
            queue: self,
            tickets,
            abandoned,
            passed: std::cell::Cell::new(false),
        };
        let results = run(jobs, &|| batch.pass_lead());
        let mut own = None;
        for (ticket, result) in batch.tickets.drain(..).zip(results) {
            if Arc::ptr_eq(&ticket, &mine) {
                own = Some(result);
            } else {
                ticket.set(State::Done(result));
            }
        }
        let own = own.unwrap_or_else(|| (batch.abandoned)());
        drop(batch);
        own
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::GroupQueue;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn a_lone_caller_runs_a_batch_of_one() {
        let q = GroupQueue::new(8);
        let r = q.submit(5, |jobs, _| jobs.iter().map(|j| j * 2).collect(), || -1);
        assert_eq!(r, 10);
    }

    #[test]
    fn every_caller_gets_its_own_result_and_batches_form_under_load() {
        let q = Arc::new(GroupQueue::new(4));
        let batches = Arc::new(AtomicUsize::new(0));
        let largest = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|t| {
                let (q, batches, largest) = (q.clone(), batches.clone(), largest.clone());
                std::thread::spawn(move || {
                    for i in 0..200 {
                        let job = t * 1000 + i;
                        let r = q.submit(
                            job,
                            |jobs: Vec<usize>, pass: &dyn Fn()| {
                                batches.fetch_add(1, Ordering::Relaxed);
                                largest.fetch_max(jobs.len(), Ordering::Relaxed);
                                std::thread::sleep(std::time::Duration::from_micros(200));
                                // Half the batches let the next one start early.
                                if t % 2 == 0 {
                                    pass();
                                    std::thread::sleep(std::time::Duration::from_micros(100));
                                }
                                jobs.iter().map(|j| j + 1).collect()
                            },
                            || usize::MAX,
                        );
                        assert_eq!(r, job + 1);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let batches = batches.load(Ordering::Relaxed);
        assert!(batches < 16 * 200, "some batches held more than one job");
        assert!(largest.load(Ordering::Relaxed) <= 4, "no batch above max");
        let stats = q.stats();
        assert_eq!(stats.jobs, 16 * 200);
        assert_eq!(stats.batches, u64::try_from(batches).unwrap());
    }

    #[test]
    fn a_short_answer_or_a_panicking_leader_abandons_the_rest_and_passes_the_lead() {
        let q = Arc::new(GroupQueue::new(8));
        // The leader returns no results at all: every job gets the abandoned value.
        assert_eq!(q.submit(1, |_, _| Vec::new(), || -1), -1);
        let q2 = q.clone();
        let panicked = std::thread::spawn(move || {
            q2.submit(2, |_: Vec<i32>, _| panic!("leader fails"), || -1)
        })
        .join();
        assert!(panicked.is_err());
        // The queue still works afterwards.
        assert_eq!(q.submit(3, |jobs, _| jobs, || -1), 3);
    }
}
