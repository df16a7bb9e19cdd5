//! An order-preserving parallel map over the functions (or documents) of a module, for
//! the stages that run outside the per-function pass pipeline: parsing the documents
//! of a file and emitting the PTX of each function (issue 15, `-j N`).
//!
//! Items are handed out one at a time from a shared counter, so a few large functions
//! among many small ones still spread over the threads; results come back in input
//! order, so the output is byte-identical to a sequential run whatever the thread
//! count or timing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `items.iter().map(f).collect()`, on up to `jobs` threads (the calling thread is one
/// of them). With one job or fewer than two items, no thread is started.
pub fn map_ordered<T: Sync, R: Send>(items: &[T], jobs: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = jobs.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let results: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(item) = items.get(i) else { break };
        let r = f(item);
        *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(worker);
        }
        worker();
    });
    results.into_iter().map(|r| r.into_inner().unwrap_or_else(|e| e.into_inner()).expect("every item was mapped")).collect()
}

#[cfg(test)]
mod tests {
    use super::map_ordered;

    #[test]
    fn keeps_input_order_on_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        let expected: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for jobs in [1, 2, 3, 8, 5000] {
            assert_eq!(map_ordered(&items, jobs, |x| x * x + 1), expected, "{jobs} jobs");
        }
        assert!(map_ordered(&[] as &[u64], 4, |x| *x).is_empty());
    }
}
