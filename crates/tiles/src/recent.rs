//! A small cache of what was computed for the tasks the page asked about most recently
//! (a followed task's runs, its thread states, a critical path): computed once, shared
//! by every request that needs it, the least recently used dropped beyond a few.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};

/// Per key, the use counter's value when it was last used, and its value.
type Kept<K, V> = HashMap<K, (u64, Arc<V>)>;

/// Values by key, at most `capacity` of them.
#[derive(Debug)]
pub struct Recent<K, V> {
    capacity: usize,
    /// A use counter, and per key when it was last used and its value.
    kept: Mutex<(u64, Kept<K, V>)>,
    /// Held while a value is computed: requests that need one wait for the one under way
    /// (it may be theirs) instead of computing it again beside it.
    computing: Mutex<()>,
}

impl<K: Eq + Hash + Copy, V> Recent<K, V> {
    pub fn new(capacity: usize) -> Recent<K, V> {
        Recent { capacity: capacity.max(1), kept: Mutex::new((0, HashMap::new())), computing: Mutex::new(()) }
    }

    /// The value kept for `key` (marked as just used).
    pub fn get(&self, key: &K) -> Option<Arc<V>> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let (clock, map) = &mut *kept;
        *clock += 1;
        map.get_mut(key).map(|(used, value)| {
            *used = *clock;
            value.clone()
        })
    }

    /// Keeps `value` for `key` (replacing one computed meanwhile), dropping the least
    /// recently used beyond the capacity; the value kept.
    pub fn put(&self, key: K, value: V) -> Arc<V> {
        let value = Arc::new(value);
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let (clock, map) = &mut *kept;
        *clock += 1;
        map.insert(key, (*clock, value.clone()));
        while map.len() > self.capacity {
            let oldest = map.iter().min_by_key(|(_, (used, _))| *used).map(|(key, _)| *key);
            oldest.map(|key| map.remove(&key));
        }
        value
    }

    /// The value for `key`, computed by `compute` when not kept: one computation at a
    /// time, so requests for one key at once compute it once (kept values are read
    /// meanwhile).
    pub fn get_or_compute(&self, key: K, compute: impl FnOnce() -> V) -> Arc<V> {
        if let Some(value) = self.get(&key) {
            return value;
        }
        let _computing = self.computing.lock().unwrap_or_else(|e| e.into_inner());
        self.get(&key).unwrap_or_else(|| self.put(key, compute()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recently_used() {
        let recent: Recent<u32, String> = Recent::new(2);
        recent.put(1, "one".into());
        recent.put(2, "two".into());
        assert_eq!(recent.get(&1).as_deref().map(String::as_str), Some("one"));
        recent.put(3, "three".into());
        assert!(recent.get(&2).is_none(), "the least recently used went");
        assert!(recent.get(&1).is_some() && recent.get(&3).is_some());
        let mut calls = 0;
        recent.get_or_compute(3, || {
            calls += 1;
            String::new()
        });
        assert_eq!(calls, 0);
    }
}
