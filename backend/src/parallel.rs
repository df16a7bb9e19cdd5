//! Order-preserving parallel maps over the functions (or documents) of a module: the
//! one thread pool of `-j N` (issue 15). The pass pipeline runs each batch of functions
//! through its function-scoped passes and emission with it
//! (`passes::compile_per_function`), the parser reads the documents of a file with it,
//! and emission of a whole module writes each function's PTX with it.
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
    run(items.len(), jobs, || (), |_, i| f(&items[i]))
}

/// Like [`map_ordered`], but each item is handed to `f` by value with its index (so it
/// can be dropped as soon as it is mapped), and each thread first makes its own state
/// with `init` (for what cannot be shared between threads).
pub fn map_owned<T: Send, S, R: Send>(items: Vec<T>, jobs: usize, init: impl Fn() -> S + Sync, f: impl Fn(&mut S, usize, T) -> R + Sync) -> Vec<R> {
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    run(slots.len(), jobs, init, |state, i| {
        let item = slots[i].lock().unwrap_or_else(|e| e.into_inner()).take().expect("each item is taken once");
        f(state, i, item)
    })
}

/// `f(state, i)` for every `i` below `count`, on up to `jobs` threads, each with its own
/// `state` from `init`; the results in index order.
fn run<S, R: Send>(count: usize, jobs: usize, init: impl Fn() -> S + Sync, f: impl Fn(&mut S, usize) -> R + Sync) -> Vec<R> {
    let threads = jobs.clamp(1, count.max(1));
    if threads == 1 {
        let mut state = init();
        return (0..count).map(|i| f(&mut state, i)).collect();
    }
    let results: Vec<Mutex<Option<R>>> = (0..count).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || {
        let mut state = init();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= count {
                break;
            }
            let r = f(&mut state, i);
            *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        }
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
    use super::{map_ordered, map_owned};

    #[test]
    fn keeps_input_order_on_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        let expected: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
        for jobs in [1, 2, 3, 8, 5000] {
            assert_eq!(map_ordered(&items, jobs, |x| x * x + 1), expected, "{jobs} jobs");
            let owned = map_owned(items.clone(), jobs, || 0u64, |calls, i, x| {
                *calls += 1;
                (i as u64, x * x + 1, *calls)
            });
            assert_eq!(owned.iter().map(|r| r.1).collect::<Vec<_>>(), expected, "{jobs} jobs");
            assert!(owned.iter().enumerate().all(|(i, r)| r.0 == i as u64), "{jobs} jobs: indexes");
            // Each thread's state counts its own calls: together, one per item.
            assert!(owned.iter().all(|r| r.2 >= 1 && r.2 <= 1000));
        }
        assert!(map_ordered(&[] as &[u64], 4, |x| *x).is_empty());
        assert!(map_owned(Vec::<u64>::new(), 4, || (), |_, _, x| x).is_empty());
    }
}
