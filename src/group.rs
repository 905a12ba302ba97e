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
//!
//! A new leader may wait a little (the queue's linger) before it takes the queue: until it
//! holds as many jobs as the last batch did, and no job announced with
//! [`GroupQueue::announce`] (the HTTP handler announces before its hand-off to a blocking
//! thread) is still on its way. Like PostgreSQL's `commit_delay`, which waits only while
//! `commit_siblings` are active, a lone caller never waits (its last batch was itself), and
//! under load the batches grow. With two replicas on one database each replica's batches
//! had half the commands of one replica's, and PostgreSQL committed twice the transactions
//! per command; a short linger gives them larger batches (measured in docs/scaling.md,
//! fifth pass).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// A queue whose jobs run in batches of at most `max`.
pub struct GroupQueue<J, R> {
    inner: Mutex<Inner<J, R>>,
    max: usize,
    /// How long a new leader waits at most for more jobs.
    linger: Duration,
    coming: Arc<Coming>,
    /// Jobs in the last batch: a new leader expects as many again.
    last: AtomicUsize,
    batches: AtomicU64,
    jobs: AtomicU64,
}

/// Jobs announced and not in the queue yet, and whether a leader waits for more jobs (it
/// is woken by every change of the queue, and only then: a wake-up is a system call).
#[derive(Default)]
struct Coming {
    state: Mutex<ComingState>,
    changed: Condvar,
}

#[derive(Default)]
struct ComingState {
    announced: usize,
    leader_waits: bool,
}

impl Coming {
    /// Applies `change` and wakes a waiting leader. Both happen under the lock the leader
    /// holds from its look at the queue until it sleeps, so no wake-up is lost in between.
    fn change(&self, change: impl FnOnce(&mut ComingState)) {
        let mut state = lock(&self.state);
        change(&mut state);
        if state.leader_waits {
            self.changed.notify_all();
        }
    }
}

/// A job on its way to [`GroupQueue::submit`] (from [`GroupQueue::announce`]): counted until
/// it joins the queue or this is dropped.
pub struct Announced {
    coming: Arc<Coming>,
    here: AtomicBool,
}

impl Announced {
    /// The job joined the queue, or will not come; false when that was said before.
    pub fn arrive(&self) -> bool {
        let first = !self.here.swap(true, Ordering::SeqCst);
        if first {
            self.coming
                .change(|s| s.announced = s.announced.saturating_sub(1));
        }
        first
    }
}

impl Drop for Announced {
    fn drop(&mut self) {
        let _ = self.arrive();
    }
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
    /// A queue whose batches hold at most `max` jobs (at least 1), whose leaders wait up
    /// to `linger` for more jobs (zero: never).
    #[must_use]
    pub fn new(max: usize, linger: Duration) -> Self {
        Self {
            inner: Mutex::new(Inner {
                waiting: VecDeque::new(),
                leading: false,
            }),
            max: max.max(1),
            linger,
            coming: Arc::default(),
            last: AtomicUsize::new(1),
            batches: AtomicU64::new(0),
            jobs: AtomicU64::new(0),
        }
    }

    /// Announces a job that is about to be submitted; pass it to `submit`.
    pub fn announce(&self) -> Announced {
        self.coming.change(|s| s.announced += 1);
        Announced {
            coming: Arc::clone(&self.coming),
            here: AtomicBool::new(false),
        }
    }

    /// The new leader's wait: until the queue holds as many jobs as the last batch and no
    /// announced job is still on its way, or the batch is full, or the linger is over.
    fn linger(&self) {
        if self.linger.is_zero() {
            return;
        }
        let deadline = Instant::now() + self.linger;
        let expect = self.last.load(Ordering::Relaxed).min(self.max);
        let mut state = lock(&self.coming.state);
        loop {
            let queued = lock(&self.inner).waiting.len();
            let left = deadline.saturating_duration_since(Instant::now());
            if queued >= self.max || (state.announced == 0 && queued >= expect) || left.is_zero() {
                break;
            }
            state.leader_waits = true;
            state = self
                .coming
                .changed
                .wait_timeout(state, left)
                .map_or_else(|e| e.into_inner().0, |(guard, _)| guard);
        }
        state.leader_waits = false;
    }

    /// Batches and jobs run so far.
    pub fn stats(&self) -> GroupStats {
        GroupStats {
            batches: self.batches.load(Ordering::Relaxed),
            jobs: self.jobs.load(Ordering::Relaxed),
        }
    }

