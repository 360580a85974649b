//! Case threads: each `thread NAME` declaration is an OS thread that runs the operations addressed to it (`@NAME`),
//! one at a time, while the script's own thread waits for each. The script keeps its order, and per-thread CUDA
//! state (the per-thread default stream, the capture mode, the last error) is that thread's own.

use std::sync::mpsc::{self, Sender};
use std::thread::{Scope, ScopedJoinHandle};

type Task<'env> = Box<dyn FnOnce() + Send + 'env>;

struct Worker<'scope, 'env> {
    name: String,
    tasks: Sender<Task<'env>>,
    handle: ScopedJoinHandle<'scope, ()>,
}

pub struct CaseThreads<'scope, 'env> {
    workers: Vec<Worker<'scope, 'env>>,
    /// Threads that could not be started, and why.
    not_started: Vec<(String, String)>,
}

impl<'scope, 'env> CaseThreads<'scope, 'env> {
    /// Starts one thread per name inside `scope` (which joins them even if the executor unwinds).
    pub fn start(scope: &'scope Scope<'scope, 'env>, names: &[&str]) -> Self {
        let mut workers = Vec::new();
        let mut not_started = Vec::new();
        for &name in names {
            let (tasks, queue) = mpsc::channel::<Task<'env>>();
            let spawned = std::thread::Builder::new().name(format!("case@{name}")).spawn_scoped(scope, move || {
                for task in queue {
                    task();
                }
            });
            match spawned {
                Ok(handle) => workers.push(Worker { name: name.to_owned(), tasks, handle }),
                Err(e) => not_started.push((name.to_owned(), e.to_string())),
            }
        }
        CaseThreads { workers, not_started }
    }

    pub fn names(&self) -> impl Iterator<Item = &str> + use<'_, 'scope, 'env> {
        self.workers.iter().map(|w| w.name.as_str())
    }

    /// Notes for the threads that could not be started.
    pub fn start_failures(&self) -> Vec<String> {
        self.not_started.iter().map(|(name, why)| format!("thread {name} could not be started: {why}")).collect()
    }

    /// Runs `job` on case thread `thread` (`None`: the calling thread) and waits for its result.
    pub fn run<R: Send + 'env>(
        &self,
        thread: Option<&str>,
        job: impl FnOnce() -> R + Send + 'env,
    ) -> Result<R, String> {
        let Some(name) = thread else { return Ok(job()) };
        let worker =
            self.workers.iter().find(|w| w.name == name).ok_or_else(|| format!("thread {name} is not running"))?;
        let (reply, result) = mpsc::channel();
        let task: Task<'env> = Box::new(move || {
            let _ = reply.send(job());
        });
        worker.tasks.send(task).map_err(|_| format!("thread {name} has stopped"))?;
        result.recv().map_err(|_| format!("thread {name} panicked while running it"))
    }

    /// Stops every thread and waits for it. Joining here (not at the end of the scope) keeps a thread's panic from
    /// becoming the executor's; it is returned as a note instead.
    pub fn stop(self) -> Vec<String> {
        let mut notes = Vec::new();
        for worker in self.workers {
            drop(worker.tasks);
            if worker.handle.join().is_err() {
                notes.push(format!("thread {} panicked", worker.name));
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_on_their_thread_in_order() {
        let log = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            let threads = CaseThreads::start(scope, &["t1", "t2"]);
            let log = &log;
            for (i, thread) in [Some("t1"), None, Some("t2"), Some("t1")].into_iter().enumerate() {
                let name = threads
                    .run(thread, move || {
                        log.lock().unwrap().push(i);
                        std::thread::current().name().map(str::to_owned)
                    })
                    .unwrap();
                if let Some(t) = thread {
                    assert_eq!(name.as_deref(), Some(format!("case@{t}").as_str()));
                }
            }
            assert!(threads.run(Some("t3"), || ()).unwrap_err().contains("t3 is not running"));
            assert!(threads.stop().is_empty());
        });
        assert_eq!(*log.lock().unwrap(), [0, 1, 2, 3]);
    }

    #[test]
    fn a_panicking_job_is_reported_not_propagated() {
        std::thread::scope(|scope| {
            let threads = CaseThreads::start(scope, &["t"]);
            let err = threads.run(Some("t"), || -> u32 { panic!("boom") }).unwrap_err();
            assert!(err.contains("panicked"), "{err}");
            assert!(threads.run(Some("t"), || ()).is_err(), "the thread is gone");
            assert_eq!(threads.stop(), ["thread t panicked"]);
        });
    }
}
