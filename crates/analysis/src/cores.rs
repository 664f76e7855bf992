//! Spreading independent pieces of work over the machine's cores: the sweeps' parts of
//! time and the figures' rows. Threads take the next piece not yet taken, so one that
//! drew heavy pieces does not hold the others up, and results come back in the pieces'
//! order, whatever thread computed them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

/// The cores this process may run on (at least 1).
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// How often [`on_cores_ticking`] calls its `tick` while the pieces run.
const TICK: Duration = Duration::from_millis(50);

/// `work(state, piece)` for each piece in `0..pieces`, in that order, each thread with
/// its own `state()`. A panic in `work` is resumed on the caller's thread.
pub fn on_cores<S, T: Send>(
    pieces: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> T + Sync,
) -> Vec<T> {
    on_cores_ticking(pieces, state, work, || {})
}

/// [`on_cores`], calling `tick()` on the caller's thread every 50 ms while the pieces run
/// (to move a progress bar); it returns as soon as the last piece is done.
pub fn on_cores_ticking<S, T: Send>(
    pieces: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> T + Sync,
    mut tick: impl FnMut(),
) -> Vec<T> {
    let threads = available().min(pieces).max(1);
    let next = AtomicUsize::new(0);
    let done: Vec<Vec<(usize, T)>> = std::thread::scope(|scope| {
        // Nothing is sent: the channel closes when every thread has dropped its end,
        // having finished or panicked.
        let (alive, finished) = mpsc::channel::<()>();
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (state, work, next, alive) = (&state, &work, &next, alive.clone());
                scope.spawn(move || {
                    let _alive = alive;
                    let mut own = state();
                    let mut done = Vec::new();
                    loop {
                        let piece = next.fetch_add(1, Ordering::Relaxed);
                        if piece >= pieces {
                            break done;
                        }
                        done.push((piece, work(&mut own, piece)));
                    }
                })
            })
            .collect();
        drop(alive);
        while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(TICK) {
            tick();
        }
        handles.into_iter().map(|h| h.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))).collect()
    });
    let mut done: Vec<(usize, T)> = done.into_iter().flatten().collect();
    done.sort_unstable_by_key(|&(piece, _)| piece);
    done.into_iter().map(|(_, result)| result).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_order_of_the_pieces() {
        for pieces in [0, 1, 2, 3, 17, 100] {
            let got = on_cores(
                pieces,
                || 0u32,
                |calls, piece| {
                    *calls += 1;
                    piece * piece
                },
            );
            assert_eq!(got, (0..pieces).map(|p| p * p).collect::<Vec<_>>(), "{pieces} pieces");
        }
    }

    #[test]
    fn a_panicking_piece_reaches_the_caller_after_the_others() {
        let finished = AtomicUsize::new(0);
        let outcome = std::panic::catch_unwind(|| {
            on_cores_ticking(
                8,
                || (),
                |_, piece| {
                    if piece == 2 {
                        panic!("damaged page");
                    }
                    finished.fetch_add(1, Ordering::Relaxed);
                },
                || {},
            )
        });
        let panic = outcome.expect_err("the panic is resumed");
        assert_eq!(panic.downcast_ref::<&str>(), Some(&"damaged page"));
        assert!(finished.load(Ordering::Relaxed) >= 1, "the other threads went on");
    }
}