    /// Runs `job` in a batch and returns its result (`announced`: its announcement, which
    /// ends when the job is queued). The caller who leads runs `run` on
    /// the batch's jobs, in the order they came; `run` returns one result per job, in
    /// that order (a missing one, or a leader that panics, gives `abandoned()`). `run` may
    /// call its second argument to let the next batch start before it has finished (the
    /// group commit does when only its `COMMIT` is left); otherwise the lead passes when
    /// `run` returns.
    pub fn submit(
        &self,
        job: J,
        announced: Option<&Announced>,
        run: impl FnOnce(Vec<J>, &dyn Fn()) -> Vec<R>,
        abandoned: impl Fn() -> R,
    ) -> R {
        let mine = Arc::new(Ticket::new());
        let lead_now = {
            let mut inner = lock(&self.inner);
            inner.waiting.push_back((job, Arc::clone(&mine)));
            !std::mem::replace(&mut inner.leading, true)
        };
        // A job announced before (a retry) or never still wakes a waiting leader.
        if !announced.is_some_and(Announced::arrive) {
            self.coming.change(|_| {});
        }
        if !lead_now && let Ok(result) = mine.wait() {
            return result;
        }
        // Leading: this caller's job is first in the queue.
        self.linger();
        let (jobs, tickets): (Vec<J>, Vec<Arc<Ticket<R>>>) = {
            let mut inner = lock(&self.inner);
            let n = inner.waiting.len().min(self.max);
            self.last.store(n, Ordering::Relaxed);
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
    use std::time::Duration;

    #[test]
    fn a_lone_caller_runs_a_batch_of_one() {
        let q = GroupQueue::new(8, Duration::ZERO);
        let r = q.submit(
            5,
            None,
            |jobs, _| jobs.iter().map(|j| j * 2).collect(),
            || -1,
        );
        assert_eq!(r, 10);
    }

    #[test]
    fn every_caller_gets_its_own_result_and_batches_form_under_load() {
        let q = Arc::new(GroupQueue::new(4, Duration::ZERO));
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
                            None,
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
        let q = Arc::new(GroupQueue::new(8, Duration::ZERO));
        // The leader returns no results at all: every job gets the abandoned value.
        assert_eq!(q.submit(1, None, |_, _| Vec::new(), || -1), -1);
        let q2 = q.clone();
        let panicked = std::thread::spawn(move || {
            q2.submit(2, None, |_: Vec<i32>, _| panic!("leader fails"), || -1)
        })
        .join();
        assert!(panicked.is_err());
        // The queue still works afterwards.
        assert_eq!(q.submit(3, None, |jobs, _| jobs, || -1), 3);
    }

    /// A leader that runs alone, a second job submitted meanwhile, and the sizes of the
    /// batches that ran.
    fn batch_sizes(
        q: &Arc<GroupQueue<u32, u32>>,
        second: impl FnOnce() + Send + 'static,
    ) -> Vec<usize> {
        let sizes = Arc::new(std::sync::Mutex::new(Vec::new()));
        let run = |sizes: Arc<std::sync::Mutex<Vec<usize>>>| {
            move |jobs: Vec<u32>, _: &dyn Fn()| {
                sizes.lock().unwrap().push(jobs.len());
                jobs
            }
        };
        let other = std::thread::spawn(second);
        assert_eq!(q.submit(1, None, run(sizes.clone()), || 0), 1);
        other.join().unwrap();
        sizes.lock().unwrap().clone()
    }

    #[test]
    fn a_leader_waits_for_an_announced_job_and_takes_it_along() {
        let q = Arc::new(GroupQueue::new(8, Duration::from_secs(30)));
        let announced = q.announce();
        let (q2, sizes_seen) = (q.clone(), Arc::new(std::sync::Mutex::new(Vec::new())));
        let seen = sizes_seen.clone();
        let sizes = batch_sizes(&q, move || {
            // Submitted well after the leader started: it still joins the leader's batch.
            std::thread::sleep(Duration::from_millis(50));
            let r = q2.submit(
                2,
                Some(&announced),
                |jobs, _| {
                    seen.lock().unwrap().push(jobs.len());
                    jobs
                },
                || 0,
            );
            assert_eq!(r, 2);
        });
        assert_eq!(sizes, vec![2], "one batch held both jobs");
        assert!(
            sizes_seen.lock().unwrap().is_empty(),
            "the second caller did not lead"
        );
    }

    #[test]
    fn after_a_batch_of_two_a_leader_waits_for_a_second_job() {
        let q = Arc::new(GroupQueue::new(8, Duration::from_secs(30)));
        let (announced, q2) = (q.announce(), q.clone());
        let first = batch_sizes(&q, move || {
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(q2.submit(2, Some(&announced), |jobs, _| jobs, || 0), 2);
        });
        assert_eq!(first, vec![2]);
        // Nothing announced now, but the last batch held two: the next leader waits for a
        // second job (not announced) and takes it along.
        let q3 = q.clone();
        let second = batch_sizes(&q, move || {
            std::thread::sleep(Duration::from_millis(50));
            assert_eq!(q3.submit(3, None, |jobs, _| jobs, || 0), 3);
        });
        assert_eq!(second, vec![2]);
    }

    #[test]
    fn an_announcement_dropped_unsent_ends_the_wait_and_a_lone_caller_never_waits() {
        let q = Arc::new(GroupQueue::new(8, Duration::from_secs(30)));
        let (announced, q2) = (q.announce(), q.clone());
        let sizes = batch_sizes(&q, move || {
            std::thread::sleep(Duration::from_millis(50));
            drop(announced);
            // Had the leader gone on waiting for the dropped job, this one would join it.
            std::thread::sleep(Duration::from_millis(200));
            assert_eq!(q2.submit(2, None, |jobs, _| jobs, || 0), 2);
        });
        assert_eq!(sizes, vec![1]);
        // Nothing announced and a last batch of one: a lone caller leads at once, so a job
        // that comes later runs in a batch of its own.
        let q3 = q.clone();
        let sizes = batch_sizes(&q, move || {
            std::thread::sleep(Duration::from_millis(200));
            assert_eq!(q3.submit(3, None, |jobs, _| jobs, || 0), 3);
        });
        assert_eq!(sizes, vec![1]);
        let stats = q.stats();
        assert_eq!((stats.batches, stats.jobs), (4, 4));
    }
}
